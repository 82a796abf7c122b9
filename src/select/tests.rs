//! Hand-made sweeps where the right pick is known.

use super::*;
use diagnose::DiagnosisKind;

/// A configuration given by its per-question values.
pub(crate) struct Fake {
    pub id: &'static str,
    pub strategy: &'static str,
    pub size: usize,
    pub tpq: f64,
    pub recall: Vec<f64>,
    pub coverage: Vec<f64>,
    pub margin: Vec<f64>,
    pub types: Vec<&'static str>,
    pub prefix: &'static str,
    /// Each question's evidence span lengths, `|`-separated (one span of 20 tokens by default).
    pub span_tokens: &'static str,
    pub retriever: &'static str,
    /// Every question's retrieved ranges (empty: not recorded, never merged).
    pub ranges: &'static str,
}

impl Fake {
    pub fn new(
        id: &'static str,
        size: usize,
        tpq: f64,
        recall: Vec<f64>,
        margin: Vec<f64>,
    ) -> Self {
        let n = recall.len();
        Fake {
            id,
            strategy: "fixed",
            size,
            tpq,
            coverage: recall.clone(),
            recall,
            margin,
            types: vec![""; n],
            prefix: "none",
            span_tokens: "20",
            retriever: "bm25",
            ranges: "",
        }
    }
}

pub(crate) fn tables(fakes: &[Fake]) -> (Vec<SweepRow>, Vec<QuestionRow>) {
    let mut rows = Vec::new();
    let mut qs = Vec::new();
    for f in fakes {
        let n = f.recall.len();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / n as f64;
        rows.push(SweepRow {
            config_id: f.id.into(),
            strategy: f.strategy.into(),
            chunk_size: f.size,
            chunk_overlap: 0,
            size_unit: String::new(),
            realized_overlap: 0.0,
            prefix: f.prefix.into(),
            retriever: f.retriever.into(),
            rerank: "none".into(),
            expand: "none".into(),
            top_k: 5,
            cut: "k".into(),
            budget_tokens: None,
            tokenizer: "cl100k_base".into(),
            n_chunks: 100,
            max_chunk_tokens: f.size,
            n_oversize: 0,
            mean_chunk_tokens: f.tpq / 5.0,
            mean_prefix_tokens: 0.0,
            index_tokens: 10_000,
            tokens_per_query: f.tpq,
            chunks_retrieved_mean: 5.0,
            chunks_retrieved_max: 5,
            questions_skipped_for_size: 0,
            chunks_over_budget: 0,
            n_units: 0,
            units_over_budget: 0,
            n_docs: 10,
            single_chunk_docs: 0,
            n_questions: n,
            span_recall: mean(&f.recall),
            span_recall_micro: mean(&f.recall),
            hit_rate: f.recall.iter().filter(|&&r| r > 0.0).count() as f64 / n as f64,
            coverage: mean(&f.coverage),
            coverage_micro: mean(&f.coverage),
            margin: mean(&f.margin),
            mrr: 0.0,
            char_iou: 0.0,
            char_iou_micro: 0.0,
            char_precision: 0.0,
            char_recall: 0.0,
            unreachable: 0,
            ties_at_k: 0,
            embed_tokens: 0,
            embed_cost_usd: Some(0.0),
            embed_ms: 0.0,
            embed_input: String::new(),
            context_calls: 0,
            context_tokens: 0,
            context_cost_usd: Some(0.0),
        });
        for i in 0..n {
            qs.push(QuestionRow {
                config_id: f.id.into(),
                cut: "k".into(),
                budget_tokens: None,
                question_id: format!("q{i:03}"),
                question_type: f.types[i].into(),
                n_spans: 1,
                hit: u8::from(f.recall[i] > 0.0),
                span_recall: f.recall[i],
                coverage: f.coverage[i],
                margin: f.margin[i],
                unreachable: 0,
                first_correct_rank: Some(1),
                reciprocal_rank: 1.0,
                char_iou: 0.0,
                char_precision: 0.0,
                char_recall: 0.0,
                tie_at_k: 0,
                chunks_retrieved: 5,
                tokens_retrieved: f.tpq as usize,
                span_tokens: f.span_tokens.to_string(),
                retrieved_chunk_ids: String::new(),
                retrieved_scores: String::new(),
                retrieved_ranges: f.ranges.to_string(),
            });
        }
    }
    (rows, qs)
}

/// 1 for the first `ones` of `n` questions, else 0.
fn ones(n: usize, ones: usize) -> Vec<f64> {
    (0..n).map(|i| if i < ones { 1.0 } else { 0.0 }).collect()
}

/// The rule before `equivalence`, whose sentences these tests check.
fn paired_rule() -> SelectionSettings {
    SelectionSettings {
        rule: Rule::Paired,
        ..SelectionSettings::default()
    }
}

/// A typical curve over 60 questions: 64 cuts evidence, 128 is just inside the plateau, 256 is the
/// margin peak, 512 and 1024 dilute.
fn seed_rule() -> SelectionSettings {
    SelectionSettings {
        rule: Rule::Seed,
        ..SelectionSettings::default()
    }
}

fn curve() -> Vec<Fake> {
    let n = 60;
    let m = |base: f64| -> Vec<f64> { (0..n).map(|i| base + 0.002 * (i % 5) as f64).collect() };
    vec![
        Fake::new("fixed-64", 64, 320.0, ones(n, 30), m(0.20)),
        Fake::new("fixed-128", 128, 640.0, ones(n, 48), m(0.392)),
        Fake::new("fixed-256", 256, 1280.0, ones(n, 49), m(0.40)),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 49), m(0.396)),
        Fake::new("fixed-1024", 1024, 5120.0, ones(n, 45), m(0.30)),
    ]
}

#[test]
fn the_cheapest_inside_the_plateau_is_chosen_not_the_peak() {
    let (rows, qs) = tables(&curve());
    let sel = select(&rows, &qs, &seed_rule()).unwrap();
    // Best margin 0.404 (256), floor 0.404 − 0.03 × 0.404 = 0.39188; best recall 49/60 = 0.8167,
    // floor 0.7967. 128 (margin 0.396, recall 0.8) is inside; 256 is the peak but costs double.
    assert!(
        (sel.best_margin - 0.404).abs() < 1e-12,
        "{}",
        sel.best_margin
    );
    assert!(
        (sel.margin_floor.unwrap() - 0.39188).abs() < 1e-9,
        "{:?}",
        sel.margin_floor
    );
    assert!((sel.recall_floor - (49.0 / 60.0 - 0.02)).abs() < 1e-12);
    assert_eq!(sel.winner().config_id, "fixed-128");
    let status: Vec<Status> = sel.configs.iter().map(|c| c.status).collect();
    assert_eq!(
        status,
        [
            Status::Dropped,
            Status::Winner,
            Status::Candidate,
            Status::Candidate,
            Status::Dropped
        ]
    );
    assert_eq!(sel.candidates, vec![1, 2, 3]);
    assert_eq!(sel.configs[3].rank, Some(3));
    // The reasons carry the numbers.
    assert_eq!(
        sel.configs[0].reason,
        "dropped: margin 0.204 < floor 0.392 (best 0.404 − 3% of |best|); \
         span recall 0.500 < floor 0.797 (best 0.817 − 0.02)"
    );
    assert_eq!(
        sel.configs[4].reason,
        "dropped: margin 0.304 < floor 0.392 (best 0.404 − 3% of |best|); \
         span recall 0.750 < floor 0.797 (best 0.817 − 0.02)"
    );
    assert!(sel.configs[1].reason.contains("cheapest kept"));
    // Recomputed means equal sweep.csv's.
    for (c, r) in sel.configs.iter().zip(&rows) {
        assert!((c.span_recall - r.span_recall).abs() < 1e-12);
        assert!((c.margin - r.margin).abs() < 1e-12);
    }
    // Only 2 spans of 60 separate 128 from 256 (48 vs 49): an exact McNemar cannot tell them apart.
    let vs256 = &sel.configs[2];
    assert_eq!((vs256.mcnemar_b, vs256.mcnemar_c), (Some(0), Some(1)));
    assert_eq!(vs256.mcnemar_p, Some(1.0));
    assert_eq!(sel.configs[1].mcnemar_p, None);
    // 128 hits 48 of 60: Wilson 0.6822–0.8818.
    assert!((sel.configs[1].hit_rate_lo - 0.6822).abs() < 5e-4);
    assert!((sel.configs[1].hit_rate_hi - 0.8818).abs() < 5e-4);
    // 64 and 1024 are dropped on both tests, so they never win a half.
    assert_eq!(sel.configs[0].win_share, 0.0);
    assert_eq!(sel.configs[4].win_share, 0.0);
    let total: f64 = sel.configs.iter().map(|c| c.win_share).sum();
    assert!((total - 1.0).abs() < 1e-12);
}

#[test]
fn a_winner_that_flips_between_halves_is_indistinguishable() {
    // "small" and "large" have the same recall and margin on the full set, but get opposite
    // questions right: on a half one of them leads by far more than 0.02.
    let n = 60;
    let small: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 2 == 0))).collect();
    let large: Vec<f64> = small.iter().map(|x| 1.0 - x).collect();
    let fakes = vec![
        Fake::new("fixed-128", 128, 640.0, small, vec![0.5; n]),
        Fake::new("fixed-512", 512, 2560.0, large, vec![0.5; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.winner().config_id, "fixed-128", "picked on cost");
    assert_eq!(sel.stability.status, StabilityStatus::Indistinguishable);
    assert_eq!(sel.stability.halves, 200);
    assert_eq!(sel.stability.half_size, 30);
    assert!(sel.stability.winner_share < 0.9);
    assert!(
        sel.configs[1].win_share > 0.1,
        "{}",
        sel.configs[1].win_share
    );
    // Fully discordant on hit@k: b = 30, c = 30, p = 1.
    assert_eq!(sel.configs[1].mcnemar_b, Some(30));
    assert_eq!(sel.configs[1].mcnemar_p, Some(1.0));
}

#[test]
fn a_stable_pick_is_reported_stable() {
    // 128 is as good as 512 on every question and cheaper: it wins every half.
    let n = 40;
    let r: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 3 != 0))).collect();
    let fakes = vec![
        Fake::new("fixed-128", 128, 640.0, r.clone(), vec![0.3; n]),
        Fake::new("fixed-512", 512, 2560.0, r, vec![0.3; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.stability.status, StabilityStatus::Stable);
    assert_eq!(sel.stability.winner_share, 1.0);
    assert_eq!(sel.configs[1].win_share, 0.0);
}

#[test]
fn mcnemar_against_the_pick_counts_paired_discordance() {
    // The pick (cheap) hits 2 questions the other misses; the other hits 10 the pick misses.
    // The pick is still chosen because the plateau is wide (recall tolerance 0.5 here).
    let n = 40;
    let mut a = vec![0.0; n];
    let mut b = vec![0.0; n];
    for i in 0..20 {
        a[i] = 1.0;
        b[i] = 1.0;
    }
    a[20] = 1.0;
    a[21] = 1.0;
    for v in b.iter_mut().skip(22).take(10) {
        *v = 1.0;
    }
    let fakes = vec![
        Fake::new("fixed-128", 128, 640.0, a, vec![0.3; n]),
        Fake::new("fixed-512", 512, 2560.0, b, vec![0.3; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let settings = SelectionSettings {
        recall_tolerance: 0.5,
        ..seed_rule()
    };
    let sel = select(&rows, &qs, &settings).unwrap();
    assert_eq!(sel.winner, 0);
    let other = &sel.configs[1];
    assert_eq!((other.mcnemar_b, other.mcnemar_c), (Some(2), Some(10)));
    assert!((other.mcnemar_p.unwrap() - 0.0386).abs() < 1e-4);
}

#[test]
fn boundary_damage_and_too_few_questions_carry_their_numbers() {
    let n = 20;
    let mut small = Fake::new("fixed-64", 64, 320.0, ones(n, 8), vec![0.2; n]);
    small.coverage = vec![0.8; n]; // coverage 0.8 vs recall 0.4: gap 0.4
    let big = Fake::new("fixed-512", 512, 2560.0, ones(n, 16), vec![0.4; n]);
    let (rows, qs) = tables(&[small, big]);
    let sel = select(&rows, &qs, &paired_rule()).unwrap();
    assert_eq!(sel.winner().config_id, "fixed-512");
    let kinds: Vec<DiagnosisKind> = sel.diagnoses.iter().map(|d| d.kind).collect();
    // 512 is also the largest size swept, with 64 worse: the edge of the grid is flagged too.
    assert_eq!(
        kinds,
        [
            DiagnosisKind::TooFewQuestions,
            DiagnosisKind::EdgeOfGrid,
            DiagnosisKind::BoundaryDamage
        ]
    );
    let boundary = &sel.diagnoses[2];
    assert_eq!(
        boundary.evidence,
        "coverage − span recall > 0.15 in 1 of 2 configurations: fixed-64 (coverage 0.800 − \
         span recall 0.400 = 0.400); the pick is not (gap 0.000)"
    );
    assert!(
        boundary
            .advice
            .starts_with("boundaries cut the evidence: switch to structure-aware")
    );
    // 16 of 20: Wilson 0.5840–0.9193.
    assert!(
        sel.diagnoses[0].evidence.starts_with(
            "20 questions (< 30): the pick `fixed-512`'s 95% interval for hit@k is 0.584–0.919"
        ),
        "{}",
        sel.diagnoses[0].evidence
    );
}

#[test]
fn a_flat_curve_is_diagnosed_only_when_every_configuration_is_inside_the_noise() {
    let n = 40;
    let r = |k: usize| ones(n, k);
    let noisy_margin: Vec<f64> = (0..n).map(|i| 0.1 + 0.4 * (i % 2) as f64).collect();
    let flat = vec![
        Fake::new("fixed-64", 64, 320.0, r(24), noisy_margin.clone()),
        Fake::new("fixed-256", 256, 1280.0, r(25), noisy_margin.clone()),
        Fake::new("fixed-1024", 1024, 5120.0, r(26), noisy_margin.clone()),
    ];
    let (rows, qs) = tables(&flat);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert!(
        sel.diagnoses
            .iter()
            .any(|d| d.kind == DiagnosisKind::FlatCurve),
        "{:?}",
        sel.diagnoses
    );
    // One size far outside the pick's interval: not flat.
    let steep = vec![
        Fake::new("fixed-64", 64, 320.0, r(5), noisy_margin.clone()),
        Fake::new("fixed-256", 256, 1280.0, r(25), noisy_margin.clone()),
        Fake::new("fixed-1024", 1024, 5120.0, r(26), noisy_margin),
    ];
    let (rows, qs) = tables(&steep);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert!(
        !sel.diagnoses
            .iter()
            .any(|d| d.kind == DiagnosisKind::FlatCurve)
    );
}

#[test]
fn a_winner_that_differs_by_question_type_suggests_parent_documents() {
    // Facts (first 20 questions) are found by small chunks only; explanations (last 20) by big
    // chunks only.
    let n = 40;
    let facts: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i < 20))).collect();
    let explanations: Vec<f64> = facts.iter().map(|x| 1.0 - x).collect();
    let types: Vec<&'static str> = (0..n)
        .map(|i| if i < 20 { "fact" } else { "explain" })
        .collect();
    let mut small = Fake::new("fixed-64", 64, 320.0, facts.clone(), facts.clone());
    let mut big = Fake::new(
        "fixed-1024",
        1024,
        5120.0,
        explanations.clone(),
        explanations,
    );
    small.types = types.clone();
    big.types = types;
    let (rows, qs) = tables(&[small, big]);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.by_type.len(), 2);
    // BTreeMap order: "explain" then "fact".
    assert_eq!(sel.by_type[0].question_type, "explain");
    assert_eq!(sel.configs[sel.by_type[0].winner].config_id, "fixed-1024");
    assert_eq!(sel.configs[sel.by_type[1].winner].config_id, "fixed-64");
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WinnerByQuestionType)
        .expect("diagnosed");
    assert!(
        d.evidence
            .contains("explain (20 questions) → fixed-1024 (span recall 1.000")
    );
    assert!(d.advice.contains("parent-document retrieval"));
    // without an expansion in the grid, the advice says how to measure one
    assert!(
        d.advice
            .ends_with("sweep --expand none,neighbours:1,parent:1024 to measure both"),
        "{}",
        d.advice
    );
}

#[test]
fn a_winner_by_question_type_points_at_the_expansion_that_serves_every_type() {
    // 160 facts, then 160 explanations. 64-token chunks find every fact and miss 8
    // explanations; 1024-token chunks find every explanation and miss 40 facts; the 64-token
    // chunks sent with their parents find everything, at 2,000 tokens per query.
    let n = 320;
    let small: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i < 312))).collect();
    let big: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i >= 40))).collect();
    let types: Vec<&'static str> = (0..n)
        .map(|i| if i < 160 { "fact" } else { "explain" })
        .collect();
    let mut fakes = [
        Fake::new("fixed-64", 64, 320.0, small.clone(), small),
        Fake::new("fixed-1024", 1024, 5120.0, big.clone(), big),
        Fake::new("fixed-64+parent", 64, 2000.0, vec![1.0; n], vec![1.0; n]),
    ];
    for f in &mut fakes {
        f.types = types.clone();
    }
    let (mut rows, qs) = tables(&fakes);
    rows[2].expand = "parent:1024".into();
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    // the pick is the cheapest configuration within δ of the best overall (8 of 320 missed),
    // but on the explanations it misses 8 of 160: 8 against 0, sign test Holm p = 0.016
    assert_eq!(sel.winner().config_id, "fixed-64");
    let explain = &sel.by_type[0];
    assert_eq!(explain.question_type, "explain");
    assert_eq!(sel.configs[explain.winner].config_id, "fixed-64+parent");
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WinnerByQuestionType)
        .expect("diagnosed");
    assert!(
        d.evidence
            .contains("significantly worse than another chunk size or expansion"),
        "{}",
        d.evidence
    );
    assert!(
        d.advice.starts_with(
            "the grid measured the answer: `fixed-64+parent` is non-inferior within δ = 0.05 \
             to the best on every question type at this cut, at 2,000 tokens per query \
             (explain: span recall 1.000, the type's best; fact: span recall 1.000, "
        ),
        "{}",
        d.advice
    );
    // without the expansion the same sweep is told to measure one
    let (rows, qs) = tables(&fakes[..2]);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WinnerByQuestionType)
        .expect("diagnosed");
    assert!(d.advice.contains("sweep --expand"), "{}", d.advice);
}

#[test]
fn configurations_scored_on_different_questions_are_refused() {
    let n = 10;
    let (rows, mut qs) = tables(&[
        Fake::new("a", 64, 1.0, ones(n, 5), vec![0.1; n]),
        Fake::new("b", 128, 2.0, ones(n, 5), vec![0.1; n]),
    ]);
    qs.last_mut().unwrap().question_id = "other".into();
    let err = select(&rows, &qs, &SelectionSettings::default()).unwrap_err();
    assert!(
        err.to_string().contains("question other is not in both"),
        "{err}"
    );
    let (rows, qs) = tables(&[Fake::new("a", 64, 1.0, ones(n, 5), vec![0.1; n])]);
    let mut rows2 = rows.clone();
    rows2[0].config_id = "zzz".into();
    assert!(matches!(
        select(&rows2, &qs, &SelectionSettings::default()),
        Err(SelectError::MissingQuestions(_))
    ));
    assert!(matches!(
        select(&[], &qs, &SelectionSettings::default()),
        Err(SelectError::NoConfigurations)
    ));
}

#[test]
fn a_pick_at_the_largest_size_with_a_rising_curve_is_flagged() {
    let n = 40;
    let fakes = vec![
        Fake::new("fixed-256", 256, 1280.0, ones(n, 30), vec![0.2; n]),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 36), vec![0.3; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &paired_rule()).unwrap();
    assert_eq!(sel.winner().config_id, "fixed-512");
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::EdgeOfGrid)
        .expect("flagged");
    assert_eq!(
        d.evidence,
        "the pick `fixed-512`'s chunk size 512 tokens is the largest swept, and fixed's span \
         recall@k and margin still improve towards it: from 256 to 512 tokens, span recall@k 0.750 → 0.900 and margin 0.200 → \
         0.300; cheaper configurations: 1 of 1 significantly worse than the best `fixed-512` \
         (sign test, Holm p < 0.05); the weakest of those is `fixed-256` (lower on 6 questions, \
         higher on 0, Holm p = 0.031)"
    );
    // The cheapest-inside-the-plateau curve picks 128, an inner size: no flag.
    let (rows, qs) = tables(&curve());
    let sel = select(&rows, &qs, &paired_rule()).unwrap();
    assert!(
        sel.diagnoses
            .iter()
            .all(|d| d.kind != DiagnosisKind::EdgeOfGrid)
    );
}

#[test]
fn the_paired_rule_picks_the_same_knee_on_a_clear_curve() {
    // Best span recall 49/60 is shared by 256 and 512; 256 has the higher margin, so it is the
    // best. 128 (48/60) differs from it on one question: kept. 64 (30/60) is significantly worse
    // (19 questions to 0) and 1024 (45/60) is 0.067 below: dropped.
    let (rows, qs) = tables(&curve());
    let sel = select(&rows, &qs, &paired_rule()).unwrap();
    assert_eq!(sel.best().config_id, "fixed-256");
    assert_eq!(sel.margin_floor, None);
    assert_eq!(sel.winner().config_id, "fixed-128");
    let kept: Vec<bool> = sel.configs.iter().map(|c| c.kept).collect();
    assert_eq!(kept, [false, true, true, true, false]);
    let c64 = &sel.configs[0];
    assert_eq!((c64.best_better, c64.this_better), (Some(19), Some(0)));
    assert!(
        c64.reason.starts_with(
            "dropped: significantly worse than the best at α = 0.05 (vs best `fixed-256`: higher \
         on 0 questions, lower on 19, sign test Holm p < 0.001); span recall 0.500 < floor"
        ),
        "{}",
        c64.reason
    );
    assert_eq!(
        sel.configs[1].reason,
        "on the plateau: not significantly worse (vs best `fixed-256`: higher on 0 questions, \
         lower on 1, sign test Holm p = 1.000); span recall 0.800 ≥ 0.797; cheapest kept"
    );
    // The frontier: 64 (cheapest), 128, 256 (best recall at the lowest cost); 512 and 1024 are
    // dominated by 256.
    let pareto: Vec<bool> = sel.configs.iter().map(|c| c.pareto).collect();
    assert_eq!(pareto, [true, true, true, false, false]);
}

#[test]
fn a_best_margin_near_zero_leaves_several_candidates_for_the_judge() {
    // 100 questions; margins near zero (best 0.013). Span recall 0.80, 0.79, 0.79, 0.78.
    let n = 100;
    let fakes = vec![
        Fake::new("fixed-1024", 1024, 5000.0, ones(n, 80), vec![0.013; n]),
        Fake::new("fixed-512", 512, 2500.0, ones(n, 79), vec![0.004; n]),
        Fake::new("fixed-256", 256, 1250.0, ones(n, 79), vec![-0.002; n]),
        Fake::new("fixed-128", 128, 640.0, ones(n, 78), vec![0.010; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.configs.iter().filter(|c| c.kept).count(), 4);
    assert_eq!(sel.winner().config_id, "fixed-128");
    assert_eq!(sel.candidates, vec![3, 2, 1]);
    // The seeds' literal rule keeps one configuration, the most expensive.
    let seed = select(&rows, &qs, &seed_rule()).unwrap();
    assert_eq!(seed.configs.iter().filter(|c| c.kept).count(), 1);
    assert_eq!(seed.winner().config_id, "fixed-1024");
    // The judge still gets three: the two best dropped ones (0.79 each, cheaper first) as challengers.
    assert_eq!(seed.candidates, vec![0, 2, 1]);
    assert_eq!(seed.configs[2].status, Status::Challenger);
}

#[test]
fn weak_retrieval_and_k_covering_the_index_are_diagnosed() {
    let n = 40;
    let fakes = vec![
        Fake::new("fixed-256", 256, 1280.0, ones(n, 20), vec![-0.1; n]),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 22), vec![-0.05; n]),
    ];
    let (mut rows, qs) = tables(&fakes);
    rows[1].n_chunks = 4;
    rows[1].index_tokens = 1082;
    let sel = select(&rows, &qs, &paired_rule()).unwrap();
    let weak = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WeakRetrieval)
        .expect("weak retrieval");
    assert_eq!(
        weak.evidence,
        "the pick `fixed-512` has span recall@k 0.550 (the mean per question, below 0.7: on \
         the mean question it misses 45% of the evidence); per evidence span it finds 0.550 \
         [0.398, 0.693] (45% of the spans missed); the pick `fixed-512`'s median margin is \
         -0.050 and 40 of its 40 questions (100% [91%, 100%]) have a negative margin: on its \
         typical question a wrong chunk outscores the right one"
    );
    // fixed's margin at 256 (-0.1) is outside the pick's interval (a constant -0.05), and the
    // pick has the higher recall at the largest size: larger chunks raise recall.
    assert_eq!(
        weak.advice,
        "larger chunks raise recall here (`fixed-512` at 512 tokens finds span recall@k 0.550 \
         against 0.500 at 256): sweep larger sizes before blaming the retriever"
    );
    let covers = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::KCoversIndex)
        .expect("k covers the index");
    assert!(
        covers
            .evidence
            .starts_with("k is at least the number of chunks in 1 of 2 configurations: fixed-512 (4 chunks, k = 5, 1,082 index tokens)"),
        "{}",
        covers.evidence
    );
}

#[test]
fn boundary_damage_with_spans_longer_than_the_chunks_advises_bigger_chunks() {
    let n = 20;
    let mut small = Fake::new("fixed-64", 64, 320.0, ones(n, 8), vec![0.2; n]);
    small.coverage = vec![0.8; n];
    small.span_tokens = "100|30";
    let mut big = Fake::new("fixed-512", 512, 2560.0, ones(n, 16), vec![0.4; n]);
    big.span_tokens = "100|30";
    let (mut rows, qs) = tables(&[small, big]);
    rows[1].single_chunk_docs = 8;
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.n_spans_measured, 40);
    assert_eq!(sel.configs[0].spans_longer_than_chunk, 20);
    assert_eq!(sel.configs[1].spans_longer_than_chunk, 0);
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::BoundaryDamage)
        .expect("boundary damage");
    assert!(
        d.evidence.ends_with(
            "; 20 of 40 evidence spans are longer than 64 tokens (`fixed-64`), so no chunk of \
             that size can hold them whole"
        ),
        "{}",
        d.evidence
    );
    assert_eq!(d.advice, diagnose::LONG_SPAN_ADVICE);
    // 8 of 10 documents are one chunk at 512.
    let whole = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::ChunksAsLargeAsDocuments)
        .expect("whole documents");
    assert_eq!(
        whole.evidence,
        "in 1 of 2 configurations most documents are a single chunk, from chunk size 512 tokens \
         up (`fixed-512`: 8 of 10 documents are one chunk)"
    );
}

#[test]
fn a_plateau_of_one_is_filled_with_challengers_by_span_recall() {
    // 40 questions, margin 0.1 everywhere. "best" finds 36, the others 30, 32 and 32: all more than
    // 0.02 below 0.9, so the plateau holds "best" alone. With 3 candidates wanted, the two dropped
    // configurations at 0.8 fill the list, the cheaper (600 tokens) first; the 0.75 one stays out.
    let n = 40;
    let m = vec![0.1; n];
    let fakes = vec![
        Fake::new("low", 64, 300.0, ones(n, 30), m.clone()),
        Fake::new("best", 128, 500.0, ones(n, 36), m.clone()),
        Fake::new("dear", 256, 900.0, ones(n, 32), m.clone()),
        Fake::new("cheap", 512, 600.0, ones(n, 32), m),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &paired_rule()).unwrap();
    let status: Vec<Status> = sel.configs.iter().map(|c| c.status).collect();
    assert_eq!(
        status,
        [
            Status::Dropped,
            Status::Winner,
            Status::Challenger,
            Status::Challenger
        ]
    );
    assert_eq!(sel.candidates, vec![1, 3, 2]);
    assert_eq!(sel.configs[3].rank, None);
    assert!(
        sel.configs[3]
            .reason
            .starts_with("challenger (outside the plateau): span recall 0.800 < floor 0.880"),
        "{}",
        sel.configs[3].reason
    );
    assert!(sel.configs[0].reason.starts_with("dropped: "));
}

#[test]
fn a_budget_that_takes_the_whole_index_is_named_as_the_budget_not_as_k() {
    let n = 40;
    let fakes = vec![
        Fake::new("fixed-256", 256, 1280.0, ones(n, 20), vec![-0.1; n]),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 22), vec![-0.05; n]),
    ];
    let (mut rows, mut qs) = tables(&fakes);
    for r in &mut rows {
        r.top_k = 0;
        r.cut = "budget".into();
        r.budget_tokens = Some(4000);
    }
    for q in &mut qs {
        q.cut = "budget".into();
        q.budget_tokens = Some(4000);
    }
    rows[1].n_chunks = 4;
    rows[1].chunks_retrieved_mean = 4.0;
    rows[1].index_tokens = 1082;
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    let covers = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::KCoversIndex)
        .expect("the budget covers the index");
    assert_eq!(
        covers.evidence,
        "the context budget takes every chunk in 1 of 2 configurations: fixed-512 (4 chunks, a \
         budget of 4,000 tokens, 1,082 index tokens); every query retrieves the whole index, so \
         tokens per query is the index's size"
    );
    assert_eq!(
        covers.advice,
        crate::select::diagnose::K_COVERS_ADVICE_AT_BUDGET
    );
}

#[test]
fn two_identical_configurations_are_merged_into_one_row_before_any_statistics() {
    // `markdown-256` retrieves exactly `recursive-256`'s chunks (plain-text files: no heading),
    // so it is one configuration: one row listing its alias, one comparison in the Holm family
    // (so the Holm p equals the raw p), and the halves are not split between the twins.
    let n = 40;
    let same = ones(n, 36);
    let mut recursive = Fake::new("recursive-256", 256, 900.0, same.clone(), vec![0.3; n]);
    recursive.strategy = "recursive";
    recursive.ranges = "0-100|100-200";
    let mut markdown = Fake::new("markdown-256", 256, 900.0, same, vec![0.3; n]);
    markdown.strategy = "markdown";
    markdown.ranges = "0-100|100-200";
    let mut fixed = Fake::new("fixed-256", 256, 800.0, ones(n, 30), vec![0.2; n]);
    fixed.ranges = "0-90|90-180";
    let (rows, qs) = tables(&[recursive, markdown, fixed]);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    let ids: Vec<&str> = sel.configs.iter().map(|c| c.config_id.as_str()).collect();
    assert_eq!(ids, ["recursive-256", "fixed-256"]);
    assert_eq!(sel.configs[0].aliases, "markdown-256");
    assert_eq!(sel.configs[1].aliases, "");
    let f = &sel.configs[1];
    assert_eq!(f.sign_p, f.sign_p_holm, "a family of one comparison");
    // fixed-256 finds 30 of 40 where the twins find 36: 6 questions lower, none higher,
    // p = 2/64. Mean difference −0.15, worse by more than δ.
    assert_eq!((f.best_better, f.this_better), (Some(6), Some(0)));
    assert!((f.sign_p.unwrap() - 0.03125).abs() < 1e-12);
    assert_eq!(f.vs_best_class, "worse");
    assert_eq!(sel.winner().config_id, "recursive-256");
    // Every half is won by one of the two rows (fixed-256 by a few where its misses fall
    // outside the half): none is lost to a twin.
    let shares = sel.configs[0].win_share + sel.configs[1].win_share;
    assert!((shares - 1.0).abs() < 1e-12, "{shares}");
    assert!(sel.configs[0].win_share > 0.9);
    // Without recorded ranges nothing is merged: three rows.
    let mut a = Fake::new("recursive-256", 256, 900.0, ones(n, 36), vec![0.3; n]);
    a.strategy = "recursive";
    let b = Fake::new("markdown-256", 256, 900.0, ones(n, 36), vec![0.3; n]);
    let (rows, qs) = tables(&[a, b]);
    assert_eq!(
        select(&rows, &qs, &SelectionSettings::default())
            .unwrap()
            .configs
            .len(),
        2
    );
}

#[test]
fn configurations_whose_chunks_mostly_exceed_the_budget_are_flagged() {
    // At a 1,000-token budget, 49 of fixed-1024's 52 chunks are larger than the budget and one
    // was skipped on all 40 questions; fixed-256 has none over it.
    let n = 40;
    let (mut rows, qs) = tables(&[
        Fake::new("fixed-256", 256, 900.0, ones(n, 36), vec![0.3; n]),
        Fake::new("fixed-1024", 1024, 500.0, ones(n, 1), vec![0.3; n]),
    ]);
    for r in &mut rows {
        r.budget_tokens = Some(1000);
        r.top_k = 0;
    }
    rows[1].n_chunks = 52;
    rows[1].chunks_over_budget = 49;
    rows[1].questions_skipped_for_size = 40;
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert!(sel.configs[1].mostly_over_budget() && !sel.configs[0].mostly_over_budget());
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::ChunksOverBudget)
        .expect("chunks over the budget");
    assert_eq!(
        d.evidence,
        "at a budget of 1,000 tokens most chunks of 1 of 2 configurations are larger than the \
         whole budget and are never sent: fixed-1024 (49 of 52 chunks; one was skipped on 40 of \
         40 questions, span recall 0.025)"
    );
}

#[test]
fn expanded_configurations_are_flagged_on_the_units_they_send() {
    // At 700 tokens, recursive-512 with neighbours:1 has no chunk over the budget, but 24 of
    // the 31 windows a hit sends alone are: one was skipped on 39 of 40 questions.
    let n = 40;
    let (mut rows, qs) = tables(&[
        Fake::new("recursive-128", 128, 600.0, ones(n, 30), vec![0.3; n]),
        Fake::new(
            "recursive-512+neighbours1",
            512,
            650.0,
            ones(n, 6),
            vec![0.3; n],
        ),
    ]);
    for r in &mut rows {
        r.budget_tokens = Some(700);
        r.top_k = 0;
    }
    rows[1].expand = "neighbours:1".into();
    rows[1].n_chunks = 31;
    rows[1].n_units = 31;
    rows[1].units_over_budget = 24;
    rows[1].questions_skipped_for_size = 39;
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    let flagged = &sel.configs[1];
    assert!(flagged.mostly_over_budget() && !sel.configs[0].mostly_over_budget());
    assert_eq!(
        (flagged.chunks_over_budget, flagged.units_noun()),
        (0, "neighbours:1 windows".to_string())
    );
    let d = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::ChunksOverBudget)
        .expect("units over the budget");
    assert_eq!(
        d.evidence,
        "at a budget of 700 tokens most chunks (under an expansion, most units a hit sends alone: \
         its window or parent) of 1 of 2 configurations are larger than the whole budget and are \
         never sent: recursive-512+neighbours1 (24 of 31 neighbours:1 windows; one was skipped on \
         39 of 40 questions, span recall 0.150)"
    );
    assert!(
        d.advice
            .ends_with("; for an expansion, a smaller one (fewer neighbours, a smaller parent)")
    );
}

#[test]
fn a_typical_question_is_the_median_one_and_chunk_size_is_blamed_only_on_a_flat_curve() {
    let n = 40;
    // Mean margin (30 · 0.1 − 10 · 0.9) / 40 = −0.15, but the median question's is +0.1: no
    // sentence about the typical question. Recall 0.5 at both sizes, margins identical: flat,
    // so chunk size will not fix it.
    let margins: Vec<f64> = (0..n).map(|i| if i < 30 { 0.1 } else { -0.9 }).collect();
    let fakes = vec![
        Fake::new("fixed-256", 256, 1280.0, ones(n, 20), margins.clone()),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 20), margins),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    let w = sel.winner();
    assert!((w.margin + 0.15).abs() < 1e-12 && (w.margin_median - 0.1).abs() < 1e-12);
    assert_eq!(w.margin_below_zero, 10);
    let weak = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WeakRetrieval)
        .expect("weak retrieval");
    assert!(!weak.evidence.contains("margin"), "{}", weak.evidence);
    assert_eq!(
        weak.advice,
        "span recall@k and margin stay inside the pick's intervals at every size of fixed at \
         256–512 tokens, so look at the retriever, the analyzer, query rewriting or reranking \
         first; chunk size will not fix it"
    );
    // Recall peaking inside the grid at the pick's size: another size will not fix it either.
    let fakes = vec![
        Fake::new("fixed-128", 128, 640.0, ones(n, 4), vec![0.1; n]),
        Fake::new("fixed-256", 256, 1280.0, ones(n, 24), vec![0.1; n]),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 8), vec![0.1; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.winner().config_id, "fixed-256");
    let weak = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WeakRetrieval)
        .expect("weak retrieval");
    assert!(
        weak.advice.starts_with(
            "span recall@k peaks at the pick's size among fixed at 128–512 tokens (0.100 at 128 \
             to 0.200 at 512), so another size in that range will not fix it"
        ),
        "{}",
        weak.advice
    );
    // A larger size only as good as the pick does not "raise recall": the pick is the peak.
    let fakes = vec![
        Fake::new("fixed-128", 128, 640.0, ones(n, 4), vec![0.1; n]),
        Fake::new("fixed-256", 256, 1280.0, ones(n, 24), vec![0.1; n]),
        Fake::new("fixed-512", 512, 2560.0, ones(n, 24), vec![0.1; n]),
    ];
    let (rows, qs) = tables(&fakes);
    let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
    assert_eq!(sel.winner().config_id, "fixed-256");
    let weak = sel
        .diagnoses
        .iter()
        .find(|d| d.kind == DiagnosisKind::WeakRetrieval)
        .expect("weak retrieval");
    assert!(
        weak.advice.starts_with(
            "span recall@k peaks at the pick's size among fixed at 128–512 tokens (0.100 at 128 \
             to 0.600 at 512), so another size in that range will not fix it"
        ),
        "{}",
        weak.advice
    );
}
