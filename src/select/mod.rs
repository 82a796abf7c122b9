//! Selection: from the sweep's table to a decision a reviewer can check.
//!
//! Input: the rows of sweep.csv ([`SweepRow`], one per configuration) and sweep_questions.csv
//! ([`QuestionRow`], one per configuration × question). Output: a [`Selection`] with
//!
//! 1. the [plateau rule](plateau) over all configurations: kept or dropped and why, rank by
//!    tokens per query, the pick (rank 1) and the judge candidates (ranks 1..=N); by default
//!    a configuration stays unless the best is significantly better on the same questions
//!    (exact sign test on per-question span recall, Holm-corrected) or its span recall is more
//!    than 0.02 below the best's; `Rule::Seed` keeps the seeds' literal rule;
//! 2. [split-half stability](halves): how often each configuration is the pick on seeded random
//!    halves of the questions; when the pick wins fewer than 90% of them the report says the
//!    sizes are indistinguishable at this sample size and that the pick is made on cost;
//! 3. 95% intervals per configuration: Wilson (1927) for hit@k (a proportion of questions) and
//!    for micro span recall (spans found / spans; this treats spans as independent, which
//!    spans of one question are not, so read it as optimistic), and a seeded percentile
//!    bootstrap over questions for the macro means (span recall@k, coverage@k, margin);
//! 4. exact McNemar (1947) on hit@k between the pick and every other configuration, paired on
//!    the same questions;
//! 5. the [cost–quality frontier](frontier) in (tokens per query, span recall);
//! 6. [diagnoses](diagnose) with their triggering numbers.
//!
//! Everything is recomputed from the per-question rows, so `chunksweep report` reproduces the
//! decision of `chunksweep sweep` exactly, without re-retrieval.

mod align;
pub mod by_type;
pub mod cheaper;
pub mod diagnose;
pub mod engines;
pub mod expand;
pub mod frontier;
pub mod halves;
pub mod paired;
pub mod plateau;
pub mod prefix;
mod reason;
pub mod rerank;
mod text;
pub mod tradeoff;
mod twins;
pub mod types;
mod weak;

use std::collections::BTreeMap;

use crate::stats::{self, McNemar};
use crate::sweep::{QuestionRow, SweepRow};
use align::{Aligned, Columns, align};
use halves::{HalfWins, split_halves};
pub use plateau::Rule;
use plateau::{Plateau, PlateauInput, mean_at, plateau};
use reason::reason;
pub(crate) use text::{fmt_p, questions_words, thousands, trim};
pub use types::{
    ConfigSelection, Cuts, DEFAULT_DELTA, POWER, SelectError, Selection, SelectionSettings,
    Stability, StabilityStatus, Status, TypePick,
};

/// Groups the rows by cut (`budget_tokens`; none is top k) and runs [`select`] on each (see
/// [`Cuts`] for the order).
///
/// # Errors
/// As [`select`], for any cut.
pub fn select_cuts(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Result<Cuts, SelectError> {
    let mut keys: Vec<Option<usize>> = Vec::new();
    for r in rows {
        if !keys.contains(&r.budget_tokens) {
            keys.push(r.budget_tokens);
        }
    }
    // Budgets first, in sweep order; top k last.
    keys.sort_by_key(|k| k.is_none());
    let selections = keys
        .iter()
        .map(|key| {
            let at: Vec<SweepRow> = rows
                .iter()
                .filter(|r| r.budget_tokens == *key)
                .cloned()
                .collect();
            let ids: std::collections::HashSet<&str> =
                at.iter().map(|r| r.config_id.as_str()).collect();
            let qs: Vec<QuestionRow> = questions
                .iter()
                .filter(|q| ids.contains(q.config_id.as_str()))
                .cloned()
                .collect();
            select(&at, &qs, settings)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if selections.is_empty() {
        return Err(SelectError::NoConfigurations);
    }
    let tradeoff = tradeoff::tradeoff(&selections, questions, settings);
    Ok(Cuts {
        selections,
        tradeoff,
    })
}

/// Runs the whole selection on the rows of one cut (see the module documentation).
///
/// # Errors
/// [`SelectError`] when there is no configuration, a configuration has no per-question rows,
/// or configurations were scored on different questions.
pub fn select(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Result<Selection, SelectError> {
    if rows.is_empty() {
        return Err(SelectError::NoConfigurations);
    }
    let original_ids: Vec<String> = rows.iter().map(|r| r.config_id.clone()).collect();
    let aligned = align(rows, questions)?;
    // Identical configurations count once: every statistic below sees one row per group.
    let groups = twins::groups(rows, questions, &aligned);
    let rows: Vec<SweepRow> = groups.iter().map(|g| rows[g[0]].clone()).collect();
    let aligned = aligned.keep(&groups.iter().map(|g| g[0]).collect::<Vec<_>>());
    let rows = rows.as_slice();
    let all: Vec<usize> = (0..aligned.ids.len()).collect();
    let inputs = plateau_inputs(rows, &aligned.columns);
    let rule = settings.rule_settings();
    let p: Plateau = plateau(&inputs, &all, &rule);
    let winner = p.winner().expect("at least one configuration");
    let wins = split_halves(&inputs, &rule, settings.halves, settings.seed);
    let challengers = challengers(&p, rows, settings.candidates);
    let mut configs = config_selections(rows, &aligned, &p, &wins, &challengers, settings);
    for (c, g) in configs.iter_mut().zip(&groups) {
        c.aliases = g[1..]
            .iter()
            .map(|&i| original_ids[i].clone())
            .collect::<Vec<_>>()
            .join(" ");
    }
    let stability = stability(&wins, winner, settings.stable_share);
    let expanded: Vec<usize> = (0..rows.len())
        .filter(|&i| !rows[i].expand.is_empty() && rows[i].expand != "none")
        .collect();
    let by_type = picks_by_type(&inputs, &aligned.types, winner, &expanded, settings);
    let candidates: Vec<usize> = p
        .order
        .iter()
        .take(settings.candidates)
        .chain(&challengers)
        .copied()
        .collect();
    let mut selection = Selection {
        settings: settings.clone(),
        n_questions: aligned.ids.len(),
        n_spans_measured: aligned.span_tokens.len(),
        configs,
        winner,
        candidates,
        best: p.best,
        best_margin: p.best_margin,
        best_span_recall: p.best_recall,
        margin_floor: p.margin_floor,
        recall_floor: p.recall_floor,
        plateau_fallback: p.fallback,
        stability,
        by_type,
        diagnoses: Vec::new(),
    };
    selection.diagnoses = diagnose::diagnose(&selection);
    Ok(selection)
}

/// The plateau rule's view of each configuration: its row's size, prefix and cost, and its
/// per-question span recall and margin columns.
fn plateau_inputs<'a>(rows: &'a [SweepRow], columns: &'a [Columns]) -> Vec<PlateauInput<'a>> {
    rows.iter()
        .zip(columns)
        .map(|(r, c)| PlateauInput {
            config_id: &r.config_id,
            chunk_size: r.chunk_size,
            has_prefix: !r.prefix.is_empty() && r.prefix != "none",
            tokens_per_query: r.tokens_per_query,
            span_recall: &c.span_recall,
            margin: &c.margin,
        })
        .collect()
}

/// Every configuration's line of the selection, in row order: its status and rank under the
/// plateau `p`, its intervals (Wilson for hit@k and micro span recall, a bootstrap shared by
/// all configurations for the macro means), McNemar against the pick, its share of split-half
/// wins and whether it is on the cost–quality frontier.
fn config_selections(
    rows: &[SweepRow],
    aligned: &Aligned,
    p: &Plateau,
    wins: &HalfWins,
    challengers: &[usize],
    settings: &SelectionSettings,
) -> Vec<ConfigSelection> {
    let Aligned {
        ids,
        span_tokens,
        columns,
        ..
    } = aligned;
    let n = ids.len();
    let all: Vec<usize> = (0..n).collect();
    let winner = p.winner().expect("at least one configuration");
    let on_frontier = frontier::pareto(
        &rows
            .iter()
            .zip(&p.span_recall)
            .map(|(r, &recall)| (r.tokens_per_query, recall))
            .collect::<Vec<_>>(),
    );

    // Intervals: one shared set of bootstrap resamples (paired across configurations).
    let resamples = stats::bootstrap_indices(n, settings.bootstrap_resamples, settings.seed);
    let conf = settings.confidence;

    let mut configs = Vec::with_capacity(rows.len());
    for (i, (row, col)) in rows.iter().zip(columns).enumerate() {
        let size_unit = match row.size_unit.as_str() {
            "" => crate::chunking::size_unit(&row.strategy, &row.tokenizer),
            written => written,
        };
        let token_unit = if row.tokenizer == "words" {
            "words"
        } else {
            "tokens"
        };
        // Span lengths are counted in the token unit: compare them with a limit in that unit.
        let chunk_limit = if size_unit == token_unit {
            row.chunk_size
        } else {
            row.max_chunk_tokens
        };
        let hits = col.hit.iter().filter(|&&h| h).count() as u64;
        let hit_ci = stats::wilson(hits, n as u64, conf);
        let micro_ci = stats::wilson(col.spans_found, col.spans, conf);
        let recall_ci = stats::bootstrap_mean(&col.span_recall, &resamples, conf);
        let coverage_ci = stats::bootstrap_mean(&col.coverage, &resamples, conf);
        let margin_ci = stats::bootstrap_mean(&col.margin, &resamples, conf);
        let rank = p.rank_of(i);
        let status = match rank {
            Some(1) => Status::Winner,
            Some(r) if r <= settings.candidates => Status::Candidate,
            Some(_) => Status::Kept,
            None if challengers.contains(&i) => Status::Challenger,
            None => Status::Dropped,
        };
        let test: Option<McNemar> =
            (i != winner).then(|| stats::mcnemar_paired(&columns[winner].hit, &col.hit));
        let vs_best = p.vs_best[i];
        let span_recall = p.span_recall[i];
        let coverage = mean_at(&col.coverage, &all);
        configs.push(ConfigSelection {
            config_id: row.config_id.clone(),
            aliases: String::new(),
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            size_unit: size_unit.to_string(),
            chunk_overlap: row.chunk_overlap,
            tokenizer: row.tokenizer.clone(),
            prefix: row.prefix.clone(),
            expand: row.expand.clone(),
            top_k: row.top_k,
            cut: row.cut.clone(),
            budget_tokens: row.budget_tokens,
            n_chunks: row.n_chunks,
            index_tokens: row.index_tokens,
            tokens_per_query: row.tokens_per_query,
            chunks_retrieved_mean: row.chunks_retrieved_mean,
            single_chunk_docs: row.single_chunk_docs,
            n_docs: row.n_docs,
            chunk_limit,
            spans_longer_than_chunk: span_tokens.iter().filter(|&&t| t > chunk_limit).count(),
            pareto: on_frontier[i],
            status,
            kept: p.kept[i],
            rank,
            reason: reason(p, i, rows, settings, status),
            win_share: wins.share(i),
            n_questions: n,
            span_recall,
            span_recall_lo: recall_ci.lo,
            span_recall_hi: recall_ci.hi,
            span_recall_micro: if col.spans == 0 {
                0.0
            } else {
                col.spans_found as f64 / col.spans as f64
            },
            span_recall_micro_lo: micro_ci.lo,
            span_recall_micro_hi: micro_ci.hi,
            hit_rate: hits as f64 / n.max(1) as f64,
            hit_rate_lo: hit_ci.lo,
            hit_rate_hi: hit_ci.hi,
            coverage,
            coverage_lo: coverage_ci.lo,
            coverage_hi: coverage_ci.hi,
            boundary_gap: coverage - span_recall,
            margin: p.margin[i],
            margin_lo: margin_ci.lo,
            margin_hi: margin_ci.hi,
            margin_median: stats::quantile(&col.margin, 0.5).unwrap_or(0.0),
            margin_below_zero: col.margin.iter().filter(|&&m| m < 0.0).count(),
            mcnemar_b: test.map(|t| t.b),
            mcnemar_c: test.map(|t| t.c),
            mcnemar_p: test.map(|t| t.p_value),
            best_better: vs_best.map(|t| t.best_better),
            this_better: vs_best.map(|t| t.this_better),
            sign_p: vs_best.map(|t| t.p_value),
            sign_p_holm: vs_best.map(|t| t.p_holm),
            vs_best_class: vs_best.map_or("best", |t| t.ni.class.name()).to_string(),
            diff_mean: vs_best.map(|t| t.ni.mean_difference),
            diff_lower: vs_best.map(|t| t.ni.lower),
            diff_upper: vs_best.map(|t| t.ni.upper),
            questions_needed: vs_best
                .filter(|t| t.ni.class == stats::Class::Undetermined)
                .and_then(|t| t.ni.questions_needed(POWER)),
            p_worse: vs_best.and_then(|t| t.ni.probability_worse()),
            questions_skipped_for_size: row.questions_skipped_for_size,
            chunks_over_budget: row.chunks_over_budget,
            // a sweep.csv written before units were counted: the chunks are the units
            n_units: match row.n_units {
                0 => row.n_chunks,
                n => n,
            },
            units_over_budget: match row.n_units {
                0 => row.chunks_over_budget,
                _ => row.units_over_budget,
            },
        });
    }

    configs
}

/// How often the pick, and the configuration that wins most often, is the pick on the
/// split halves, and what that says (stable at `stable_share` or above).
fn stability(wins: &HalfWins, winner: usize, stable_share: f64) -> Stability {
    let winner_share = wins.share(winner);
    let most_wins = (0..wins.wins.len())
        .max_by(|&a, &b| {
            wins.wins[a]
                .total_cmp(&wins.wins[b])
                // Prefer the pick, then the earlier configuration, on equal counts.
                .then((a == winner).cmp(&(b == winner)))
                .then(b.cmp(&a))
        })
        .unwrap_or(winner);
    let most_wins_share = wins.share(most_wins);
    let status = if winner_share >= stable_share - plateau::EPS {
        StabilityStatus::Stable
    } else if most_wins_share >= stable_share - plateau::EPS {
        StabilityStatus::HalvesDisagree
    } else {
        StabilityStatus::Indistinguishable
    };
    Stability {
        status,
        halves: wins.halves,
        half_size: wins.half_size,
        winner_share,
        most_wins,
        most_wins_share,
    }
}

/// The dropped configurations that fill the judge's list up to `wanted` when the plateau holds
/// fewer: highest span recall first, then fewest tokens per query, then configuration id.
fn challengers(p: &Plateau, rows: &[SweepRow], wanted: usize) -> Vec<usize> {
    let missing = wanted.saturating_sub(p.order.len());
    let mut dropped: Vec<usize> = (0..rows.len())
        .filter(|&i| p.rank_of(i).is_none())
        .collect();
    dropped.sort_by(|&a, &b| {
        p.span_recall[b]
            .total_cmp(&p.span_recall[a])
            .then(
                rows[a]
                    .tokens_per_query
                    .total_cmp(&rows[b].tokens_per_query),
            )
            .then_with(|| rows[a].config_id.cmp(&rows[b].config_id))
    });
    dropped.truncate(missing);
    dropped
}

/// The selection rule applied to each question type with enough questions (empty when fewer
/// than two types qualify), with the overall pick tested against each type's best on that type's
/// questions (Holm-corrected within the type), and each configuration of `expanded` tested the
/// same way.
fn picks_by_type(
    inputs: &[PlateauInput<'_>],
    types: &[String],
    overall: usize,
    expanded: &[usize],
    s: &SelectionSettings,
) -> Vec<TypePick> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in types.iter().enumerate() {
        if !t.is_empty() {
            groups.entry(t.as_str()).or_default().push(i);
        }
    }
    groups.retain(|_, idx| idx.len() >= s.min_type_questions);
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
        .into_iter()
        .map(|(t, idx)| {
            let p = plateau(inputs, &idx, &s.rule_settings());
            let w = p.winner().expect("at least one configuration");
            TypePick {
                question_type: t.to_string(),
                n_questions: idx.len(),
                winner: w,
                span_recall: p.span_recall[w],
                margin: p.margin[w],
                overall_pick_span_recall: p.span_recall[overall],
                best: p.best,
                overall_vs_best: p.vs_best[overall],
                expanded: expanded
                    .iter()
                    .map(|&e| (e, p.span_recall[e], p.vs_best[e]))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
