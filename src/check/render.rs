//! check.md of a [`Check`], meant for a pull-request
//! comment: the verdict first, then the questions that got worse (each with where its evidence
//! went), then what changed since the baseline, in a few dozen lines.

use std::fmt::Write;

use super::Check;
use super::changes::{NameChanges, SettingChange};
use super::compare::QuestionPair;
use super::fate::fate_text;
use super::judged::{CriterionOutcome, JudgeGate, fewest_worse_to_fail};
use super::verdict::{RegressionReason, RetrievalOutcome, RetrievalVerdict};

/// Questions listed by name in check.md before "… and N more" (check.json lists every one).
pub const LISTED: usize = 15;

/// The verdict in one line: `regression: …`, `pass: …` or `inconclusive: …`.
pub fn headline(check: &Check) -> String {
    let v = &check.verdict;
    let ids = &check.changes.chunker;
    let compared = format!(
        "`{}` against the baseline's `{}` on {} question(s): span recall {} vs {} ({})",
        ids.candidate,
        ids.baseline,
        v.n,
        f3(v.candidate_span_recall),
        f3(v.baseline_span_recall),
        signed(-v.drop),
    );
    match v.outcome {
        RetrievalOutcome::Regression => format!("regression: {compared}; {}", reasons(check)),
        RetrievalOutcome::Pass => format!(
            "pass: {compared}; non-inferior within δ = {} (one-sided {}% lower bound of the difference {} ≥ −{})",
            check.settings.delta,
            pct(1.0 - check.settings.alpha),
            signed(v.non_inferiority.lower),
            check.settings.delta
        ),
        RetrievalOutcome::Inconclusive => format!(
            "inconclusive: {compared}; neither worse nor shown within δ = {} ({}), {}",
            check.settings.delta,
            sign_text(v),
            needed(v)
        ),
    }
}

fn reasons(check: &Check) -> String {
    let v = &check.verdict;
    let s = &check.settings;
    let texts: Vec<String> = v
        .reasons
        .iter()
        .map(|r| match r {
            RegressionReason::SignificantlyWorse => {
                format!("significantly worse ({} at α = {})", sign_text(v), s.alpha)
            }
            RegressionReason::WorseThanMargin => format!(
                "worse by more than δ = {} (one-sided {}% upper bound of the difference {})",
                s.delta,
                pct(1.0 - s.alpha),
                signed(v.non_inferiority.upper)
            ),
            RegressionReason::LargeDrop => format!(
                "mean span recall dropped {} > --max-drop {}",
                f3(v.drop),
                s.max_drop
            ),
        })
        .collect();
    texts.join("; ")
}

fn sign_text(v: &RetrievalVerdict) -> String {
    format!(
        "{} question(s) worse, {} better, one-sided sign test {}",
        v.sign.reference_better,
        v.sign.candidate_better,
        p_text(v.sign.p_value)
    )
}

fn needed(v: &RetrievalVerdict) -> String {
    match v.questions_needed {
        Some(n) if n <= crate::stats::QUESTIONS_CAP => format!(
            "if it were as good as the baseline, about {} questions would show it within δ (α = {}, 80% power, planned at a true difference of 0; Chow, Shao and Wang 2008 §3.1)",
            crate::select::thousands(n as f64),
            v.non_inferiority.alpha
        ),
        _ => "more questions are unlikely to settle it".into(),
    }
}

/// check.md.
pub fn markdown(check: &Check) -> String {
    let mut md = String::new();
    let v = &check.verdict;
    let title = match (v.outcome, v.fails) {
        (RetrievalOutcome::Regression, _) => "❌ regression",
        (RetrievalOutcome::Pass, _) => "✅ pass",
        (RetrievalOutcome::Inconclusive, true) => "❌ inconclusive (--fail-on-inconclusive)",
        (RetrievalOutcome::Inconclusive, false) => "⚠️ pass, inconclusive",
    };
    let answers = match (&check.judge, &check.judge_error) {
        (_, Some(_)) => Some("⛔ not judged (the judge stage stopped)"),
        (Some(j), None) => Some(judge_title(j)),
        (None, None) => None,
    };
    match answers {
        Some(a) => {
            let _ = writeln!(
                md,
                "# chunksweep check: retrieval {title} · answer quality {a}\n"
            );
        }
        None => {
            let _ = writeln!(md, "# chunksweep check: {title}\n");
        }
    }
    let _ = writeln!(md, "**{}**\n", headline(check));
    if let Some(e) = &check.judge_error {
        let _ = writeln!(md, "**answer quality: not judged: {e}**\n");
    }
    if let Some(j) = &check.judge {
        let _ = writeln!(md, "**{}**\n", judge_headline(j, check.settings.alpha));
    }
    worse_section(&mut md, check);
    if let Some(j) = &check.judge {
        judge_section(&mut md, j, check);
    }
    changes_section(&mut md, check);
    let s = &check.settings;
    let _ = writeln!(
        md,
        "Baseline `{}`, cut {}; margin δ = {}, α = {} (one-sided), --max-drop {}; a regression needs at least two questions that got worse.",
        check.baseline, check.cut, s.delta, s.alpha, s.max_drop
    );
    md
}

fn worse_section(md: &mut String, check: &Check) {
    let worse: Vec<&QuestionPair> = check.worse().collect();
    if worse.is_empty() {
        let _ = writeln!(md, "No question got worse.\n");
        return;
    }
    let _ = writeln!(md, "## Questions that got worse ({})\n", worse.len());
    let _ = writeln!(
        md,
        "| question | span recall (baseline → now) | where the evidence went |"
    );
    let _ = writeln!(md, "|---|---|---|");
    for q in worse.iter().take(LISTED) {
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} |",
            q.question_id,
            f2(q.baseline.span_recall),
            f2(q.candidate.span_recall),
            fate_text(q)
        );
    }
    if worse.len() > LISTED {
        let _ = writeln!(md, "\n… and {} more in check.json.", worse.len() - LISTED);
    }
    md.push('\n');
}

/// The answer-quality gate in a few words, for check.md's title.
fn judge_title(j: &JudgeGate) -> &'static str {
    let any = |o: CriterionOutcome| j.criteria.iter().any(|c| c.outcome == o);
    if j.fails && any(CriterionOutcome::Regression) {
        "❌ regression"
    } else if j.fails && !j.judged {
        "❌ not gated: the judge cannot gate (--fail-on-inconclusive)"
    } else if j.fails {
        "❌ inconclusive (--fail-on-inconclusive)"
    } else if j.unfinished > 0 {
        "⏳ unfinished (rerun)"
    } else if !j.judged {
        "⚠️ not gated: the judge cannot gate"
    } else if any(CriterionOutcome::Inconclusive) {
        "⚠️ inconclusive"
    } else {
        "✅ not significantly worse"
    }
}

/// The answer-quality gate in one line: `answer quality: …`.
pub fn judge_headline(j: &JudgeGate, alpha: f64) -> String {
    let names = |of: fn(&CriterionOutcome) -> bool| -> Vec<String> {
        j.criteria
            .iter()
            .filter(|c| of(&c.outcome))
            .map(|c| c.criterion.clone())
            .collect()
    };
    if !j.judged {
        return "answer quality: the judge cannot gate on any criterion (see check.md's answer-quality section); no answer was judged".into();
    }
    let fewest = fewest_worse_to_fail(alpha);
    let mut parts = Vec::new();
    let regressions = names(|o| *o == CriterionOutcome::Regression);
    if !regressions.is_empty() {
        parts.push(format!(
            "regression in {} (significantly more answers failed than before, one-sided exact McNemar p < α = {alpha}, however the answers in no count turn out)",
            regressions.join(", ")
        ));
    }
    let inconclusive = names(|o| *o == CriterionOutcome::Inconclusive);
    if !inconclusive.is_empty() {
        parts.push(format!(
            "inconclusive on {}: the error verdicts decide it",
            inconclusive.join(", ")
        ));
    }
    let unfinished = names(|o| *o == CriterionOutcome::Unfinished);
    if !unfinished.is_empty() {
        parts.push(format!(
            "unfinished on {}: answers still to judge decide it",
            unfinished.join(", ")
        ));
    }
    let fine: Vec<String> = j
        .criteria
        .iter()
        .filter(|c| c.outcome == CriterionOutcome::NotWorse)
        .map(|c| {
            let mut note = format!("{} paired answer(s)", c.n);
            if (c.at_most_worse as u64) < fewest {
                let _ = write!(
                    note,
                    ", at most {} could have gone from pass to fail: too few to show a regression",
                    c.at_most_worse
                );
            }
            if c.unknown > 0 {
                let _ = write!(note, "; {} in no count", c.unknown);
            }
            format!("{} ({note})", c.criterion)
        })
        .collect();
    if !fine.is_empty() {
        parts.push(format!(
            "not significantly worse on {} (one-sided exact McNemar, α = {alpha}; not shown to be as good)",
            fine.join(", ")
        ));
    }
    let cannot = names(|o| o.cannot_gate().is_some());
    if !cannot.is_empty() {
        parts.push(format!("the judge cannot gate on {}", cannot.join(", ")));
    }
    if j.unfinished > 0 {
        parts.push(format!(
            "{} of {} answers under test have no verdict yet: rerun the same command",
            j.unfinished, j.questions
        ));
    }
    format!("answer quality: {}", parts.join("; "))
}

fn judge_section(md: &mut String, j: &JudgeGate, check: &Check) {
    let ids = &check.changes.chunker;
    let alpha = check.settings.alpha;
    let _ = writeln!(md, "## Answer quality (judge)\n");
    let _ = writeln!(
        md,
        "The baseline judged {} question(s) for `{}` that both runs still share unchanged{}; answers by `{}`, verdicts by `{}`. Per criterion, a one-sided exact McNemar test of \"more answers fail now\" at α = {alpha} on the answers with a pass or fail verdict on both sides; it gates only where the baseline's planted controls show a judge that can tell a failing answer from a passing one. Pairs with an error verdict, or not judged yet, are in no count: a regression is declared only if it holds however they turn out, \"not significantly worse\" only if it holds with all of them against the change.\n",
        j.questions,
        ids.baseline,
        if j.judged {
            format!(", judged again for `{}`", ids.candidate)
        } else {
            String::new()
        },
        j.generator_model,
        j.judge_model,
    );
    let _ = writeln!(
        md,
        "| criterion | result | passed (baseline → now) | worse | better | McNemar | in no count | error verdicts (baseline → now) |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for c in &j.criteria {
        let result = match &c.outcome {
            CriterionOutcome::Regression => "❌ regression",
            CriterionOutcome::NotWorse => "not significantly worse",
            CriterionOutcome::CannotGate { .. } => "cannot gate",
            CriterionOutcome::Unfinished => "unfinished",
            CriterionOutcome::Inconclusive => "⚠️ inconclusive",
        };
        let figures = if j.judged {
            format!(
                "{}/{n} → {}/{n} | {} | {} | {} | {} | {} → {}",
                c.baseline_pass,
                c.candidate_pass,
                c.worse,
                c.better,
                p_text(c.p_value),
                c.unknown,
                c.baseline_errors,
                c.candidate_errors,
                n = c.n
            )
        } else {
            "— | — | — | — | — | —".into()
        };
        let _ = writeln!(md, "| {} | {result} | {figures} |", c.criterion);
    }
    md.push('\n');
    let fewest = fewest_worse_to_fail(alpha);
    if j.judged {
        let _ = writeln!(
            md,
            "- At α = {alpha} the test can fail only when at least {fewest} answers went from pass to fail with none back: a criterion with fewer answers that passed in the baseline cannot show a regression, and \"not significantly worse\" does not show that answers are as good."
        );
    }
    for c in &j.criteria {
        if let Some(why) = c.outcome.cannot_gate() {
            let _ = writeln!(md, "- `{}` cannot gate: {why}.", c.criterion);
            continue;
        }
        if j.judged && (c.at_most_worse as u64) < fewest {
            let _ = writeln!(
                md,
                "- `{}`: at most {} answer(s) could have gone from pass to fail (passed in the baseline, or in no count and not passing now), too few for this test to show a regression.",
                c.criterion, c.at_most_worse
            );
        }
        if c.outcome == CriterionOutcome::Inconclusive && c.baseline_errors > 0 {
            let _ = writeln!(
                md,
                "- `{}`: the baseline's own error verdicts ({}) are among those that decide it: a rerun settles only the answers under test, a baseline made again its own (see \"Refreshing the baseline\" in the README).",
                c.criterion, c.baseline_errors
            );
        }
        if c.unknown > 0 {
            let _ = writeln!(
                md,
                "- `{}`: {} pair(s) in no count; with all of them counted against the change the test gives {}.",
                c.criterion,
                c.unknown,
                p_text(c.p_value_if_unknown_worse)
            );
        }
        if c.candidate_errors > c.baseline_errors {
            let _ = writeln!(
                md,
                "- `{}`: more error verdicts now ({}) than in the baseline ({}): answers the server did not give (cut at the token cap, empty) or verdicts that could not be read (see judge_questions.csv).",
                c.criterion, c.candidate_errors, c.baseline_errors
            );
        }
    }
    if j.unfinished > 0 {
        let _ = writeln!(
            md,
            "- {} of {} answers under test have no verdict yet (a timeout, a server error, the budget): rerun the same command to finish them.",
            j.unfinished, j.questions
        );
    }
    md.push('\n');
}

fn changes_section(md: &mut String, check: &Check) {
    let c = &check.changes;
    let _ = writeln!(md, "## What changed since the baseline\n");
    if !c.baseline_fingerprinted {
        let _ = writeln!(
            md,
            "- The baseline's manifest records no fingerprints (written before chunksweep recorded them): its documents cannot be compared, and questions are matched by id alone; refresh the baseline to record them."
        );
    }
    let ch = &c.chunker;
    let chunker = if !ch.changed() {
        "unchanged".to_string()
    } else if ch.settings.is_empty() {
        format!("`{}` → `{}`", ch.baseline, ch.candidate)
    } else {
        ch.settings
            .iter()
            .map(setting)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let _ = writeln!(md, "- Chunker: {chunker}.");
    if let Some(corpus) = &c.corpus {
        let _ = writeln!(md, "- Corpus: {}.", names(corpus, "changed"));
        for r in &c.readers {
            let _ = writeln!(
                md,
                "- {} reader {} → {}: {} of {} documents' text changed.",
                r.reader, r.before, r.after, r.changed, r.documents
            );
        }
    }
    let _ = writeln!(md, "- Questions: {}.", names(&c.questions, "edited"));
    let left_out = c.questions.removed.len() + c.questions.added.len() + c.questions.changed.len();
    let _ = writeln!(
        md,
        "- Compared: the {} question(s) both share unchanged{}.\n",
        check.questions.len(),
        if left_out > 0 {
            format!("; not compared: {left_out} (listed above)")
        } else {
            String::new()
        }
    );
}

/// One setting change in words: `chunk_size 256 → 128`; for an external chunker
/// `script x.py changed` and `langchain-text-splitters 0.3.8 → 0.3.9`.
fn setting(s: &SettingChange) -> String {
    let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "not used".into());
    if let Some(file) = s.name.strip_prefix("external.files.") {
        let what = match file.ends_with(".jsonl") {
            true => "chunks file",
            false => "script",
        };
        return match (&s.before, &s.after) {
            (Some(_), Some(_)) => format!("{what} {file} changed"),
            (None, _) => format!("{what} {file} now hashed (not in the baseline's chunker)"),
            (_, None) => format!("{what} {file} no longer in the chunker"),
        };
    }
    let name = s.name.strip_prefix("external.versions.").unwrap_or(&s.name);
    format!("{name} {} → {}", v(&s.before), v(&s.after))
}

/// `unchanged`, or `changed: a.md, b.md; added: c.md; removed: d.md` (the first [`LISTED`]
/// names of each).
fn names(n: &NameChanges, changed: &str) -> String {
    if n.is_empty() {
        return "unchanged".into();
    }
    let list = |v: &[String]| {
        let mut s = v
            .iter()
            .take(LISTED)
            .map(|x| format!("`{x}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if v.len() > LISTED {
            let _ = write!(s, " … and {} more", v.len() - LISTED);
        }
        s
    };
    [
        (changed, &n.changed),
        ("added", &n.added),
        ("removed", &n.removed),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .map(|(what, v)| format!("{what} ({}): {}", v.len(), list(v)))
    .collect::<Vec<_>>()
    .join("; ")
}

fn f2(x: f64) -> String {
    format!("{x:.2}")
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// `+0.012`, `−0.712`, or `0.000` when it rounds to zero.
fn signed(x: f64) -> String {
    if x.abs() < 5e-4 {
        "0.000".into()
    } else if x < 0.0 {
        format!("−{:.3}", -x)
    } else {
        format!("+{x:.3}")
    }
}

fn pct(x: f64) -> String {
    format!("{}", (x * 100.0).round())
}

/// `p < 0.001` or `p = 0.125`.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::judged::CriterionGate;

    fn gate(baseline_pass: usize, unknown: usize) -> JudgeGate {
        JudgeGate {
            generator_model: "gen".into(),
            judge_model: "judge".into(),
            questions: baseline_pass + unknown,
            unfinished: 0,
            judged: true,
            criteria: vec![CriterionGate {
                criterion: "faithfulness".into(),
                outcome: CriterionOutcome::NotWorse,
                n: baseline_pass,
                baseline_pass,
                candidate_pass: baseline_pass,
                worse: 0,
                better: 0,
                p_value: 1.0,
                unknown,
                p_value_if_unknown_worse: 1.0,
                errors: unknown,
                baseline_errors: 0,
                candidate_errors: unknown,
                at_most_worse: baseline_pass + unknown,
            }],
            fails: false,
        }
    }

    #[test]
    fn too_few_counts_the_answers_that_could_go_from_pass_to_fail() {
        // 2 baseline passes and 2 pairs in no count: at most 4 answers could be lost, under
        // the 5 that α = 0.05 needs; with 6 in no count, 8 could be
        let few = judge_headline(&gate(2, 2), 0.05);
        assert!(
            few.contains(
                "faithfulness (2 paired answer(s), at most 4 could have gone from pass to fail: too few to show a regression; 2 in no count)"
            ),
            "{few}"
        );
        let enough = judge_headline(&gate(2, 6), 0.05);
        assert!(!enough.contains("too few"), "{enough}");
        assert!(enough.contains("not shown to be as good"), "{enough}");
    }
}
