//! The judge's section of the reports, rendered from one [`JudgeSummary`]: [`markdown`] (the
//! `## Answer quality (judge)` section of report.md) and [`html`] (the same content for
//! report.html, with maud). Both show, in this order: the models and how rates are counted, an
//! incomplete run's note, the pass rate table (one column per criterion), the judge's trust per
//! criterion, the paired McNemar tests, the decision and its reasons, and the errors.

use std::fmt::Write as _;

use maud::{Markup, html};

use crate::judge::accuracy::Proportion;
use crate::judge::controls::ControlKind;
use crate::judge::decision::JudgeDecision;
use crate::judge::summary::JudgeSummary;
use crate::judge::table::{JudgeRow, Rate};
use crate::judge::trust::{CriterionTrust, prop};

/// The section's title.
pub const TITLE: &str = "Answer quality (judge)";

/// `0.86 [0.49, 0.97] of 7`, or `n/a` when nothing was judged.
fn rate_cell(r: Option<&Rate>) -> String {
    match r.and_then(|r| Some((r.judged, r.rate?, r.interval?))) {
        Some((judged, rate, (l, h))) => format!("{rate:.2} [{l:.2}, {h:.2}] of {judged}"),
        None => "n/a".into(),
    }
}

/// The sentence under the title: models and how rates are counted.
fn intro(s: &JudgeSummary) -> String {
    format!(
        "Generator `{}`, judge `{}`; pass rate = pass / (pass + fail) over the judged questions (\"of n\"), with its 95% Wilson interval; error verdicts and answers that could not be generated are counted apart and are in no rate; n/a: nothing judged.",
        s.generator_model, s.judge_model
    )
}

/// The pass rate table's header cells.
fn rate_header(s: &JudgeSummary) -> Vec<String> {
    let mut h: Vec<String> = ["configuration", "tokens/query", "span recall"]
        .map(String::from)
        .to_vec();
    h.extend(s.criteria.iter().cloned());
    h.extend(
        [
            "error verdicts",
            "generation errors",
            "tokens/question",
            "cost/question (USD)",
        ]
        .map(String::from),
    );
    h
}

/// Whether column `i` of the pass rate table is a number (right-aligned): tokens/query, span
/// recall and the counts and costs after the criteria.
fn rate_numeric(s: &JudgeSummary, i: usize) -> bool {
    i > 0 && (i < 3 || i >= 3 + s.criteria.len())
}

/// One candidate's cells of the pass rate table (the id unquoted).
fn rate_cells(s: &JudgeSummary, r: &JudgeRow) -> Vec<String> {
    let cost = match r.cost_per_question_usd {
        Some(c) if r.cost_estimated() => format!("{c:.5} (estimate)"),
        Some(c) => format!("{c:.5}"),
        None => "n/a".into(),
    };
    let mut v = vec![
        r.info.config_id.clone(),
        crate::select::thousands(r.info.tokens_per_query),
        format!("{:.3}", r.info.span_recall),
    ];
    v.extend(s.criteria.iter().map(|c| rate_cell(r.rate(c))));
    v.extend([
        r.error_verdicts().to_string(),
        r.generation_errors.to_string(),
        crate::select::thousands(r.tokens_per_question),
        cost,
    ]);
    v
}

/// The note on estimated costs, when some call carried no token usage.
fn estimate_note(s: &JudgeSummary) -> Option<String> {
    let estimated: u32 = s.table.iter().map(|r| r.calls_without_usage).sum();
    (estimated > 0).then(|| format!(
        "Costs marked (estimate) include {estimated} call(s) whose reply carried no token usage: their tokens were counted with cl100k_base."
    ))
}

/// The sentence above the trust table.
const TRUST_INTRO: &str = "How far the judge's verdicts can be trusted (planted controls and repeats, over all candidates; never in a pass rate): true-negative rate = fails among planted failures, true-positive rate = passes among planted passes, each with its 95% Wilson interval; balanced accuracy = their mean (0.5 is chance); repeat = the same verdict when graded again with another seed, with Cohen's κ.";

/// The trust table's header cells.
const TRUST_HEADER: [&str; 8] = [
    "criterion",
    "true-negative rate",
    "true-positive rate",
    "balanced accuracy",
    "repeat agreement",
    "repeat κ",
    "control errors",
    "confirms",
];

/// One criterion's cells of the trust table (the last says whether it confirms).
fn trust_cells(t: &CriterionTrust) -> (Vec<String>, bool) {
    let cell = |p: Option<Proportion>| {
        p.map_or_else(|| "n/a".to_string(), |p| format!("{} of {}", prop(&p), p.n))
    };
    let cells = vec![
        t.criterion.clone(),
        cell(t.controls.tnr),
        cell(t.controls.tpr),
        t.controls
            .balanced_accuracy
            .map_or_else(|| "n/a".into(), |b| format!("{:.2}", b.value)),
        cell(t.repeat.agreement),
        t.repeat
            .kappa
            .map_or_else(|| "n/a".into(), |k| format!("{:.2}", k.value)),
        t.control_errors.to_string(),
    ];
    (cells, t.can_confirm())
}

/// The sentence above the McNemar table.
const MCNEMAR_INTRO: &str = "Paired exact McNemar tests (questions both have a pass or fail for):";

/// The decision's headline, without Markdown emphasis: the choice, and when it is not confirmed
/// why, in a few words (the reasons below say it in full).
fn headline(d: &JudgeDecision) -> String {
    let Some(id) = &d.chosen else {
        return "No decision: the judge gave no valid verdict.".into();
    };
    let id = match &d.moved_from {
        Some(from) => format!("`{id}` (the judge moved the pick from `{from}`)"),
        None => format!("`{id}`"),
    };
    match (d.withheld.is_empty(), d.unconfirmed.is_empty()) {
        (true, true) => format!("Decision: {id}."),
        (true, false) => format!(
            "Decision: {id}, not confirmed on {}: the judge's verdicts there cannot be trusted (see below).",
            d.unconfirmed.join(", ")
        ),
        (false, _) => {
            let mut why = d.withheld.clone();
            if !d.unconfirmed.is_empty() {
                why.push(format!(
                    "the judge's verdicts on {} cannot be trusted",
                    d.unconfirmed.join(", ")
                ));
            }
            format!(
                "Decision: {id}, not confirmed: {} (see below).",
                why.join("; ")
            )
        }
    }
}

/// How many planted controls of each kind the trust table rests on (kinds in
/// [`ControlKind::ALL`] order, those planted only), e.g. `Planted controls per kind: 5
/// other_context, 3 perturbed, 2 added_claim, 5 reference_evidence.`; `None` without controls.
fn planted_note(s: &JudgeSummary) -> Option<String> {
    let counts: Vec<String> = ControlKind::ALL
        .iter()
        .filter_map(|k| {
            let n = s.probes.iter().filter(|r| r.kind == k.name()).count();
            (n > 0).then(|| format!("{n} {}", k.name()))
        })
        .collect();
    (!counts.is_empty()).then(|| format!("Planted controls per kind: {}.", counts.join(", ")))
}

/// The reasons, then the errors' sentence when there were errors.
fn reasons(s: &JudgeSummary) -> Vec<String> {
    let mut out = s.decision.reasons.clone();
    let errors = s.errors();
    if errors > 0 {
        let per: Vec<String> = s
            .table
            .iter()
            .filter(|r| r.errors > 0)
            .map(|r| format!("`{}`: {}", r.info.config_id, r.errors))
            .collect();
        out.push(format!(
            "{errors} error(s): verdicts that could not be read, and answers the server did not give ({}); see judge_questions.csv.",
            per.join(", ")
        ));
    }
    out
}

/// The report's judge section (Markdown, starting with `## Answer quality (judge)`).
pub fn markdown(s: &JudgeSummary) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## {TITLE}\n");
    let _ = writeln!(md, "{}\n", intro(s));
    if let Some(note) = &s.incomplete {
        let _ = writeln!(md, "**Incomplete run:** {note}\n");
    }
    let header = rate_header(s);
    let _ = writeln!(md, "| {} |", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if rate_numeric(s, i) { "---:" } else { "---" })
        .collect();
    let _ = writeln!(md, "|{}|", align.join("|"));
    for r in &s.table {
        let mut cells = rate_cells(s, r);
        cells[0] = format!("`{}`", cells[0]);
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    if let Some(note) = estimate_note(s) {
        let _ = writeln!(md, "\n{note}");
    }
    md.push_str(&trust_markdown(&s.trust));
    if let Some(note) = planted_note(s) {
        let _ = writeln!(md, "\n{note}");
    }
    let d = &s.decision;
    if !d.comparisons.is_empty() {
        let _ = writeln!(md, "\n{MCNEMAR_INTRO}\n");
        let _ = writeln!(md, "| criterion | A | B | n | A only | B only | p |");
        let _ = writeln!(md, "|---|---|---|---:|---:|---:|---:|");
        for c in &d.comparisons {
            let _ = writeln!(
                md,
                "| {} | `{}` | `{}` | {} | {} | {} | {:.3}{} |",
                c.criterion,
                c.a,
                c.b,
                c.n,
                c.a_only,
                c.b_only,
                c.p_value,
                if c.significant { " *" } else { "" }
            );
        }
    }
    let _ = writeln!(md, "\n**{}**\n", headline(d));
    for r in reasons(s) {
        let _ = writeln!(md, "- {r}");
    }
    md
}

/// The trust table (Markdown, with the sentence above it), empty without controls or repeats.
fn trust_markdown(trust: &[CriterionTrust]) -> String {
    if trust.is_empty() {
        return String::new();
    }
    let mut md = String::new();
    let _ = writeln!(md, "\n{TRUST_INTRO}\n");
    let _ = writeln!(md, "| {} |", TRUST_HEADER.join(" | "));
    let _ = writeln!(md, "|---|---|---|---|---|---|---:|---|");
    for t in trust {
        let (cells, confirms) = trust_cells(t);
        let confirms = if confirms { "yes" } else { "**no**" };
        let _ = writeln!(md, "| {} | {confirms} |", cells.join(" | "));
    }
    for w in parroting_warnings(trust) {
        let _ = writeln!(md, "\n**Parroted replies:** {w}.");
    }
    md
}

/// The parroting warning of each criterion whose controls' and repeats' reasons pass the
/// threshold ([`crate::judge::parroting`]).
fn parroting_warnings(trust: &[CriterionTrust]) -> Vec<String> {
    trust
        .iter()
        .filter_map(|t| t.parroting.warning(&t.criterion))
        .collect()
}

/// Text with `code` spans (between backticks) as `<code>` elements.
fn inline(text: &str) -> Markup {
    html! {
        @for (i, part) in text.split('`').enumerate() {
            @if i % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
}

/// A table of text cells (code spans kept) with a header row; the columns for which `numeric`
/// holds (by index) are right-aligned (class `num`), as report.md's table aligns them.
fn table(header: &[String], rows: &[Vec<String>], numeric: impl Fn(usize) -> bool) -> Markup {
    let class = |i: usize| numeric(i).then_some("num");
    html! {
        table {
            thead { tr { @for (i, h) in header.iter().enumerate() { th class=[class(i)] { (h) } } } }
            tbody {
                @for r in rows {
                    tr { @for (i, c) in r.iter().enumerate() { td class=[class(i)] { (inline(c)) } } }
                }
            }
        }
    }
}

/// The report's judge section as HTML: the same content as [`markdown`], in a `section`
/// element with id `judge`.
pub fn html(s: &JudgeSummary) -> Markup {
    let rate_rows: Vec<Vec<String>> = s
        .table
        .iter()
        .map(|r| {
            let mut cells = rate_cells(s, r);
            cells[0] = format!("`{}`", cells[0]);
            cells
        })
        .collect();
    let trust_header: Vec<String> = TRUST_HEADER.map(String::from).to_vec();
    let trust_rows: Vec<Vec<String>> = s
        .trust
        .iter()
        .map(|t| {
            let (mut cells, confirms) = trust_cells(t);
            cells.push(if confirms { "yes" } else { "no" }.into());
            cells
        })
        .collect();
    let cmp_header: Vec<String> = ["criterion", "A", "B", "n", "A only", "B only", "p"]
        .map(String::from)
        .to_vec();
    let cmp_rows: Vec<Vec<String>> = s
        .decision
        .comparisons
        .iter()
        .map(|c| {
            vec![
                c.criterion.clone(),
                format!("`{}`", c.a),
                format!("`{}`", c.b),
                c.n.to_string(),
                c.a_only.to_string(),
                c.b_only.to_string(),
                format!("{:.3}{}", c.p_value, if c.significant { " *" } else { "" }),
            ]
        })
        .collect();
    html! {
        section #judge .judge {
            h2 { (TITLE) }
            p { (inline(&intro(s))) }
            @if let Some(note) = &s.incomplete { p { strong { "Incomplete run:" } " " (note) } }
            (table(&rate_header(s), &rate_rows, |i| rate_numeric(s, i)))
            @if let Some(note) = estimate_note(s) { p { (note) } }
            @if !s.trust.is_empty() {
                p { (TRUST_INTRO) }
                (table(&trust_header, &trust_rows, |i| i == 6))
                @for w in parroting_warnings(&s.trust) { p { strong { "Parroted replies:" } " " (w) "." } }
            }
            @if let Some(note) = planted_note(s) { p { (note) } }
            @if !cmp_rows.is_empty() {
                p { (MCNEMAR_INTRO) }
                (table(&cmp_header, &cmp_rows, |i| i >= 3))
            }
            p .decision { strong { (inline(&headline(&s.decision))) } }
            ul { @for r in reasons(s) { li { (inline(&r)) } } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::rows::{JudgeQuestionRow, test_row as row};
    use crate::judge::settings::JudgeSettings;
    use crate::judge::summary::SummaryInputs;
    use crate::judge::table::{CandidateInfo, test_info as info};

    fn summary(
        cands: &[CandidateInfo],
        rows: &[JudgeQuestionRow],
        probes: Vec<crate::judge::probes::ProbeRow>,
    ) -> JudgeSummary {
        let settings = JudgeSettings {
            generator_model: "g".into(),
            judge_model: "j".into(),
            ..JudgeSettings::default()
        };
        let names = crate::judge::criteria::names(&settings.criteria);
        JudgeSummary::build(SummaryInputs {
            candidates: cands,
            criteria: &names,
            questions: rows.to_vec(),
            probes,
            settings: &settings,
            pick: Some("A"),
            incomplete: None,
        })
    }

    #[test]
    fn one_pass_and_one_error_is_a_rate_of_one_over_one() {
        let rows = [
            row("A", 0, "pass", "pass", "na"),
            row("A", 1, "error", "pass", "na"),
        ];
        let s = summary(&[info("A", 64, 320.0, 0.9)], &rows, Vec::new());
        let r = &s.table[0];
        let f = r.rate("faithfulness").unwrap();
        assert_eq!((f.judged, f.rate, f.errors), (1, Some(1.0), 1));
        // nothing judged: n/a, not 0
        let c = r.rate("correctness").unwrap();
        assert_eq!((c.judged, c.rate, c.interval), (0, None, None));
        let md = markdown(&s);
        assert!(md.contains("| 1.00 [0.21, 1.00] of 1 |"), "{md}");
        assert!(md.contains("| n/a | 1 | 0 |"), "{md}");
        // one judged answer and no planted control: nothing confirmed, and the report says why
        assert!(!md.contains("confirms"), "{md}");
        assert!(
            md.contains("**Decision: `A`, not confirmed: the judge's accuracy was not measured; too few judged answers (see below).**"),
            "{md}"
        );
        assert!(
            md.contains("- The judge's accuracy was not measured on faithfulness (no planted control could be asked), relevancy (no planted control could be asked), so its verdicts there cannot confirm the pick.\n- Too few judged answers to confirm the pick: `A` has 2 (answers with a pass or fail verdict), fewer than the minimum of 5 (`[judge] min_judged_answers`).\n"),
            "{md}"
        );
    }

    #[test]
    fn no_valid_verdict_confirms_nothing() {
        let rows: Vec<_> = (0..3)
            .flat_map(|q| {
                [
                    row("A", q, "error", "error", "error"),
                    row("B", q, "pass", "pass", "na"),
                ]
            })
            .collect();
        let cands = [info("A", 64, 320.0, 0.9), info("B", 256, 1280.0, 0.9)];
        let s = summary(&cands, &rows, Vec::new());
        let d = &s.decision;
        assert_eq!(d.chosen, None);
        assert_eq!(d.unjudged, vec!["A".to_string()]);
        assert!(d.comparisons.is_empty(), "errors are not paired outcomes");
        let md = markdown(&s);
        assert!(!md.contains("confirms"), "{md}");
        assert!(
            md.contains("**No decision: the judge gave no valid verdict.**"),
            "{md}"
        );
        assert!(
            md.contains("| `A` | 320 | 0.900 | n/a | n/a | n/a | 9 | 0 |"),
            "{md}"
        );
    }

    #[test]
    fn the_decision_and_the_paired_tests_are_rendered() {
        // 12 questions: B passes all, A fails 10 of them -> b=0, c=10, p = 2/1024
        let mut rows = Vec::new();
        for q in 0..12 {
            let f = if q < 2 { "pass" } else { "fail" };
            rows.push(row("A", q, f, "pass", "na"));
            rows.push(row("B", q, "pass", "pass", "na"));
        }
        let cands = [info("A", 64, 320.0, 0.90), info("B", 256, 1280.0, 0.91)];
        let s = summary(&cands, &rows, Vec::new());
        let md = markdown(&s);
        // no planted control: the judge is not trusted, so B's significant lead does not move
        // the pick A, which stays unconfirmed
        assert!(
            md.contains("**Decision: `A`, not confirmed: the judge's accuracy was not measured (see below).**"),
            "{md}"
        );
        assert!(
            md.contains("This does not move the pick: it is not significantly better on any criterion the judge is trusted on; and the judge is not trusted on faithfulness, relevancy"),
            "{md}"
        );
        assert!(
            md.contains("| faithfulness | `A` | `B` | 12 | 0 | 10 | 0.002 * |"),
            "{md}"
        );
        assert!(
            md.starts_with("## Answer quality (judge)\n\nGenerator `g`, judge `j`;"),
            "{md}"
        );
        assert!(
            md.contains("| configuration | tokens/query | span recall | faithfulness | relevancy | correctness | error verdicts | generation errors | tokens/question | cost/question (USD) |\n|---|---:|---:|---|---|---|---:|---:|---:|---:|\n| `A` | 320 | 0.900 | 0.17 [0.05, 0.45] of 12 | 1.00 [0.76, 1.00] of 12 | n/a | 0 | 0 | 110 | 0.00100 |\n"),
            "{md}"
        );
        let page = html(&s).into_string();
        assert!(
            page.starts_with(
                "<section class=\"judge\" id=\"judge\"><h2>Answer quality (judge)</h2>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<strong>Decision: <code>A</code>, not confirmed: the judge's accuracy was not measured (see below).</strong>"),
            "{page}"
        );
        assert!(page.contains("<td>faithfulness</td><td><code>A</code></td><td><code>B</code></td><td class=\"num\">12</td><td class=\"num\">0</td><td class=\"num\">10</td><td class=\"num\">0.002 *</td>"), "{page}");
        // numbers right-aligned, as report.md's table aligns them
        assert!(page.contains("<th>configuration</th><th class=\"num\">tokens/query</th><th class=\"num\">span recall</th><th>faithfulness</th><th>relevancy</th><th>correctness</th><th class=\"num\">error verdicts</th>"), "{page}");
    }

    #[test]
    fn an_always_pass_judge_is_shown_not_to_confirm() {
        let check = |kind: &str, expected: &str, verdict: &str| {
            crate::judge::probes::test_probe(kind, "faithfulness", expected, verdict)
        };
        let mut probes = Vec::new();
        for _ in 0..5 {
            probes.push(check("other_context", "fail", "pass"));
            probes.push(check("reference_evidence", "pass", "pass"));
            probes.push(check("repeat", "pass", "pass"));
        }
        probes.push(check("perturbed", "fail", "error"));
        let rows = [row("A", 0, "pass", "pass", "na")];
        let s = summary(&[info("A", 64, 320.0, 0.9)], &rows, probes);
        let md = markdown(&s);
        assert!(
            md.contains("| faithfulness | 0.00 [0.00, 0.43] of 5 | 1.00 [0.57, 1.00] of 5 | 0.50 | 1.00 [0.57, 1.00] of 5 | n/a | 1 | **no** |"),
            "{md}"
        );
        assert!(
            md.contains(
                "\nPlanted controls per kind: 5 other_context, 1 perturbed, 5 reference_evidence.\n"
            ),
            "{md}"
        );
        // one judged answer: too few, besides the judge's faithfulness verdicts; relevancy got a
        // pass with no planted control
        assert!(
            md.contains("**Decision: `A`, not confirmed: the judge's accuracy was not measured; too few judged answers; the judge's verdicts on faithfulness cannot be trusted (see below).**"),
            "{md}"
        );
        let page = html(&s).into_string();
        assert!(
            page.contains("<td>faithfulness</td><td>0.00 [0.00, 0.43] of 5</td>"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"num\">1</td><td>no</td>"),
            "{page}"
        );
    }
}
