//! One external chunker process: started in its own process group, greeted, fed requests on a
//! writer thread while its responses are read here, each line awaited at most the chunker's
//! timeout; its stderr passed on line by line, the last lines kept for an error. A chunker that
//! hangs or fails is ended with its children (the whole group).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::error::{ExternalError, Problem};
use super::protocol::{self, Hello, HelloReply};
use super::types::ChunkerSpec;

/// How many of the chunker's last stderr lines an error shows.
pub const STDERR_TAIL: usize = 10;

/// A running chunker that has answered its hello; its stderr is read on a thread of the scope
/// it was started in.
pub struct Session<'scope> {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<std::io::Result<String>>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_reader: Option<std::thread::ScopedJoinHandle<'scope, ()>>,
    timeout: Duration,
    /// Its hello.
    pub hello: HelloReply,
}

/// Where the chunker's stderr lines go (each without its line break).
pub type StderrSink<'a> = &'a (dyn Fn(&str) + Sync);

impl<'scope> Session<'scope> {
    /// Starts `spec`'s command in `spec.dir`, sends chunksweep's hello and reads the chunker's;
    /// its stderr lines go to `stderr` from a thread of `scope`.
    ///
    /// # Errors
    /// [`Problem::Start`] when the command cannot start; as [`Session::line`] for the hello;
    /// [`Problem::BadLine`] for a hello of another protocol or version.
    pub fn start<'env>(
        spec: &ChunkerSpec,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        stderr: StderrSink<'env>,
    ) -> Result<Session<'scope>, Problem> {
        let (program, args) = spec
            .command
            .split_first()
            .ok_or_else(|| Problem::Start("the command is empty".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&spec.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| {
                Problem::Start(format!(
                    "cannot start {:?} in {}: {e}",
                    spec.command.join(" "),
                    spec.dir.display()
                ))
            })?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let stop = line.is_err();
                if tx.send(line).is_err() || stop {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let err = child.stderr.take().expect("piped");
        let kept = Arc::clone(&tail);
        let stderr_reader = scope.spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                stderr(&line);
                let mut t = kept.lock().expect("the stderr tail");
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let stdin = child.stdin.take();
        let mut session = Session {
            name: spec.name.clone(),
            child,
            stdin,
            lines,
            tail,
            stderr_reader: Some(stderr_reader),
            timeout: Duration::from_secs_f64(spec.timeout_s),
            hello: HelloReply {
                protocol: String::new(),
                version: 0,
                chunker: String::new(),
                versions: Default::default(),
                unit: None,
            },
        };
        let hello = Hello {
            protocol: protocol::PROTOCOL,
            version: protocol::VERSION,
            chunksweep: env!("CARGO_PKG_VERSION"),
            chunker: &spec.name,
        };
        let line = serde_json::to_string(&hello).expect("a hello serialises");
        let sent = session
            .stdin
            .as_mut()
            .map(|s| writeln!(s, "{line}").and_then(|()| s.flush()));
        if let Some(Err(_)) = sent {
            // it exited before reading: what it said is in the line read below
            session.stdin = None;
        }
        let reply = session.line("its hello")?;
        session.hello = protocol::parse_hello(&reply).map_err(|problem| Problem::BadLine {
            line: protocol::shorten(&reply),
            problem,
            expected: "its hello".into(),
        })?;
        Ok(session)
    }

    /// The next line of the chunker's stdout, awaited at most the timeout; `expected` names
    /// what it should be, for the error.
    ///
    /// # Errors
    /// [`Problem::Hung`] after the timeout (the chunker and its children are ended),
    /// [`Problem::Exited`] when its stdout closed (with its exit status and last stderr lines),
    /// [`Problem::Io`] when reading it failed.
    pub fn line(&mut self, expected: &str) -> Result<String, Problem> {
        match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(e)) => Err(Problem::Io(e.to_string())),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Problem::Hung {
                    timeout_s: self.timeout.as_secs_f64(),
                    expected: expected.to_string(),
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.wait_exit();
                Err(Problem::Exited {
                    status,
                    expected: expected.to_string(),
                    stderr: self.stderr_tail(),
                })
            }
        }
    }

    /// Sends `lines` (each one request) on a writer thread while `read` takes the responses
    /// from this session, then closes stdin and waits for the chunker to exit 0.
    ///
    /// # Errors
    /// The first error of `read`; [`Problem::ExtraLines`] for output past the last response;
    /// [`Problem::Failed`] for a non-zero exit; as [`Session::line`].
    pub fn exchange(
        &mut self,
        lines: impl Iterator<Item = String> + Send,
        read: impl FnOnce(&mut Self) -> Result<(), ExternalError>,
    ) -> Result<(), ExternalError> {
        let mut stdin = self.stdin.take();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                if let Some(s) = stdin.as_mut() {
                    let mut w = std::io::BufWriter::new(s);
                    for line in lines {
                        // a chunker that stopped reading has failed: its output says how
                        if writeln!(w, "{line}").is_err() {
                            return;
                        }
                    }
                    let _ = w.flush();
                }
            });
            let read = read(self);
            if read.is_err() {
                // the writer may be blocked on a full pipe: ending the chunker frees it
                self.kill();
            }
            read
        })?;
        self.finish()
            .map_err(|problem| ExternalError::new(&self.name, problem))
    }

    /// Waits for the chunker to exit after its last response.
    fn finish(&mut self) -> Result<(), Problem> {
        self.stdin = None;
        match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(line)) if !line.trim().is_empty() => {
                self.kill();
                return Err(Problem::ExtraLines(protocol::shorten(&line)));
            }
            Ok(_) | Err(RecvTimeoutError::Disconnected) => {}
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                return Err(Problem::Hung {
                    timeout_s: self.timeout.as_secs_f64(),
                    expected: "its exit after the last response".into(),
                });
            }
        }
        let status = self.wait_exit();
        if status != "exit status: 0" {
            return Err(Problem::Failed {
                status,
                stderr: self.stderr_tail(),
            });
        }
        Ok(())
    }

    /// The exit status, once the process has exited (ended after the timeout if it has not).
    fn wait_exit(&mut self) -> String {
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.to_string(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) => {
                    self.kill();
                    return "ended after the timeout".into();
                }
                Err(e) => return e.to_string(),
            }
        }
    }

    /// The last stderr lines, once every process of the group has ended (they hold its stderr).
    fn stderr_tail(&mut self) -> Vec<String> {
        self.kill_group();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        self.tail
            .lock()
            .expect("the stderr tail")
            .iter()
            .cloned()
            .collect()
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
