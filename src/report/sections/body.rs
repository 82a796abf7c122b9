//! The sections after the decision: the rule, the configurations at the deciding cut, the
//! diagnoses, the pick by question type and how to reproduce the run.

use super::numbers::{fmt_num, pct, with_ci};
use crate::report::doc::{Align, Block, DocSection, Prose, Table};
use crate::report::outcome::Outcome;
use crate::select::{ConfigSelection, Rule, Selection, Status, fmt_p, questions_words, thousands};

/// "The rule": the plateau, cheapest first, the split halves, with the run's settings.
pub(super) fn rule(sel: &Selection) -> DocSection {
    let s = &sel.settings;
    let plateau = match s.rule {
        Rule::Equivalence => Prose::new()
            .b(Prose::text("Non-inferior to the best"))
            .t(" (rule ")
            .c("equivalence")
            .t(format!(
                ", the default). The best is the configuration with the highest span recall@k \
                 (ties: higher margin, then cheaper). Every other configuration is compared with \
                 it on the same questions: the per-question differences in span recall@k (this − \
                 best), their mean and the one-sided {l}% paired t bounds. It is non-inferior \
                 when the lower bound is at least −δ = −{d}, worse when the upper bound is below \
                 −{d} (worse by more than δ), else undetermined. For an undetermined one the \
                 report gives P(worse by more than δ), the probability from the data that it is \
                 worse than the best by more than δ (flat prior: Student's t on the mean \
                 difference), and the questions that would show it within δ at α = {a} and 80% \
                 power if it were as good as the best: n = ((z(1−α) + z(0.8)) · sd / δ)², planned \
                 at a true difference of 0 (Chow, Shao and Wang 2008, §3.1), or \"more questions \
                 are unlikely to settle this\" above {cap} questions. The \
                 best and the non-inferior configurations stay; nothing else does. No fixed \
                 tolerance and no correction across the {m} comparisons (the claim made of the \
                 pick is one comparison). The margin does not filter; it breaks ties.",
                l = fmt_num((1.0 - s.alpha) * 100.0),
                d = fmt_num(s.delta),
                a = fmt_num(s.alpha),
                m = sel.configs.len().saturating_sub(1),
                cap = thousands(crate::stats::QUESTIONS_CAP as f64),
            )),
        Rule::Paired => Prose::new()
            .b(Prose::text("Plateau made of statistics"))
            .t(" (rule ")
            .c("paired")
            .t(format!(
                ", the rule before `equivalence`). The best is the configuration with the highest span recall@k \
                 (ties: higher margin, then cheaper). Every other configuration is compared with \
                 it on the same questions by the exact sign test on per-question span recall@k \
                 (McNemar's test when questions have one span), and the {m} p-values are \
                 Holm-corrected. A configuration stays unless the best is significantly better \
                 (Holm p < {a}) or its span recall@k is more than {r} below the best's. The \
                 margin does not filter (it can be near 0 or negative, where a relative \
                 tolerance means nothing); it breaks ties.",
                m = sel.configs.len().saturating_sub(1),
                a = fmt_num(s.alpha),
                r = fmt_num(s.recall_tolerance),
            )),
        Rule::Seed => Prose::new()
            .b(Prose::text("Plateau, not the peak"))
            .t(" (rule ")
            .c("seed")
            .t(format!(
                ", the seeds' literal rule, kept for reproduction). Keep every configuration \
                 whose margin ≥ best margin − {m}% × |best margin| (relative to the magnitude, \
                 since margins can be negative) ",
                m = fmt_num(s.margin_tolerance * 100.0),
            ))
            .b(Prose::text("and"))
            .t(format!(
                " whose span recall@k ≥ best span recall@k − {r} (both inclusive; bests over all \
                 {n} configurations). If none passes both, keep those that pass the recall test. \
                 (When the best margin is near 0 this floor is the best value itself and keeps \
                 one configuration; the default rule ",
                r = fmt_num(s.recall_tolerance),
                n = sel.configs.len(),
            ))
            .c("equivalence")
            .t(" does not have that flaw.)"),
    };
    let cheapest = Prose::new().b(Prose::text("Cheapest first.")).t(format!(
        " Rank the kept configurations by tokens per query (the mean tokens retrieved){}, then by \
         smaller chunk size, then no prefix before a prefix, then by id. Rank 1 is the pick; \
         ranks 1–{c} are the judge stage's candidates. When fewer than {c} are kept, the dropped \
         configurations with the highest span recall join them as challengers, so that the judge \
         compares the pick with something.",
        if s.rule == Rule::Seed {
            ""
        } else {
            ", then by higher margin"
        },
        c = s.candidates,
    ));
    let halves = Prose::new().b(Prose::text("Split halves.")).t(format!(
        " Draw {} random halves of the questions (seed {}), and apply rules 1–2 to all \
         configurations on each half from sweep_questions.csv. The pick is stable when it wins at \
         least {} of the halves; otherwise the sizes are indistinguishable at this sample size \
         and the pick stands on cost alone.",
        s.halves,
        s.seed,
        pct(s.stable_share),
    ));
    DocSection::new(
        "The rule",
        vec![Block::Numbered(vec![plateau, cheapest, halves])],
    )
}

/// "Configurations": every configuration at the deciding cut, ranked ones first.
pub(super) fn configurations(sel: &Selection) -> DocSection {
    let intro = Prose::text(format!(
        "Intervals are {}%: bootstrap over questions for span recall@k, coverage@k and the \
         margin; Wilson for hit@k. ",
        fmt_num(sel.settings.confidence * 100.0)
    ))
    .i(Prose::text("Wins"))
    .t(" is the share of random halves on which the configuration is the pick. ")
    .i(Prose::text("vs best"))
    .t(
        " is the exact sign test on per-question span recall@k against the best configuration: \
         lower/higher = questions where this configuration is below/above the best, then the \
         Holm-adjusted p. ",
    )
    .i(Prose::text("vs pick"))
    .t(
        " is the exact McNemar test on hit@k against the pick, paired on the same questions: b = \
         pick hit and this missed, c = this hit and the pick missed (not corrected). ",
    )
    .i(Prose::text("vs best within δ"))
    .t(format!(
        " is the class against the best within δ = {} (non-inferior, worse by more than δ, or \
         undetermined, with P(worse) = P(worse by more than δ) and the questions that would \
         show it within δ if it were as good as the best), from the mean per-question \
         difference in span recall@k (this − best) and its one-sided {}% paired t bounds. ",
        fmt_num(sel.settings.delta),
        fmt_num((1.0 - sel.settings.alpha) * 100.0)
    ))
    .i(Prose::text("Over budget"))
    .t(
        " (budget cuts) counts the chunks of the index larger than the whole budget, never sent, \
         and the questions where such a chunk ranked before the cut and the next chunks that fit \
         were sent instead; ⚠ marks a configuration whose chunks are mostly larger than the \
         budget. ",
    )
    .i(Prose::text("Frontier"))
    .t(" marks configurations that no other is both cheaper and better than.");
    let head = [
        "rank",
        "configuration",
        "tokens/query",
        "frontier",
        "span recall@k",
        "hit@k",
        "coverage@k",
        "margin",
        "wins",
        "vs best (lower/higher, Holm p)",
        "vs best within δ (mean difference, one-sided bounds)",
        "vs pick (b/c, p)",
        "over budget (chunks; questions skipped)",
        "verdict",
    ];
    use Align::{Center as C, Default as L, Right as R};
    let mut configs: Vec<&ConfigSelection> = sel.configs.iter().collect();
    configs.sort_by_key(|c| (c.rank.is_none(), c.rank));
    let rows = configs.into_iter().map(config_row).collect();
    DocSection::new(
        "Configurations",
        vec![
            Block::Para(intro),
            Block::Table(Table {
                head: head.map(String::from).to_vec(),
                align: vec![R, L, R, C, L, L, L, L, R, L, L, L, L, L],
                rows,
            }),
        ],
    )
}

/// One configuration's row of the "Configurations" table.
fn config_row(c: &ConfigSelection) -> Vec<Prose> {
    let status = match c.status {
        Status::Winner => Prose::new().b(Prose::text("pick")),
        Status::Candidate => Prose::text("candidate"),
        Status::Kept => Prose::text("kept"),
        Status::Challenger => Prose::text("challenger (judged)"),
        Status::Dropped => Prose::text("dropped"),
    };
    let vs = match (c.mcnemar_b, c.mcnemar_c, c.mcnemar_p) {
        (Some(b), Some(cc), Some(p)) => format!("{b}/{cc}, p {}", fmt_p(p)),
        _ => "—".into(),
    };
    let vs_best = match (c.best_better, c.this_better, c.sign_p_holm) {
        (Some(b), Some(t), Some(p)) => format!("{b}/{t}, p {}", fmt_p(p)),
        _ => "best".into(),
    };
    let reason = ["dropped: ", "challenger (outside the plateau): "]
        .iter()
        .find_map(|p| c.reason.strip_prefix(p))
        .unwrap_or(&c.reason);
    vec![
        Prose::text(c.rank.map_or("—".into(), |r| r.to_string())),
        c.aliases
            .split_whitespace()
            .fold(Prose::new().c(&c.config_id), |p, a| p.t(" = ").c(a)),
        Prose::text(thousands(c.tokens_per_query)),
        Prose::text(if c.pareto { "●" } else { "" }),
        Prose::text(with_ci(c.span_recall, c.span_recall_lo, c.span_recall_hi)),
        Prose::text(with_ci(c.hit_rate, c.hit_rate_lo, c.hit_rate_hi)),
        Prose::text(with_ci(c.coverage, c.coverage_lo, c.coverage_hi)),
        Prose::text(with_ci(c.margin, c.margin_lo, c.margin_hi)),
        Prose::text(pct(c.win_share)),
        Prose::text(vs_best),
        Prose::text(within_delta(c)),
        Prose::text(vs),
        Prose::text(over_budget(c)),
        status.t(": ").ticked(reason),
    ]
}

/// "non-inferior (−0.013; −0.030 to 0.004)", "undetermined (…); P(worse) 0.41; about 310
/// questions" (the questions that would show it within δ if it were as good as the best) or
/// "best".
fn within_delta(c: &ConfigSelection) -> String {
    match (c.diff_mean, c.diff_lower, c.diff_upper) {
        (Some(m), Some(lo), Some(hi)) => {
            let needed = if c.vs_best_class == "undetermined" {
                format!(
                    "; P(worse) {:.2}; {}",
                    c.p_worse.unwrap_or(f64::NAN),
                    questions_words(c.questions_needed)
                )
            } else {
                String::new()
            };
            format!("{} ({m:.3}; {lo:.3} to {hi:.3}){needed}", c.vs_best_class)
        }
        _ => "best".into(),
    }
}

/// "12; 30" (chunks over the budget; questions where one was skipped), under an expansion
/// "41 units; 41" (the units a hit sends alone, its window or parent, over the budget), ⚠ when
/// most chunks (units) are, "—" for top k.
fn over_budget(c: &ConfigSelection) -> String {
    if c.budget_tokens.is_none() {
        return "—".into();
    }
    format!(
        "{}{}; {}",
        if c.mostly_over_budget() { "⚠ " } else { "" },
        match c.is_expanded() {
            true => format!("{} units", c.units_over_budget),
            false => c.chunks_over_budget.to_string(),
        },
        c.questions_skipped_for_size
    )
}

/// "Diagnoses": each diagnosis of the deciding cut with its evidence and advice, or what was
/// checked; then those of every other cut, each computed from that cut's own configurations.
pub(super) fn diagnoses(sel: &Selection, others: &[Selection]) -> DocSection {
    let s = &sel.settings;
    let mut blocks = Vec::new();
    if sel.diagnoses.is_empty() {
        blocks.push(Block::Para(Prose::text(format!(
            "None triggered at the deciding cut: {}no configuration with coverage − span recall \
             > {}, the pick is not at an edge of the grid with the curve still improving, the \
             curve is not flat within the pick's intervals, and the pick's chunk size does not \
             change with the question type.",
            if s.rule == Rule::Equivalence {
                "no cheaper configuration is undetermined against the best, ".to_string()
            } else {
                format!("at least {} questions, ", s.min_questions)
            },
            fmt_num(s.boundary_gap)
        ))));
    }
    for (at, cut) in
        std::iter::once((sel, None)).chain(others.iter().map(|o| (o, Some(cut_name(o)))))
    {
        for d in &at.diagnoses {
            blocks.push(Block::Subheading(match &cut {
                None => d.kind.title().to_string(),
                Some(c) => format!("{} (at {c})", d.kind.title()),
            }));
            blocks.push(Block::Para(
                Prose::new().ticked(&capitalise(&d.evidence)).t("."),
            ));
            blocks.push(Block::Para(
                Prose::new()
                    .b(Prose::text("What to do:"))
                    .t(" ")
                    .ticked(&d.advice)
                    .t("."),
            ));
        }
    }
    DocSection::new("Diagnoses", blocks)
}

/// "a budget of 2,000 tokens" or "k = 5": the cut of a selection, for a heading.
fn cut_name(sel: &Selection) -> String {
    let w = sel.winner();
    match w.budget_tokens {
        Some(b) => format!("a budget of {} {}", thousands(b as f64), w.unit()),
        None => format!("k = {}", w.top_k),
    }
}

/// "Pick by question type", when some type has enough questions.
pub(super) fn by_type(sel: &Selection) -> Option<DocSection> {
    if sel.by_type.is_empty() {
        return None;
    }
    let intro = Prose::text(format!(
        "The same rule applied to each question type with at least {} questions (halves are not \
         drawn per type).",
        sel.settings.min_type_questions
    ));
    let head = [
        "question type",
        "questions",
        "pick",
        "its span recall@k",
        "its margin",
        "overall pick's span recall@k",
    ];
    use Align::{Default as L, Right as R};
    let rows = sel
        .by_type
        .iter()
        .map(|t| {
            vec![
                Prose::text(&t.question_type),
                Prose::text(t.n_questions.to_string()),
                Prose::new().c(&sel.configs[t.winner].config_id),
                Prose::text(format!("{:.3}", t.span_recall)),
                Prose::text(format!("{:.3}", t.margin)),
                Prose::text(format!("{:.3}", t.overall_pick_span_recall)),
            ]
        })
        .collect();
    Some(DocSection::new(
        "Pick by question type",
        vec![
            Block::Para(intro),
            Block::Table(Table {
                head: head.map(String::from).to_vec(),
                align: vec![L, R, L, R, R, R],
                rows,
            }),
        ],
    ))
}

/// "Reproduce": the sweep's command line (its program shown as `chunksweep`), the command that
/// regenerates the decision files, and every selection setting.
pub(super) fn reproduce(outcome: &Outcome) -> DocSection {
    let mut lines = vec![match outcome.command.as_deref() {
        Some(args) if !args.is_empty() => std::iter::once("chunksweep".to_string())
            .chain(args[1..].iter().map(|a| shell_quote(a)))
            .collect::<Vec<String>>()
            .join(" "),
        _ => "# (no manifest.json: the sweep command is unknown)".to_string(),
    }];
    lines.push(
        "# regenerate selection.csv, report.md, report.html and the figure from the CSVs, \
         without re-running:"
            .into(),
    );
    lines.push(format!("chunksweep report {}", shell_quote(&outcome.label)));
    let s = &outcome.selection.settings;
    let settings = Prose::text("Selection settings: rule ")
        .c(s.rule.name())
        .t(format!(
            ", α {}, non-inferiority margin δ {} (rule ",
            fmt_num(s.alpha),
            fmt_num(s.delta),
        ))
        .c("equivalence")
        .t(format!(
            "; questions needed at 80% power), margin tolerance {}% (rule ",
            fmt_num(s.margin_tolerance * 100.0)
        ))
        .c("seed")
        .t(" only), recall tolerance ")
        .t(format!(
            "{} (rules paired and seed), {} candidates, {} halves, seed {}, stable at {}, {}% \
             intervals with {} bootstrap resamples, diagnoses at < {} questions (rules paired \
             and seed), coverage − recall > {} and the pick's span recall < {}.",
            fmt_num(s.recall_tolerance),
            s.candidates,
            s.halves,
            s.seed,
            pct(s.stable_share),
            fmt_num(s.confidence * 100.0),
            s.bootstrap_resamples,
            s.min_questions,
            fmt_num(s.boundary_gap),
            fmt_num(s.weak_recall)
        ));
    DocSection::new(
        "Reproduce",
        vec![Block::Shell(lines), Block::Para(settings)],
    )
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Quotes `arg` for a POSIX shell when it holds anything but plain path characters.
fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./,:=@+-".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::{Fake, tables};
    use crate::select::{SelectionSettings, select};

    #[test]
    fn the_over_budget_column_counts_units_under_an_expansion() {
        let (mut rows, qs) = tables(&[
            Fake::new("fixed-1024", 1024, 500.0, vec![1.0; 4], vec![0.3; 4]),
            Fake::new(
                "fixed-512+neighbours1",
                512,
                600.0,
                vec![1.0; 4],
                vec![0.3; 4],
            ),
        ]);
        for r in &mut rows {
            r.budget_tokens = Some(700);
            r.top_k = 0;
        }
        (rows[0].n_chunks, rows[0].chunks_over_budget) = (10, 6);
        (rows[0].questions_skipped_for_size) = 3;
        rows[1].expand = "neighbours:1".into();
        (rows[1].n_chunks, rows[1].n_units, rows[1].units_over_budget) = (20, 20, 11);
        rows[1].questions_skipped_for_size = 4;
        let sel = select(&rows, &qs, &SelectionSettings::default()).unwrap();
        let cell = |id: &str| over_budget(sel.configs.iter().find(|c| c.config_id == id).unwrap());
        assert_eq!(cell("fixed-1024"), "⚠ 6; 3");
        assert_eq!(cell("fixed-512+neighbours1"), "⚠ 11 units; 4");
    }

    #[test]
    fn shell_quoting_only_when_needed() {
        assert_eq!(shell_quote("--sizes"), "--sizes");
        assert_eq!(shell_quote("64,128"), "64,128");
        assert_eq!(shell_quote("my corpus"), "'my corpus'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
