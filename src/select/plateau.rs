//! The plateau rule (seed 001's "plateau, not the peak", with seed 000's recall tolerance), made
//! exact.
//!
//! With `best_margin` the highest margin and `best_recall` the highest span recall@k over all
//! configurations being compared:
//!
//! - **margin floor** = `best_margin − margin_tolerance × |best_margin|` (relative to the
//!   magnitude, because margins can be negative: a best margin of −0.2 with 3% gives a floor of
//!   −0.206, not −0.194);
//! - **recall floor** = `best_recall − recall_tolerance` (absolute, in recall units);
//! - a configuration is **kept** when its margin ≥ the margin floor **and** its span recall@k ≥
//!   the recall floor (both inclusive, with a 1e-9 allowance for floating-point rounding);
//! - kept configurations are ranked by tokens per query ascending, ties broken by the smaller
//!   chunk size, then a configuration without a prefix before one with a prefix (an empty
//!   prefix, such as a heading path in a document without headings, costs nothing and changes
//!   nothing), then by config id; rank 1 is the pick.
//!
//! If no configuration passes both tests (the best-margin configuration is far below the best
//! recall and vice versa), the rule falls back to the recall test alone and says so
//! ([`Plateau::fallback`]): recall is the metric that predicts whether the generator can answer.

/// Rounding allowance for the inclusive comparisons, in metric units.
pub const EPS: f64 = 1e-9;

/// What the plateau rule needs to know about one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlateauInput<'a> {
    /// Configuration id (last tie-breaker).
    pub config_id: &'a str,
    /// chunk_size in tokens (second tie-breaker).
    pub chunk_size: usize,
    /// Context tokens per query, `top_k × mean chunk tokens` (the cost being minimised).
    pub tokens_per_query: f64,
    /// Macro span recall@k, in [0, 1].
    pub span_recall: f64,
    /// Mean normalised margin, in [−1, 1].
    pub margin: f64,
}

/// Whether a configuration id names a prefix other than `none` (ids that do not parse count as
/// without one).
fn has_prefix(config_id: &str) -> bool {
    config_id
        .parse::<crate::sweep::ConfigSpec>()
        .is_ok_and(|c| c.prefix != crate::chunking::enrich::Prefix::None)
}

/// The outcome of the plateau rule over a list of configurations (indices refer to that list).
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Highest margin.
    pub best_margin: f64,
    /// Highest span recall@k.
    pub best_recall: f64,
    /// `best_margin − margin_tolerance × |best_margin|`.
    pub margin_floor: f64,
    /// `best_recall − recall_tolerance`.
    pub recall_floor: f64,
    /// Per configuration: margin ≥ margin floor.
    pub margin_ok: Vec<bool>,
    /// Per configuration: span recall ≥ recall floor.
    pub recall_ok: Vec<bool>,
    /// Per configuration: kept by the rule.
    pub kept: Vec<bool>,
    /// Kept configurations, cheapest first (rank 1 = `order[0]`).
    pub order: Vec<usize>,
    /// True when no configuration passed both tests and the recall test alone was used.
    pub fallback: bool,
}

impl Plateau {
    /// The pick (rank 1), if any configuration was given.
    pub fn winner(&self) -> Option<usize> {
        self.order.first().copied()
    }

    /// 1-based rank of configuration `i` among the kept ones.
    pub fn rank_of(&self, i: usize) -> Option<usize> {
        self.order.iter().position(|&j| j == i).map(|p| p + 1)
    }
}

/// Applies the plateau rule (see the module documentation) with a relative `margin_tolerance`
/// (0.03 = 3% of |best margin|) and an absolute `recall_tolerance` (0.02 recall).
/// An empty input gives an empty plateau.
pub fn plateau(
    items: &[PlateauInput<'_>],
    margin_tolerance: f64,
    recall_tolerance: f64,
) -> Plateau {
    let best_margin = items
        .iter()
        .map(|c| c.margin)
        .fold(f64::NEG_INFINITY, f64::max);
    let best_recall = items
        .iter()
        .map(|c| c.span_recall)
        .fold(f64::NEG_INFINITY, f64::max);
    let margin_floor = best_margin - margin_tolerance * best_margin.abs();
    let recall_floor = best_recall - recall_tolerance;
    let margin_ok: Vec<bool> = items
        .iter()
        .map(|c| c.margin >= margin_floor - EPS)
        .collect();
    let recall_ok: Vec<bool> = items
        .iter()
        .map(|c| c.span_recall >= recall_floor - EPS)
        .collect();
    let mut kept: Vec<bool> = margin_ok
        .iter()
        .zip(&recall_ok)
        .map(|(m, r)| *m && *r)
        .collect();
    let fallback = !items.is_empty() && !kept.iter().any(|&k| k);
    if fallback {
        kept.clone_from(&recall_ok);
    }
    let mut order: Vec<usize> = (0..items.len()).filter(|&i| kept[i]).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&items[a], &items[b]);
        x.tokens_per_query
            .total_cmp(&y.tokens_per_query)
            .then(x.chunk_size.cmp(&y.chunk_size))
            .then(has_prefix(x.config_id).cmp(&has_prefix(y.config_id)))
            .then(x.config_id.cmp(y.config_id))
    });
    Plateau {
        best_margin,
        best_recall,
        margin_floor,
        recall_floor,
        margin_ok,
        recall_ok,
        kept,
        order,
        fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, size: usize, tpq: f64, recall: f64, margin: f64) -> PlateauInput<'_> {
        PlateauInput {
            config_id: id,
            chunk_size: size,
            tokens_per_query: tpq,
            span_recall: recall,
            margin,
        }
    }

    #[test]
    fn the_cheapest_inside_the_plateau_wins_not_the_peak() {
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
        let p = plateau(&items, 0.03, 0.02);
        assert!((p.margin_floor - 0.485).abs() < 1e-12);
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
    fn negative_margins_use_the_magnitude_of_the_best() {
        // best −0.20 → floor −0.206: −0.205 is kept, −0.21 is not. (Multiplying the best by 0.97
        // or 1.03 naively would give −0.194 and drop everything but the best.)
        let items = [
            item("a", 64, 100.0, 0.5, -0.20),
            item("b", 128, 50.0, 0.5, -0.205),
            item("c", 256, 10.0, 0.5, -0.21),
        ];
        let p = plateau(&items, 0.03, 0.02);
        assert!((p.margin_floor + 0.206).abs() < 1e-12, "{}", p.margin_floor);
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
        let p = plateau(&items, 0.03, 0.02);
        assert_eq!(p.order, vec![2, 1, 0]);
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
        let p = plateau(&items, 0.03, 0.02);
        assert_eq!(p.order, vec![1, 0, 2]);
    }

    #[test]
    fn disjoint_bests_fall_back_to_recall_alone() {
        // The margin leader has poor recall and the recall leader a poor margin.
        let items = [
            item("a", 64, 100.0, 0.50, 0.60),
            item("b", 512, 900.0, 0.90, 0.20),
            item("c", 256, 400.0, 0.89, 0.10),
        ];
        let p = plateau(&items, 0.03, 0.02);
        assert!(p.fallback);
        assert_eq!(p.kept, vec![false, true, true]);
        assert_eq!(p.winner(), Some(2));
    }

    #[test]
    fn bounds_are_inclusive() {
        let items = [
            item("a", 64, 100.0, 0.78, 0.97),
            item("b", 512, 900.0, 0.80, 1.00),
        ];
        let p = plateau(&items, 0.03, 0.02);
        assert_eq!(p.kept, vec![true, true]);
        assert_eq!(p.winner(), Some(0));
    }
}
