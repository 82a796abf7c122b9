use super::*;

/// A configuration given by its per-question values (owned, so tests can build them inline).
struct Item {
    id: &'static str,
    size: usize,
    tpq: f64,
    recall: Vec<f64>,
    margin: Vec<f64>,
}

fn item(id: &'static str, size: usize, tpq: f64, recall: f64, margin: f64) -> Item {
    Item {
        id,
        size,
        tpq,
        recall: vec![recall],
        margin: vec![margin],
    }
}

fn inputs(items: &[Item]) -> Vec<PlateauInput<'_>> {
    items
        .iter()
        .map(|c| PlateauInput {
            config_id: c.id,
            chunk_size: c.size,
            has_prefix: c.id.contains("heading_path") || c.id.contains("title"),
            tokens_per_query: c.tpq,
            span_recall: &c.recall,
            margin: &c.margin,
        })
        .collect()
}

fn run(items: &[Item], rule: Rule) -> Plateau {
    let n = items[0].recall.len();
    let all: Vec<usize> = (0..n).collect();
    plateau(
        &inputs(items),
        &all,
        &RuleSettings {
            rule,
            margin_tolerance: 0.03,
            recall_tolerance: 0.02,
            alpha: 0.05,
            delta: 0.05,
        },
    )
}

/// `n` questions: 1 for the first `hits`, then `halves` questions at 0.5, then 0.
fn recall(n: usize, hits: usize, halves: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            if i < hits {
                1.0
            } else if i < hits + halves {
                0.5
            } else {
                0.0
            }
        })
        .collect()
}

#[test]
fn a_best_margin_near_zero_still_gives_a_plateau_of_tied_configurations() {
    // 100 questions; span recall 0.80, 0.79, 0.79, 0.78: within 0.02 of the best and one or two
    // discordant questions each (sign test p = 1 or 0.5). Margins near 0: 0.013 is the best.
    let n = 100;
    let m = |x: f64| vec![x; n];
    let items = vec![
        Item {
            id: "fixed-1024",
            size: 1024,
            tpq: 5000.0,
            recall: recall(n, 80, 0),
            margin: m(0.013),
        },
        Item {
            id: "fixed-512",
            size: 512,
            tpq: 2500.0,
            recall: recall(n, 79, 0),
            margin: m(0.004),
        },
        Item {
            id: "fixed-256",
            size: 256,
            tpq: 1250.0,
            recall: recall(n, 79, 0),
            margin: m(-0.002),
        },
        Item {
            id: "fixed-128",
            size: 128,
            tpq: 640.0,
            recall: recall(n, 78, 0),
            margin: m(0.010),
        },
    ];
    let p = run(&items, Rule::Paired);
    assert_eq!(p.best, 0);
    assert_eq!(p.kept, vec![true, true, true, true]);
    assert_eq!(p.order, vec![3, 2, 1, 0]);
    assert_eq!(p.winner(), Some(3));
    assert_eq!(p.margin_floor, None);
    // 128 against the best: the best is higher on 2 questions, 128 on none: p = 2 · 1/4 = 0.5;
    // the two others: 1 vs 0, p = 1. Holm: 0.5 · 3 = 1.5 → 1.
    let t = p.vs_best[3].unwrap();
    assert_eq!((t.best_better, t.this_better), (2, 0));
    assert!((t.p_value - 0.5).abs() < 1e-12);
    assert_eq!(t.p_holm, 1.0);
    assert!(!t.significant);
    // The seeds' literal rule keeps only the best: the floor 0.013 − 3% × 0.013 = 0.01261 is the
    // best value itself, give or take rounding.
    let s = run(&items, Rule::Seed);
    assert!((s.margin_floor.unwrap() - 0.01261).abs() < 1e-12);
    assert_eq!(s.kept, vec![true, false, false, false]);
    assert_eq!(s.winner(), Some(0));
}

#[test]
fn significantly_worse_on_paired_questions_is_dropped_though_within_the_recall_tolerance() {
    // 200 questions of two spans each. The best finds both spans of the first 100.
    // "sentence-256" finds one of two on 7 of them (recall 0.0175 below the best, inside 0.02),
    // and never more: b = 7, c = 0, p = 2/128 = 0.015625.
    // "fixed-512" finds one of two on 5 of them: b = 5, c = 0, p = 2/32 = 0.0625.
    // "fixed-256" is the best question by question: b = c = 0, p = 1.
    // Holm over the three: 0.015625 · 3 = 0.046875; 0.0625 · 2 = 0.125; 1 · 1 = 1.
    let n = 200;
    let m = vec![0.2; n];
    let items = vec![
        Item {
            id: "fixed-1024",
            size: 1024,
            tpq: 5000.0,
            recall: recall(n, 100, 0),
            margin: m.clone(),
        },
        Item {
            id: "sentence-256",
            size: 256,
            tpq: 1000.0,
            recall: recall(n, 93, 7),
            margin: m.clone(),
        },
        Item {
            id: "fixed-512",
            size: 512,
            tpq: 2500.0,
            recall: recall(n, 95, 5),
            margin: m.clone(),
        },
        Item {
            id: "fixed-256",
            size: 256,
            tpq: 1300.0,
            recall: recall(n, 100, 0),
            margin: m,
        },
    ];
    let p = run(&items, Rule::Paired);
    assert_eq!(
        p.best, 3,
        "equal recall and margin: the cheaper one is the best"
    );
    assert!((p.best_recall - p.span_recall[1] - 0.0175).abs() < 1e-12);
    assert!(p.recall_ok[1]);
    let holm: Vec<f64> = [0, 1, 2]
        .iter()
        .map(|&i| p.vs_best[i].unwrap().p_holm)
        .collect();
    let want = [1.0, 0.046875, 0.125];
    for (h, w) in holm.iter().zip(want) {
        assert!((h - w).abs() < 1e-12, "{holm:?}");
    }
    let t = p.vs_best[1].unwrap();
    assert_eq!((t.best_better, t.this_better), (7, 0));
    assert!((t.p_value - 0.015625).abs() < 1e-12);
    assert!(t.significant);
    assert_eq!(p.kept, vec![true, false, true, true]);
    // sentence-256 was the cheapest; the pick is the cheapest that is not significantly worse.
    assert_eq!(p.winner(), Some(3));
    assert_eq!(p.order, vec![3, 2, 0]);
}

#[test]
fn more_than_the_recall_tolerance_below_the_best_is_dropped_without_significance() {
    // 20 questions: 0.85 vs 0.80 differs on one question (p = 1) but is 0.05 below.
    let n = 20;
    let items = vec![
        Item {
            id: "fixed-512",
            size: 512,
            tpq: 2500.0,
            recall: recall(n, 17, 0),
            margin: vec![0.1; n],
        },
        Item {
            id: "fixed-128",
            size: 128,
            tpq: 640.0,
            recall: recall(n, 16, 0),
            margin: vec![0.1; n],
        },
    ];
    let p = run(&items, Rule::Paired);
    assert!(!p.vs_best[1].unwrap().significant);
    assert_eq!(p.kept, vec![true, false]);
    assert_eq!(p.winner(), Some(0));
}

#[test]
fn rules_parse_by_name() {
    assert_eq!("equivalence".parse::<Rule>(), Ok(Rule::Equivalence));
    assert_eq!("paired".parse::<Rule>(), Ok(Rule::Paired));
    assert_eq!("seed".parse::<Rule>(), Ok(Rule::Seed));
    assert!("3%".parse::<Rule>().is_err());
    assert_eq!(Rule::default().name(), "equivalence");
}

#[test]
fn seed_rule_the_cheapest_inside_the_plateau_wins_not_the_peak() {
    // 512 is the peak on both metrics; 256 is within 3% of its margin (0.485 ≥ 0.50 − 0.015)
    // and within 0.02 of its recall (0.79 ≥ 0.78), and costs half as much.
    // 128 is cheaper still but its margin 0.47 is below the floor 0.485.
    let items = [
        item("f-64", 64, 320.0, 0.60, 0.30),
        item("f-128", 128, 640.0, 0.78, 0.47),
        item("f-256", 256, 1280.0, 0.79, 0.485),
        item("f-512", 512, 2560.0, 0.80, 0.50),
        item("f-1024", 1024, 5120.0, 0.80, 0.49),
    ];
    let p = run(&items, Rule::Seed);
    assert!((p.margin_floor.unwrap() - 0.485).abs() < 1e-12);
    assert!((p.recall_floor - 0.78).abs() < 1e-12);
    assert_eq!(p.kept, vec![false, false, true, true, true]);
    assert_eq!(p.order, vec![2, 3, 4]);
    assert_eq!(p.winner(), Some(2));
    assert_eq!(p.rank_of(4), Some(3));
    assert_eq!(p.rank_of(1), None);
    assert!(!p.fallback);
    // 128 fails on margin only; 64 on both.
    assert!(!p.margin_ok[1]);
    assert!(p.recall_ok[1]);
}

#[test]
fn seed_rule_negative_margins_use_the_magnitude_of_the_best() {
    // best −0.20 → floor −0.206: −0.205 is kept, −0.21 is not. (Multiplying the best by 0.97
    // or 1.03 naively would give −0.194 and drop everything but the best.)
    let items = [
        item("a", 64, 100.0, 0.5, -0.20),
        item("b", 128, 50.0, 0.5, -0.205),
        item("c", 256, 10.0, 0.5, -0.21),
    ];
    let p = run(&items, Rule::Seed);
    assert!((p.margin_floor.unwrap() + 0.206).abs() < 1e-12);
    assert_eq!(p.kept, vec![true, true, false]);
    assert_eq!(p.winner(), Some(1));
}

#[test]
fn ties_on_cost_go_to_the_smaller_size_then_the_id() {
    let items = [
        item("recursive-256", 256, 1000.0, 0.8, 0.5),
        item("markdown-256", 256, 1000.0, 0.8, 0.5),
        item("fixed-128", 128, 1000.0, 0.8, 0.5),
    ];
    for rule in [Rule::Seed, Rule::Paired] {
        assert_eq!(run(&items, rule).order, vec![2, 1, 0]);
    }
}

#[test]
fn at_equal_cost_the_paired_rule_prefers_the_higher_margin() {
    let items = [
        item("fixed-256", 256, 1000.0, 0.8, 0.4),
        item("fixed-512", 512, 1000.0, 0.8, 0.5),
    ];
    assert_eq!(run(&items, Rule::Paired).order, vec![1, 0]);
    assert_eq!(run(&items, Rule::Seed).kept, vec![false, true]);
}

#[test]
fn at_equal_cost_no_prefix_goes_before_an_empty_prefix() {
    // A heading path in a corpus without headings adds nothing: same cost, same metrics.
    let items = [
        item(
            "recursive-256-o38-heading_path-bm25-k5",
            256,
            1000.0,
            0.8,
            0.5,
        ),
        item("recursive-256-o38-none-bm25-k5", 256, 1000.0, 0.8, 0.5),
        item("recursive-256-o38-title-bm25-k5", 256, 1001.0, 0.8, 0.5),
    ];
    assert_eq!(run(&items, Rule::Seed).order, vec![1, 0, 2]);
}

#[test]
fn seed_rule_disjoint_bests_fall_back_to_recall_alone() {
    // The margin leader has poor recall and the recall leader a poor margin.
    let items = [
        item("a", 64, 100.0, 0.50, 0.60),
        item("b", 512, 900.0, 0.90, 0.20),
        item("c", 256, 400.0, 0.89, 0.10),
    ];
    let p = run(&items, Rule::Seed);
    assert!(p.fallback);
    assert_eq!(p.kept, vec![false, true, true]);
    assert_eq!(p.winner(), Some(2));
}

#[test]
fn seed_rule_bounds_are_inclusive() {
    let items = [
        item("a", 64, 100.0, 0.78, 0.97),
        item("b", 512, 900.0, 0.80, 1.00),
    ];
    let p = run(&items, Rule::Seed);
    assert_eq!(p.kept, vec![true, true]);
    assert_eq!(p.winner(), Some(0));
}
