//! The response cache: a repeated request is answered from disk, sends nothing and costs
//! nothing; the cache can be turned off; configuration reads from TOML.

mod llm_support;

use chunksweep::llm::{ClientConfig, EmbedRequest, ResponseFormatKind};
use llm_support::*;
use serde_json::json;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn base(s: &MockServer) -> String {
    format!("{}/v1", s.uri())
}

#[tokio::test]
async fn repeated_chat_is_served_from_disk() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(chat_body("cached answer", Some((30, 4)))),
        )
        .expect(1)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let first = c.chat("gen", req("q")).await.unwrap();
    assert!(!first.record.cache_hit);
    assert!(first.record.cost_usd.unwrap() > 0.0);

    let second = c.chat("gen", req("q")).await.unwrap();
    assert_eq!(second.content, "cached answer");
    let r = &second.record;
    assert!(r.cache_hit);
    assert_eq!(r.cost_usd, Some(0.0));
    assert_eq!(r.attempts, 0);
    assert_eq!((r.latency_ms_first_byte, r.latency_ms_total), (None, None));
    assert_eq!((r.prompt_tokens, r.completion_tokens), (30, 4));

    // a fresh client on the same file: still a hit
    let c2 = client(config(&base(&s), dir.path()));
    assert!(c2.chat("gen", req("q")).await.unwrap().record.cache_hit);
    assert_eq!(s.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn different_parameters_miss() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("a"))
        .expect(3)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    c.chat("gen", req("q")).await.unwrap();
    let mut warmer = req("q");
    warmer.temperature = Some(0.7);
    assert!(!c.chat("gen", warmer).await.unwrap().record.cache_hit);
    // same messages, different model name: another key
    let mut other_model = req("q");
    other_model.model = "other".into();
    assert!(!c.chat("gen", other_model).await.unwrap().record.cache_hit);
}

#[tokio::test]
async fn disabled_cache_sends_every_time_and_writes_no_file() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("a"))
        .expect(2)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&base(&s), dir.path());
    cfg.cache = false;
    let c = client(cfg);
    c.chat("gen", req("q")).await.unwrap();
    assert!(!c.chat("gen", req("q")).await.unwrap().record.cache_hit);
    assert!(!dir.path().join("cache.sqlite").exists());
}

#[tokio::test]
async fn chat_json_and_embeddings_are_cached() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat(r#"{"verdict":"pass","reason":"r"}"#))
        .expect(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"index": 0, "embedding": [0.5, 0.25]}],
            "usage": {"prompt_tokens": 3, "total_tokens": 3}
        })))
        .expect(1)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let schema = json!({"type": "object", "required": ["verdict"]});
    for _ in 0..2 {
        c.chat_json("judge", req("q"), &schema).await.unwrap();
    }
    let embed = || EmbedRequest {
        model: "emb".into(),
        inputs: vec!["chunk".into()],
    };
    c.embed("embed", embed()).await.unwrap();
    let again = c.embed("embed", embed()).await.unwrap();
    assert_eq!(again.embeddings, vec![vec![0.5, 0.25]]);
    let hits: Vec<bool> = c.records().iter().map(|r| r.cache_hit).collect();
    assert_eq!(hits, vec![false, true, false, true]);
    let json_hit = &c.records()[1];
    assert_eq!(
        json_hit.response_format,
        Some(ResponseFormatKind::JsonSchema)
    );
}

#[test]
fn config_from_toml_section() {
    #[derive(serde::Deserialize)]
    struct File {
        llm: ClientConfig,
    }
    let f: File = toml::from_str(
        r#"
        [llm]
        base_url = "http://localhost:8000/v1/"
        cache = false
        json_mode = "json_object"

        [llm.retry]
        base_delay_ms = 250

        [llm.models.judge-model]
        rpm = 600
        tpm = 90000
        max_in_flight = 16
        input_usd_per_mtok = 0.15
        output_usd_per_mtok = 0.6
        "#,
    )
    .unwrap();
    let c = f.llm;
    assert_eq!(c.resolved_base_url(), "http://localhost:8000/v1");
    assert!(!c.cache);
    assert_eq!(c.api_key_env, "OPENAI_API_KEY");
    assert_eq!(c.json_mode, ResponseFormatKind::JsonObject);
    assert_eq!(c.retry.base_delay_ms, 250);
    assert_eq!(c.retry.max_delay_s, 60.0);
    let m = c.model("judge-model");
    assert_eq!(
        (m.rpm, m.tpm, m.max_in_flight, m.max_attempts),
        (600, 90000, 16, 6)
    );
    assert_eq!(m.output_usd_per_mtok, Some(0.6));
    // unknown models use the defaults
    assert_eq!(c.model("other").rpm, 60);
    assert_eq!(c.model("other").input_usd_per_mtok, None);
    // typos are errors, not silently ignored
    assert!(toml::from_str::<File>("[llm]\nrmp = 5\n").is_err());
    assert!(toml::from_str::<File>("[llm.models.x]\nrmp = 5\n").is_err());
}
