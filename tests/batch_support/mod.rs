//! A scripted OpenAI-compatible server with the batch endpoints (wiremock): `POST /files`
//! (multipart, `purpose=batch`), `POST /batches`, `GET /batches/{id}`, `POST
//! /batches/{id}/cancel`, `GET /files/{id}/content`, and direct `POST /chat/completions`. Every
//! line of a batch is answered by the same function as a direct call, so a batched run and a
//! direct run see the same replies. Faults are scripted per batch: lines left out of the output,
//! lines moved to the error file, polls before the batch ends, an expired batch.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers a chat request body with the reply's text.
pub type Answer = Arc<dyn Fn(&Value) -> String + Send + Sync>;

/// What to do to one batch (by submission order, 0-based).
#[derive(Debug, Clone, Default)]
pub struct Fault {
    /// Polls that still say `in_progress` before the batch ends.
    pub polls_in_progress: usize,
    /// Lines (by position in the input file) missing from the output.
    pub missing: Vec<usize>,
    /// Lines (by position) in the error file instead of the output.
    pub errors: Vec<usize>,
    /// Lines (by position) answered with HTTP 400.
    pub refused: Vec<usize>,
    /// The batch ends `expired`, with only the lines before this position answered.
    pub expire_after: Option<usize>,
}

#[derive(Default)]
pub struct State {
    /// Uploaded files by id: (purpose, content).
    pub files: BTreeMap<String, (String, String)>,
    /// Batches by id.
    pub batches: BTreeMap<String, Batch>,
    /// Every request: `METHOD /path`.
    pub log: Vec<String>,
    /// Faults of the batches to come, in submission order.
    pub faults: Vec<Fault>,
    /// Batches submitted so far.
    pub submitted: usize,
}

#[derive(Debug, Clone)]
pub struct Batch {
    pub id: String,
    pub input_file_id: String,
    pub completion_window: String,
    pub polls: usize,
    pub fault: Fault,
    pub status: String,
    pub lines: Vec<Value>,
}

/// The server and its state.
pub struct BatchServer {
    pub server: MockServer,
    pub state: Arc<Mutex<State>>,
}

struct Handler {
    state: Arc<Mutex<State>>,
    answer: Answer,
}

impl BatchServer {
    /// Starts a server answering every chat request with `answer`.
    pub async fn start(answer: Answer) -> Self {
        let server = MockServer::builder().start().await;
        let state = Arc::new(Mutex::new(State::default()));
        Mock::given(any())
            .respond_with(Handler {
                state: Arc::clone(&state),
                answer,
            })
            .mount(&server)
            .await;
        BatchServer { server, state }
    }

    /// The base URL, with `/v1`.
    pub fn url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// Faults for the next batches, in submission order.
    pub fn script(&self, faults: Vec<Fault>) {
        let mut s = self.state.lock().unwrap();
        s.faults = faults;
    }

    /// Every request so far: `METHOD /path`.
    pub fn log(&self) -> Vec<String> {
        self.state.lock().unwrap().log.clone()
    }

    /// Asserts that every request so far went to the batch endpoints: `/files`, `/batches` and
    /// file contents, never `/chat/completions`.
    pub fn assert_only_batch_endpoints(&self) {
        let log = self.log();
        assert!(
            log.iter().all(|l| l.starts_with("POST /files")
                || l.starts_with("POST /batches")
                || l.starts_with("GET /batches/")
                || l.starts_with("GET /files/")),
            "{log:?}"
        );
        assert_eq!(self.count("POST /chat/completions"), 0);
    }

    /// Requests whose `METHOD /path` starts with `prefix`.
    pub fn count(&self, prefix: &str) -> usize {
        self.log().iter().filter(|l| l.starts_with(prefix)).count()
    }

    /// The custom ids of the input file of each batch, in submission order.
    pub fn batch_lines(&self) -> Vec<Vec<String>> {
        let s = self.state.lock().unwrap();
        let mut batches: Vec<&Batch> = s.batches.values().collect();
        batches.sort_by_key(|b| b.id[6..].parse::<usize>().unwrap());
        batches
            .iter()
            .map(|b| {
                b.lines
                    .iter()
                    .map(|l| l["custom_id"].as_str().unwrap().to_string())
                    .collect()
            })
            .collect()
    }

    /// The ids of the batches, in submission order.
    pub fn batch_ids(&self) -> Vec<String> {
        (0..self.state.lock().unwrap().submitted)
            .map(|i| format!("batch_{i}"))
            .collect()
    }
}

/// A chat completion body with `content` and usage (10 prompt, 2 completion tokens).
pub fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-b", "object": "chat.completion", "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    })
}

impl Respond for Handler {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let path = req.url.path().trim_start_matches("/v1").to_string();
        let mut s = self.state.lock().unwrap();
        s.log.push(format!("{} {path}", req.method));
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (req.method.as_str(), parts.as_slice()) {
            ("POST", ["chat", "completions"]) => {
                let body: Value = serde_json::from_slice(&req.body).unwrap();
                ResponseTemplate::new(200).set_body_json(completion(&(self.answer)(&body)))
            }
            ("POST", ["files"]) => {
                let (purpose, content) = multipart(req);
                let id = format!("file-in-{}", s.files.len());
                s.files.insert(id.clone(), (purpose.clone(), content));
                ResponseTemplate::new(200)
                    .set_body_json(json!({"id": id, "object": "file", "purpose": purpose}))
            }
            ("POST", ["batches"]) => {
                let body: Value = serde_json::from_slice(&req.body).unwrap();
                assert_eq!(body["endpoint"], "/v1/chat/completions");
                let input = body["input_file_id"].as_str().unwrap().to_string();
                let (purpose, content) = s.files[&input].clone();
                assert_eq!(purpose, "batch");
                let n = s.submitted;
                s.submitted += 1;
                let fault = s.faults.get(n).cloned().unwrap_or_default();
                let batch = Batch {
                    id: format!("batch_{n}"),
                    input_file_id: input,
                    completion_window: body["completion_window"].as_str().unwrap().into(),
                    polls: 0,
                    fault,
                    status: "validating".into(),
                    lines: content
                        .lines()
                        .map(|l| serde_json::from_str(l).unwrap())
                        .collect(),
                };
                let v = batch_json(&batch, None, None);
                s.batches.insert(batch.id.clone(), batch);
                ResponseTemplate::new(200).set_body_json(v)
            }
            ("GET", ["batches", id]) => {
                let id = id.to_string();
                let Some(b) = s.batches.get_mut(&id) else {
                    return ResponseTemplate::new(404);
                };
                b.polls += 1;
                if b.status == "cancelling" {
                    // a cancelled batch answers nothing here
                    b.status = "cancelled".into();
                    b.fault.expire_after = Some(0);
                } else if b.status == "validating" || b.status == "in_progress" {
                    b.status = if b.polls <= b.fault.polls_in_progress {
                        "in_progress".into()
                    } else if b.fault.expire_after.is_some() {
                        "expired".into()
                    } else {
                        "completed".into()
                    };
                }
                let b = b.clone();
                let ended = matches!(b.status.as_str(), "completed" | "expired" | "cancelled");
                let (out, err) = if ended {
                    let (out, err) = self.files_of(&b);
                    let (o, e) = (format!("file-out-{id}"), format!("file-err-{id}"));
                    s.files.insert(o.clone(), ("batch_output".into(), out));
                    s.files.insert(e.clone(), ("batch_output".into(), err));
                    (Some(o), Some(e))
                } else {
                    (None, None)
                };
                ResponseTemplate::new(200).set_body_json(batch_json(&b, out, err))
            }
            ("POST", ["batches", id, "cancel"]) => {
                let id = id.to_string();
                let b = s.batches.get_mut(&id).unwrap();
                b.status = "cancelling".into();
                let b = b.clone();
                ResponseTemplate::new(200).set_body_json(batch_json(&b, None, None))
            }
            ("GET", ["files", id, "content"]) => match s.files.get(*id) {
                Some((_, content)) => ResponseTemplate::new(200).set_body_string(content.clone()),
                None => ResponseTemplate::new(404),
            },
            _ => ResponseTemplate::new(404).set_body_string(format!("no route {path}")),
        }
    }
}

impl Handler {
    /// The output and error files of an ended batch.
    fn files_of(&self, b: &Batch) -> (String, String) {
        let (mut out, mut err) = (String::new(), String::new());
        let missing: HashSet<usize> = b.fault.missing.iter().copied().collect();
        for (i, line) in b.lines.iter().enumerate() {
            let cid = &line["custom_id"];
            if missing.contains(&i) || b.fault.expire_after.is_some_and(|n| i >= n) {
                continue;
            }
            let l = if b.fault.errors.contains(&i) {
                json!({"id": format!("r{i}"), "custom_id": cid, "response": null,
                       "error": {"code": "server_error", "message": "scripted line failure"}})
            } else if b.fault.refused.contains(&i) {
                json!({"id": format!("r{i}"), "custom_id": cid, "error": null,
                       "response": {"status_code": 400, "request_id": "x",
                                    "body": {"error": {"message": "scripted refusal"}}}})
            } else {
                json!({"id": format!("r{i}"), "custom_id": cid, "error": null,
                       "response": {"status_code": 200, "request_id": "x",
                                    "body": completion(&(self.answer)(&line["body"]))}})
            };
            let target = if b.fault.errors.contains(&i) {
                &mut err
            } else {
                &mut out
            };
            target.push_str(&l.to_string());
            target.push('\n');
        }
        (out, err)
    }
}

fn batch_json(b: &Batch, out: Option<String>, err: Option<String>) -> Value {
    let total = b.lines.len();
    let done = matches!(b.status.as_str(), "completed" | "expired");
    json!({
        "id": b.id, "object": "batch", "endpoint": "/v1/chat/completions",
        "input_file_id": b.input_file_id, "completion_window": b.completion_window,
        "status": b.status, "output_file_id": out, "error_file_id": err,
        "created_at": 1_700_000_000,
        "request_counts": {"total": total, "completed": if done { total } else { 0 }, "failed": 0}
    })
}

/// The purpose and the file of a multipart upload.
fn multipart(req: &Request) -> (String, String) {
    let ct = req.headers.get("content-type").unwrap().to_str().unwrap();
    let boundary = ct.split("boundary=").nth(1).unwrap().trim_matches('"');
    let body = String::from_utf8(req.body.clone()).unwrap();
    let (mut purpose, mut file) = (String::new(), String::new());
    for part in body.split(&format!("--{boundary}")) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let content = content.strip_suffix("\r\n").unwrap_or(content).to_string();
        if head.contains("name=\"purpose\"") {
            purpose = content;
        } else if head.contains("name=\"file\"") {
            file = content;
        }
    }
    (purpose, file)
}
