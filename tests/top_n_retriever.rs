//! A retriever that returns only its top n (a toy engine written here) plugged into the sweep:
//! its metrics at each cut equal values computed by hand, with the margin and tie rules of
//! `chunksweep::retrieval::retriever` for a top-n list.
//!
//! Five documents of exactly 10 words, chunked at 10 words: chunk i is document i (a … e.md),
//! 10 tokens each. The engine scores chunks from a fixed table and returns its best 3 (scores
//! as they are: `MarginScale::Raw`). Cuts: k = 2 and a budget of 30 tokens (3 chunks).

use std::collections::HashMap;
use std::sync::Arc;

use chunksweep::chunking::Strategy;
use chunksweep::corpus::load_corpus;
use chunksweep::golden::{self, GoldenFormat};
use chunksweep::metrics::{Cut, aggregate};
use chunksweep::retrieval::{Hit, MarginScale, Ranked, RetrievalError, Retriever};
use chunksweep::sweep::{
    ConfigIndex, Overlap, RetrievalContext, RetrieverKind, StageTimes, SweepSpec, expand,
    score_cuts,
};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};

/// Scores each chunk from a table by query and returns the best `n`, best first.
struct TopN {
    n: usize,
    scores: HashMap<String, Vec<f64>>,
}

impl Retriever for TopN {
    fn rank(&self, query: &str, _depth: usize) -> Result<Ranked, RetrievalError> {
        let scores = self
            .scores
            .get(query)
            .ok_or_else(|| RetrievalError::Engine(format!("no scores for {query:?}")))?;
        let mut hits: Vec<Hit> = scores
            .iter()
            .enumerate()
            .map(|(chunk, &score)| Hit { chunk, score })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
        hits.truncate(self.n);
        Ok(Ranked::Top(hits))
    }

    fn margin_scale(&self) -> MarginScale {
        MarginScale::Raw
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn a_top_n_engine_gets_recall_hit_mrr_margin_and_ties_as_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let corpus_dir = dir.path().join("corpus");
    std::fs::create_dir(&corpus_dir).unwrap();
    let docs = [
        (
            "a.md",
            "apples grow in the north orchard during the late summer",
        ),
        (
            "b.md",
            "bread is baked every morning before the bakery shop opens",
        ),
        ("c.md", "cheese ages for six months in a cool stone cellar"),
        (
            "d.md",
            "dates arrive by ship from the south twice each year",
        ),
        ("e.md", "eggs are collected from farm hens each day at dawn"),
    ];
    for (name, text) in docs {
        std::fs::write(corpus_dir.join(name), text).unwrap();
    }
    let golden_path = dir.path().join("golden.jsonl");
    std::fs::write(
        &golden_path,
        "{\"id\": \"q1\", \"question\": \"cheese\", \"evidence\": [\"cheese ages for six months\"]}\n\
         {\"id\": \"q2\", \"question\": \"eggs\", \"evidence\": [\"eggs are collected from farm hens\"]}\n\
         {\"id\": \"q3\", \"question\": \"food\", \"evidence\": [\"bread is baked every morning\", \"cool stone cellar\", \"dates arrive by ship\"]}\n",
    )
    .unwrap();
    let corpus = load_corpus(&corpus_dir, &Default::default()).unwrap();
    let golden = golden::load(&golden_path, GoldenFormat::Jsonl, &corpus).unwrap();
    let spec = SweepSpec {
        strategies: vec![Strategy::Words],
        sizes: vec![10],
        overlap: Overlap::Tokens(0),
        top_k: 2,
        budgets: vec![30],
        tokenizer: TokenizerKind::Words,
        retrievers: vec![RetrieverKind::Bm25],
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let context = Arc::new(RetrievalContext::for_spec(&corpus, &spec, &golden));
    let mut index =
        ConfigIndex::build(&corpus, &tokens, &expand(&spec).unwrap()[0], &context).unwrap();
    assert_eq!(index.chunk_tokens(), [10; 5]);
    // Scores of chunks a, b, c, d, e (0 … 4) per question; the engine returns the best 3.
    // q1 (evidence in c): c0 .9, c1 .8, c2 .7 returned: the correct chunk is third.
    // q2 (evidence in e): c0 .5, c1 .4, c2 .4 returned: the correct chunk (.2) is not; k = 2
    //    falls between the two chunks scoring .4.
    // q3 (evidence in b, c and d): c1 .9, c2 .8, c3 .5 returned, all correct.
    let scores = [
        ("cheese", vec![0.9, 0.8, 0.7, 0.6, 0.1]),
        ("eggs", vec![0.5, 0.4, 0.4, 0.3, 0.2]),
        ("food", vec![0.45, 0.9, 0.8, 0.5, 0.4]),
    ];
    index.retriever = Box::new(TopN {
        n: 3,
        scores: scores
            .into_iter()
            .map(|(q, s)| (q.to_string(), s))
            .collect(),
    });
    let cuts = spec.cuts();
    assert_eq!(cuts, [Cut::K(2), Cut::Budget(30)]);
    let mut times = StageTimes::default();
    let scored = score_cuts(&corpus, &tokens, &golden, &index, &cuts, &mut times).unwrap();
    let (at_k, at_budget) = (&scored[0], &scored[1]);
    assert_eq!(at_k.config_id, "words-10-o0-none-bm25-k2");
    assert_eq!(at_budget.config_id, "words-10-o0-none-bm25-b30");

    // What each cut retrieves: k = 2 the first two hits; 30 tokens all three returned (the
    // budget would take a fourth chunk, but the engine returned three).
    let ids =
        |q: usize, at: &chunksweep::sweep::CutScores| at.questions[q].retrieved_chunk_ids.clone();
    assert_eq!(ids(0, at_k), "a.md#0|b.md#0");
    assert_eq!(ids(0, at_budget), "a.md#0|b.md#0|c.md#0");
    assert_eq!(ids(2, at_budget), "b.md#0|c.md#0|d.md#0");

    // Per question, by hand:
    // q1: first correct rank 3; margin .7 − .9 (best wrong: c0) = −.2.
    // q2: correct chunk not returned: rank unknown, reciprocal rank 0; it counts as scoring the
    //     last hit's .4, best wrong c0 .5: margin −.1. Tie at k = 2 (.4 and .4); none at the
    //     budget cut, which takes the whole list (the next score is unseen).
    // q3: first correct rank 1; no wrong chunk returned, so the best wrong counts as the last
    //     hit's .5: margin .9 − .5 = .4.
    let m_k = &at_k.metrics;
    let m_b = &at_budget.metrics;
    assert_eq!(
        m_k.iter().map(|m| m.first_correct_rank).collect::<Vec<_>>(),
        [Some(3), None, Some(1)]
    );
    for (m, want) in m_k.iter().zip([-0.2, -0.1, 0.4]) {
        assert!(close(m.margin, want), "{} != {want}", m.margin);
    }
    assert_eq!(
        m_k.iter().map(|m| m.tie_at_k).collect::<Vec<_>>(),
        [false, true, false]
    );
    assert_eq!(
        m_b.iter().map(|m| m.tie_at_k).collect::<Vec<_>>(),
        [false, false, false]
    );
    // recall@k: q1 0, q2 0, q3 2 of 3 spans (b and c); at the budget q1 1, q2 0, q3 1.
    assert_eq!(
        m_k.iter().map(|m| m.spans_found).collect::<Vec<_>>(),
        [0, 0, 2]
    );
    assert_eq!(
        m_b.iter().map(|m| m.spans_found).collect::<Vec<_>>(),
        [1, 0, 3]
    );
    assert_eq!(
        m_b.iter().map(|m| m.reciprocal_rank).collect::<Vec<_>>(),
        [1.0 / 3.0, 0.0, 1.0]
    );

    // The rows' aggregates.
    let k = aggregate(m_k);
    assert!(close(k.span_recall, (0.0 + 0.0 + 2.0 / 3.0) / 3.0));
    assert!(close(k.hit_rate, 1.0 / 3.0));
    assert!(close(k.mrr, 1.0 / 3.0));
    assert!(close(k.margin, (-0.2 - 0.1 + 0.4) / 3.0));
    assert_eq!(k.ties_at_k, 1);
    let b = aggregate(m_b);
    assert!(close(b.span_recall, 2.0 / 3.0));
    assert!(close(b.hit_rate, 2.0 / 3.0));
    assert!(close(b.mrr, (1.0 / 3.0 + 1.0) / 3.0));
    assert!(
        close(b.margin, k.margin),
        "the margin does not depend on the cut"
    );
    assert_eq!(b.ties_at_k, 0);
    assert_eq!(b.tokens_per_query, 30.0);
    // The written row of q2 leaves the unknown rank empty, as for an unreachable question, but
    // the question is reachable.
    assert_eq!(at_k.questions[1].first_correct_rank, None);
    assert_eq!(at_k.questions[1].unreachable, 0);
}
