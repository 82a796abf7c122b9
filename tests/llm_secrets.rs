//! The API key is sent to the server and appears nowhere else: not in Debug output, error
//! messages, records, the records CSV or the cache file (including its WAL/SHM files), even when
//! the server echoes it back; a key with a newline is a usage error naming its variable. The same
//! for credentials in a base URL. The key test is the only one that sets environment variables.

mod llm_support;

use std::path::Path;

use chunksweep::llm::record::write_csv;
use chunksweep::llm::{ApiKey, LlmClient};
use llm_support::*;
use serde_json::json;
use wiremock::matchers::{header, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-ZXhhbXBsZS1zZWNyZXQta2V5LTQy";
const KEY_VAR: &str = "CHUNKSWEEP_LLM_SECRETS_TEST_KEY";

fn files_containing(dir: &Path, needle: &[u8]) -> (usize, Vec<String>) {
    let mut scanned = 0;
    let mut hits = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            let (n, h) = files_containing(&p, needle);
            scanned += n;
            hits.extend(h);
            continue;
        }
        scanned += 1;
        let bytes = std::fs::read(&p).unwrap();
        if bytes.windows(needle.len()).any(|w| w == needle) {
            hits.push(p.display().to_string());
        }
    }
    (scanned, hits)
}

#[tokio::test]
async fn api_key_never_written() {
    // SAFETY: the only test of this binary that touches the environment; the other reads none.
    unsafe { std::env::set_var(KEY_VAR, KEY) };
    unsafe { std::env::set_var("CHUNKSWEEP_LLM_SECRETS_BAD_KEY", "sk-first-half\nsk-second") };
    let bad = ApiKey::from_env("CHUNKSWEEP_LLM_SECRETS_BAD_KEY").unwrap_err();
    assert_eq!(
        bad,
        chunksweep::llm::LlmError::BadKey {
            var: "CHUNKSWEEP_LLM_SECRETS_BAD_KEY".into()
        }
    );
    assert!(
        bad.to_string().contains("$CHUNKSWEEP_LLM_SECRETS_BAD_KEY"),
        "{bad}"
    );
    assert!(!bad.to_string().contains("sk-first"), "{bad}");

    let s = MockServer::builder().start().await;
    let bearer = format!("Bearer {KEY}");
    // a good request must carry the key...
    Mock::given(path("/v1/chat/completions"))
        .and(header("authorization", bearer.as_str()))
        .and(wiremock::matchers::body_partial_json(
            json!({"messages": [{"role": "system"}, {"content": "good"}]}),
        ))
        .respond_with(ok_chat("hello"))
        .mount(&s)
        .await;
    // ...and a server that echoes it back in an error must not get it into our output
    Mock::given(path("/v1/chat/completions"))
        .and(wiremock::matchers::body_partial_json(json!({"messages": [{"role": "system"}, {"content": "echo"}]})))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": format!("Incorrect API key provided: {KEY}."), "code": "invalid_api_key"}
        })))
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(wiremock::matchers::body_partial_json(
            json!({"messages": [{"role": "system"}, {"content": "echo503"}]}),
        ))
        .respond_with(
            ResponseTemplate::new(503).set_body_string(format!("upstream rejected key {KEY}")),
        )
        .mount(&s)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&format!("{}/v1", s.uri()), dir.path());
    cfg.api_key_env = KEY_VAR.to_string();
    model_mut(&mut cfg).max_attempts = 2;
    let c = LlmClient::new(cfg.clone()).unwrap();

    let ok = c.chat("gen", req("good")).await.unwrap();
    assert_eq!(ok.content, "hello"); // proves the key was sent
    assert!(c.chat("gen", req("good")).await.unwrap().record.cache_hit);
    let e401 = c.chat("gen", req("echo")).await.unwrap_err();
    let e503 = c.chat("gen", req("echo503")).await.unwrap_err();
    let ejson = c
        .chat_json("judge", req("echo"), &json!({"type": "object"}))
        .await
        .unwrap_err();

    let mut texts = vec![
        format!("{c:?}"),
        format!("{cfg:?}"),
        format!("{:?}", ApiKey::new(KEY)),
    ];
    for e in [&e401, &e503, &ejson] {
        texts.push(e.to_string());
        texts.push(format!("{e:?}"));
    }
    let records = c.records();
    assert_eq!(records.len(), 5);
    texts.push(format!("{records:?}"));
    // the scrubbing left the rest of the server's message intact
    assert!(
        e401.to_string()
            .contains("Incorrect API key provided: ***."),
        "{e401}"
    );
    assert!(
        e503.to_string().contains("upstream rejected key ***"),
        "{e503}"
    );
    for t in &texts {
        assert!(!t.contains(KEY), "key leaked in: {t}");
    }

    let csv_path = dir.path().join("calls.csv");
    write_csv(&records, std::fs::File::create(&csv_path).unwrap()).unwrap();
    drop(c); // close the cache (WAL checkpoint)
    let (scanned, hits) = files_containing(dir.path(), KEY.as_bytes());
    assert!(
        scanned >= 2,
        "expected the cache and the CSV, scanned {scanned}"
    );
    assert!(hits.is_empty(), "key found in {hits:?}");
    // and a sanity check that the scan would have found it
    std::fs::write(dir.path().join("canary"), KEY).unwrap();
    assert_eq!(files_containing(dir.path(), KEY.as_bytes()).1.len(), 1);
}

const URL_SECRET: &str = "pw-0f9e8d7c6b";

#[tokio::test]
async fn credentials_in_the_base_url_are_sent_and_never_shown_or_stored() {
    let s = MockServer::builder().start().await;
    // user:pw-0f9e8d7c6b as basic authentication
    let basic = "Basic dXNlcjpwdy0wZjllOGQ3YzZi";
    Mock::given(path("/v1/chat/completions"))
        .and(header("authorization", basic))
        .and(wiremock::matchers::body_string_contains("good"))
        .respond_with(ok_chat("hello"))
        .mount(&s)
        .await;
    let port = s.address().port();
    let with_creds = format!("http://user:{URL_SECRET}@127.0.0.1:{port}/v1");
    Mock::given(path("/v1/chat/completions"))
        .and(wiremock::matchers::body_string_contains("echo"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": format!("bad credentials for {with_creds}")}
        })))
        .mount(&s)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&with_creds, dir.path());
    let c = LlmClient::with_api_key(cfg.clone(), None).unwrap();
    assert_eq!(c.base_url(), format!("http://***@127.0.0.1:{port}/v1"));
    assert_eq!(c.chat("gen", req("good")).await.unwrap().content, "hello");
    let e401 = c.chat("gen", req("echo")).await.unwrap_err();
    // nothing listens on port 9: a transport error, whose message names the URL (reqwest's own
    // message drops the credentials; the scrubbing would catch them otherwise)
    let mut closed = config(
        &format!("http://user:{URL_SECRET}@127.0.0.1:9/v1"),
        dir.path(),
    );
    closed.cache = false;
    model_mut(&mut closed).max_attempts = 1;
    let down = LlmClient::with_api_key(closed, None).unwrap();
    let econn = down.chat("gen", req("q")).await.unwrap_err();

    let recorded = c.resolved_config();
    assert_eq!(
        recorded.base_url.as_deref(),
        Some(format!("http://***@127.0.0.1:{port}/v1").as_str())
    );
    let mut texts = vec![
        format!("{c:?}"),
        serde_json::to_string(&cfg).unwrap(),
        serde_json::to_string(&recorded).unwrap(),
        format!("{:?}", c.records()),
        format!("{:?}", down.records()),
    ];
    for e in [&e401, &econn] {
        texts.push(e.to_string());
        texts.push(format!("{e:?}"));
    }
    assert!(e401.to_string().contains("http://***@127.0.0.1"), "{e401}");
    assert!(econn.to_string().contains("127.0.0.1:9"), "{econn}");
    for t in &texts {
        assert!(!t.contains(URL_SECRET), "credentials leaked in: {t}");
    }
    drop(c);
    let (scanned, hits) = files_containing(dir.path(), URL_SECRET.as_bytes());
    assert!(scanned >= 1);
    assert!(hits.is_empty(), "credentials found in {hits:?}");
}
