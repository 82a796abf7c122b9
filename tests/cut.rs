//! What a cut of the ranked list retrieves, on seed 000's toy corpus (three documents of 75, 82
//! and 80 words) with the `words` unit, where every count is known by hand.

use std::path::Path;

use chunksweep::chunking::Strategy;
use chunksweep::corpus::load_corpus;
use chunksweep::golden::{self, GoldenFormat};
use chunksweep::sweep::{ConfigOutcome, Overlap, RetrieverKind, SweepSpec, expand, run_sweep};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};

fn sweep(sizes: Vec<usize>, top_k: usize) -> Vec<ConfigOutcome> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed000");
    let corpus = load_corpus(&root.join("corpus")).unwrap();
    let golden = golden::load(&root.join("golden.jsonl"), GoldenFormat::Jsonl, &corpus).unwrap();
    let spec = SweepSpec {
        strategies: vec![Strategy::Words],
        sizes,
        overlap: Overlap::Ratio(0.25),
        top_k,
        tokenizer: TokenizerKind::Words,
        retrievers: vec![RetrieverKind::Bm25],
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    run_sweep(
        &corpus,
        &tokens,
        &golden,
        &expand(&spec).unwrap(),
        &Default::default(),
        false,
        |_| {},
    )
    .unwrap()
}

#[test]
fn k_beyond_the_index_retrieves_the_index_and_no_more() {
    // At 128 words every document is one chunk: 3 chunks, 75 + 82 + 80 = 237 words. With k = 10
    // every question retrieves all three, so tokens per query is exactly the index, not 10 × 79.
    let o = &sweep(vec![128], 10)[0];
    assert_eq!(o.row.n_chunks, 3);
    assert_eq!(o.row.index_tokens, 237);
    assert_eq!(o.row.tokens_per_query, 237.0);
    assert_eq!(o.row.chunks_retrieved_mean, 3.0);
    assert_eq!(o.row.chunks_retrieved_max, 3);
    assert_eq!((o.row.n_docs, o.row.single_chunk_docs), (3, 3));
    assert!(o.questions.iter().all(|q| q.tokens_retrieved == 237));
}

#[test]
fn span_lengths_are_recorded_in_the_unit() {
    // "defaults to 300 seconds and cannot be set below 30 seconds" is 11 words; "does not read
    // the lowercase https_proxy variable" 7; "600 API requests per minute" 5.
    let o = &sweep(vec![16], 2)[0];
    let spans: Vec<&str> = o.questions[..3]
        .iter()
        .map(|q| q.span_tokens.as_str())
        .collect();
    assert_eq!(spans, ["11", "7", "5"]);
    // Two chunks of at most 16 words per question.
    assert!(o.questions.iter().all(|q| q.chunks_retrieved == 2));
    assert!(o.questions.iter().all(|q| q.tokens_retrieved <= 32));
    assert_eq!(o.row.single_chunk_docs, 0);
}
