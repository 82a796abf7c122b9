//! Hand-checked metrics on a tiny corpus whose first document has curly quotes, accents, a euro
//! sign and an emoji, so code-point offsets (76 in all) and byte offsets (89) differ.
//!
//! ```text
//! a.md: “Zoë’s café” costs €5 🙂. Refunds take 14 days. Partial refunds are prorated.
//!       span A "Refunds take 14 days."          = [25, 46)  (bytes 38..)
//!       span B "Partial refunds are prorated."  = [47, 76)
//! chunks: c0 = a[0, 30)  c1 = a[20, 50)  c2 = a[40, 76)  c3 = b[0, 22)
//! scores: c0 4.0  c1 1.0  c2 2.0  c3 3.0   → ranking c0, c3, c2, c1
//! ```

use super::*;
use crate::corpus::{Corpus, Document};
use crate::golden::{EvidenceSpan, Location, Question};
use crate::retrieval::{Ranked, Ranking};

fn corpus() -> Corpus {
    Corpus::from_documents(
        "t",
        vec![
            Document::new(
                "a.md",
                "“Zoë’s café” costs €5 🙂. Refunds take 14 days. Partial refunds are prorated.",
            ),
            Document::new("b.md", "Nothing relevant here."),
        ],
    )
}

fn chunk(corpus: &Corpus, doc: usize, ordinal: usize, start: usize, end: usize) -> Chunk {
    let d = &corpus.docs[doc];
    Chunk {
        doc,
        ordinal,
        start,
        end,
        byte_start: d.char_to_byte(start),
        byte_end: d.char_to_byte(end),
        heading_path: vec![],
        tokens: 0,
        prefix: String::new(),
        prefix_tokens: 0,
        carried: String::new(),
        carried_tokens: 0,
    }
}

fn chunks(corpus: &Corpus) -> Vec<Chunk> {
    vec![
        chunk(corpus, 0, 0, 0, 30),
        chunk(corpus, 0, 1, 20, 50),
        chunk(corpus, 0, 2, 40, 76),
        chunk(corpus, 1, 0, 0, 22),
    ]
}

const SCORES: [f64; 4] = [4.0, 1.0, 2.0, 3.0];

fn loc(doc: usize, start: usize, end: usize) -> Location {
    Location { doc, start, end }
}

fn question(spans: Vec<Vec<Location>>) -> Question {
    Question {
        line: 1,
        id: "q".into(),
        text: "refunds".into(),
        spans: spans
            .into_iter()
            .map(|locations| EvidenceSpan { locations })
            .collect(),
        answer: None,
        question_type: None,
        origin: Default::default(),
    }
}

fn two_spans() -> Question {
    question(vec![vec![loc(0, 25, 46)], vec![loc(0, 47, 76)]])
}

fn score(q: &Question, k: usize) -> QuestionMetrics {
    let c = corpus();
    let cs = chunks(&c);
    let table = ChunkTable::new(&cs, c.docs.len());
    let facts = rank_facts(
        q,
        &table,
        &Ranked::Every(SCORES.to_vec()),
        MarginScale::TopScore,
    );
    score_question(q, &table, &facts, &at_cut(&SCORES, &[10; 4], Cut::K(k)))
}

#[test]
fn fixture_offsets_are_code_points_not_bytes() {
    let c = corpus();
    assert_eq!(c.docs[0].char_len(), 76);
    assert_eq!(c.docs[0].text.len(), 89);
    assert_eq!(c.docs[0].slice_chars(25, 46), "Refunds take 14 days.");
    assert_eq!(
        c.docs[0].slice_chars(47, 76),
        "Partial refunds are prorated."
    );
    let cs = chunks(&c);
    assert_eq!(cs[1].text(&c), "5 🙂. Refunds take 14 days. Par");
    assert_eq!(cs[1].byte_start, 30);
}

#[test]
fn two_spans_at_k2_nothing_whole_partial_coverage() {
    let m = score(&two_spans(), 2);
    assert_eq!(m.n_spans, 2);
    assert_eq!(m.spans_found, 0);
    assert_eq!(m.span_recall, 0.0);
    assert!(!m.hit);
    // c0 = [0,30) covers [25,30) of span A: 5 of 21 + 29 = 50 characters.
    assert_eq!((m.covered_chars, m.evidence_chars), (5, 50));
    assert!((m.coverage - 0.1).abs() < 1e-12);
    // Best correct chunk c2 (2.0), best wrong c0 (4.0), top 4.0: (2 - 4) / 4.
    assert!((m.margin - -0.5).abs() < 1e-12);
    assert_eq!(m.first_correct_rank, Some(3));
    assert_eq!(m.reciprocal_rank, 0.0);
    // |G ∩ R| = 5; Σ|chunk| = 30 + 22; |G \ R| = 50 - 5.
    assert_eq!(m.intersection_chars, 5);
    assert_eq!(m.retrieved_chars, 52);
    assert_eq!(m.unused_gold_chars, 45);
    assert!((m.char_iou - 5.0 / 97.0).abs() < 1e-12);
    assert!((m.char_precision - 5.0 / 52.0).abs() < 1e-12);
    assert!((m.char_recall - 0.1).abs() < 1e-12);
    assert!(!m.tie_at_k);
}

#[test]
fn two_spans_at_k3_one_whole() {
    let m = score(&two_spans(), 3);
    assert_eq!(m.spans_found, 1);
    assert_eq!(m.span_recall, 0.5);
    assert!(m.hit);
    // A: [25,30) from c0 and [40,46) from c2 = 11; B whole = 29.
    assert_eq!((m.covered_chars, m.evidence_chars), (40, 50));
    assert_eq!(m.first_correct_rank, Some(3));
    assert!((m.reciprocal_rank - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(m.retrieved_chars, 30 + 22 + 36);
    assert!((m.char_iou - 40.0 / 98.0).abs() < 1e-12);
    assert!((m.char_precision - 40.0 / 88.0).abs() < 1e-12);
    assert!((m.char_recall - 0.8).abs() < 1e-12);
}

#[test]
fn any_location_of_a_span_counts_and_coverage_takes_the_best() {
    // One span with two acceptable locations: a[25,46) (not retrieved whole at k = 2) and b[0,7)
    // (inside c3, retrieved second).
    let m = score(&question(vec![vec![loc(0, 25, 46), loc(1, 0, 7)]]), 2);
    assert_eq!(m.span_recall, 1.0);
    assert_eq!((m.covered_chars, m.evidence_chars), (7, 7));
    assert_eq!(m.first_correct_rank, Some(2));
    assert_eq!(m.reciprocal_rank, 0.5);
    // Correct: c1 (1.0), c3 (3.0). Best wrong c0 (4.0): (3 - 4) / 4.
    assert!((m.margin - -0.25).abs() < 1e-12);
}

#[test]
fn a_span_no_chunk_holds_whole_is_unreachable() {
    let m = score(&question(vec![vec![loc(0, 10, 35)]]), 2);
    assert!(m.unreachable);
    assert_eq!(m.margin, -1.0);
    assert_eq!(m.first_correct_rank, None);
    assert_eq!(m.reciprocal_rank, 0.0);
    // c0 = [0,30) covers [10,30): 20 of 25.
    assert!((m.coverage - 0.8).abs() < 1e-12);
}

#[test]
fn margin_is_positive_when_the_correct_chunk_leads() {
    // Span inside c0 only ([0,12) is “Zoë’s café”), which scores 4.0; best wrong is c3 (3.0).
    let m = score(&question(vec![vec![loc(0, 0, 12)]]), 1);
    assert!((m.margin - 0.25).abs() < 1e-12);
    assert_eq!(m.reciprocal_rank, 1.0);
}

#[test]
fn macro_and_micro_means_differ_as_defined() {
    let one = score(&question(vec![vec![loc(0, 0, 12)]]), 1); // 1 of 1 span
    let two = score(&two_spans(), 2); // 0 of 2 spans
    let agg = aggregate(&[one, two]);
    assert_eq!(agg.n_questions, 2);
    assert!((agg.span_recall - 0.5).abs() < 1e-12);
    assert!((agg.span_recall_micro - 1.0 / 3.0).abs() < 1e-12);
    assert!((agg.hit_rate - 0.5).abs() < 1e-12);
    // Coverage: macro (1 + 0.1) / 2; micro (12 + 5) / (12 + 50).
    assert!((agg.coverage - 0.55).abs() < 1e-12);
    assert!((agg.coverage_micro - 17.0 / 62.0).abs() < 1e-12);
    assert!((agg.margin - (0.25 - 0.5) / 2.0).abs() < 1e-12);
    assert_eq!(agg.unreachable, 0);
}

#[test]
fn a_budget_takes_chunks_in_rank_order_while_they_fit() {
    let taken = |tokens: &[usize], budget| fit_budget(tokens.iter().copied(), budget).taken;
    assert_eq!(taken(&[300, 500, 400, 100], 1000), vec![0, 1]);
    assert_eq!(
        taken(&[300, 500, 200, 100], 1000),
        vec![0, 1, 2],
        "exactly 1,000 fits"
    );
    assert!(taken(&[], 1000).is_empty());
    assert_eq!(taken(&[10; 40], 1000).len(), 40, "never more than the list");
    // A chunk larger than the whole budget is skipped and counted, and the next chunks that fit
    // are taken: 1,500 skipped, 300 taken, 800 would make 1,100: the cut stops there.
    let fit = fit_budget([1500, 300, 800, 100], 1000);
    assert_eq!(
        fit,
        BudgetFit {
            taken: vec![1],
            skipped_for_size: 1,
            stop: Some(2)
        }
    );
    // Every chunk larger than the budget: nothing is sent for that question.
    let fit = fit_budget([1500, 1200], 1000);
    assert!(fit.taken.is_empty());
    assert_eq!((fit.skipped_for_size, fit.stop), (2, None));
    // Skipped chunks after the cut are not counted: the cut stopped before them.
    assert_eq!(fit_budget([900, 200, 1500], 1000).skipped_for_size, 0);
}

proptest::proptest! {
    /// Over random chunk sizes (some larger than the budget), scores and budgets, no budget cut
    /// ever sends more than its budget, and it takes every chunk that fits up to where it stops.
    #[test]
    fn no_budget_cut_ever_exceeds_its_budget(
        tokens in proptest::collection::vec(1usize..3000, 0..60),
        seed_scores in proptest::collection::vec(0u32..1000, 60),
        budget in 1usize..4000,
    ) {
        let scores: Vec<f64> = tokens
            .iter()
            .zip(&seed_scores)
            .map(|(_, &s)| f64::from(s))
            .collect();
        let cut = Cut::Budget(budget);
        let list = at_cut(&scores, &tokens, cut);
        let sent: usize = list.ranking.top.iter().map(|&i| tokens[i]).sum();
        proptest::prop_assert!(sent <= budget, "sent {} > budget {}", sent, budget);
        // Nothing larger than the budget is ever sent, and a chunk is skipped only when one is.
        proptest::prop_assert!(list.ranking.top.iter().all(|&i| tokens[i] <= budget));
        if list.skipped_for_size > 0 {
            proptest::prop_assert!(tokens.iter().any(|&t| t > budget));
        }
        // When some chunk fits alone, the cut sends at least one chunk.
        if tokens.iter().any(|&t| t <= budget) {
            proptest::prop_assert!(!list.ranking.top.is_empty());
        }
    }
}

/// The list of `scores` read at `cut` as the sweep reads it: the head deep enough for the cut,
/// then the cut.
fn at_cut(scores: &[f64], tokens: &[usize], cut: Cut) -> CutList {
    let ranked = Ranked::Every(scores.to_vec());
    cut_ranking(
        &Depth::new(&[cut], tokens).head(&ranked, tokens),
        cut,
        tokens,
    )
}

/// [`at_cut`]'s chunks sent.
fn at(scores: &[f64], tokens: &[usize], cut: Cut) -> Ranking {
    at_cut(scores, tokens, cut).ranking
}

#[test]
fn a_budget_cut_takes_the_ranked_list_while_it_fits() {
    // 40 chunks of 30 tokens but chunk 7 (200 tokens) and chunk 3 (1200); scores fall with the
    // index except that chunk 7 ranks first and chunk 3 second.
    let mut tokens = vec![30usize; 40];
    tokens[7] = 200;
    tokens[3] = 1200;
    let mut scores: Vec<f64> = (0..40).map(|i| 100.0 - f64::from(i)).collect();
    scores[7] = 500.0;
    scores[3] = 400.0;
    // Budget 1000: chunk 7 (200) fits; chunk 3 (1200) alone is larger than the budget, so it is
    // skipped (it used to be sent whatever its size) and the 30-token chunks 0, 1, 2, 4, … follow
    // while ≤ 1000: 26 of them (200 + 26 × 30 = 980; a 27th would make 1010).
    let list = at_cut(&scores, &tokens, Cut::Budget(1000));
    assert_eq!(list.skipped_for_size, 1);
    assert_eq!(&list.ranking.top[..4], &[7, 0, 1, 2]);
    assert_eq!(list.ranking.top.len(), 27);
    // Budget 1100: the same, exactly full: 30 chunks of 30 tokens (200 + 30 × 30 = 1100).
    let list = at_cut(&scores, &tokens, Cut::Budget(1100));
    assert_eq!(list.skipped_for_size, 1);
    assert_eq!(&list.ranking.top[..4], &[7, 0, 1, 2]);
    assert_eq!(list.ranking.top.len(), 31);
    assert_eq!(
        list.ranking.top.iter().map(|&i| tokens[i]).sum::<usize>(),
        1100
    );
    // Budget 2000: 7 + 3 = 1400, then 30-token chunks 0, 1, 2, 4, … while ≤ 2000: 20 more
    // (1400 + 20 × 30 = 2000).
    let r = at(&scores, &tokens, Cut::Budget(2000));
    assert_eq!(r.top.len(), 22);
    assert_eq!(&r.top[..4], &[7, 3, 0, 1]);
    assert_eq!(r.top.iter().map(|&i| tokens[i]).sum::<usize>(), 2000);
    // A budget larger than the index returns the whole index, and one smaller than every chunk
    // sends nothing (it used to send the top chunk whatever its size).
    assert_eq!(at(&scores, &tokens, Cut::Budget(100_000)).top.len(), 40);
    let list = at_cut(&scores, &tokens, Cut::Budget(1));
    assert!(list.ranking.top.is_empty());
    assert_eq!(list.skipped_for_size, 40);
    assert!(at(&[], &[], Cut::Budget(1000)).top.is_empty());
    // The tie flag is rank_top_k's at the cut: equal scores at ranks 2 and 3.
    let r = at(&[3.0, 2.0, 2.0], &[10, 10, 10], Cut::Budget(20));
    assert_eq!(r.top, vec![0, 1]);
    assert!(r.tie_at_k);
}

#[test]
fn every_cut_read_from_one_head_equals_its_own_ranking() {
    // One head for k = 2 and budgets 25, 60 and 1000 gives each cut what ranking for it alone
    // gives: the same chunks, scores and tie flags.
    let scores = [1.0, 5.0, 3.0, 3.0, 0.5, 2.0, 2.0, 4.0];
    let tokens = [10, 20, 5, 10, 40, 15, 15, 10];
    let cuts = [
        Cut::K(2),
        Cut::Budget(25),
        Cut::Budget(60),
        Cut::Budget(1000),
    ];
    let ranked = Ranked::Every(scores.to_vec());
    let head = Depth::new(&cuts, &tokens).head(&ranked, &tokens);
    for cut in cuts {
        assert_eq!(
            cut_ranking(&head, cut, &tokens),
            at_cut(&scores, &tokens, cut),
            "{cut:?}"
        );
    }
    // Ranking: 1 (5, 20 tokens), 7 (4, 10), 2 (3, 5), 3 (3, 10), 5 (2, 15), 6 (2, 15), 0, 4.
    assert_eq!(
        cut_ranking(&head, Cut::K(2), &tokens).ranking.top,
        vec![1, 7]
    );
    // 25 tokens: chunk 1 (20) fits, + chunk 7 would make 30.
    assert_eq!(
        cut_ranking(&head, Cut::Budget(25), &tokens).ranking.top,
        vec![1]
    );
    // 60 tokens: 20 + 10 + 5 + 10 + 15 = 60 fits exactly, and the cut falls between the two
    // chunks scoring 2.
    let r = cut_ranking(&head, Cut::Budget(60), &tokens).ranking;
    assert_eq!(r.top, vec![1, 7, 2, 3, 5]);
    assert!(r.tie_at_k);
    assert_eq!(
        cut_ranking(&head, Cut::Budget(1000), &tokens)
            .ranking
            .top
            .len(),
        8
    );
    // The depth a retriever is asked for: the smallest chunks 5, 10, 10, 10, 15 fit 60 (five
    // chunks; with k = 2 the deepest cut is 5), plus one.
    assert_eq!(Depth::new(&[Cut::K(2), Cut::Budget(60)], &tokens).ask, 6);
    assert_eq!(Depth::new(&[Cut::K(5)], &tokens).ask, 6);
}

#[test]
fn mrr_at_a_budget_reads_the_ranks_taken_not_how_many() {
    // ranking c2 (500 tokens), c0, c1, c3 (40 each): c2 holds span B, c1 span A
    let c = corpus();
    let cs = chunks(&c);
    let table = ChunkTable::new(&cs, c.docs.len());
    let scores = [3.0, 2.0, 4.0, 1.0];
    let tokens = [40, 40, 500, 40];
    let q = two_spans();
    let facts = rank_facts(
        &q,
        &table,
        &Ranked::Every(scores.to_vec()),
        MarginScale::TopScore,
    );
    assert_eq!(facts.first_correct_rank, Some(1));
    let score = |cut| score_question(&q, &table, &facts, &at_cut(&scores, &tokens, cut));
    // 100 tokens: rank 1 (c2, correct) is larger than the whole budget and skipped; ranks 2
    // and 3 (c0, c1) are sent, and c1 is correct: 1/3, its rank in the ranking (not 1/2, its
    // place among the chunks sent; it used to be 1, the first correct rank within 2 hits)
    let m = score(Cut::Budget(100));
    assert_eq!(at_cut(&scores, &tokens, Cut::Budget(100)).ranks, vec![2, 3]);
    assert_eq!(m.reciprocal_rank, 1.0 / 3.0);
    assert_eq!(m.first_correct_rank, Some(1), "still the whole ranking's");
    assert_eq!((m.hit, m.span_recall), (true, 0.5));
    // 50 tokens: rank 1 skipped, rank 2 (c0, wrong) sent, rank 3 would make 80: nothing
    // correct sent, 0 (it used to be 1)
    let m = score(Cut::Budget(50));
    assert_eq!((m.reciprocal_rank, m.hit), (0.0, false));
    // top k is unchanged: 1 / the first correct rank when it is at most k
    assert_eq!(score(Cut::K(1)).reciprocal_rank, 1.0);
    assert_eq!(score(Cut::K(3)).reciprocal_rank, 1.0);
    // span A alone (only c1 correct, rank 3): 0 at k = 2, 1/3 at k = 3
    let a = question(vec![vec![loc(0, 25, 46)]]);
    let facts = rank_facts(
        &a,
        &table,
        &Ranked::Every(scores.to_vec()),
        MarginScale::TopScore,
    );
    let rr = |k| {
        score_question(&a, &table, &facts, &at_cut(&scores, &tokens, Cut::K(k))).reciprocal_rank
    };
    assert_eq!((rr(2), rr(3)), (0.0, 1.0 / 3.0));
}
