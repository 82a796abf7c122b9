//! The cost–quality frontier: configurations that no other configuration beats on both cost
//! (tokens per query, lower is better) and quality (macro span recall@k, higher is better).
//!
//! Configuration `a` dominates `b` when `a` costs no more, recalls no less, and is strictly
//! better on at least one of the two (differences within [`super::plateau::EPS`] are equal).
//! The frontier is every configuration that nothing dominates; two configurations equal on
//! both are both on it.

use super::plateau::EPS;

/// Per configuration, whether it is on the frontier, given `(tokens per query, span recall)`
/// pairs in any order (the result is in the same order). O(n²), for a few hundred
/// configurations at most.
pub fn pareto(points: &[(f64, f64)]) -> Vec<bool> {
    let dominates = |a: (f64, f64), b: (f64, f64)| {
        let no_worse = a.0 <= b.0 + EPS && a.1 >= b.1 - EPS;
        let better = a.0 < b.0 - EPS || a.1 > b.1 + EPS;
        no_worse && better
    };
    points
        .iter()
        .map(|&p| !points.iter().any(|&q| dominates(q, p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_undominated_configurations_are_on_the_frontier() {
        let points = [
            (300.0, 0.50),  // cheapest: on it
            (600.0, 0.70),  // on it
            (900.0, 0.65),  // dearer than 600 and worse: off
            (1200.0, 0.80), // best recall: on it
            (2400.0, 0.80), // same recall as 1200, dearer: off
            (600.0, 0.70),  // equal to the second: both on it
        ];
        assert_eq!(pareto(&points), vec![true, true, false, true, false, true]);
        assert!(pareto(&[]).is_empty());
    }
}
