//! Dense and hybrid retrieval and semantic chunking against a mock embeddings server whose
//! vectors are chosen by keyword, so every ranking, margin and split is known by hand.

mod embed_support;
mod llm_support;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chunksweep::chunking::Strategy;
use chunksweep::corpus::{Corpus, load_corpus};
use chunksweep::expand::Expand;
use chunksweep::golden::{self, GoldenFormat, GoldenSet};
use chunksweep::prepare::embed::{EmbedError, EmbedStats, Embedder};
use chunksweep::prepare::embed_cache::EmbedCache;
use chunksweep::prepare::vectors::{embed_chunks, embed_sentences};
use chunksweep::retrieval::embeddings::EmbedSettings;
use chunksweep::retrieval::hybrid::HybridSettings;
use chunksweep::sweep::{
    ConfigOutcome, Grid, Overlap, RetrievalContext, RetrieverKind, SweepSpec, expand, run_sweep,
};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};
use embed_support::embeddings_reply;
use llm_support::*;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Keyword groups of the mock vectors: e0 apples, e1 invoices and payments, e2 rivers, e3 otherwise.
const KEYWORDS: &[&[&str]] = &[&["apple"], &["invoice", "payment"], &["river"]];

/// Answers /embeddings with [`keyword_vector`] of each input; counts requests and keeps every input.
#[derive(Clone, Default)]
struct KeywordEmbedder {
    requests: Arc<AtomicUsize>,
    inputs: Arc<Mutex<Vec<(String, String)>>>,
}

impl Respond for KeywordEmbedder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (model, inputs, reply) = embeddings_reply(&body, KEYWORDS);
        self.inputs
            .lock()
            .unwrap()
            .extend(inputs.into_iter().map(|s| (model.clone(), s)));
        reply
    }
}

const P1: &str = "Apples grow on trees in the old orchard.";
const P2: &str = "The invoice total must be paid within thirty days.";
const P3: &str = "Rivers flood the valley every spring after snowmelt.";

fn write_inputs(dir: &Path, doc: &str, golden: &[Value]) -> (Corpus, GoldenSet) {
    let corpus_dir = dir.join("corpus");
    std::fs::create_dir_all(&corpus_dir).unwrap();
    std::fs::write(corpus_dir.join("a.md"), doc).unwrap();
    let g = dir.join("golden.jsonl");
    let lines: Vec<String> = golden.iter().map(Value::to_string).collect();
    std::fs::write(&g, lines.join("\n") + "\n").unwrap();
    let corpus = load_corpus(&corpus_dir, &Default::default()).unwrap();
    let set = golden::load(&g, GoldenFormat::Jsonl, &corpus).unwrap();
    (corpus, set)
}

async fn server() -> (MockServer, KeywordEmbedder) {
    let server = MockServer::builder().start().await;
    let responder = KeywordEmbedder::default();
    Mock::given(path("/embeddings"))
        .respond_with(responder.clone())
        .mount(&server)
        .await;
    (server, responder)
}

fn embedder(server: &MockServer, dir: &Path, settings: EmbedSettings) -> Embedder {
    let mut cfg = config(&server.uri(), dir);
    cfg.cache = false;
    let cache = EmbedCache::open(&dir.join("embed.sqlite")).unwrap();
    Embedder::with_client(settings, client(cfg), Some(cache))
}

fn settings() -> EmbedSettings {
    EmbedSettings {
        base_url: None,
        model: MODEL.into(),
        query_model: None,
        query_prefix: "query: ".into(),
        document_prefix: "passage: ".into(),
        batch_size: 2,
        ..EmbedSettings::default()
    }
}

/// The prepare step's embeddings for the grid of `spec`.
async fn embed_for_sweep(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    spec: &SweepSpec,
    emb: &Embedder,
) -> Result<(RetrievalContext, EmbedStats), EmbedError> {
    let mut context = RetrievalContext::for_spec(corpus, spec, golden);
    let configs = expand(spec).unwrap();
    let mut stats = embed_sentences(corpus, &configs, emb, &mut context).await?;
    stats.add(&embed_chunks(corpus, tokens, golden, &configs, emb, &mut context).await?);
    Ok((context, stats))
}

fn row<'a>(outcomes: &'a [ConfigOutcome], retriever: &str) -> &'a ConfigOutcome {
    outcomes
        .iter()
        .find(|o| o.cuts[0].row.retriever == retriever)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dense_and_hybrid_rank_as_computed_by_hand_and_a_rerun_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, golden) = write_inputs(
        dir.path(),
        &format!("{P1}\n\n{P2}\n\n{P3}\n"),
        &[
            json!({"id": "q1", "question": "When is payment due?", "evidence": [P2]}),
            json!({"id": "q2", "question": "Which apples grow in the orchard?", "evidence": [P1]}),
        ],
    );
    let spec = SweepSpec {
        strategies: vec![Strategy::Recursive],
        sizes: vec![12],
        overlap: Overlap::Tokens(0),
        top_k: 1,
        tokenizer: TokenizerKind::Cl100kBase,
        retrievers: vec![
            RetrieverKind::Bm25,
            RetrieverKind::Dense,
            RetrieverKind::Hybrid,
        ],
        hybrid: HybridSettings {
            dense_weight: 2.0,
            ..HybridSettings::default()
        },
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let (server, seen) = server().await;
    let emb = embedder(&server, dir.path(), settings());
    let (context, stats) = embed_for_sweep(&corpus, &tokens, &golden, &spec, &emb)
        .await
        .unwrap();
    // 3 chunks (one per paragraph) in 2 batches of at most 2, and 2 questions in 1 batch.
    assert_eq!(stats.texts, 5);
    assert_eq!(stats.sent, 5);
    assert_eq!(stats.cached, 0);
    assert_eq!(stats.requests, 3);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 3);
    {
        let inputs = seen.inputs.lock().unwrap();
        assert!(inputs.contains(&(MODEL.into(), format!("passage: {P2}"))));
        assert!(inputs.contains(&(MODEL.into(), "query: When is payment due?".into())));
    }
    let context = Arc::new(context);
    let outcomes = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &expand(&spec).unwrap(),
            cuts: &spec.cuts(),
        },
        &context,
        true,
        |_| {},
    )
    .unwrap();
    assert_eq!(outcomes.len(), 3);
    for o in &outcomes {
        assert_eq!(o.cuts[0].row.n_chunks, 3, "{}", o.cuts[0].row.config_id);
    }

    // BM25: q1 shares no term with any chunk (all scores 0, chunk order puts P1 first); q2 finds P1.
    let bm25 = row(&outcomes, "bm25");
    assert_eq!(bm25.cuts[0].questions[0].retrieved_chunk_ids, "a.md#0");
    assert_eq!(bm25.cuts[0].row.span_recall, 0.5);
    assert_eq!(bm25.cuts[0].row.embed_tokens, 0);

    // Dense: q1 = e1 has cosine 1 with P2 and 0 with P1 and P3: margin 1 − 0 (cosine as is).
    let dense = row(&outcomes, "dense");
    assert_eq!(dense.cuts[0].row.config_id, "recursive-12-o0-none-dense-k1");
    assert_eq!(dense.cuts[0].questions[0].retrieved_chunk_ids, "a.md#1");
    assert_eq!(dense.cuts[0].questions[0].retrieved_scores, "1.0000");
    assert!((dense.cuts[0].questions[0].margin - 1.0).abs() < 1e-6);
    assert_eq!(dense.cuts[0].questions[1].retrieved_chunk_ids, "a.md#0");
    assert_eq!(dense.cuts[0].row.span_recall, 1.0);

    // Hybrid, weights bm25 1 and dense 2, k = 60. For q1 BM25 ties P1, P2, P3 (all score 0:
    // each shares rank 2, the mean of 1..3); dense ranks P2 first, then P1 and P3 tied at 0
    // (each 2.5). P2 = 1/62 + 2/61, P1 = P3 = 1/62 + 2/62.5: P2 wins, and the margin is
    // (P2 − P1) / (3/61) = (2/3)(1 − 61/62.5) = 0.016.
    let hybrid = row(&outcomes, "hybrid");
    assert_eq!(hybrid.cuts[0].questions[0].retrieved_chunk_ids, "a.md#1");
    let p2 = 1.0 / 62.0 + 2.0 / 61.0;
    assert_eq!(
        hybrid.cuts[0].questions[0].retrieved_scores,
        format!("{p2:.4}")
    );
    assert!(
        (hybrid.cuts[0].questions[0].margin - 0.016).abs() < 1e-9,
        "{}",
        hybrid.cuts[0].questions[0].margin
    );
    assert_eq!(hybrid.cuts[0].row.span_recall, 1.0);

    // Embedding cost: chunks and questions, cl100k tokens as sent, at $2.50 per million.
    assert!(dense.cuts[0].row.embed_tokens > 0);
    assert_eq!(
        dense.cuts[0].row.embed_tokens,
        hybrid.cuts[0].row.embed_tokens
    );
    let cost = dense.cuts[0].row.embed_cost_usd.unwrap();
    assert!((cost - dense.cuts[0].row.embed_tokens as f64 * 2.5e-6).abs() < 1e-12);

    // A rerun with the same cache (a new client and embedder) sends nothing and scores the same.
    let emb2 = embedder(&server, dir.path(), settings());
    let (context2, stats2) = embed_for_sweep(&corpus, &tokens, &golden, &spec, &emb2)
        .await
        .unwrap();
    assert_eq!(
        (stats2.texts, stats2.cached, stats2.sent, stats2.requests),
        (5, 5, 0, 0)
    );
    assert_eq!(
        seen.requests.load(Ordering::SeqCst),
        3,
        "no request on the rerun"
    );
    assert!(emb2.records().is_empty());
    let again = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &expand(&spec).unwrap(),
            cuts: &spec.cuts(),
        },
        &Arc::new(context2),
        false,
        |_| {},
    )
    .unwrap();
    for (a, b) in outcomes.iter().zip(&again) {
        assert_eq!(
            a.cuts[0].row, b.cuts[0].row,
            "a cached rerun gives the same row, embed_ms included"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dense_configuration_sends_its_neighbours_and_embeds_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, golden) = write_inputs(
        dir.path(),
        &format!("{P1}\n\n{P2}\n\n{P3}\n"),
        &[json!({"id": "q1", "question": "When is payment due?", "evidence": [P2, P3]})],
    );
    let spec = SweepSpec {
        strategies: vec![Strategy::Recursive],
        sizes: vec![12],
        overlap: Overlap::Tokens(0),
        top_k: 1,
        tokenizer: TokenizerKind::Cl100kBase,
        retrievers: vec![RetrieverKind::Dense],
        expand: vec![Expand::None, Expand::Neighbours(1)],
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let (server, _) = server().await;
    let emb = embedder(&server, dir.path(), settings());
    let (context, stats) = embed_for_sweep(&corpus, &tokens, &golden, &spec, &emb)
        .await
        .unwrap();
    // the three chunks and the question, once: an expansion embeds nothing of its own
    assert_eq!(stats.texts, 4);
    let configs = expand(&spec).unwrap();
    let outcomes = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &configs,
            cuts: &spec.cuts(),
        },
        &Arc::new(context),
        false,
        |_| {},
    )
    .unwrap();
    // dense ranks P2 first (cosine 1); alone it holds one of the two spans
    let alone = &outcomes[0].cuts[0];
    assert_eq!(alone.questions[0].retrieved_chunk_ids, "a.md#1");
    assert_eq!(alone.row.span_recall, 0.5);
    // with its neighbours: P1 to P3, one unit, both spans; the same ranking for MRR
    let wide = &outcomes[1].cuts[0];
    assert_eq!(
        wide.row.config_id,
        "recursive-12-o0-none-dense+neighbours1-k1"
    );
    assert_eq!(wide.row.expand, "neighbours:1");
    assert_eq!(wide.questions[0].retrieved_chunk_ids, "a.md#0-2");
    assert_eq!(wide.row.span_recall, 1.0);
    assert_eq!(wide.row.mrr, alone.row.mrr);
    let text = corpus.docs[0].text.trim_end();
    assert_eq!(
        wide.questions[0].tokens_retrieved,
        tokens.counter().count(text)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_chunking_splits_at_the_topic_shift() {
    let dir = tempfile::tempdir().unwrap();
    let doc = "Apples are red. Apples are sweet. Apples fall in autumn. The invoice is late. The invoice must be paid.\n";
    let (corpus, golden) = write_inputs(
        dir.path(),
        doc,
        &[
            json!({"id": "q1", "question": "Is the invoice late?", "evidence": ["The invoice is late."]}),
        ],
    );
    let spec = SweepSpec {
        strategies: vec![Strategy::Semantic],
        sizes: vec![64, 8],
        overlap: Overlap::Tokens(0),
        top_k: 1,
        retrievers: vec![RetrieverKind::Bm25],
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let (server, seen) = server().await;
    let emb = embedder(&server, dir.path(), settings());
    let (context, stats) = embed_for_sweep(&corpus, &tokens, &golden, &spec, &emb)
        .await
        .unwrap();
    // Five distinct sentences, no question (BM25 needs none).
    assert_eq!(stats.texts, 5);
    assert!(
        seen.inputs
            .lock()
            .unwrap()
            .iter()
            .all(|(_, s)| s.starts_with("passage: "))
    );
    let outcomes = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &expand(&spec).unwrap(),
            cuts: &spec.cuts(),
        },
        &Arc::new(context),
        true,
        |_| {},
    )
    .unwrap();
    let texts = |o: &ConfigOutcome| -> Vec<String> {
        o.chunks
            .iter()
            .map(|c| c.text(&corpus).to_string())
            .collect()
    };
    // Distances: 0, 0, 1, 0; the 95th percentile is 0.85, so the one boundary is after the
    // third sentence.
    assert_eq!(
        texts(&outcomes[0]),
        vec![
            "Apples are red. Apples are sweet. Apples fall in autumn.",
            "The invoice is late. The invoice must be paid."
        ]
    );
    assert_eq!(outcomes[0].cuts[0].row.strategy, "semantic");
    assert!(
        outcomes[0].cuts[0].row.embed_tokens > 0,
        "sentences count as embedding cost"
    );
    // At 8 tokens the hard cap splits each group further; no chunk exceeds 8 tokens.
    let small = &outcomes[1];
    assert!(small.chunks.iter().all(|c| c.tokens <= 8));
    assert!(small.chunks.len() > 2);
    assert!(
        texts(small)
            .iter()
            .all(|t| !(t.contains("Apples") && t.contains("invoice")))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_over_the_limit_is_an_error_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, golden) = write_inputs(
        dir.path(),
        &format!("{P1}\n\n{P2}\n"),
        &[json!({"id": "q1", "question": "When is payment due?", "evidence": [P2]})],
    );
    let spec = SweepSpec {
        strategies: vec![Strategy::Recursive],
        sizes: vec![64],
        overlap: Overlap::Tokens(0),
        retrievers: vec![RetrieverKind::Dense],
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let (server, seen) = server().await;
    let emb = embedder(
        &server,
        dir.path(),
        EmbedSettings {
            max_input_tokens: 8,
            ..settings()
        },
    );
    let err = embed_for_sweep(&corpus, &tokens, &golden, &spec, &emb)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("exceeds embed.max_input_tokens = 8"), "{err}");
    assert_eq!(seen.requests.load(Ordering::SeqCst), 0);
}
