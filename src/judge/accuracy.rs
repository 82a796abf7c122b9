//! How far a judge's verdicts can be trusted: its verdicts against known right verdicts (planted
//! controls, human labels) and against its own verdicts on a second pass.
//!
//! - True-positive rate (TPR): passes among the items whose right verdict is pass; true-negative
//!   rate (TNR): fails among the items whose right verdict is fail. Each with its 95% Wilson
//!   interval ([`crate::stats::wilson`]).
//! - Balanced accuracy: (TPR + TNR) / 2, the accuracy that a skewed label mix cannot inflate
//!   (0.5 is chance, whatever the mix).
//! - Cohen's κ (Cohen 1960): `(po − pe) / (1 − pe)`, with `po` the share of items where the two
//!   raters agree and `pe` the agreement expected by chance from each rater's pass share:
//!   `pa·pb + (1 − pa)(1 − pb)`. 1 is perfect agreement, 0 chance level; undefined (`None`) when
//!   `pe` is 1 (both raters gave one and the same verdict to everything).
//! - Majority-label baseline: the accuracy of always answering the more frequent label, to read
//!   the judge's plain accuracy against.
//!
//! Balanced accuracy and κ get 95% percentile bootstrap intervals over items (2,000 resamples,
//! seed [`BOOTSTRAP_SEED`], [`crate::stats::bootstrap_indices`]); resamples where the statistic is
//! undefined (no positive or no negative item, `pe` = 1) are left out.
//!
//! Source: J. Cohen (1960), "A coefficient of agreement for nominal scales", *Educational and
//! Psychological Measurement* 20(1): 37–46.

use serde::Serialize;

use crate::stats::{Interval, bootstrap_indices, quantile, wilson};

/// Confidence level of every interval here.
pub const CONFIDENCE: f64 = 0.95;

/// Bootstrap resamples for balanced accuracy and κ.
pub const RESAMPLES: usize = 2000;

/// Seed of the bootstrap resamples (fixed, so equal inputs give equal intervals).
pub const BOOTSTRAP_SEED: u64 = 16;

/// A proportion with its 95% Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Proportion {
    /// Successes.
    pub k: usize,
    /// Trials (at least 1).
    pub n: usize,
    /// `k / n`.
    pub value: f64,
    /// The 95% Wilson interval.
    pub interval: Interval,
}

impl Proportion {
    /// `k` of `n`; `None` when `n` is 0.
    pub fn of(k: usize, n: usize) -> Option<Proportion> {
        (n > 0).then(|| Proportion {
            k,
            n,
            value: k as f64 / n as f64,
            interval: wilson(k as u64, n as u64, CONFIDENCE),
        })
    }
}

/// A statistic with a bootstrap interval (`None` when no resample defines it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The value on all items.
    pub value: f64,
    /// Its 95% percentile bootstrap interval over items.
    pub interval: Option<Interval>,
}

/// Cohen's κ of two raters' pass/fail verdicts on the same items (`a[i]` and `b[i]` rate item
/// `i`); `None` for no item or when chance agreement is 1.
///
/// # Panics
/// If the slices differ in length.
pub fn cohen_kappa(a: &[bool], b: &[bool]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    let n = a.len() as f64;
    if a.is_empty() {
        return None;
    }
    let po = a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / n;
    let pa = a.iter().filter(|x| **x).count() as f64 / n;
    let pb = b.iter().filter(|x| **x).count() as f64 / n;
    let pe = pa * pb + (1.0 - pa) * (1.0 - pb);
    (pe < 1.0).then(|| (po - pe) / (1.0 - pe))
}

/// `(TPR + TNR) / 2` of verdicts `said` against right verdicts `truth`; `None` without both a
/// positive and a negative item.
fn balanced(truth: &[bool], said: &[bool]) -> Option<f64> {
    let rate = |want: bool| {
        let items: Vec<bool> = truth
            .iter()
            .zip(said)
            .filter(|(t, _)| **t == want)
            .map(|(_, s)| *s == want)
            .collect();
        (!items.is_empty())
            .then(|| items.iter().filter(|x| **x).count() as f64 / items.len() as f64)
    };
    Some((rate(true)? + rate(false)?) / 2.0)
}

/// A statistic of paired items with its bootstrap interval; `None` when undefined on all items.
fn with_bootstrap(
    a: &[bool],
    b: &[bool],
    stat: impl Fn(&[bool], &[bool]) -> Option<f64>,
) -> Option<Estimate> {
    let value = stat(a, b)?;
    let draws: Vec<f64> = bootstrap_indices(a.len(), RESAMPLES, BOOTSTRAP_SEED)
        .iter()
        .filter_map(|idx| {
            let x: Vec<bool> = idx.iter().map(|&i| a[i as usize]).collect();
            let y: Vec<bool> = idx.iter().map(|&i| b[i as usize]).collect();
            stat(&x, &y)
        })
        .collect();
    let alpha = (1.0 - CONFIDENCE) / 2.0;
    let interval = quantile(&draws, alpha)
        .zip(quantile(&draws, 1.0 - alpha))
        .map(|(lo, hi)| Interval { lo, hi });
    Some(Estimate { value, interval })
}

/// A judge's verdicts against right verdicts (planted or labelled by hand).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    /// Items with a right verdict and a pass or fail from the judge.
    pub n: usize,
    /// Items whose right verdict is pass.
    pub positives: usize,
    /// Items whose right verdict is fail.
    pub negatives: usize,
    /// Passes among the positives; `None` without a positive.
    pub tpr: Option<Proportion>,
    /// Fails among the negatives; `None` without a negative.
    pub tnr: Option<Proportion>,
    /// Verdicts equal to the right one, among all items.
    pub accuracy: Option<Proportion>,
    /// (TPR + TNR) / 2; `None` without both a positive and a negative.
    pub balanced_accuracy: Option<Estimate>,
    /// Cohen's κ of the judge against the right verdicts.
    pub kappa: Option<Estimate>,
    /// Accuracy of always answering the more frequent right verdict.
    pub majority_baseline: Option<Proportion>,
}

impl Accuracy {
    /// From `(right verdict, judge's verdict)` pairs, pass = `true`.
    pub fn of(pairs: &[(bool, bool)]) -> Accuracy {
        let truth: Vec<bool> = pairs.iter().map(|p| p.0).collect();
        let said: Vec<bool> = pairs.iter().map(|p| p.1).collect();
        let count = |t: bool, s: bool| pairs.iter().filter(|p| **p == (t, s)).count();
        let (tp, fn_, tn, fp) = (
            count(true, true),
            count(true, false),
            count(false, false),
            count(false, true),
        );
        let (positives, negatives) = (tp + fn_, tn + fp);
        Accuracy {
            n: pairs.len(),
            positives,
            negatives,
            tpr: Proportion::of(tp, positives),
            tnr: Proportion::of(tn, negatives),
            accuracy: Proportion::of(tp + tn, pairs.len()),
            balanced_accuracy: with_bootstrap(&truth, &said, balanced),
            kappa: with_bootstrap(&truth, &said, cohen_kappa),
            majority_baseline: Proportion::of(positives.max(negatives), pairs.len()),
        }
    }
}

/// A judge's verdicts on a second pass against its first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Items with a pass or fail on both passes.
    pub n: usize,
    /// Items with the same verdict on both.
    pub agreement: Option<Proportion>,
    /// Cohen's κ of the two passes (`None`: no item, or one verdict for everything).
    pub kappa: Option<Estimate>,
}

impl Agreement {
    /// From `(first verdict, second verdict)` pairs, pass = `true`.
    pub fn of(pairs: &[(bool, bool)]) -> Agreement {
        let a: Vec<bool> = pairs.iter().map(|p| p.0).collect();
        let b: Vec<bool> = pairs.iter().map(|p| p.1).collect();
        Agreement {
            n: pairs.len(),
            agreement: Proportion::of(pairs.iter().filter(|(x, y)| x == y).count(), pairs.len()),
            kappa: with_bootstrap(&a, &b, cohen_kappa),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_by_hand() {
        // 10 items: a passes 6, b passes 5; they agree on 7 (4 both pass, 3 both fail)
        // po = 0.7, pe = 0.6·0.5 + 0.4·0.5 = 0.5, κ = 0.2 / 0.5 = 0.4
        let a = [
            true, true, true, true, true, true, false, false, false, false,
        ];
        let b = [
            true, true, true, true, false, false, true, false, false, false,
        ];
        assert!((cohen_kappa(&a, &b).unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(cohen_kappa(&a, &a), Some(1.0));
        // one verdict for everything on both sides: undefined
        assert_eq!(cohen_kappa(&[true; 4], &[true; 4]), None);
        assert_eq!(cohen_kappa(&[], &[]), None);
        // a constant rater against a mixed one: chance level
        assert_eq!(
            cohen_kappa(&[true, true, false, false], &[true; 4]),
            Some(0.0)
        );
    }

    #[test]
    fn accuracy_by_hand() {
        // 4 positives (3 passed), 6 negatives (2 failed)
        let mut pairs = vec![(true, true); 3];
        pairs.push((true, false));
        pairs.extend([(false, false); 2]);
        pairs.extend([(false, true); 4]);
        let a = Accuracy::of(&pairs);
        assert_eq!((a.n, a.positives, a.negatives), (10, 4, 6));
        let tpr = a.tpr.unwrap();
        assert_eq!((tpr.k, tpr.n, tpr.value), (3, 4, 0.75));
        assert_eq!(tpr.interval, wilson(3, 4, 0.95));
        let tnr = a.tnr.unwrap();
        assert_eq!((tnr.k, tnr.n), (2, 6));
        let ba = a.balanced_accuracy.unwrap();
        assert!((ba.value - (0.75 + 2.0 / 6.0) / 2.0).abs() < 1e-12);
        let ci = ba.interval.unwrap();
        assert!(ci.lo < ba.value && ba.value < ci.hi, "{ci:?}");
        assert_eq!(a.accuracy.unwrap().k, 5);
        assert_eq!(a.majority_baseline.unwrap().value, 0.6);
        // po = 0.5, pa(truth) = 0.4, pb(judge) = 0.7: pe = 0.28 + 0.18 = 0.46, κ = 0.04/0.54
        assert!((a.kappa.unwrap().value - 0.04 / 0.54).abs() < 1e-12);
    }

    #[test]
    fn a_constant_judge_is_at_chance() {
        let pairs: Vec<(bool, bool)> = [true, true, false, false, false]
            .iter()
            .map(|&t| (t, true))
            .collect();
        let a = Accuracy::of(&pairs);
        assert_eq!(a.tpr.unwrap().value, 1.0);
        assert_eq!(a.tnr.unwrap().value, 0.0);
        assert_eq!(a.tnr.unwrap().interval.lo, 0.0);
        assert_eq!(a.balanced_accuracy.unwrap().value, 0.5);
        assert_eq!(a.kappa.unwrap().value, 0.0);
        // only negatives: no TPR, no balanced accuracy
        let a = Accuracy::of(&[(false, true), (false, false)]);
        assert_eq!(a.tpr, None);
        assert_eq!(a.balanced_accuracy, None);
        assert_eq!(a.tnr.unwrap().value, 0.5);
    }

    #[test]
    fn agreement_by_hand() {
        let g = Agreement::of(&[(true, true), (true, false), (false, false), (false, false)]);
        assert_eq!(g.agreement.unwrap().value, 0.75);
        // po = 0.75, pa = 0.5, pb = 0.25: pe = 0.125 + 0.375 = 0.5, κ = 0.5
        assert!((g.kappa.unwrap().value - 0.5).abs() < 1e-12);
        let g = Agreement::of(&[(true, true); 3]);
        assert_eq!(g.agreement.unwrap().value, 1.0);
        assert_eq!(g.kappa, None);
        assert_eq!(Agreement::of(&[]).agreement, None);
    }
}
