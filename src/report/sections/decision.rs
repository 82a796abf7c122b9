//! The "Decision" section: the pick, the sentence that justifies it, the pick at every cut, the
//! facts a reviewer checks (plateau, peak, frontier, stability, quality, judge candidates,
//! diagnoses) and the figures.

use super::numbers::{fmt_num, pct, with_ci};
use crate::files;
use crate::report::doc::{Block, DocSection, Prose};
use crate::report::outcome::Outcome;
use crate::report::sentence::{cut_table, decision_sentence, gives_up, tradeoff_blocks};
use crate::select::{ConfigSelection, Rule, Selection, StabilityStatus, Status, thousands};

/// The section, for the outcome's deciding cut and its other cuts.
pub(super) fn decision(outcome: &Outcome) -> DocSection {
    let sel = &outcome.selection;
    let w = sel.winner();
    let headline = crate::report::headline::headline(sel, outcome.tradeoff.as_ref());
    let mut blocks = vec![
        Block::Para(Prose::new().b(headline)),
        Block::Para(decision_sentence(sel)),
    ];
    if let Some(t) = &outcome.tradeoff {
        blocks.extend(gives_up(t, sel).map(Block::Para));
    }
    if !outcome.other_cuts.is_empty() {
        blocks.extend(cut_table(sel, &outcome.other_cuts));
    }
    if let Some(t) = &outcome.tradeoff {
        blocks.extend(tradeoff_blocks(t, sel));
    }
    let mut facts = vec![plateau(sel)];
    facts.extend(merged(sel));
    facts.extend(not_the_peak(sel));
    facts.push(frontier(sel));
    facts.push(stability(sel));
    facts.push(
        Prose::new()
            .b(Prose::text(format!(
                "Quality of the pick [{}% CI]:",
                fmt_num(sel.settings.confidence * 100.0)
            )))
            .t(" ")
            .c(&w.config_id)
            .t(format!(
                ": span recall@k {}, hit@k {}, coverage@k {}, margin {}.",
                with_ci(w.span_recall, w.span_recall_lo, w.span_recall_hi),
                with_ci(w.hit_rate, w.hit_rate_lo, w.hit_rate_hi),
                with_ci(w.coverage, w.coverage_lo, w.coverage_hi),
                with_ci(w.margin, w.margin_lo, w.margin_hi)
            )),
    );
    facts.extend(
        outcome
            .page_evidence
            .as_ref()
            .map(crate::report::page_evidence::fact),
    );
    facts.push(candidates(sel));
    facts.push(if sel.diagnoses.is_empty() {
        Prose::new().b(Prose::text("Diagnoses:")).t(" none.")
    } else {
        let names: Vec<&str> = sel.diagnoses.iter().map(|d| d.kind.title()).collect();
        Prose::new()
            .b(Prose::text("Diagnoses:"))
            .t(format!(" {} (see below).", names.join("; ").to_lowercase()))
    });
    blocks.push(Block::List(facts));
    blocks.push(Block::Image {
        alt: "span recall@k, coverage@k, margin and tokens per query against chunk size".into(),
        file: files::PLOT.into(),
    });
    blocks.push(Block::Image {
        alt: "span recall@k against tokens per query, with the cost–quality frontier and the pick"
            .into(),
        file: files::FRONTIER.into(),
    });
    DocSection::new("Decision", blocks)
}

/// The identical configurations merged into one row, when there are any.
fn merged(sel: &Selection) -> Option<Prose> {
    let twins: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| !c.aliases.is_empty())
        .collect();
    let first = twins.first()?;
    let mut p = Prose::new()
        .b(Prose::text("Identical configurations merged:"))
        .t(" ");
    for (i, c) in twins.iter().enumerate() {
        if i > 0 {
            p = p.t("; ");
        }
        p = c
            .aliases
            .split_whitespace()
            .fold(p.c(&c.config_id), |p, a| p.t(" = ").c(a));
    }
    let p = p.t(format!(
        " on these files (the same chunk ranges retrieved with the same scores for every \
         question, from indexes of the same size): each is one row, counted once in the tests and \
         the halves, named by its first in sweep.csv ({} row{} merged away).",
        twins
            .iter()
            .map(|c| c.aliases.split_whitespace().count())
            .sum::<usize>(),
        if twins.len() == 1 && first.aliases.split_whitespace().count() == 1 {
            ""
        } else {
            "s"
        }
    ));
    Some(no_structure(sel).into_iter().fold(p, |p, (lost, kept)| {
        p.t(" ")
            .c(&lost)
            .t(" finds no structure in these files: at every size swept it gives ")
            .c(&kept)
            .t("'s chunks.")
    }))
}

/// Strategies every configuration of which is merged into another strategy's: (the strategy that
/// finds no structure, the one whose chunks it gives).
fn no_structure(sel: &Selection) -> Vec<(String, String)> {
    let strategy_of = |id: &str| id.split('-').next().unwrap_or("").to_string();
    let mut strategies: Vec<String> = Vec::new();
    for c in &sel.configs {
        for id in std::iter::once(c.config_id.as_str()).chain(c.aliases.split_whitespace()) {
            let st = strategy_of(id);
            if !strategies.contains(&st) {
                strategies.push(st);
            }
        }
    }
    let mut out = Vec::new();
    for st in &strategies {
        let rows_named: Vec<&ConfigSelection> =
            sel.configs.iter().filter(|c| &c.strategy == st).collect();
        let aliased: Vec<&ConfigSelection> = sel
            .configs
            .iter()
            .filter(|c| c.aliases.split_whitespace().any(|a| &strategy_of(a) == st))
            .collect();
        if rows_named.is_empty() && !aliased.is_empty() {
            let kept = aliased[0].strategy.clone();
            if aliased.iter().all(|c| c.strategy == kept) {
                out.push((st.clone(), kept));
            }
        }
    }
    out
}

/// "it is the only one" or "this is the cheapest of them in tokens per query".
fn place(kept: usize) -> &'static str {
    if kept == 1 {
        "it is the only one"
    } else {
        "this is the cheapest of them in tokens per query"
    }
}

/// How many configurations the plateau kept, by the selection's rule.
fn plateau(sel: &Selection) -> Prose {
    let s = &sel.settings;
    let kept = sel.configs.iter().filter(|c| c.kept).count();
    let place = place(kept);
    match s.rule {
        Rule::Equivalence => {
            let undetermined = sel
                .configs
                .iter()
                .filter(|c| c.vs_best_class == "undetermined")
                .count();
            let worse = sel
                .configs
                .iter()
                .filter(|c| c.vs_best_class == "worse")
                .count();
            Prose::new()
                .b(Prose::text("Plateau (rule ").c("equivalence").t("):"))
                .t(format!(
                    " {} of {} configurations are the best ",
                    kept,
                    sel.configs.len()
                ))
                .c(&sel.best().config_id)
                .t(format!(
                    " or non-inferior to it within δ = {} (paired on the same questions: the \
                     one-sided {}% lower bound of the mean difference in span recall@k is at \
                     least −{}); {worse} are worse by more than δ and {undetermined} undetermined; \
                     {place}.",
                    fmt_num(s.delta),
                    fmt_num((1.0 - s.alpha) * 100.0),
                    fmt_num(s.delta),
                ))
        }
        Rule::Paired => Prose::new()
            .b(Prose::text("Plateau (rule ").c("paired").t("):"))
            .t(format!(
                " {} of {} configurations are not significantly worse than the best ",
                kept,
                sel.configs.len()
            ))
            .c(&sel.best().config_id)
            .t(format!(
                " on the same questions (exact sign test on per-question span recall@k, \
                 Holm-corrected across the {} compared, α = {}) and have span recall@k ≥ {:.3} \
                 (best {:.3} − {}); {place}.",
                sel.configs.len().saturating_sub(1),
                fmt_num(s.alpha),
                sel.recall_floor,
                sel.best_span_recall,
                fmt_num(s.recall_tolerance)
            )),
        Rule::Seed if sel.plateau_fallback => Prose::new()
            .b(Prose::text("Plateau (rule ").c("seed").t("):"))
            .t(format!(
                " no configuration had both margin ≥ {:.3} and span recall@k ≥ {:.3}, so the \
                 rule fell back to span recall alone: {} of {} configurations pass the test \
                 (within {} of the best span recall {:.3}); {place}.",
                sel.margin_floor.unwrap_or(f64::NEG_INFINITY),
                sel.recall_floor,
                kept,
                sel.configs.len(),
                fmt_num(s.recall_tolerance),
                sel.best_span_recall
            )),
        Rule::Seed => Prose::new()
            .b(Prose::text("Plateau (rule ").c("seed").t("):"))
            .t(format!(
                " {} of {} configurations pass both tests, margin ≥ {:.3} (best {:.3} − {}% of \
                 |best|) and span recall@k ≥ {:.3} (best {:.3} − {}); {place}.",
                kept,
                sel.configs.len(),
                sel.margin_floor.unwrap_or(f64::NEG_INFINITY),
                sel.best_margin,
                fmt_num(s.margin_tolerance * 100.0),
                sel.recall_floor,
                sel.best_span_recall,
                fmt_num(s.recall_tolerance)
            )),
    }
}

/// The configuration with the best margin among those the rule kept at this cut (the best and
/// those non-inferior to it, or on the plateau under the other rules; ties: higher span recall,
/// then cheaper): the configurations not worse than the pick, so a peak there is a real
/// alternative and never one that sends almost nothing.
fn peak(sel: &Selection) -> Option<&ConfigSelection> {
    sel.configs.iter().filter(|c| c.kept).max_by(|a, b| {
        a.margin
            .total_cmp(&b.margin)
            .then(a.span_recall.total_cmp(&b.span_recall))
            .then(b.tokens_per_query.total_cmp(&a.tokens_per_query))
    })
}

/// Where the best margin among the kept configurations is, when it is not the pick.
fn not_the_peak(sel: &Selection) -> Option<Prose> {
    let w = sel.winner();
    let peak = peak(sel).filter(|p| p.config_id != w.config_id)?;
    let kept = sel.configs.iter().filter(|c| c.kept).count();
    Some(
        Prose::new()
            .b(Prose::text("Not the peak:"))
            .t(format!(
                " among the {kept} configurations kept at this cut, the best margin is "
            ))
            .c(&peak.config_id)
            .t(format!(
                " ({:.3} against the pick's {:.3}; span recall@k {:.3}) at {} tokens per query, \
                 {:.1}× the pick's cost; the margin does not select, it breaks ties.",
                peak.margin,
                w.margin,
                peak.span_recall,
                thousands(peak.tokens_per_query),
                peak.tokens_per_query / w.tokens_per_query.max(f64::MIN_POSITIVE)
            )),
    )
}

/// The configurations on the cost–quality frontier, cheapest first.
fn frontier(sel: &Selection) -> Prose {
    let mut on: Vec<&ConfigSelection> = sel.configs.iter().filter(|c| c.pareto).collect();
    on.sort_by(|a, b| a.tokens_per_query.total_cmp(&b.tokens_per_query));
    let mut p = Prose::new()
        .b(Prose::text("Cost–quality frontier"))
        .t(" (tokens per query, span recall@k; nothing is both cheaper and better): ");
    for (n, c) in on.iter().enumerate() {
        if n > 0 {
            p = p.t(", ");
        }
        p = p.c(&c.config_id).t(format!(
            " ({}, {:.3})",
            thousands(c.tokens_per_query),
            c.span_recall
        ));
    }
    p.t(format!(
        "; the pick is {}on it.",
        if sel.winner().pareto { "" } else { "not " }
    ))
}

/// Whether the split halves pick the same configuration.
fn stability(sel: &Selection) -> Prose {
    let s = &sel.settings;
    let st = &sel.stability;
    let kept = sel.configs.iter().filter(|c| c.kept).count();
    match st.status {
        StabilityStatus::Stable => Prose::new().b(Prose::text("Stable:")).t(format!(
            " the same rule picks it on {} of {} random halves of the golden set ({} questions \
             each; at least {} needed).",
            pct(st.winner_share),
            st.halves,
            st.half_size,
            pct(s.stable_share)
        )),
        StabilityStatus::Indistinguishable => Prose::new()
            .b(Prose::text("Indistinguishable at this sample size:"))
            .t(format!(
                " no configuration is picked on at least {} of {} random halves ({} questions \
                 each): this pick wins {}",
                pct(s.stable_share),
                st.halves,
                st.half_size,
                pct(st.winner_share),
            ))
            .p(runners_up(sel))
            .t(if kept == 1 {
                format!(
                    ". With {} questions the halves do not agree, although the full set keeps \
                     this configuration alone: read its lead over the others as uncertain.",
                    sel.n_questions
                )
            } else {
                format!(
                    ". With {} questions the sweep cannot separate these configurations, so the \
                     pick rests on cost: it is the cheapest of the {kept} configurations inside \
                     the full set's plateau.",
                    sel.n_questions
                )
            }),
        StabilityStatus::HalvesDisagree => Prose::new()
            .b(Prose::text("Halves disagree with the full set:"))
            .t(" ")
            .c(&sel.configs[st.most_wins].config_id)
            .t(format!(
                " is picked on {} of {} random halves, this configuration on only {}. The full \
                 set's pick is kept, but treat the two as indistinguishable and let the judge \
                 stage decide.",
                pct(st.most_wins_share),
                st.halves,
                pct(st.winner_share)
            )),
    }
}

/// ", `a` wins 30%, `b` wins 12%": the other configurations that won at least 5% of the halves,
/// most wins first.
fn runners_up(sel: &Selection) -> Prose {
    let mut others: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .enumerate()
        .filter(|(i, c)| *i != sel.winner && c.win_share >= 0.05)
        .map(|(_, c)| c)
        .collect();
    others.sort_by(|a, b| b.win_share.total_cmp(&a.win_share));
    others.iter().fold(Prose::new(), |p, c| {
        p.t(", ")
            .c(&c.config_id)
            .t(format!(" wins {:.0}%", c.win_share * 100.0))
    })
}

/// The judge stage's candidates, challengers marked.
fn candidates(sel: &Selection) -> Prose {
    let mut p = Prose::new()
        .b(Prose::text("Judge candidates"))
        .t(" (the plateau cheapest first, then any challengers): ");
    for (n, &i) in sel.candidates.iter().enumerate() {
        let c = &sel.configs[i];
        let role = if c.status == Status::Challenger {
            ", challenger"
        } else {
            ""
        };
        if n > 0 {
            p = p.t(", ");
        }
        p = p.c(&c.config_id).t(format!(
            " ({} tokens/query{role})",
            thousands(c.tokens_per_query)
        ));
    }
    p.t(".")
}
