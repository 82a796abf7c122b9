//! `chunksweep golden review`: the page is self-contained and shows a document's `<script>` as
//! text; and, driven in headless Chromium through the DevTools protocol (the ignored tests,
//! which .ci/run runs with `-- --ignored`): accept two items, reject one, edit one, download:
//! the downloaded file holds the three kept items with "reviewed": true and the edit; a partly
//! reviewed file opens at the first item not yet reviewed.

use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

const GATE: &str = "# Gate\n\nThe alarm code is <script>window.pwned = 1</script> and the gate opens at nine every morning.\n\nVisitors sign in at the front desk before entering the building.\n";
const PARKING: &str =
    "# Parking\n\nParking is free on weekends and costs two euros per hour on weekdays.\n";

/// Four drafted items; the first `reviewed` of them already marked reviewed.
fn golden(reviewed: usize) -> String {
    [
        (
            "draft-001",
            "When does the gate open?",
            "At nine.",
            "the gate opens at nine every morning",
        ),
        (
            "draft-002",
            "Where do visitors sign in?",
            "At the front desk.",
            "Visitors sign in at the front desk",
        ),
        (
            "draft-003",
            "What does parking cost on weekdays?",
            "Two euros.",
            "costs two euros per hour on weekdays",
        ),
        (
            "draft-004",
            "Is parking free on weekends?",
            "Yes.",
            "Parking is free on weekends",
        ),
    ]
    .iter()
    .enumerate()
    .map(|(i, (id, q, a, e))| {
        json!({"id": id, "question": q, "answer": a, "evidence": [e], "source": "draft",
               "model": "m", "prompt_sha256": "ab", "reviewed": i < reviewed})
        .to_string()
            + "\n"
    })
    .collect()
}

/// The corpus and `name` (a golden set with `reviewed` items reviewed) in `root`; returns the
/// page `golden review` wrote.
fn write_page(root: &Path, name: &str, reviewed: usize) -> PathBuf {
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("gate.md"), GATE).unwrap();
    std::fs::write(corpus.join("parking.md"), PARKING).unwrap();
    std::fs::write(root.join(name), golden(reviewed)).unwrap();
    let page = root.join("review.html");
    let out = Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .args(["golden", "review"])
        .arg(root.join(name))
        .arg("--corpus")
        .arg(&corpus)
        .arg("--out")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("(4 item(s), {reviewed} already reviewed)")),
        "{stdout}"
    );
    page
}

#[test]
fn the_page_is_self_contained_and_a_document_script_travels_as_escaped_json() {
    let dir = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(write_page(dir.path(), "golden.jsonl", 0)).unwrap();
    // The page's own two script elements only: the data block and the script.
    assert_eq!(page.matches("<script").count(), 2);
    assert!(!page.contains("<script>window.pwned"));
    assert!(page.contains(r"\u003cscript>window.pwned = 1\u003c/script>"));
    for external in [
        "src=\"http",
        "href=\"http",
        "url(",
        "@import",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!page.contains(external), "{external}");
    }
    // Evidence offsets are UTF-16 code units of the document (ASCII here: bytes).
    let start = GATE.find("the gate opens at nine every morning").unwrap();
    assert!(page.contains(&format!(
        r#""spans":[{{"doc":"gate.md","start":{start},"end":{}}}]"#,
        start + "the gate opens at nine every morning".len()
    )));
}

/// A Chromium driven through `--remote-debugging-pipe` (DevTools protocol messages, each JSON
/// ended by a NUL byte, written to its fd 3 and read from its fd 4).
struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    next_id: u64,
    session: Option<String>,
}

impl Browser {
    fn launch(work: &Path) -> Browser {
        let browser = ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find(|b| {
                Command::new(b)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .expect("no chromium for the browser tests: apt-get install -y chromium");
        let (mut to_chrome, mut from_chrome) = ([0i32; 2], [0i32; 2]);
        // SAFETY: pipe(2) on two-element arrays; each end then moved above fd 9 and marked
        // close-on-exec, so that the dup2 to 3 and 4 below clobbers none of them and no other
        // child inherits them.
        unsafe {
            assert_eq!(libc::pipe(to_chrome.as_mut_ptr()), 0);
            assert_eq!(libc::pipe(from_chrome.as_mut_ptr()), 0);
            for fd in to_chrome.iter_mut().chain(from_chrome.iter_mut()) {
                let high = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 10);
                assert!(high >= 10);
                libc::close(*fd);
                *fd = high;
            }
        }
        let (child_in, child_out) = (to_chrome[0], from_chrome[1]);
        let mut cmd = Command::new(browser);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=http://127.0.0.1:9",
            "--remote-debugging-pipe",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: only async-signal-safe dup2 calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(child_in, 3) < 0 || libc::dup2(child_out, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        // SAFETY: the parent's ends are owned here alone; the child's ends are closed here.
        let (to, mut reader) = unsafe {
            libc::close(child_in);
            libc::close(child_out);
            (
                std::fs::File::from_raw_fd(to_chrome[1]),
                std::fs::File::from_raw_fd(from_chrome[0]),
            )
        };
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buf = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice(&message[..end])
                        && tx.send(v).is_err()
                    {
                        return;
                    }
                }
            }
        });
        Browser {
            child,
            to,
            from,
            next_id: 0,
            session: None,
        }
    }

    /// Sends `method` (to the attached page when there is one, unless `browser_level`) and
    /// returns its result.
    fn call(&mut self, method: &str, params: Value, browser_level: bool) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let (false, Some(s)) = (browser_level, &self.session) {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        loop {
            let reply = self
                .from
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no reply to {method}"));
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// Opens `url` in a new page, attaches to it, lets downloads go to `downloads`, and waits
    /// until the page has loaded.
    fn open(&mut self, url: &str, downloads: &Path) {
        let target = self.call("Target.createTarget", json!({"url": "about:blank"}), true);
        let attached = self.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
            true,
        );
        self.session = attached["sessionId"].as_str().map(str::to_string);
        self.call(
            "Browser.setDownloadBehavior",
            json!({"behavior": "allow", "downloadPath": downloads.to_str().unwrap()}),
            true,
        );
        self.call("Page.navigate", json!({"url": url}), false);
        for _ in 0..600 {
            if self.eval("document.readyState") == "complete"
                && self.eval("!!document.getElementById('meta').textContent") == true
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the page never loaded");
    }

    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
            false,
        );
        r["result"]["value"].clone()
    }

    /// Presses `key` (with Ctrl when `ctrl`) as a real key event.
    fn key(&mut self, key: &str, ctrl: bool) {
        let code = match key {
            "Enter" => 13,
            k => k.to_ascii_uppercase().chars().next().unwrap() as u32,
        };
        let text = if ctrl || key == "Enter" { "" } else { key };
        for kind in ["keyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": key, "text": if kind == "keyDown" { text } else { "" },
                       "windowsVirtualKeyCode": code, "modifiers": if ctrl { 2 } else { 0 }}),
                false,
            );
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(path: &Path) -> String {
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} was never downloaded", path.display());
}

#[test]
#[ignore = "needs headless Chromium (apt-get install -y chromium); .ci/run runs it"]
fn browser_accept_two_reject_one_edit_one_and_download_the_reviewed_set() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let page = write_page(root, "golden.jsonl", 0);
    let downloads = root.join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let mut b = Browser::launch(root);
    b.open(&format!("file://{}", page.display()), &downloads);

    // The document's <script> is text in the evidence's context and never ran.
    assert_eq!(
        b.eval("document.querySelector('pre.context').textContent.includes('<script>window.pwned = 1</script>')"),
        true
    );
    assert_eq!(
        b.eval("document.querySelector('pre.context mark').textContent"),
        "the gate opens at nine every morning"
    );
    assert_eq!(b.eval("typeof window.pwned"), "undefined");
    assert_eq!(b.eval("document.scripts.length"), 2);
    assert_eq!(
        b.eval("document.getElementById('count').textContent"),
        "0 of 4 reviewed (0 accepted, 0 rejected)"
    );

    // Accept the first, reject the second, edit the third (saved with Ctrl+Enter, which accepts
    // it), accept the fourth: each with its keyboard shortcut.
    b.key("a", false);
    b.key("r", false);
    assert_eq!(
        b.eval("document.querySelector('#meta .id').textContent"),
        "draft-003 (line 3)"
    );
    b.key("e", false);
    b.eval("document.getElementById('question-edit').value = 'How much is weekday parking per hour?'; document.getElementById('answer-edit').value = 'Two euros per hour.'");
    b.key("Enter", true);
    b.key("a", false);
    assert_eq!(
        b.eval("document.getElementById('count').textContent"),
        "4 of 4 reviewed (3 accepted, 1 rejected)"
    );
    b.key("d", false);

    let text = wait_for(&downloads.join("golden.reviewed.jsonl"));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["draft-001", "draft-003", "draft-004"]);
    assert!(lines.iter().all(|l| l["reviewed"] == true), "{text}");
    assert_eq!(
        lines[1]["question"],
        "How much is weekday parking per hour?"
    );
    assert_eq!(lines[1]["answer"], "Two euros per hour.");
    // Everything else is the file's own: the evidence, the provenance, the other texts.
    assert_eq!(
        lines[1]["evidence"],
        json!(["costs two euros per hour on weekdays"])
    );
    assert_eq!(lines[0]["question"], "When does the gate open?");
    assert!(
        lines
            .iter()
            .all(|l| l["source"] == "draft" && l["model"] == "m")
    );

    // The downloaded set is a valid golden set.
    std::fs::copy(
        downloads.join("golden.reviewed.jsonl"),
        root.join("reviewed.jsonl"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .args(["validate", "--corpus"])
        .arg(root.join("corpus"))
        .arg("--golden")
        .arg(root.join("reviewed.jsonl"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("3 questions"), "{stdout}");
    assert!(!stdout.contains("unreviewed draft"), "{stdout}");
}

#[test]
#[ignore = "needs headless Chromium (apt-get install -y chromium); .ci/run runs it"]
fn browser_opens_a_partly_reviewed_file_at_the_first_item_not_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let page = write_page(root, "partly.jsonl", 2);
    let mut b = Browser::launch(root);
    b.open(&format!("file://{}", page.display()), root);
    assert_eq!(
        b.eval("document.querySelector('#meta .id').textContent"),
        "draft-003 (line 3)"
    );
    assert_eq!(
        b.eval("document.getElementById('count').textContent"),
        "2 of 4 reviewed (2 accepted, 0 rejected)"
    );
    // Undecided items are kept unchanged by a download of the unfinished review.
    b.key("r", false);
    let jsonl = b.eval("window.chunksweepReview.reviewedJsonl()");
    let ids: Vec<String> = jsonl
        .as_str()
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["draft-001", "draft-002", "draft-004"]);
    assert!(
        jsonl
            .as_str()
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .contains("\"reviewed\":false")
    );
}

#[test]
fn an_out_that_is_the_golden_set_or_inside_the_corpus_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_page(root, "golden.jsonl", 0);
    let file = root.join("golden.jsonl");
    let before = std::fs::read_to_string(&file).unwrap();
    let corpus = root.join("corpus");
    let review = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(["golden", "review"])
            .arg(&file)
            .arg("--corpus")
            .arg(&corpus)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };

    let same = review(&root.join(".").join("golden.jsonl"));
    let err = String::from_utf8_lossy(&same.stderr);
    assert_eq!(same.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "--out {} is the golden set under review: the page would overwrite it; choose another --out (default: review.html beside the golden set)",
            root.join(".").join("golden.jsonl").display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

    let document = corpus.join("gate.md");
    let inside = review(&document);
    let err = String::from_utf8_lossy(&inside.stderr);
    assert_eq!(inside.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "--out {} is inside the corpus folder {}: the page would overwrite a document or be read as one; choose an --out outside the corpus",
            document.display(),
            corpus.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&document).unwrap(), GATE);
}
