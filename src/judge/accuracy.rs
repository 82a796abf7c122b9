//! How far a judge's verdicts can be trusted: its verdicts against known right verdicts (planted
//! controls, human labels) and against its own verdicts on a second pass.
//!
//! The positive class is **pass** (the right verdict of a good answer), the reverse of the
//! hallucination-detection literature (FaithBench, LLM-AggreFact), which takes the unfaithful
//! answer as positive: their true-positive rate is the true-negative rate here.
//!
//! - True-positive rate (TPR): passes among the items whose right verdict is pass; true-negative
//!   rate (TNR, the failures caught): fails among the items whose right verdict is fail. Each with
//!   its 95% Wilson interval ([`crate::stats::wilson`]).
//! - Balanced accuracy: (TPR + TNR) / 2, the accuracy that a skewed label mix cannot inflate
//!   (0.5 is chance, whatever the mix). Its 95% interval is built from the two rates' Wilson
//!   intervals by the MOVER method for a sum of independent proportions (Zou & Donner 2008;
//!   Newcombe 1998's method 10 is the same construction for a difference), halved: it never
//!   collapses to a point, not even when every verdict is the same.
//! - Cohen's κ (Cohen 1960): `(po − pe) / (1 − pe)`, with `po` the share of items where the two
//!   raters agree and `pe` the agreement expected by chance from each rater's pass share:
//!   `pa·pb + (1 − pa)(1 − pb)`. 1 is perfect agreement, 0 chance level; undefined (`None`) when
//!   `pe` is 1 (both raters gave one and the same verdict to everything). Its 95% percentile
//!   bootstrap interval over items (2,000 resamples, seed [`BOOTSTRAP_SEED`],
//!   [`crate::stats::bootstrap_indices`]; resamples where κ is undefined left out) is given only
//!   when the resamples differ: when every resample gives the same κ (a judge that gave one
//!   verdict to every item has κ 0 in each), there is no interval rather than a point.
//! - Majority-label baseline: the accuracy of always answering the more frequent label, to read
//!   the judge's plain accuracy against.
//!
//! Sources: J. Cohen (1960), "A coefficient of agreement for nominal scales", *Educational and
//! Psychological Measurement* 20(1): 37–46; G. Y. Zou and A. Donner (2008), "Construction of
//! confidence limits about effect measures: a general approach", *Statistics in Medicine* 27(10):
//! 1693–1702; R. G. Newcombe (1998), "Interval estimation for the difference between independent
//! proportions: comparison of eleven methods", *Statistics in Medicine* 17(8): 873–890.

use serde::Serialize;

use crate::stats::{Interval, bootstrap_indices, quantile, wilson};

/// Confidence level of every interval here.
pub const CONFIDENCE: f64 = 0.95;

/// Bootstrap resamples for κ.
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

/// A statistic with its 95% interval (`None`: no interval can be given, see the field).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Statistic {
    /// The value on all items.
    pub value: f64,
    /// Its 95% interval: MOVER from Wilson intervals for balanced accuracy, percentile bootstrap
    /// over items for κ; `None` for κ when every resample gave the same value.
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

/// (TPR + TNR) / 2 with the MOVER interval of the sum of two independent proportions from their
/// Wilson intervals, halved and kept inside [0, 1]: lower bound `S − √((p₁ − l₁)² + (p₂ − l₂)²)`,
/// upper bound `S + √((u₁ − p₁)² + (u₂ − p₂)²)`, with `S = p₁ + p₂` (Zou & Donner 2008).
pub fn balanced_accuracy(tpr: &Proportion, tnr: &Proportion) -> Statistic {
    let (p1, p2) = (tpr.value, tnr.value);
    let (i1, i2) = (tpr.interval, tnr.interval);
    let sum = p1 + p2;
    let lo = sum - ((p1 - i1.lo).powi(2) + (p2 - i2.lo).powi(2)).sqrt();
    let hi = sum + ((i1.hi - p1).powi(2) + (i2.hi - p2).powi(2)).sqrt();
    Statistic {
        value: sum / 2.0,
        interval: Some(Interval {
            lo: (lo / 2.0).max(0.0),
            hi: (hi / 2.0).min(1.0),
        }),
    }
}

/// Cohen's κ of paired verdicts with its bootstrap interval (none when every resample gives the
/// same κ); `None` when κ is undefined on all items.
fn kappa_with_bootstrap(a: &[bool], b: &[bool]) -> Option<Statistic> {
    let value = cohen_kappa(a, b)?;
    let draws: Vec<f64> = bootstrap_indices(a.len(), RESAMPLES, BOOTSTRAP_SEED)
        .iter()
        .filter_map(|idx| {
            let x: Vec<bool> = idx.iter().map(|&i| a[i as usize]).collect();
            let y: Vec<bool> = idx.iter().map(|&i| b[i as usize]).collect();
            cohen_kappa(&x, &y)
        })
        .collect();
    let alpha = (1.0 - CONFIDENCE) / 2.0;
    let interval = quantile(&draws, alpha)
        .zip(quantile(&draws, 1.0 - alpha))
        .map(|(lo, hi)| Interval { lo, hi })
        .filter(|_| draws.iter().any(|d| (d - draws[0]).abs() > 1e-12));
    Some(Statistic { value, interval })
}

/// A judge's verdicts against right verdicts (planted or labelled by hand). Pass is the positive
/// class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    /// Items with a right verdict and a pass or fail from the judge.
    pub n: usize,
    /// Items whose right verdict is pass.
    pub positives: usize,
    /// Items whose right verdict is fail.
    pub negatives: usize,
    /// Items the judge passed.
    pub said_pass: usize,
    /// Items the judge failed.
    pub said_fail: usize,
    /// Passes among the positives; `None` without a positive.
    pub tpr: Option<Proportion>,
    /// Fails among the negatives (the failures caught); `None` without a negative.
    pub tnr: Option<Proportion>,
    /// Verdicts equal to the right one, among all items.
    pub accuracy: Option<Proportion>,
    /// (TPR + TNR) / 2 with its MOVER interval; `None` without both a positive and a negative.
    pub balanced_accuracy: Option<Statistic>,
    /// Cohen's κ of the judge against the right verdicts.
    pub kappa: Option<Statistic>,
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
        let tpr = Proportion::of(tp, positives);
        let tnr = Proportion::of(tn, negatives);
        Accuracy {
            n: pairs.len(),
            positives,
            negatives,
            said_pass: tp + fp,
            said_fail: tn + fn_,
            tpr,
            tnr,
            accuracy: Proportion::of(tp + tn, pairs.len()),
            balanced_accuracy: tpr.zip(tnr).map(|(p, n)| balanced_accuracy(&p, &n)),
            kappa: kappa_with_bootstrap(&truth, &said),
            majority_baseline: Proportion::of(positives.max(negatives), pairs.len()),
        }
    }

    /// `Some(verdict)` (pass = `true`) when the judge gave that one verdict to every item.
    pub fn same_verdict(&self) -> Option<bool> {
        match (self.said_pass, self.said_fail) {
            (p, 0) if p > 0 => Some(true),
            (0, f) if f > 0 => Some(false),
            _ => None,
        }
    }

    /// Whether the verdicts tell items labelled pass from items labelled fail: both rates'
    /// lower bounds at least `min_lower` (`[judge] min_control_tnr`), with the reason in one
    /// sentence.
    pub fn tells(&self, min_lower: f64) -> Tells {
        let (Some(tnr), Some(tpr)) = (self.tnr, self.tpr) else {
            let missing = if self.n == 0 {
                "no labelled item got a pass or fail verdict"
            } else if self.tnr.is_none() {
                "no item labelled fail got a pass or fail verdict, so whether it catches failures was not measured"
            } else {
                "no item labelled pass got a pass or fail verdict, so whether it passes good answers was not measured"
            };
            return Tells {
                can_tell: false,
                reason: missing.into(),
            };
        };
        let low: Vec<(&str, &Proportion)> = [("TNR", &tnr), ("TPR", &tpr)]
            .into_iter()
            .filter(|(_, p)| p.interval.lo < min_lower)
            .collect();
        let rates = format!(
            "it caught {} of {} failures (TNR {}) and passed {} of {} passes (TPR {})",
            tnr.k,
            tnr.n,
            prop(&tnr),
            tpr.k,
            tpr.n,
            prop(&tpr)
        );
        if low.is_empty() {
            return Tells {
                can_tell: true,
                reason: format!("{rates}; both lower bounds are at least {min_lower}"),
            };
        }
        let same = self.same_verdict().map_or(String::new(), |v| {
            format!("every verdict was {}: ", if v { "pass" } else { "fail" })
        });
        let bounds = match low.as_slice() {
            [(name, _)] => format!("the lower bound of the {name} is"),
            _ => "the lower bounds of the TNR and TPR are".into(),
        };
        let few: Vec<String> = low
            .iter()
            .filter(|(_, p)| p.k == p.n)
            .map(|(n, p)| {
                format!(
                    "{n} is {} of {} right, and with every one right the bound reaches {min_lower} from {} items",
                    p.k,
                    p.n,
                    items_for_bound(min_lower)
                )
            })
            .collect();
        let few = if few.is_empty() {
            String::new()
        } else {
            format!(" (too few labelled items: {})", few.join("; "))
        };
        Tells {
            can_tell: false,
            reason: format!("{same}{rates}; {bounds} under {min_lower}{few}"),
        }
    }
}

/// The fewest items all answered right whose Wilson lower bound, `n / (n + z²)`, reaches `lo`
/// (below 1).
fn items_for_bound(lo: f64) -> usize {
    let z2 = crate::stats::z_for(CONFIDENCE).powi(2);
    (1..10_000)
        .find(|&n| n as f64 / (n as f64 + z2) >= lo)
        .unwrap_or(10_000)
}

/// `0.40 [0.12, 0.77]`: a proportion with its interval.
pub fn prop(p: &Proportion) -> String {
    format!(
        "{:.2} [{:.2}, {:.2}]",
        p.value, p.interval.lo, p.interval.hi
    )
}

/// Whether a judge's verdicts tell pass from fail on labelled items ([`Accuracy::tells`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tells {
    /// Both rates' lower bounds clear the threshold.
    pub can_tell: bool,
    /// Why, in one sentence (without a final full stop).
    pub reason: String,
}

impl Tells {
    /// `can tell pass from fail` or `cannot tell`.
    pub fn label(&self) -> &'static str {
        if self.can_tell {
            "can tell pass from fail"
        } else {
            "cannot tell"
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
    pub kappa: Option<Statistic>,
}

impl Agreement {
    /// From `(first verdict, second verdict)` pairs, pass = `true`.
    pub fn of(pairs: &[(bool, bool)]) -> Agreement {
        let a: Vec<bool> = pairs.iter().map(|p| p.0).collect();
        let b: Vec<bool> = pairs.iter().map(|p| p.1).collect();
        Agreement {
            n: pairs.len(),
            agreement: Proportion::of(pairs.iter().filter(|(x, y)| x == y).count(), pairs.len()),
            kappa: kappa_with_bootstrap(&a, &b),
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
    fn balanced_accuracy_intervals_never_collapse() {
        // Always pass on 5 labelled pass and 5 labelled fail: TPR 5/5 (Wilson lower bound
        // 5 / (5 + z²) = 0.56552), TNR 0/5 (upper bound z² / (5 + z²) = 0.43448). MOVER:
        // [(1 − 0.43448) / 2, (1 + 0.43448) / 2] = [0.28276, 0.71724].
        let mut pairs = vec![(true, true); 5];
        pairs.extend([(false, true); 5]);
        let a = Accuracy::of(&pairs);
        let ba = a.balanced_accuracy.unwrap();
        assert_eq!(ba.value, 0.5);
        let ci = ba.interval.unwrap();
        assert!((ci.lo - 0.28276).abs() < 1e-5, "{ci:?}");
        assert!((ci.hi - 0.71724).abs() < 1e-5, "{ci:?}");
        // κ is 0 in every resample of a constant judge: no interval, not [0, 0]
        let k = a.kappa.unwrap();
        assert_eq!((k.value, k.interval), (0.0, None));
        assert_eq!(a.same_verdict(), Some(true));
        assert_eq!((a.said_pass, a.said_fail), (10, 0));
        // a perfect judge on 4 + 4 items: 1.00 with a lower bound of 4 / (4 + z²) = 0.51010
        // from each rate, MOVER: 1 − √2 · 0.48990 / 2 = 0.65359; κ 1 in every resample
        let mut pairs = vec![(true, true); 4];
        pairs.extend([(false, false); 4]);
        let a = Accuracy::of(&pairs);
        let ci = a.balanced_accuracy.unwrap().interval.unwrap();
        assert!((ci.lo - 0.65359).abs() < 1e-5, "{ci:?}");
        assert_eq!(ci.hi, 1.0);
        assert_eq!(a.kappa.unwrap().interval, None);
        assert_eq!(a.same_verdict(), None);
    }

    #[test]
    fn a_verdict_needs_both_lower_bounds_over_the_threshold() {
        let judge = |tp: usize, fn_: usize, tn: usize, fp: usize| {
            let mut pairs = vec![(true, true); tp];
            pairs.extend(vec![(true, false); fn_]);
            pairs.extend(vec![(false, false); tn]);
            pairs.extend(vec![(false, true); fp]);
            Accuracy::of(&pairs).tells(0.5)
        };
        let t = judge(30, 0, 0, 30);
        assert!(!t.can_tell);
        assert_eq!(t.label(), "cannot tell");
        assert_eq!(
            t.reason,
            "every verdict was pass: it caught 0 of 30 failures (TNR 0.00 [0.00, 0.11]) and passed 30 of 30 passes (TPR 1.00 [0.89, 1.00]); the lower bound of the TNR is under 0.5"
        );
        let t = judge(8, 0, 8, 0);
        assert!(t.can_tell);
        assert_eq!(t.label(), "can tell pass from fail");
        assert!(
            t.reason.ends_with("; both lower bounds are at least 0.5"),
            "{}",
            t.reason
        );
        // every verdict right, but 2 + 2 items cannot show it: 4 of a label are needed
        let t = judge(2, 0, 2, 0);
        assert!(!t.can_tell);
        assert!(
            t.reason.ends_with("the lower bounds of the TNR and TPR are under 0.5 (too few labelled items: TNR is 2 of 2 right, and with every one right the bound reaches 0.5 from 4 items; TPR is 2 of 2 right, and with every one right the bound reaches 0.5 from 4 items)"),
            "{}",
            t.reason
        );
        // good at catching failures, poor at passing good answers
        let t = judge(5, 7, 12, 0);
        assert!(!t.can_tell);
        assert!(
            t.reason
                .ends_with("the lower bound of the TPR is under 0.5"),
            "{}",
            t.reason
        );
        let t = Accuracy::of(&[(true, true)]).tells(0.5);
        assert_eq!(
            t.reason,
            "no item labelled fail got a pass or fail verdict, so whether it catches failures was not measured"
        );
        assert_eq!(
            Accuracy::of(&[]).tells(0.5).reason,
            "no labelled item got a pass or fail verdict"
        );
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
