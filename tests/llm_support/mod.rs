//! Shared helpers for the LLM client's integration tests: a wiremock-backed fake
//! OpenAI-compatible server, canned bodies, and a raw TCP server that drops connections.
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chunksweep::llm::{ChatMessage, ChatRequest, ClientConfig, LlmClient, ModelConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::{Request, Respond, ResponseTemplate};

pub const MODEL: &str = "test-model";

/// A chat-completion body in OpenAI's shape, with usage when given.
pub fn chat_body(content: &str, usage: Option<(u64, u64)>) -> Value {
    let mut b = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }]
    });
    if let Some((p, c)) = usage {
        b["usage"] = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
    }
    b
}

/// The text of every message of a chat request, joined by new lines: what a scripted server
/// reads its cues from.
pub fn prompt_text(req: &Request) -> String {
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text between the first `open` in `s` and the next `close`.
pub fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let a = s.find(open)? + open.len();
    let b = s[a..].find(close)? + a;
    Some(&s[a..b])
}

pub fn ok_chat(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(chat_body(content, Some((10, 2))))
}

/// Config for tests: the given server, cache under `dir`, fast backoff, model limits that do
/// not slow tests down, prices $2.50 / $10 per million tokens.
pub fn config(base_url: &str, dir: &Path) -> ClientConfig {
    let mut cfg = ClientConfig {
        base_url: Some(base_url.to_string()),
        api_key_env: "CHUNKSWEEP_TEST_NO_SUCH_KEY".into(),
        cache_path: dir.join("cache.sqlite"),
        ..Default::default()
    };
    cfg.retry.base_delay_ms = 10;
    cfg.retry.max_delay_s = 0.2;
    cfg.models.insert(
        MODEL.to_string(),
        ModelConfig {
            rpm: 0,
            tpm: 0,
            max_in_flight: 16,
            timeout_s: 5.0,
            max_attempts: 4,
            input_usd_per_mtok: Some(2.5),
            output_usd_per_mtok: Some(10.0),
            batch_discount: 0.5,
            usd_per_request: None,
        },
    );
    cfg
}

pub fn model_mut(cfg: &mut ClientConfig) -> &mut ModelConfig {
    cfg.models.get_mut(MODEL).unwrap()
}

pub fn client(cfg: ClientConfig) -> LlmClient {
    LlmClient::with_api_key(cfg, None).expect("client builds")
}

pub fn req(question: &str) -> ChatRequest {
    let mut r = ChatRequest::new(
        MODEL,
        vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user(question),
        ],
    );
    r.temperature = Some(0.0);
    r
}

/// A responder that records when each request arrived, then answers with `template`.
#[derive(Clone)]
pub struct Recording {
    pub start: Instant,
    pub arrivals: Arc<Mutex<Vec<Duration>>>,
    pub template: ResponseTemplate,
}

impl Recording {
    pub fn new(template: ResponseTemplate) -> Self {
        Recording {
            start: Instant::now(),
            arrivals: Arc::new(Mutex::new(Vec::new())),
            template,
        }
    }
    pub fn arrivals(&self) -> Vec<Duration> {
        let mut v = self.arrivals.lock().unwrap().clone();
        v.sort();
        v
    }
}

impl Respond for Recording {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.arrivals.lock().unwrap().push(self.start.elapsed());
        self.template.clone()
    }
}

/// A raw HTTP server on 127.0.0.1 that reads each request and closes the first `drops`
/// connections without answering, then answers `body` with 200. Returns the base URL (with
/// `/v1`) and the connection counter.
pub async fn dropping_server(drops: usize, body: Value) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    let body = body.to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let body = body.clone();
            tokio::spawn(async move {
                read_request(&mut sock).await;
                if n < drops {
                    drop(sock); // connection closed with no response
                    return;
                }
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                    body.len(),
                    body
                );
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}/v1"), count)
}

async fn read_request(sock: &mut tokio::net::TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Ok(n) = sock.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The `[llm]` section of a config file for a mock server at `base_url` (with `/v1`): no API
/// key, the response cache at `cache_path`, fast retries, no pacing, 8 requests in flight,
/// `timeout_s` per request, `max_attempts`, and prices (2.5 and 10 USD per million input and
/// output tokens) so that costs are computed.
pub fn mock_llm_toml(
    base_url: &str,
    cache_path: &str,
    timeout_s: f64,
    max_attempts: u32,
) -> String {
    format!(
        r#"
[llm]
base_url = "{base_url}"
api_key_env = "CHUNKSWEEP_TEST_NO_SUCH_KEY"
cache_path = "{cache_path}"

[llm.retry]
base_delay_ms = 5
max_delay_s = 0.05

[llm.defaults]
rpm = 0
max_in_flight = 8
timeout_s = {timeout_s:?}
max_attempts = {max_attempts}
input_usd_per_mtok = 2.5
output_usd_per_mtok = 10.0
"#
    )
}

/// The binary under test; `CHUNKSWEEP_BIN` overrides it (useful when several checkouts share one
/// CARGO_TARGET_DIR, where target/debug/chunksweep is whichever was built last).
pub fn bin() -> std::path::PathBuf {
    std::env::var_os("CHUNKSWEEP_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_chunksweep")))
}

/// The scripted judge runs' two candidates (judge_e2e, judge_batch, judge_criteria): chunks of 8
/// and of 32 words, two retrieved.
pub const SMALL: &str = "words-8-o0-none-bm25-k2";
/// See [`SMALL`].
pub const LARGE: &str = "words-32-o0-none-bm25-k2";

/// The scripted generator's reply to a prompt that asks for an answer: `ANSWER <id> large` when a
/// chunk of more than 8 words was in its context (only [`LARGE`] retrieves one), else `ANSWER
/// <id> small`, `id` being `id_of` the question's text; `None` for any other prompt.
pub fn scripted_answer(text: &str, id_of: impl Fn(&str) -> String) -> Option<String> {
    if !text.contains("Task: answer the question from the documents.") {
        return None;
    }
    let q = between(text, "<question>\n", "\n</question>").unwrap();
    let docs = between(text, "<documents>\n", "\n</documents>").unwrap();
    let large = docs.split("<document id=").skip(1).any(|d| {
        let body = between(d, ">\n", "\n</document>").unwrap();
        body.split_whitespace().count() > 8
    });
    Some(format!(
        "ANSWER {} {}",
        id_of(q),
        if large { "large" } else { "small" }
    ))
}

/// The question id and size class of the [`scripted_answer`] a verdict prompt grades (empty words
/// when its answer is not one).
pub fn graded_answer(text: &str) -> (&str, &str) {
    let ans = between(text, "<answer>\n", "\n</answer>").unwrap_or("");
    let mut parts = ans.split_whitespace();
    match (parts.next(), parts.next(), parts.next()) {
        (Some("ANSWER"), Some(id), Some(class)) => (id, class),
        _ => ("", ""),
    }
}

/// The `[sweep]` section of the scripted judge runs: [`SMALL`] and [`LARGE`] only.
pub const SMALL_AND_LARGE_SWEEP: &str = r#"[sweep]
strategies = ["words"]
sizes = [8, 32]
overlap = 0
top_k = 2
tokenizer = "words"
"#;

/// Writes the scripted judge runs' two documents, `corpus/a.md` (Larkspur's requirements) and
/// `corpus/b.md` (billing and files), under `dir`.
pub fn write_larkspur_corpus(dir: &Path) {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    std::fs::write(dir.join("corpus/a.md"), "Larkspur needs two CPU cores and four gigabytes of memory to run. The container runs as user 1750 by default. Settings live in a TOML file under the config folder. The sync interval defaults to three hundred seconds.").unwrap();
    std::fs::write(dir.join("corpus/b.md"), "Refunds are issued within fourteen days of a request. Invoices are sent on the first day of each month. Deleted files stay recoverable for thirty days. Uploads above five gigabytes use the multipart command.").unwrap();
}
