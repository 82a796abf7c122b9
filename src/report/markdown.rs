//! report.md: the decision first (in one sentence a reviewer can check against selection.csv,
//! then the pick at every cut of the ranked list when the sweep has context budgets), then the
//! rule, the table of every configuration at the deciding cut, the diagnoses, the statistics and
//! how to reproduce the run.

use std::fmt::Write as _;

use super::sentence::{cut_table, cut_words, decision_sentence};
use crate::select::{ConfigSelection, Rule, Selection, StabilityStatus, Status, fmt_p};

/// Renders report.md. `run_name` heads the report; `command` is the sweep's command line from
/// manifest.json (its first element, the program path, is shown as `chunksweep`); `run_dir` is
/// the folder as the reader should type it; `plot_file` and `frontier_file` are the figures'
/// file names next to report.md, if they were drawn. `sel` is the deciding (primary) cut and
/// `others` the selections at the other cuts (see [`crate::select::Cuts`]).
pub fn render(
    sel: &Selection,
    others: &[Selection],
    run_name: &str,
    run_dir: &str,
    command: Option<&[String]>,
    plot_file: Option<&str>,
    frontier_file: Option<&str>,
) -> String {
    let mut md = String::new();
    let s = &sel.settings;
    let w = sel.winner();
    let pct = |x: f64| format!("{:.0}%", x * 100.0);

    let _ = writeln!(md, "# chunksweep report: {run_name}\n");
    let _ = writeln!(md, "## Decision\n");
    let _ = writeln!(
        md,
        "**Use `{}`: {} chunking at chunk size {} {} (overlap {}), {}, about {:.0} {unit} per \
         query.**\n",
        w.config_id,
        w.strategy,
        w.chunk_size,
        w.size_unit,
        w.chunk_overlap,
        cut_words(w),
        w.tokens_per_query,
        unit = w.unit()
    );
    let _ = writeln!(md, "{}\n", decision_sentence(sel));
    if !others.is_empty() {
        let _ = writeln!(md, "{}", cut_table(sel, others));
    }
    let kept = sel.configs.iter().filter(|c| c.kept).count();
    let place = if kept == 1 {
        "it is the only one".to_string()
    } else {
        "this is the cheapest of them in tokens per query".to_string()
    };
    match s.rule {
        Rule::Paired => {
            let _ = writeln!(
                md,
                "- **Plateau (rule `paired`):** {} of {} configurations are not significantly \
                 worse than the best `{}` on the same questions (exact sign test on per-question \
                 span recall@k, Holm-corrected across the {} compared, α = {}) and have span \
                 recall@k ≥ {:.3} (best {:.3} − {}); {place}.",
                kept,
                sel.configs.len(),
                sel.best().config_id,
                sel.configs.len().saturating_sub(1),
                fmt_num(s.alpha),
                sel.recall_floor,
                sel.best_span_recall,
                fmt_num(s.recall_tolerance)
            );
        }
        Rule::Seed if sel.plateau_fallback => {
            let _ = writeln!(
                md,
                "- **Plateau (rule `seed`):** no configuration had both margin ≥ {:.3} and span \
                 recall@k ≥ {:.3}, so the rule fell back to span recall alone: {} of {} \
                 configurations pass the test (within {} of the best span recall {:.3}); {place}.",
                sel.margin_floor.unwrap_or(f64::NEG_INFINITY),
                sel.recall_floor,
                kept,
                sel.configs.len(),
                fmt_num(s.recall_tolerance),
                sel.best_span_recall
            );
        }
        Rule::Seed => {
            let _ = writeln!(
                md,
                "- **Plateau (rule `seed`):** {} of {} configurations pass both tests, margin ≥ \
                 {:.3} (best {:.3} − {}% of |best|) and span recall@k ≥ {:.3} (best {:.3} − {}); \
                 {place}.",
                kept,
                sel.configs.len(),
                sel.margin_floor.unwrap_or(f64::NEG_INFINITY),
                sel.best_margin,
                fmt_num(s.margin_tolerance * 100.0),
                sel.recall_floor,
                sel.best_span_recall,
                fmt_num(s.recall_tolerance)
            );
        }
    }
    if let Some(peak) = peak(sel)
        && peak.config_id != w.config_id
    {
        let _ = writeln!(
            md,
            "- **Not the peak:** the best margin is `{}` ({:.3}, span recall@k {:.3}) at {:.0} \
             tokens per query, {:.1}× the pick's cost.",
            peak.config_id,
            peak.margin,
            peak.span_recall,
            peak.tokens_per_query,
            peak.tokens_per_query / w.tokens_per_query.max(f64::MIN_POSITIVE)
        );
    }
    let frontier: Vec<String> = {
        let mut on: Vec<&ConfigSelection> = sel.configs.iter().filter(|c| c.pareto).collect();
        on.sort_by(|a, b| a.tokens_per_query.total_cmp(&b.tokens_per_query));
        on.iter()
            .map(|c| {
                format!(
                    "`{}` ({:.0}, {:.3})",
                    c.config_id, c.tokens_per_query, c.span_recall
                )
            })
            .collect()
    };
    let _ = writeln!(
        md,
        "- **Cost–quality frontier** (tokens per query, span recall@k; nothing is both cheaper \
         and better): {}; the pick is {}on it.",
        frontier.join(", "),
        if w.pareto { "" } else { "not " }
    );
    let st = &sel.stability;
    let other = &sel.configs[st.most_wins];
    match st.status {
        StabilityStatus::Stable => {
            let _ = writeln!(
                md,
                "- **Stable:** the same rule picks it on {} of {} random halves of the golden set \
                 ({} questions each; at least {} needed).",
                pct(st.winner_share),
                st.halves,
                st.half_size,
                pct(s.stable_share)
            );
        }
        StabilityStatus::Indistinguishable => {
            let _ = writeln!(
                md,
                "- **Indistinguishable at this sample size:** no configuration is picked on at \
                 least {} of {} random halves ({} questions each): this pick wins {}{}. With {} \
                 questions the sweep cannot separate these configurations, so the pick rests on \
                 cost: {}.",
                pct(s.stable_share),
                st.halves,
                st.half_size,
                pct(st.winner_share),
                runners_up(sel),
                sel.n_questions,
                if kept == 1 {
                    "it is the only configuration inside the full set's plateau"
                } else {
                    "it is the cheapest configuration inside the full set's plateau"
                }
            );
        }
        StabilityStatus::HalvesDisagree => {
            let _ = writeln!(
                md,
                "- **Halves disagree with the full set:** `{}` is picked on {} of {} random \
                 halves, this configuration on only {}. The full set's pick is kept, but treat \
                 the two as indistinguishable and let the judge stage decide.",
                other.config_id,
                pct(st.most_wins_share),
                st.halves,
                pct(st.winner_share)
            );
        }
    }
    let _ = writeln!(
        md,
        "- **Quality of the pick [{}% CI]:** span recall@k {}, hit@k {}, coverage@k {}, \
         margin {}.",
        fmt_num(s.confidence * 100.0),
        with_ci(w.span_recall, w.span_recall_lo, w.span_recall_hi),
        with_ci(w.hit_rate, w.hit_rate_lo, w.hit_rate_hi),
        with_ci(w.coverage, w.coverage_lo, w.coverage_hi),
        with_ci(w.margin, w.margin_lo, w.margin_hi)
    );
    let cands: Vec<String> = sel
        .candidates
        .iter()
        .map(|&i| {
            let c = &sel.configs[i];
            let role = if c.status == Status::Challenger {
                ", challenger"
            } else {
                ""
            };
            format!(
                "`{}` ({:.0} tokens/query{role})",
                c.config_id, c.tokens_per_query
            )
        })
        .collect();
    let _ = writeln!(
        md,
        "- **Judge candidates** (the plateau cheapest first, then any challengers): {}.",
        cands.join(", ")
    );
    if sel.diagnoses.is_empty() {
        let _ = writeln!(md, "- **Diagnoses:** none.");
    } else {
        let names: Vec<&str> = sel.diagnoses.iter().map(|d| d.kind.title()).collect();
        let _ = writeln!(
            md,
            "- **Diagnoses:** {} (see below).",
            names.join("; ").to_lowercase()
        );
    }
    md.push('\n');
    if let Some(file) = plot_file {
        let _ = writeln!(
            md,
            "![span recall@k, coverage@k, margin and tokens per query against chunk size]({file})\n"
        );
    }
    if let Some(file) = frontier_file {
        let _ = writeln!(
            md,
            "![span recall@k against tokens per query, with the cost–quality frontier and the \
             pick]({file})\n"
        );
    }

    let _ = writeln!(md, "## The rule\n");
    let plateau_rule = match s.rule {
        Rule::Paired => format!(
            "1. **Plateau made of statistics** (rule `paired`, the default). The best is the \
             configuration with the highest span recall@k (ties: higher margin, then cheaper). \
             Every other configuration is compared with it on the same questions by the exact \
             sign test on per-question span recall@k (McNemar's test when questions have one \
             span), and the {m} p-values are Holm-corrected. A configuration stays unless the \
             best is significantly better (Holm p < {a}) or its span recall@k is more than {r} \
             below the best's. The margin does not filter (it can be near 0 or negative, where \
             a relative tolerance means nothing); it breaks ties.",
            m = sel.configs.len().saturating_sub(1),
            a = fmt_num(s.alpha),
            r = fmt_num(s.recall_tolerance),
        ),
        Rule::Seed => format!(
            "1. **Plateau, not the peak** (rule `seed`, the seeds' literal rule, kept for \
             reproduction). Keep every configuration whose margin ≥ best margin − {m}% × |best \
             margin| (relative to the magnitude, since margins can be negative) **and** whose \
             span recall@k ≥ best span recall@k − {r} (both inclusive; bests over all {n} \
             configurations). If none passes both, keep those that pass the recall test. \
             (When the best margin is near 0 this floor is the best value itself and keeps one \
             configuration; the default rule `paired` does not have that flaw.)",
            m = fmt_num(s.margin_tolerance * 100.0),
            r = fmt_num(s.recall_tolerance),
            n = sel.configs.len(),
        ),
    };
    let _ = writeln!(
        md,
        "{plateau_rule}\n\
         2. **Cheapest first.** Rank the kept configurations by tokens per query (the mean \
         tokens retrieved){margin_tie}, then by smaller chunk size, then no prefix before a prefix, then \
         by id. Rank 1 is the pick; ranks 1–{c} are the judge stage's candidates. When fewer \
         than {c} are kept, the dropped configurations with the highest span recall join them as \
         challengers, so that the judge compares the pick with something.\n\
         3. **Split halves.** Draw {h} random halves of the questions (seed {seed}), and apply \
         rules 1–2 to all configurations on each half from sweep_questions.csv. The pick is \
         stable when it wins at least {stable} of the halves; otherwise the sizes are \
         indistinguishable at this sample size and the pick stands on cost alone.\n",
        margin_tie = if s.rule == Rule::Paired {
            ", then by higher margin"
        } else {
            ""
        },
        c = s.candidates,
        h = s.halves,
        seed = s.seed,
        stable = pct(s.stable_share),
    );

    let _ = writeln!(md, "## Configurations\n");
    let _ = writeln!(
        md,
        "Intervals are {conf}%: bootstrap over questions for span recall@k, coverage@k and the \
         margin; Wilson for hit@k. *Wins* is the share of random halves on which the \
         configuration is the pick. *vs best* is the exact sign test on per-question span \
         recall@k against the best configuration: lower/higher = questions where this \
         configuration is below/above the best, then the Holm-adjusted p. *vs pick* is the \
         exact McNemar test on hit@k against the pick, paired on the same questions: b = pick \
         hit and this missed, c = this hit and the pick missed (not corrected). *Frontier* \
         marks configurations that no other is both cheaper and better than.\n",
        conf = fmt_num(s.confidence * 100.0)
    );
    let _ = writeln!(
        md,
        "| rank | configuration | tokens/query | frontier | span recall@k | hit@k | coverage@k | \
         margin | wins | vs best (lower/higher, Holm p) | vs pick (b/c, p) | verdict |"
    );
    let _ = writeln!(md, "|---:|---|---:|:---:|---|---|---|---|---:|---|---|---|");
    let mut rows: Vec<&ConfigSelection> = sel.configs.iter().collect();
    rows.sort_by_key(|c| (c.rank.is_none(), c.rank));
    for c in rows {
        let status = match c.status {
            Status::Winner => "**pick**",
            Status::Candidate => "candidate",
            Status::Kept => "kept",
            Status::Challenger => "challenger (judged)",
            Status::Dropped => "dropped",
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
            .unwrap_or(&c.reason)
            .replace('|', "\\|");
        let _ = writeln!(
            md,
            "| {} | `{}` | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {}: {} |",
            c.rank.map_or("—".into(), |r| r.to_string()),
            c.config_id,
            c.tokens_per_query,
            if c.pareto { "●" } else { "" },
            with_ci(c.span_recall, c.span_recall_lo, c.span_recall_hi),
            with_ci(c.hit_rate, c.hit_rate_lo, c.hit_rate_hi),
            with_ci(c.coverage, c.coverage_lo, c.coverage_hi),
            with_ci(c.margin, c.margin_lo, c.margin_hi),
            pct(c.win_share),
            vs_best,
            vs,
            status,
            reason
        );
    }
    md.push('\n');

    let _ = writeln!(md, "## Diagnoses\n");
    if sel.diagnoses.is_empty() {
        let _ = writeln!(
            md,
            "None triggered: at least {} questions, no configuration with coverage − span recall \
             > {}, the pick is not at an edge of the grid with the curve still improving, the \
             curve is not flat within the pick's intervals, and the pick's chunk size does not \
             change with the question type.\n",
            s.min_questions,
            fmt_num(s.boundary_gap)
        );
    }
    for d in &sel.diagnoses {
        let _ = writeln!(md, "### {}\n", d.kind.title());
        let _ = writeln!(md, "{}.\n", capitalise(&d.evidence));
        let _ = writeln!(md, "**What to do:** {}.\n", d.advice);
    }

    if !sel.by_type.is_empty() {
        let _ = writeln!(md, "## Pick by question type\n");
        let _ = writeln!(
            md,
            "The same rule applied to each question type with at least {} questions \
             (halves are not drawn per type).\n",
            s.min_type_questions
        );
        let _ = writeln!(
            md,
            "| question type | questions | pick | its span recall@k | its margin | overall pick's span recall@k |"
        );
        let _ = writeln!(md, "|---|---:|---|---:|---:|---:|");
        for t in &sel.by_type {
            let _ = writeln!(
                md,
                "| {} | {} | `{}` | {:.3} | {:.3} | {:.3} |",
                t.question_type,
                t.n_questions,
                sel.configs[t.winner].config_id,
                t.span_recall,
                t.margin,
                t.overall_pick_span_recall
            );
        }
        md.push('\n');
    }

    let _ = writeln!(md, "## Reproduce\n");
    let _ = writeln!(md, "```sh");
    match command {
        Some(args) if !args.is_empty() => {
            let line: Vec<String> = std::iter::once("chunksweep".to_string())
                .chain(args[1..].iter().map(|a| shell_quote(a)))
                .collect();
            let _ = writeln!(md, "{}", line.join(" "));
        }
        _ => {
            let _ = writeln!(md, "# (no manifest.json: the sweep command is unknown)");
        }
    }
    let _ = writeln!(
        md,
        "# regenerate selection.csv, report.md, report.html and the figure from the CSVs, without re-running:"
    );
    let _ = writeln!(md, "chunksweep report {}", shell_quote(run_dir));
    let _ = writeln!(md, "```\n");
    let _ = writeln!(
        md,
        "Selection settings: rule `{}`, α {}, margin tolerance {}% (rule `seed` only), recall \
         tolerance {}, {} candidates, {} halves, seed {}, stable at {}, {}% intervals with {} \
         bootstrap resamples, diagnoses at < {} questions, coverage − recall > {} and best span \
         recall < {}.",
        s.rule.name(),
        fmt_num(s.alpha),
        fmt_num(s.margin_tolerance * 100.0),
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
    );
    md
}

/// ", `a` wins 30%, `b` wins 12%": the other configurations that won at least 5% of the halves,
/// most wins first.
fn runners_up(sel: &Selection) -> String {
    let mut others: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .enumerate()
        .filter(|(i, c)| *i != sel.winner && c.win_share >= 0.05)
        .map(|(_, c)| c)
        .collect();
    others.sort_by(|a, b| b.win_share.total_cmp(&a.win_share));
    others
        .iter()
        .map(|c| format!(", `{}` wins {:.0}%", c.config_id, c.win_share * 100.0))
        .collect()
}

/// The configuration with the best margin (ties: higher span recall, then cheaper).
fn peak(sel: &Selection) -> Option<&ConfigSelection> {
    sel.configs.iter().max_by(|a, b| {
        a.margin
            .total_cmp(&b.margin)
            .then(a.span_recall.total_cmp(&b.span_recall))
            .then(b.tokens_per_query.total_cmp(&a.tokens_per_query))
    })
}

/// A number with up to four decimals, trailing zeros dropped.
fn fmt_num(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A value with its interval: `0.950 [0.875, 1.000]`.
fn with_ci(x: f64, lo: f64, hi: f64) -> String {
    format!("{x:.3} [{lo:.3}, {hi:.3}]")
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

    #[test]
    fn shell_quoting_only_when_needed() {
        assert_eq!(shell_quote("--sizes"), "--sizes");
        assert_eq!(shell_quote("64,128"), "64,128");
        assert_eq!(shell_quote("my corpus"), "'my corpus'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn numbers_drop_trailing_zeros() {
        assert_eq!(fmt_num(3.0000000000000004), "3");
        assert_eq!(fmt_num(0.02), "0.02");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_p(0.0386), "= 0.039");
        assert_eq!(with_ci(-0.4, -0.59, -0.3), "-0.400 [-0.590, -0.300]");
        assert_eq!(fmt_p(0.0001), "< 0.001");
    }
}
