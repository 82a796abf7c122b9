//! What a cut of the ranked list retrieves, on seed 000's toy corpus (three documents of 75, 82
//! and 80 words) with the `words` unit, where every count is known by hand.

use std::path::Path;

use chunksweep::chunking::Strategy;
use chunksweep::corpus::load_corpus;
use chunksweep::golden::{self, GoldenFormat};
use chunksweep::metrics::Cut;
use chunksweep::sweep::{
    ConfigCut, CutOutcome, Grid, Overlap, RetrieverKind, SweepSpec, expand, run_sweep,
};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};

/// Each size's rows at top k.
fn sweep(sizes: Vec<usize>, top_k: usize) -> Vec<CutOutcome> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed000");
    let corpus = load_corpus(&root.join("corpus"), &Default::default()).unwrap();
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
        Grid {
            configs: &expand(&spec).unwrap(),
            cuts: &spec.cuts(),
        },
        &std::sync::Arc::new(chunksweep::sweep::RetrievalContext::for_spec(
            &corpus, &spec, &golden,
        )),
        false,
        |_| {},
    )
    .unwrap()
    .into_iter()
    .map(|mut o| o.cuts.remove(0))
    .collect()
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

#[test]
fn a_budget_cut_takes_exactly_the_chunks_that_fit() {
    // Three documents of exactly 10 words, chunked at 10 words: three chunks of 10 words. A
    // budget of 25 takes two chunks for every question, 5 still takes one (at least one chunk),
    // and 1,000 takes the three there are (never more than the index).
    let dir = tempfile::tempdir().unwrap();
    let corpus_dir = dir.path().join("corpus");
    std::fs::create_dir(&corpus_dir).unwrap();
    let docs = [
        (
            "a.md",
            "refunds take fourteen days from the date of the request",
        ),
        (
            "b.md",
            "shipping is free for orders above fifty euros in europe",
        ),
        (
            "c.md",
            "support answers every ticket within two working days or less",
        ),
    ];
    for (name, text) in docs {
        std::fs::write(corpus_dir.join(name), text).unwrap();
    }
    let golden_path = dir.path().join("golden.jsonl");
    std::fs::write(
        &golden_path,
        "{\"id\": \"q1\", \"question\": \"How long do refunds take?\", \"evidence\": [\"refunds take fourteen days\"]}\n\
         {\"id\": \"q2\", \"question\": \"Is shipping free?\", \"evidence\": [\"shipping is free\"]}\n",
    )
    .unwrap();
    let corpus = load_corpus(&corpus_dir, &Default::default()).unwrap();
    let golden = golden::load(&golden_path, GoldenFormat::Jsonl, &corpus).unwrap();
    let spec = SweepSpec {
        strategies: vec![Strategy::Words],
        sizes: vec![10],
        overlap: Overlap::Tokens(0),
        top_k: 1,
        budgets: vec![25, 5, 1000],
        tokenizer: TokenizerKind::Words,
        retrievers: vec![RetrieverKind::Bm25],
        ..SweepSpec::default()
    };
    // One configuration, read at k and at each budget from one ranking.
    let configs = expand(&spec).unwrap();
    assert_eq!(configs.len(), 1);
    let cuts = spec.cuts();
    assert_eq!(
        cuts,
        [
            Cut::K(1),
            Cut::Budget(25),
            Cut::Budget(5),
            Cut::Budget(1000)
        ]
    );
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let context = std::sync::Arc::new(chunksweep::sweep::RetrievalContext::for_spec(
        &corpus, &spec, &golden,
    ));
    let outcomes = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &configs,
            cuts: &cuts,
        },
        &context,
        false,
        |_| {},
    )
    .unwrap();
    assert_eq!(outcomes.len(), 1);
    let rows = &outcomes[0].cuts;
    let ids: Vec<&str> = rows.iter().map(|c| c.row.config_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "words-10-o0-none-bm25-k1",
            "words-10-o0-none-bm25-b25",
            "words-10-o0-none-bm25-b5",
            "words-10-o0-none-bm25-b1000"
        ]
    );
    // Ids parse back to the same configuration and cut.
    for c in rows {
        let at: ConfigCut = c.row.config_id.parse().unwrap();
        assert_eq!(
            at,
            ConfigCut {
                config: configs[0].clone(),
                cut: c.cut
            }
        );
    }
    let per_question: Vec<Vec<usize>> = rows
        .iter()
        .map(|o| o.questions.iter().map(|q| q.chunks_retrieved).collect())
        .collect();
    // At 5 tokens every 10-word chunk is larger than the budget: nothing is sent (a cut never
    // sends more than its budget), and both questions count a chunk skipped for size.
    assert_eq!(
        per_question,
        [vec![1, 1], vec![2, 2], vec![0, 0], vec![3, 3]]
    );
    let tokens_per_query: Vec<f64> = rows.iter().map(|o| o.row.tokens_per_query).collect();
    assert_eq!(tokens_per_query, [10.0, 20.0, 0.0, 30.0]);
    let skipped: Vec<(usize, usize)> = rows
        .iter()
        .map(|o| (o.row.questions_skipped_for_size, o.row.chunks_over_budget))
        .collect();
    assert_eq!(skipped, [(0, 0), (0, 0), (2, 3), (0, 0)]);
    let cut_columns: Vec<(&str, Option<usize>, usize)> = rows
        .iter()
        .map(|o| (o.row.cut.as_str(), o.row.budget_tokens, o.row.top_k))
        .collect();
    assert_eq!(
        cut_columns,
        [
            ("k", None, 1),
            ("budget", Some(25), 0),
            ("budget", Some(5), 0),
            ("budget", Some(1000), 0)
        ]
    );
    assert!(rows[1].questions.iter().all(|q| q.cut == "budget"));
    // Both questions are found at every cut that sends a chunk: the evidence is one chunk's
    // start.
    let recall: Vec<f64> = rows.iter().map(|o| o.row.span_recall).collect();
    assert_eq!(recall, [1.0, 1.0, 0.0, 1.0]);
    // The judge retrieves through the same index at a cut.
    let index =
        chunksweep::sweep::ConfigIndex::build(&corpus, &tokens, &configs[0], &context).unwrap();
    assert_eq!(
        index
            .retrieve("refunds", Cut::Budget(25))
            .unwrap()
            .top
            .len(),
        2
    );
    assert_eq!(index.retrieve("refunds", Cut::K(1)).unwrap().top.len(), 1);
}
