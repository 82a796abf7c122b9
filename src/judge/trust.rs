//! What the planted controls and repeats say about the judge, per criterion, and whether its
//! verdicts can confirm the pick: they cannot on a criterion whose true-negative rate on planted
//! failures has a 95% Wilson lower bound under `min_control_tnr` (the judge cannot tell planted
//! failures apart), or whose repeat κ is under `min_repeat_kappa` (it does not agree with
//! itself). See [`super::accuracy`] for the statistics and [`super::controls`] for the items;
//! [`super::summary::Decision::unconfirm`] applies the verdict to the decision. The controls'
//! and repeats' reasons are also checked for parroting ([`super::parroting`], against the
//! built-in templates): a warning under the table, which does not change the decision.

use super::accuracy::{Accuracy, Agreement};
use super::controls::ControlKind;
use super::parroting::{Parroting, builtin_template_texts};
use super::probes::ProbeRow;
use super::verdict::Verdict;

pub use super::accuracy::prop;

/// The judge's measured trust on one criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionTrust {
    /// The criterion's name.
    pub criterion: String,
    /// Control verdicts against the planted right verdicts (controls with an error verdict left
    /// out).
    pub controls: Accuracy,
    /// Control verdicts that were errors.
    pub control_errors: usize,
    /// Repeat verdicts against the first ones.
    pub repeat: Agreement,
    /// Why the verdicts cannot confirm the pick on this criterion; empty when nothing says so.
    pub doubts: Vec<String>,
    /// Reasons of the controls and repeats that repeat the prompt's text or contradict their
    /// verdict.
    pub parroting: Parroting,
}

impl CriterionTrust {
    /// Whether the controls and repeats leave the verdicts able to confirm the pick.
    pub fn can_confirm(&self) -> bool {
        self.doubts.is_empty()
    }
}

/// The trust of every criterion of `criteria` (names, in report order) that has a control or a
/// repeat in `rows` (judge_checks.csv).
pub fn trust(
    rows: &[ProbeRow],
    criteria: &[String],
    min_control_tnr: f64,
    min_repeat_kappa: f64,
) -> Vec<CriterionTrust> {
    let templates = builtin_template_texts();
    let templates: Vec<&str> = templates.iter().map(String::as_str).collect();
    criteria
        .iter()
        .filter_map(|c| {
            let mine: Vec<&ProbeRow> = rows.iter().filter(|r| &r.criterion == c).collect();
            if mine.is_empty() {
                return None;
            }
            let controls_rows: Vec<&ProbeRow> = mine
                .iter()
                .copied()
                .filter(|r| ControlKind::is_control(&r.kind))
                .collect();
            let pairs = |rows: &[&ProbeRow]| rows.iter().filter_map(|r| r.pair()).collect::<Vec<_>>();
            let controls = Accuracy::of(&pairs(&controls_rows));
            let control_errors = controls_rows
                .iter()
                .filter(|r| Verdict::parse(&r.verdict) == Some(Verdict::Error))
                .count();
            let repeat_rows: Vec<&ProbeRow> =
                mine.iter().copied().filter(|r| r.kind == "repeat").collect();
            let repeat = Agreement::of(&pairs(&repeat_rows));
            let mut doubts = Vec::new();
            if !controls_rows.is_empty() && controls.tnr.is_none() {
                doubts.push(if control_errors > 0 {
                    format!(
                        "no planted failure got a pass or fail verdict ({control_errors} control verdict(s) were errors), so whether it can tell a failing answer from a passing one was not measured"
                    )
                } else {
                    "no planted failure was asked of it (only planted passes), so whether it can tell a failing answer from a passing one was not measured".to_string()
                });
            }
            if let Some(t) = controls.tnr
                && t.interval.lo < min_control_tnr
            {
                doubts.push(format!(
                    "it failed {} of {} planted failures (true-negative rate {}), and the lower bound is under {min_control_tnr}, so it cannot tell a failing answer from a passing one",
                    t.k,
                    t.n,
                    prop(&t)
                ));
            }
            if let (Some(k), Some(a)) = (repeat.kappa, repeat.agreement)
                && k.value < min_repeat_kappa
            {
                doubts.push(format!(
                    "graded again with another seed it gave the same verdict {} of {} times, Cohen's κ {:.2}, under {min_repeat_kappa}",
                    a.k, a.n, k.value
                ));
            }
            Some(CriterionTrust {
                criterion: c.clone(),
                controls,
                control_errors,
                repeat,
                doubts,
                parroting: Parroting::of(mine.iter().filter_map(|r| r.reply()), &templates),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::probes::test_probe as row;

    fn names() -> Vec<String> {
        crate::judge::criteria::names(&crate::judge::criteria::builtin())
    }

    #[test]
    fn an_always_pass_judge_cannot_confirm() {
        let mut rows = Vec::new();
        for _ in 0..5 {
            rows.push(row("other_context", "faithfulness", "fail", "pass"));
            rows.push(row("reference_evidence", "faithfulness", "pass", "pass"));
            rows.push(row("repeat", "faithfulness", "pass", "pass"));
        }
        rows.push(row("perturbed", "faithfulness", "fail", "error"));
        for r in rows.iter_mut().take(6) {
            r.reason = "one sentence".into();
        }
        let t = trust(&rows, &names(), 0.5, 0.4);
        assert_eq!(t.len(), 1);
        let f = &t[0];
        assert_eq!(f.controls.tnr.unwrap().k, 0);
        assert_eq!(f.controls.tnr.unwrap().n, 5);
        assert_eq!(f.controls.tpr.unwrap().value, 1.0);
        assert_eq!(f.control_errors, 1);
        assert_eq!(f.repeat.agreement.unwrap().value, 1.0);
        assert_eq!(f.repeat.kappa, None);
        assert!(!f.can_confirm());
        // 6 of the 15 pass or fail verdicts give the template's placeholder as their reason
        assert_eq!((f.parroting.n, f.parroting.parroted), (15, 6));
        assert!(f.parroting.warns());
        assert!(
            f.doubts[0].starts_with(
                "it failed 0 of 5 planted failures (true-negative rate 0.00 [0.00, 0.43])"
            ),
            "{:?}",
            f.doubts
        );
    }

    #[test]
    fn a_judge_that_disagrees_with_itself_cannot_confirm() {
        let mut rows = Vec::new();
        for i in 0..10 {
            rows.push(row("other_answer", "relevancy", "fail", "fail"));
            // first verdicts pass, pass, fail, fail, ...; second alternate the other way half
            let first = if i % 2 == 0 { "pass" } else { "fail" };
            let second = if i < 5 { "pass" } else { "fail" };
            rows.push(row("repeat", "relevancy", first, second));
        }
        let t = trust(&rows, &names(), 0.5, 0.4);
        let r = &t[0];
        assert_eq!(r.controls.tnr.unwrap().value, 1.0);
        // pairs (p,p),(f,p),(p,p),(f,p),(p,p),(f,f),(p,f),(f,f),(p,f),(f,f): 6 agree
        // po = 0.6, pe = 0.5·0.5 + 0.5·0.5 = 0.5, κ = 0.2
        assert_eq!(r.repeat.agreement.unwrap().k, 6);
        assert!((r.repeat.kappa.unwrap().value - 0.2).abs() < 1e-12);
        assert_eq!(r.doubts.len(), 1);
        assert!(
            r.doubts[0].contains("Cohen's κ 0.20, under 0.4"),
            "{:?}",
            r.doubts
        );
    }

    #[test]
    fn planted_failures_that_all_errored_cannot_confirm() {
        // An always-pass judge whose negative controls all timed out: no true-negative rate, and
        // one verdict to everything leaves κ undefined; the pick must not be confirmed.
        let mut rows = Vec::new();
        for _ in 0..5 {
            rows.push(row("other_context", "faithfulness", "fail", "error"));
            rows.push(row("reference_evidence", "faithfulness", "pass", "pass"));
            rows.push(row("repeat", "faithfulness", "pass", "pass"));
        }
        let t = trust(&rows, &names(), 0.5, 0.4);
        let f = &t[0];
        assert_eq!(f.controls.tnr, None);
        assert_eq!(f.control_errors, 5);
        assert!(!f.can_confirm());
        assert_eq!(
            f.doubts,
            [
                "no planted failure got a pass or fail verdict (5 control verdict(s) were errors), so whether it can tell a failing answer from a passing one was not measured"
            ]
        );
    }
}
