//! Diagnoses for the report, each with the numbers that triggered it (seeds 000 and 001):
//!
//! - **boundary damage**: coverage@k − span recall@k > `boundary_gap` (0.15) for a
//!   configuration: evidence is retrieved in pieces, cut at chunk boundaries. Advice, in seed
//!   000's order: structure-aware (heading) or sentence splitting first, more overlap second,
//!   bigger chunks last.
//! - **flat curve**: every configuration's span recall@k lies inside the pick's 95% bootstrap
//!   interval for span recall, and every margin inside the pick's interval for the margin: the
//!   sweep cannot tell the sizes apart, so chunk size is not the bottleneck (look at the
//!   retriever, query rewriting or reranking).
//! - **winner by question type**: the selection rule, applied to each question type with at
//!   least `min_type_questions` questions, picks a different chunk size **and** that type's best
//!   configuration is significantly better than the overall pick on that type's questions
//!   (sign test, Holm-corrected within the type): consider parent-document retrieval (match on
//!   small chunks, return their parent section). When the grid has an expansion the advice is
//!   the measured answer instead ([`super::by_type`]).
//! - **retrieval is the bottleneck**: the pick's own span recall@k (the mean per question; the
//!   per-span figure beside it) is below `weak_recall` (0.7), or its **median** margin is
//!   negative (on the typical question a wrong chunk outscores the right one; the share of
//!   questions below zero with its Wilson interval beside it). "Chunk size will not fix it"
//!   only when the pick's strategy is flat across sizes at this cut (every size's span recall
//!   and margin inside the pick's intervals); otherwise the advice says which way recall rises.
//! - **k covers the index**: some configuration has no more chunks than k, so every query
//!   retrieves the whole index and its tokens per query is the index's size.
//! - **chunks larger than the budget**: at a budget cut, most chunks of some configuration are
//!   larger than the whole budget, so they are never sent (a cut never exceeds its budget).
//! - **chunks as large as the documents**: at some size most documents are a single chunk, so
//!   every strategy scores alike there.
//! - boundary damage names the evidence spans longer than the damaged chunks: when more than
//!   10% are, the advice is bigger chunks (no boundary placement keeps such a span whole), not
//!   seed 000's "bigger chunks last".
//! - **too few questions**: rule `equivalence`: configurations cheaper than the pick are
//!   undetermined against the best, with the questions that would settle each
//!   ([`crate::stats::questions_needed`]); rules `paired` and `seed`: fewer than `min_questions`
//!   (30), interval half-widths are wide, and the differences seen are likely noise.
//! - **plateau fallback**: no configuration passed both plateau tests (see
//!   [`super::plateau`]).
//! - **edge of the grid**: the pick is at the largest (or smallest) chunk size swept while its
//!   strategy's span recall or margin still improves towards that edge: the best size may lie
//!   outside the grid, so extend `--sizes` before trusting the pick.

use super::cheaper::{cheaper_evidence, needed_words, undetermined_cheaper};
use super::plateau::Rule;
use super::text::{first_five, fmt_p, fmt3, thousands, trim};
use super::types::{ConfigSelection, Selection, TypePick};
pub use super::types::{Diagnosis, DiagnosisKind};
pub use super::weak::WEAK_ADVICE;
use super::weak::weak_retrieval;
use crate::stats::QUESTIONS_CAP;

/// The advice for boundary damage, in seed 000's order.
pub const BOUNDARY_ADVICE: &str = "boundaries cut the evidence: switch to structure-aware \
(heading) or sentence splitting first, raise overlap second, and raise chunk size last";

/// Share of the evidence spans longer than a damaged configuration's chunks above which boundary
/// damage is blamed on the chunk size rather than on where the boundaries fall.
pub const LONG_SPAN_SHARE: f64 = 0.1;

/// The advice for boundary damage when many spans are longer than the chunks.
pub const LONG_SPAN_ADVICE: &str = "many evidence spans are longer than these chunks, so no \
boundary placement keeps them whole and structure-aware splitting or overlap cannot fix it: \
raise chunk size above the spans' length (or retrieve neighbouring chunks and parents); smaller \
chunks only make it worse";

/// The advice when most documents are a single chunk.
pub const WHOLE_DOCS_ADVICE: &str = "at these sizes a chunk is a whole document, so every \
strategy scores alike and retrieval only picks documents: compare strategies at smaller sizes, \
and weigh what a whole document costs per query";

/// The advice for a flat curve (seed 001).
pub const FLAT_ADVICE: &str = "chunk size is not the bottleneck: stop tuning it and look at the \
retriever, query rewriting or reranking";

/// The advice for a winner that differs by question type (seeds 000 and 001).
pub const BY_TYPE_ADVICE: &str = "no single size serves every question type: consider \
parent-document retrieval (index small chunks, return their parent section) or expanding to \
neighbouring chunks after retrieval";

/// The advice for too few questions.
pub const FEW_QUESTIONS_ADVICE: &str = "label more questions (seed 000 suggests 50–100) before \
trusting differences this small";

/// The advice when k covers the index.
pub const K_COVERS_ADVICE: &str = "these configurations send the whole corpus with every \
query, so their recall says nothing about retrieval: compare at a context budget (--budget) or \
lower k";

/// The advice when a context budget takes the whole index.
pub const K_COVERS_ADVICE_AT_BUDGET: &str = "at this context budget these configurations send \
the whole corpus with every query, so their recall says nothing about retrieval: compare at a \
smaller budget (--budget)";

/// The advice when most chunks are larger than the budget.
pub const OVER_BUDGET_ADVICE: &str = "at this budget these chunk sizes can send almost nothing, so \
their recall says nothing about their chunking: compare them at a larger budget (--budget), or \
leave sizes above the budget out of the grid";

/// The advice for a plateau fallback.
pub const FALLBACK_ADVICE: &str = "the configuration with the best margin is not among those \
with the best span recall; the pick uses span recall alone, so check the margin column by hand";

/// Computes the diagnoses of a selection (its `diagnoses` field is ignored), in report order:
/// too few questions, retrieval is the bottleneck, k covers the index, chunks larger than the
/// budget, chunks as large as the documents, plateau fallback, edge of the grid, flat curve,
/// boundary damage, winner by question type.
pub fn diagnose(sel: &Selection) -> Vec<Diagnosis> {
    [
        too_few_questions(sel),
        weak_retrieval(sel),
        k_covers_index(sel),
        chunks_over_budget(sel),
        chunks_as_large_as_documents(sel),
        plateau_fallback(sel),
        edge_of_grid(sel),
        flat_curve(sel),
        boundary_damage(sel),
        winner_by_question_type(sel),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Rule `equivalence`: cheaper configurations than the pick are undetermined; each is given with
/// how likely it is worse than the best by more than δ and the questions that would show it
/// within δ if it were as good (planned at a true difference of 0). Other rules: fewer questions
/// than `min_questions`, the pick's interval for hit@k is wide.
fn too_few_questions(sel: &Selection) -> Option<Diagnosis> {
    let s = &sel.settings;
    let w = sel.winner();
    if s.rule == Rule::Equivalence {
        let open = undetermined_cheaper(sel);
        if open.is_empty() {
            return None;
        }
        return Some(Diagnosis {
            kind: DiagnosisKind::TooFewQuestions,
            evidence: format!(
                "{} questions: {} configuration{} cheaper than the pick {} undetermined against \
                 the best `{}` within δ = {}: {}",
                thousands(sel.n_questions as f64),
                open.len(),
                if open.len() == 1 { "" } else { "s" },
                if open.len() == 1 { "is" } else { "are" },
                sel.best().config_id,
                trim(s.delta),
                first_five(&open, needed_words)
            ),
            advice: more_questions_advice(&open, s.alpha),
        });
    }
    if sel.n_questions >= s.min_questions {
        return None;
    }
    Some(Diagnosis {
        kind: DiagnosisKind::TooFewQuestions,
        evidence: format!(
            "{} questions (< {}): the pick `{}`'s {:.0}% interval for hit@k is {}–{} (±{:.2}), \
             wider than most differences between configurations",
            sel.n_questions,
            s.min_questions,
            w.config_id,
            s.confidence * 100.0,
            fmt3(w.hit_rate_lo),
            fmt3(w.hit_rate_hi),
            (w.hit_rate_hi - w.hit_rate_lo) / 2.0
        ),
        advice: FEW_QUESTIONS_ADVICE.into(),
    })
}

/// What more questions would do for the undetermined cheaper configurations `open`: the most
/// questions any of them needs (or that more are unlikely to settle them), and how many are more
/// likely worse than δ than not.
fn more_questions_advice(open: &[&ConfigSelection], alpha: f64) -> String {
    let most = open
        .iter()
        .map(|c| c.questions_needed)
        .try_fold(0u64, |m, q| q.map(|q| m.max(q)));
    let settle = match most {
        Some(q) if q <= QUESTIONS_CAP => format!(
            "about {} questions in all would show every one of them within δ if it were as \
             good as the best",
            thousands(q as f64)
        ),
        _ => "more questions are unlikely to settle all of them".into(),
    };
    let likely_worse = open
        .iter()
        .filter(|c| c.p_worse.is_some_and(|p| p > 0.5))
        .count();
    let worse = match likely_worse {
        0 => String::new(),
        k => format!(
            "; {} {} more likely worse than the best by more than δ than not (P > 0.5), which \
             more questions would more likely confirm than overturn",
            if k == open.len() && k > 1 {
                format!("all {k}")
            } else {
                format!("{k} of the {}", open.len())
            },
            if k == 1 { "is" } else { "are" }
        ),
    };
    format!(
        "label more questions only if a cheaper configuration matters: {settle} (α = {}, 80% \
         power, planned at a true difference of 0 with the paired differences' variance; Chow, \
         Shao and Wang 2008, §3.1){worse}",
        trim(alpha)
    )
}

/// Configurations whose cut (k, or the context budget) retrieves their whole index.
fn k_covers_index(sel: &Selection) -> Option<Diagnosis> {
    let covered: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| {
            c.n_chunks > 0
                && (c.top_k >= c.n_chunks || c.chunks_retrieved_mean >= c.n_chunks as f64)
        })
        .collect();
    if covered.is_empty() {
        return None;
    }
    let shown = first_five(&covered, |c| {
        let cut = match c.budget_tokens {
            Some(b) => format!("a budget of {} {}", thousands(b as f64), c.unit()),
            None => format!("k = {}", c.top_k),
        };
        format!(
            "{} ({} chunks, {cut}, {} index {})",
            c.config_id,
            thousands(c.n_chunks as f64),
            thousands(c.index_tokens as f64),
            c.unit()
        )
    });
    // Every configuration of a selection is read at the same cut.
    let (cut, advice) = match sel.budget_tokens() {
        Some(_) => (
            "the context budget takes every chunk",
            K_COVERS_ADVICE_AT_BUDGET,
        ),
        None => ("k is at least the number of chunks", K_COVERS_ADVICE),
    };
    Some(Diagnosis {
        kind: DiagnosisKind::KCoversIndex,
        evidence: format!(
            "{cut} in {} of {} configurations: {}; every query retrieves the whole index, \
             so tokens per query is the index's size",
            covered.len(),
            sel.configs.len(),
            shown
        ),
        advice: advice.into(),
    })
}

/// Configurations whose chunks are mostly larger than the context budget: they are never sent,
/// so the configuration is compared on what little of its index fits. Under an expansion the
/// units a hit sends alone (windows, parents) are what the budget takes or refuses, so they are
/// counted instead ([`ConfigSelection::mostly_over_budget`]).
fn chunks_over_budget(sel: &Selection) -> Option<Diagnosis> {
    let budget = sel.budget_tokens()?;
    let over: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| c.mostly_over_budget())
        .collect();
    let first = over.first()?;
    let expanded = over.iter().any(|c| c.is_expanded());
    Some(Diagnosis {
        kind: DiagnosisKind::ChunksOverBudget,
        evidence: format!(
            "at a budget of {} {} most chunks{} of {} of {} configurations are larger than \
             the whole budget and are never sent: {}",
            thousands(budget as f64),
            first.unit(),
            match expanded {
                true => " (under an expansion, most units a hit sends alone: its window or parent)",
                false => "",
            },
            over.len(),
            sel.configs.len(),
            first_five(&over, |c| format!(
                "{} ({} of {} {}; one was skipped on {} of {} questions, span recall {})",
                c.config_id,
                c.units_over_budget,
                c.n_units,
                c.units_noun(),
                c.questions_skipped_for_size,
                c.n_questions,
                fmt3(c.span_recall)
            ))
        ),
        advice: match expanded {
            true => format!(
                "{OVER_BUDGET_ADVICE}; for an expansion, a smaller one (fewer neighbours, a smaller parent)"
            ),
            false => OVER_BUDGET_ADVICE.into(),
        },
    })
}

/// Configurations in which most documents are a single chunk, named from the smallest size.
fn chunks_as_large_as_documents(sel: &Selection) -> Option<Diagnosis> {
    let whole: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| c.n_docs > 0 && 2 * c.single_chunk_docs > c.n_docs)
        .collect();
    let smallest = whole.iter().min_by_key(|c| c.chunk_size)?;
    Some(Diagnosis {
        kind: DiagnosisKind::ChunksAsLargeAsDocuments,
        evidence: format!(
            "in {} of {} configurations most documents are a single chunk, from chunk size \
             {} {} up (`{}`: {} of {} documents are one chunk)",
            whole.len(),
            sel.configs.len(),
            smallest.chunk_size,
            smallest.size_unit,
            smallest.config_id,
            smallest.single_chunk_docs,
            smallest.n_docs
        ),
        advice: WHOLE_DOCS_ADVICE.into(),
    })
}

/// No configuration passed both plateau tests.
fn plateau_fallback(sel: &Selection) -> Option<Diagnosis> {
    sel.plateau_fallback.then(|| Diagnosis {
        kind: DiagnosisKind::PlateauFallback,
        evidence: format!(
            "no configuration has both margin ≥ {} and span recall ≥ {}",
            fmt3(sel.margin_floor.unwrap_or(f64::NEG_INFINITY)),
            fmt3(sel.recall_floor)
        ),
        advice: FALLBACK_ADVICE.into(),
    })
}

/// Every configuration's span recall@k and margin inside the pick's intervals (needs two
/// configurations or more).
fn flat_curve(sel: &Selection) -> Option<Diagnosis> {
    if sel.configs.len() <= 1 {
        return None;
    }
    let w = sel.winner();
    let recall_ci = crate::stats::Interval {
        lo: w.span_recall_lo,
        hi: w.span_recall_hi,
    };
    let margin_ci = crate::stats::Interval {
        lo: w.margin_lo,
        hi: w.margin_hi,
    };
    let (rmin, rmax) = min_max(sel.configs.iter().map(|c| c.span_recall));
    let (mmin, mmax) = min_max(sel.configs.iter().map(|c| c.margin));
    let flat = sel
        .configs
        .iter()
        .all(|c| recall_ci.contains(c.span_recall) && margin_ci.contains(c.margin));
    flat.then(|| Diagnosis {
        kind: DiagnosisKind::FlatCurve,
        evidence: format!(
            "span recall@k ranges {}–{} over all {} configurations, inside the pick's \
             {:.0}% interval {}–{}; margin ranges {}–{}, inside {}–{}",
            fmt3(rmin),
            fmt3(rmax),
            sel.configs.len(),
            sel.settings.confidence * 100.0,
            fmt3(recall_ci.lo),
            fmt3(recall_ci.hi),
            fmt3(mmin),
            fmt3(mmax),
            fmt3(margin_ci.lo),
            fmt3(margin_ci.hi)
        ),
        advice: FLAT_ADVICE.into(),
    })
}

/// Configurations whose coverage@k − span recall@k exceeds `boundary_gap`, worst first; the
/// advice is bigger chunks when more than [`LONG_SPAN_SHARE`] of the spans are longer than the
/// smallest such configuration's chunks.
fn boundary_damage(sel: &Selection) -> Option<Diagnosis> {
    let s = &sel.settings;
    let w = sel.winner();
    let mut damaged: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| c.boundary_gap > s.boundary_gap)
        .collect();
    if damaged.is_empty() {
        return None;
    }
    damaged.sort_by(|a, b| b.boundary_gap.total_cmp(&a.boundary_gap));
    let shown = first_five(&damaged, |c| {
        format!(
            "{} (coverage {} − span recall {} = {})",
            c.config_id,
            fmt3(c.coverage),
            fmt3(c.span_recall),
            fmt3(c.boundary_gap)
        )
    });
    let pick = if w.boundary_gap > s.boundary_gap {
        format!("the pick is one of them (gap {})", fmt3(w.boundary_gap))
    } else {
        format!("the pick is not (gap {})", fmt3(w.boundary_gap))
    };
    // Spans longer than the chunks cannot be kept whole by any boundary placement: for
    // those, splitting smarter does not help and bigger chunks are the remedy.
    let spans = sel.n_spans_measured;
    let too_long = damaged
        .iter()
        .filter(|c| spans > 0 && c.spans_longer_than_chunk as f64 > LONG_SPAN_SHARE * spans as f64)
        .min_by_key(|c| c.chunk_size);
    let (long, advice) = match too_long {
        Some(c) => (
            format!(
                "; {} of {} evidence spans are longer than {} {} (`{}`{}), so no chunk of \
                 that size can hold them whole",
                c.spans_longer_than_chunk,
                spans,
                c.chunk_limit,
                c.unit(),
                c.config_id,
                if c.chunk_limit == c.chunk_size && c.size_unit == c.unit() {
                    ""
                } else {
                    ": its largest chunk"
                }
            ),
            LONG_SPAN_ADVICE.to_string(),
        ),
        None => (String::new(), BOUNDARY_ADVICE.to_string()),
    };
    Some(Diagnosis {
        kind: DiagnosisKind::BoundaryDamage,
        evidence: format!(
            "coverage − span recall > {} in {} of {} configurations: {}; {}{}",
            trim(s.boundary_gap),
            damaged.len(),
            sel.configs.len(),
            shown,
            pick,
            long
        ),
        advice,
    })
}

/// Question types whose own pick is another chunk size (or expansion) and significantly better
/// there than the overall pick.
fn winner_by_question_type(sel: &Selection) -> Option<Diagnosis> {
    let w = sel.winner();
    let other_size = |t: &TypePick| sel.configs[t.winner].chunk_size != w.chunk_size;
    let other_expansion = |t: &TypePick| sel.configs[t.winner].expand != w.expand;
    let differing: Vec<&TypePick> = sel
        .by_type
        .iter()
        .filter(|t| t.significant() && (other_size(t) || other_expansion(t)))
        .collect();
    if differing.is_empty() {
        return None;
    }
    let another = match differing.iter().all(|t| other_size(t)) {
        true => "another chunk size",
        false => "another chunk size or expansion",
    };
    let parts: Vec<String> = differing
        .iter()
        .filter_map(|t| {
            let v = t.overall_vs_best?;
            Some(format!(
                "{} ({} questions) → {} (span recall {}; the overall pick gets {}; the \
                 type's best `{}` is higher on {} of its questions and lower on {}, sign \
                 test Holm p {})",
                t.question_type,
                t.n_questions,
                sel.configs[t.winner].config_id,
                fmt3(t.span_recall),
                fmt3(t.overall_pick_span_recall),
                sel.configs[t.best].config_id,
                v.best_better,
                v.this_better,
                fmt_p(v.p_holm)
            ))
        })
        .collect();
    Some(Diagnosis {
        kind: DiagnosisKind::WinnerByQuestionType,
        evidence: format!(
            "on {} of {} question types the overall pick `{}` is significantly worse than \
             {another}: {}",
            differing.len(),
            sel.by_type.len(),
            w.config_id,
            parts.join("; ")
        ),
        advice: super::by_type::advice(sel, BY_TYPE_ADVICE),
    })
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    })
}

/// The pick at the largest or smallest size of the grid while its strategy's neighbour (the next
/// size inwards) has a lower span recall or margin.
fn edge_of_grid(sel: &Selection) -> Option<Diagnosis> {
    let w = sel.winner();
    let mut sizes: Vec<usize> = sel.configs.iter().map(|c| c.chunk_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return None;
    }
    let (edge, inward, which, advice) = if w.chunk_size == sizes[sizes.len() - 1] {
        (
            w.chunk_size,
            sizes[sizes.len() - 2],
            "largest",
            "sweep larger sizes before trusting the pick, and weigh its cost per query",
        )
    } else if w.chunk_size == sizes[0] {
        (
            w.chunk_size,
            sizes[1],
            "smallest",
            "sweep smaller sizes before trusting the pick",
        )
    } else {
        return None;
    };
    // Same strategy and k at the next size inwards (overlap scales with size, so it differs).
    let neighbour = sel.configs.iter().find(|c| {
        c.strategy == w.strategy
            && c.prefix == w.prefix
            && c.expand == w.expand
            && c.chunk_size == inward
            && c.top_k == w.top_k
    })?;
    let mut rising = Vec::new();
    if neighbour.span_recall < w.span_recall {
        rising.push("span recall@k");
    }
    if neighbour.margin < w.margin {
        rising.push("margin");
    }
    if rising.is_empty() {
        return None;
    }
    let unit = &w.size_unit;
    Some(Diagnosis {
        kind: DiagnosisKind::EdgeOfGrid,
        evidence: format!(
            "the pick `{}`'s chunk size {} {unit} is the {which} swept, and {}'s {} still \
             {} towards it: from {} to {} {unit}, span recall@k {} → {} and margin {} → \
             {}; {}",
            w.config_id,
            thousands(edge as f64),
            w.strategy,
            rising.join(" and "),
            if rising.len() == 1 {
                "improves"
            } else {
                "improve"
            },
            thousands(inward as f64),
            thousands(edge as f64),
            fmt3(neighbour.span_recall),
            fmt3(w.span_recall),
            fmt3(neighbour.margin),
            fmt3(w.margin),
            cheaper_evidence(sel)
        ),
        advice: format!("the best size may lie outside the grid: {advice}"),
    })
}
