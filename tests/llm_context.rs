//! llm_context prefixes against a mock OpenAI-compatible server: one call per distinct chunk
//! (chunks shared by configurations are asked once), the contexts become the prefixes, costs are
//! recorded, and a second identical run sends nothing.

mod llm_support;

use std::path::Path;

use chunksweep::chunking::enrich::Prefix;
use chunksweep::chunking::{ChunkContext, ChunkParams, Strategy};
use chunksweep::corpus::load_corpus;
use chunksweep::golden::GoldenSet;
use chunksweep::prepare::contexts::{
    ContextPrompt, ContextSettings, generate_contexts, needed_chunks,
};
use chunksweep::sweep::{ConfigIndex, ConfigSpec, RetrievalContext, RetrieverKind};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};
use llm_support::*;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer};

fn spec(strategy: Strategy, size: usize, prefix: Prefix) -> ConfigSpec {
    ConfigSpec {
        params: ChunkParams {
            strategy,
            chunk_size: size,
            chunk_overlap: 0,
        },
        prefix,
        retriever: RetrieverKind::Bm25,
        bm25: Default::default(),
        rerank: false,
        expand: Default::default(),
    }
}

#[tokio::test]
async fn contexts_are_asked_once_per_distinct_chunk_and_cached() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("  Part of the handbook's\nbilling chapter. "))
        .mount(&s)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = load_corpus(&root.join("datasets/handbook"), &Default::default()).unwrap();
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    // markdown at 512 and 1024 cut the handbook the same way (its sections are shorter), so the
    // second configuration adds no new chunk; the `none` configuration needs no context.
    let configs = vec![
        spec(Strategy::Markdown, 512, Prefix::LlmContext),
        spec(Strategy::Markdown, 1024, Prefix::LlmContext),
        spec(Strategy::Fixed, 256, Prefix::None),
    ];
    let needed = needed_chunks(&corpus, &tokens, &configs, &ChunkContext::default()).unwrap();
    let keys = &needed.keys;
    assert_eq!(needed.occurrences, 2 * keys.len());
    let prompt = ContextPrompt::load(&root.join("prompts/context.md")).unwrap();
    let settings = ContextSettings {
        model: MODEL.into(),
        window_tokens: 300,
        ..ContextSettings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&format!("{}/v1", s.uri()), dir.path()));
    let first = generate_contexts(&c, &corpus, &tokens, &needed, &prompt, &settings, &|_| {})
        .await
        .unwrap();
    assert_eq!(first.summary.chunks, keys.len());
    assert_eq!(first.summary.calls_sent, keys.len());
    assert_eq!(first.summary.cache_hits, 0);
    assert_eq!(first.summary.prompt_tokens, 10 * keys.len() as u64);
    // $2.50 and $10 per million: 10 prompt and 2 completion tokens per call
    let expected = keys.len() as f64 * (10.0 * 2.5 + 2.0 * 10.0) / 1e6;
    assert!((first.summary.cost_usd.unwrap() - expected).abs() < 1e-12);
    assert_eq!(s.received_requests().await.unwrap().len(), keys.len());
    // the window: no request shows more than about 300 tokens of a document
    for r in s.received_requests().await.unwrap() {
        let body: serde_json::Value = r.body_json().unwrap();
        let text = body["messages"][0]["content"].as_str().unwrap();
        let doc = text.split("</document>").next().unwrap();
        assert!(
            tokens.counter().count(doc) < 360,
            "{}",
            tokens.counter().count(doc)
        );
    }

    // the contexts are the prefixes, one line each (no question is ranked here)
    let no_questions = GoldenSet {
        path: "none".into(),
        questions: Vec::new(),
        trimmed_spans: 0,
    };
    let context = std::sync::Arc::new(RetrievalContext {
        contexts: first.contexts.clone(),
        ..RetrievalContext::for_spec(&corpus, &Default::default(), &no_questions)
    });
    let index = ConfigIndex::build(&corpus, &tokens, &configs[0], &context).unwrap();
    assert!(
        index
            .chunks
            .iter()
            .all(|ch| ch.prefix == "Part of the handbook's billing chapter.")
    );

    // a second identical run sends nothing
    let c2 = client(config(&format!("{}/v1", s.uri()), dir.path()));
    let second = generate_contexts(&c2, &corpus, &tokens, &needed, &prompt, &settings, &|_| {})
        .await
        .unwrap();
    assert_eq!(second.summary.calls_sent, 0);
    assert_eq!(second.summary.cache_hits, keys.len());
    assert_eq!(second.summary.cost_usd, Some(0.0));
    assert_eq!(second.contexts, first.contexts);
    assert_eq!(s.received_requests().await.unwrap().len(), keys.len());
}
