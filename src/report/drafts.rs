//! Drafted questions in a run (`chunksweep golden draft`): how many the golden set holds and how
//! many no person has reviewed, and, when it mixes human-written questions with drafts (by
//! `source`), whether both parts rank the configurations alike: Kendall's τ-b between the
//! configurations' mean span recall on each part at the deciding cut, with a percentile
//! bootstrap interval over questions (each part resampled on its own). For synthetic against
//! human queries, TREC reports system rankings agreeing at τ ≈ 0.82–0.85.

use std::collections::HashMap;

use super::doc::{Block, DocSection, Prose};
use crate::golden::{GoldenSet, Question};
use crate::select::Selection;
use crate::stats::{bootstrap_indices, quantile};
use crate::sweep::rows::QuestionRow;

/// Bootstrap resamples of the τ interval.
const RESAMPLES: usize = 1000;
/// Their seed.
const SEED: u64 = 42;

/// The drafted questions of a golden set, and how their ranking compares with the human one.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftCheck {
    /// Questions in the golden set.
    pub questions: usize,
    /// Questions drafted by a model (`"source": "draft"`).
    pub drafts: usize,
    /// Drafts no person has accepted (`"reviewed"` not true).
    pub unreviewed: usize,
    /// The rankings compared, when both parts have two or more questions and the cut two or
    /// more configurations.
    pub agreement: Option<DraftAgreement>,
}

/// Kendall's τ-b between the configurations' mean span recall on the human-written questions and
/// on the drafted ones.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftAgreement {
    /// Human-written questions.
    pub human: usize,
    /// Drafted questions.
    pub drafts: usize,
    /// Configurations ranked.
    pub configs: usize,
    /// τ-b; `None` when either ranking is all ties.
    pub tau: Option<f64>,
    /// Its 95% percentile bootstrap interval (resamples where τ is undefined left out).
    pub interval: Option<(f64, f64)>,
}

/// Kendall's τ-b of paired values (ties in either counted as neither concordant nor
/// discordant, and corrected for); `None` with fewer than two pairs or when either side is all
/// ties.
pub fn kendall_tau_b(a: &[f64], b: &[f64]) -> Option<f64> {
    let (mut concordant, mut discordant, mut ties_a, mut ties_b) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            let (da, db) = (a[i] - a[j], b[i] - b[j]);
            match (da == 0.0, db == 0.0) {
                (true, true) => {}
                (true, false) => ties_a += 1,
                (false, true) => ties_b += 1,
                (false, false) if (da > 0.0) == (db > 0.0) => concordant += 1,
                (false, false) => discordant += 1,
            }
        }
    }
    let n_a = (concordant + discordant + ties_a) as f64;
    let n_b = (concordant + discordant + ties_b) as f64;
    (n_a > 0.0 && n_b > 0.0).then(|| (concordant - discordant) as f64 / (n_a * n_b).sqrt())
}

/// The drafted questions of `golden` and, for a mixed set, the comparison of rankings at the
/// selection's cut (`questions` are sweep_questions.csv's rows); `None` when it has no draft.
pub fn check(
    golden: &GoldenSet,
    selection: &Selection,
    questions: &[QuestionRow],
) -> Option<DraftCheck> {
    let (drafts, human): (Vec<&Question>, Vec<&Question>) =
        golden.questions.iter().partition(|q| q.origin.is_draft());
    if drafts.is_empty() {
        return None;
    }
    let unreviewed = drafts
        .iter()
        .filter(|q| q.origin.is_unreviewed_draft())
        .count();
    let (drafts, human) = (ids(&drafts), ids(&human));
    let configs: Vec<&str> = selection
        .configs
        .iter()
        .map(|c| c.config_id.as_str())
        .collect();
    let agreement = (human.len() >= 2 && drafts.len() >= 2 && configs.len() >= 2)
        .then(|| agreement(&configs, &human, &drafts, questions));
    Some(DraftCheck {
        questions: golden.questions.len(),
        drafts: drafts.len(),
        unreviewed,
        agreement,
    })
}

fn ids<'a>(questions: &[&'a Question]) -> Vec<&'a str> {
    questions.iter().map(|q| q.id.as_str()).collect()
}

/// Each configuration's span recall per question of `ids` (0 for a question it has no row for).
fn recall_table(configs: &[&str], ids: &[&str], rows: &[QuestionRow]) -> Vec<Vec<f64>> {
    let at: HashMap<(&str, &str), f64> = rows
        .iter()
        .map(|r| {
            (
                (r.config_id.as_str(), r.question_id.as_str()),
                r.span_recall,
            )
        })
        .collect();
    configs
        .iter()
        .map(|c| {
            ids.iter()
                .map(|q| at.get(&(*c, *q)).copied().unwrap_or(0.0))
                .collect()
        })
        .collect()
}

fn means(table: &[Vec<f64>], draw: Option<&[u32]>) -> Vec<f64> {
    table
        .iter()
        .map(|values| match draw {
            Some(d) => d.iter().map(|&i| values[i as usize]).sum::<f64>() / d.len() as f64,
            None => values.iter().sum::<f64>() / values.len() as f64,
        })
        .collect()
}

fn agreement(
    configs: &[&str],
    human: &[&str],
    drafts: &[&str],
    rows: &[QuestionRow],
) -> DraftAgreement {
    let h = recall_table(configs, human, rows);
    let d = recall_table(configs, drafts, rows);
    let tau = kendall_tau_b(&means(&h, None), &means(&d, None));
    let hs = bootstrap_indices(human.len(), RESAMPLES, SEED);
    let ds = bootstrap_indices(drafts.len(), RESAMPLES, SEED + 1);
    let taus: Vec<f64> = hs
        .iter()
        .zip(&ds)
        .filter_map(|(a, b)| kendall_tau_b(&means(&h, Some(a)), &means(&d, Some(b))))
        .collect();
    let interval = quantile(&taus, 0.025).zip(quantile(&taus, 0.975));
    DraftAgreement {
        human: human.len(),
        drafts: drafts.len(),
        configs: configs.len(),
        tau,
        interval,
    }
}

/// The report's section "Drafted questions".
pub fn section(d: &DraftCheck) -> DocSection {
    let mut blocks = vec![Block::Para(
        Prose::text(format!(
            "{} of {} questions were drafted by a model (",
            d.drafts, d.questions
        ))
        .c("\"source\": \"draft\"")
        .t(format!(
            "); {} of them not reviewed by a person{}",
            d.unreviewed,
            if d.unreviewed > 0 {
                ": review them with "
            } else {
                "."
            }
        )),
    )];
    if d.unreviewed > 0
        && let Some(Block::Para(p)) = blocks.last_mut()
    {
        *p = std::mem::take(p).c("chunksweep golden review").t(
            " before trusting the pick: unverified questions quietly corrupt the score (seed 004).",
        );
    }
    match &d.agreement {
        Some(a) => {
            let tau = a.tau.map_or("undefined (a ranking of ties only)".into(), |t| format!("{t:.2}"));
            let interval = a
                .interval
                .map_or(String::new(), |(lo, hi)| format!(" (95% bootstrap interval [{lo:.2}, {hi:.2}], {RESAMPLES} resamples of each part's questions)"));
            blocks.push(Block::Para(Prose::text(format!(
                "Ranked by mean span recall at the deciding cut, the {} configurations order alike on the {} human-written questions and the {} drafted ones at Kendall τ-b = {tau}{interval}. For synthetic against human queries TREC reports τ ≈ 0.82–0.85; an interval reaching well below that says the drafts may lead to another decision than human questions would.",
                a.configs, a.human, a.drafts
            ))));
        }
        None if d.drafts < d.questions => blocks.push(Block::Para(Prose::text(
            "Too few questions or configurations on one side to compare the rankings of the human-written and the drafted questions (two of each are needed).",
        ))),
        None => {}
    }
    DocSection::new("Drafted questions", blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_b_by_hand_with_and_without_ties() {
        assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), Some(1.0));
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]),
            Some(-1.0)
        );
        // Pairs (1,2) concordant, (1,3) concordant, (2,3) tied in b: (2 - 0) / sqrt(3 * 2).
        let t = kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0, 2.0]).unwrap();
        assert!((t - 2.0 / 6f64.sqrt()).abs() < 1e-12, "{t}");
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
    }
}
