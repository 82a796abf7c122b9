//! One external process (a chunker, or a retriever: [`crate::retrieval::external`]): started in
//! its own process group (and ended if chunksweep dies), greeted, fed requests on a writer thread while its responses are read here, each line
//! awaited at most the chunker's timeout. Its stdout and stderr are read on threads of their
//! own that never hold chunksweep back: a process the chunker left behind that keeps a pipe open
//! cannot stall a run. Its stderr lines are passed on as they are read here, the last ones kept
//! for an error. When it has exited, or hangs, or fails, its whole process group is ended.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::error::Problem;
use super::protocol::{self, Hello, HelloReply, LineProblem};
use super::types::{ChunkerSpec, Launch};

/// How many of the chunker's last stderr lines an error shows.
pub const STDERR_TAIL: usize = 10;

/// How long, once the chunker has exited and its group is ended, its pipes are still read for
/// what it wrote last (longer only when a process outside its group holds them open).
const AFTER_EXIT: Duration = Duration::from_secs(1);

/// The least time the process's hello is awaited, whatever its `timeout_s`: starting an
/// interpreter, importing its packages and connecting to a database can take longer than
/// answering a line, above all on a loaded machine.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the chunker's stderr lines go (each without its line break).
pub type StderrSink<'a> = &'a (dyn Fn(&str) + Sync);

/// A running external process (a chunker once [`Session::start`] has its hello).
pub struct Session<'a> {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<std::io::Result<String>>,
    errors: Receiver<std::io::Result<String>>,
    tail: VecDeque<String>,
    sink: StderrSink<'a>,
    timeout: Duration,
}

/// A thread that sends each line read from `from` into a channel, until end of file.
fn read_lines<R: std::io::Read + Send + 'static>(from: R) -> Receiver<std::io::Result<String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let stop = line.is_err();
            if tx.send(line).is_err() || stop {
                break;
            }
        }
    });
    rx
}

impl<'a> Session<'a> {
    /// Starts `spec`'s command in `spec.dir`, sends chunksweep's hello and reads the chunker's;
    /// its stderr lines go to `sink`.
    ///
    /// # Errors
    /// As [`Session::spawn`] and [`Session::greet`].
    pub fn start(
        spec: &ChunkerSpec,
        sink: StderrSink<'a>,
    ) -> Result<(Session<'a>, HelloReply), Problem> {
        let mut session = Session::spawn(&spec.launch(), sink)?;
        let hello = Hello {
            protocol: protocol::PROTOCOL,
            version: protocol::VERSION,
            chunksweep: env!("CARGO_PKG_VERSION"),
            chunker: &spec.name,
        };
        let line = serde_json::to_string(&hello).expect("a hello serialises");
        let reply = session.greet(&line, protocol::parse_hello)?;
        Ok((session, reply))
    }

    /// Starts `launch`'s command in its folder, in a process group of its own that is sent
    /// SIGKILL if chunksweep ends first; its stderr lines go to `sink`.
    ///
    /// # Errors
    /// [`Problem::Start`] when the command cannot start.
    pub fn spawn(launch: &Launch<'_>, sink: StderrSink<'a>) -> Result<Session<'a>, Problem> {
        let (program, args) = launch
            .command
            .split_first()
            .ok_or_else(|| Problem::Start("the command is empty".into()))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(launch.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: prctl(2) is async-signal-safe; the closure allocates nothing. The process is
        // sent SIGKILL when the thread that started it ends (chunksweep interrupted or killed).
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|e| {
            Problem::Start(format!(
                "cannot start {:?} in {}: {e}",
                launch.command.join(" "),
                launch.dir.display()
            ))
        })?;
        let lines = read_lines(child.stdout.take().expect("piped"));
        let errors = read_lines(child.stderr.take().expect("piped"));
        let stdin = child.stdin.take();
        Ok(Session {
            name: launch.name.to_string(),
            child,
            stdin,
            lines,
            errors,
            tail: VecDeque::new(),
            sink,
            timeout: Duration::from_secs_f64(launch.timeout_s),
        })
    }

    /// Sends chunksweep's hello (`hello`, one JSON line) and reads the process's, parsed by
    /// `parse`.
    ///
    /// # Errors
    /// As [`Session::line`] for the hello; [`Problem::BadLine`] for a hello `parse` refuses
    /// (another protocol or version).
    pub fn greet<T>(
        &mut self,
        hello: &str,
        parse: impl FnOnce(&str) -> Result<T, LineProblem>,
    ) -> Result<T, Problem> {
        let sent = self
            .stdin
            .as_mut()
            .map(|s| writeln!(s, "{hello}").and_then(|()| s.flush()));
        if let Some(Err(_)) = sent {
            // it exited before reading: what it said is in the line read below
            self.stdin = None;
        }
        let reply = self.line_within("its hello", self.timeout.max(HELLO_TIMEOUT))?;
        parse(&reply).map_err(|problem| Problem::BadLine {
            line: protocol::shorten(&reply),
            problem,
            expected: "its hello".into(),
        })
    }

    /// Passes on the stderr lines read so far, keeping the last [`STDERR_TAIL`].
    fn pass_stderr(&mut self) {
        while let Ok(Ok(line)) = self.errors.try_recv() {
            self.keep(line);
        }
    }

    fn keep(&mut self, line: String) {
        (self.sink)(&line);
        if self.tail.len() == STDERR_TAIL {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    /// The next line of the chunker's stdout that is not blank, each awaited at most the
    /// timeout; `expected` names what it should be, for the error.
    ///
    /// # Errors
    /// [`Problem::Hung`] after the timeout (the chunker and its children are ended),
    /// [`Problem::Exited`] when its stdout closed (with its exit status and last stderr lines),
    /// [`Problem::Io`] when reading it failed.
    pub fn line(&mut self, expected: &str) -> Result<String, Problem> {
        self.line_within(expected, self.timeout)
    }

    /// [`Session::line`], the line awaited at most `timeout`.
    fn line_within(&mut self, expected: &str, timeout: Duration) -> Result<String, Problem> {
        loop {
            let got = self.lines.recv_timeout(timeout);
            self.pass_stderr();
            return match got {
                Ok(Ok(line)) if line.trim().is_empty() => continue,
                Ok(Ok(line)) => Ok(line),
                Ok(Err(e)) => Err(Problem::Io(e.to_string())),
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    Err(Problem::Hung {
                        timeout_s: timeout.as_secs_f64(),
                        expected: expected.to_string(),
                    })
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = match self.wait_exit(expected) {
                        Ok(status) => status.to_string(),
                        Err(hung) => return Err(hung),
                    };
                    Err(Problem::Exited {
                        status,
                        expected: expected.to_string(),
                        stderr: self.stderr_tail(),
                    })
                }
            };
        }
    }

    /// Sends `lines` (each one request, flushed as it is written: the iterator may wait on
    /// what `read` has read) on a writer thread while `read` takes the responses from this
    /// session, then closes stdin and waits for the process to exit 0; `ended` makes
    /// the caller's error of a problem after the last response (with the process's name).
    ///
    /// # Errors
    /// The first error of `read`; [`Problem::ExtraLines`] for output past the last response;
    /// [`Problem::Failed`] for a non-zero exit; as [`Session::line`].
    pub fn exchange<E>(
        &mut self,
        lines: impl Iterator<Item = String> + Send,
        read: impl FnOnce(&mut Self) -> Result<(), E>,
        ended: impl FnOnce(&str, Problem) -> E,
    ) -> Result<(), E> {
        let mut stdin = self.stdin.take();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                if let Some(s) = stdin.as_mut() {
                    let mut w = std::io::BufWriter::new(s);
                    for line in lines {
                        // a chunker that stopped reading has failed: its output says how;
                        // flushed at once, as `lines` may wait on what is read before its next
                        if writeln!(w, "{line}").and_then(|()| w.flush()).is_err() {
                            return;
                        }
                    }
                }
            });
            let read = read(self);
            if read.is_err() {
                // the writer may be blocked on a full pipe: ending the chunker frees it
                self.kill();
            }
            read
        })?;
        self.finish().map_err(|problem| ended(&self.name, problem))
    }

    /// After the last response: waits for the chunker to exit (stdin closed), ends what it
    /// left running in its group, and checks that it wrote nothing more and exited 0.
    fn finish(&mut self) -> Result<(), Problem> {
        self.stdin = None;
        let status = self.wait_exit("its exit after the last response")?;
        self.kill_group();
        loop {
            match self.lines.recv_timeout(AFTER_EXIT) {
                Ok(Ok(line)) if line.trim().is_empty() => continue,
                Ok(Ok(line)) => return Err(Problem::ExtraLines(protocol::shorten(&line))),
                _ => break,
            }
        }
        if !status.success() {
            return Err(Problem::Failed {
                status: status.to_string(),
                stderr: self.stderr_tail(),
            });
        }
        self.pass_stderr();
        Ok(())
    }

    /// The exit status, once the process has exited, awaited at most the timeout.
    ///
    /// # Errors
    /// [`Problem::Hung`] when it has not exited by then (it and its group are ended).
    fn wait_exit(&mut self, expected: &str) -> Result<ExitStatus, Problem> {
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) | Err(_) => {
                    self.kill();
                    return Err(Problem::Hung {
                        timeout_s: self.timeout.as_secs_f64(),
                        expected: expected.to_string(),
                    });
                }
            }
        }
    }

    /// The last stderr lines, with what the process wrote before it ended (its group is ended
    /// first, so that nothing of it holds stderr open).
    fn stderr_tail(&mut self) -> Vec<String> {
        self.kill_group();
        let deadline = Instant::now() + AFTER_EXIT;
        while let Some(wait) = deadline.checked_duration_since(Instant::now()) {
            match self.errors.recv_timeout(wait) {
                Ok(Ok(line)) => self.keep(line),
                _ => break,
            }
        }
        self.tail.iter().cloned().collect()
    }

    /// Signals every process of the chunker's process group to end.
    fn kill_group(&self) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) with a negative pid signals the process group the child leads; it
        // touches no memory of ours.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }

    /// Ends the chunker and every process it started (its process group), and reaps it.
    fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.wait();
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}
