//! The diagnosis "retrieval is the bottleneck" (see [`super::diagnose`]): the pick's own span
//! recall@k below `weak_recall` (the mean per question, with the per-span figure beside it), or
//! its median margin below 0 (the typical question, with the share below zero and its Wilson
//! interval); and whether chunk size could help, by the flat-curve test on the pick's strategy
//! across sizes at this cut.

use super::text::{fmt3 as f3, thousands, trim};
use super::types::{ConfigSelection, Diagnosis, DiagnosisKind, Selection};

/// The advice when retrieval, not chunking, limits recall.
pub const WEAK_ADVICE: &str = "look at the retriever, the analyzer, query rewriting or \
reranking first; chunk size will not fix it";

/// The pick's own span recall@k below `weak_recall`, or its median margin negative (the typical
/// question's: a wrong chunk outscores the right one). Whether chunk size could help is read from
/// the pick's strategy across sizes at this cut ([`size_advice`]).
pub(super) fn weak_retrieval(sel: &Selection) -> Option<Diagnosis> {
    let s = &sel.settings;
    let w = sel.winner();
    let low_recall = w.span_recall < s.weak_recall;
    let negative_margin = w.margin_median < 0.0;
    if !(low_recall || negative_margin) {
        return None;
    }
    let mut why = Vec::new();
    if low_recall {
        why.push(format!(
            "the pick `{}` has span recall@k {} (the mean per question, below {}: on the mean \
             question it misses {:.0}% of the evidence); per evidence span it finds {} [{}, {}] \
             ({:.0}% of the spans missed)",
            w.config_id,
            f3(w.span_recall),
            trim(s.weak_recall),
            (1.0 - w.span_recall) * 100.0,
            f3(w.span_recall_micro),
            f3(w.span_recall_micro_lo),
            f3(w.span_recall_micro_hi),
            (1.0 - w.span_recall_micro) * 100.0
        ));
    }
    if negative_margin {
        let below = crate::stats::wilson(
            w.margin_below_zero as u64,
            w.n_questions as u64,
            s.confidence,
        );
        why.push(format!(
            "the pick `{}`'s median margin is {} and {} of its {} questions ({:.0}% [{:.0}%, \
             {:.0}%]) have a negative margin: on its typical question a wrong chunk outscores the \
             right one",
            w.config_id,
            f3(w.margin_median),
            thousands(w.margin_below_zero as f64),
            thousands(w.n_questions as f64),
            100.0 * w.margin_below_zero as f64 / w.n_questions.max(1) as f64,
            below.lo * 100.0,
            below.hi * 100.0
        ));
    }
    Some(Diagnosis {
        kind: DiagnosisKind::WeakRetrieval,
        evidence: why.join("; "),
        advice: size_advice(sel),
    })
}

/// The pick's strategy (same prefix and token unit) at every chunk size of this cut, smallest
/// first.
fn pick_strategy_by_size(sel: &Selection) -> Vec<&ConfigSelection> {
    let w = sel.winner();
    let mut same: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| {
            c.strategy == w.strategy
                && c.prefix == w.prefix
                && c.expand == w.expand
                && c.tokenizer == w.tokenizer
        })
        .collect();
    same.sort_by_key(|c| c.chunk_size);
    same
}

/// Whether chunk size could lift a weak pick, by a stated test: the curve is **flat** when every
/// size of the pick's strategy at this cut has its span recall@k and its margin inside the pick's
/// intervals (the flat-curve test of seed 001, on the pick's strategy). Only then "chunk size
/// will not fix it"; otherwise the sentence says which way recall rises across sizes.
fn size_advice(sel: &Selection) -> String {
    let w = sel.winner();
    let sizes = pick_strategy_by_size(sel);
    if sizes.len() < 2 {
        return format!(
            "only one chunk size of {} was swept, so whether chunk size helps is not measured: \
             sweep several sizes, and look at the retriever, the analyzer, query rewriting or \
             reranking",
            w.strategy
        );
    }
    let recall = crate::stats::Interval {
        lo: w.span_recall_lo,
        hi: w.span_recall_hi,
    };
    let margin = crate::stats::Interval {
        lo: w.margin_lo,
        hi: w.margin_hi,
    };
    let (first, last) = (sizes[0], sizes[sizes.len() - 1]);
    let span = format!(
        "{} at {}–{} {}",
        w.strategy,
        thousands(first.chunk_size as f64),
        thousands(last.chunk_size as f64),
        w.size_unit
    );
    if sizes
        .iter()
        .all(|c| recall.contains(c.span_recall) && margin.contains(c.margin))
    {
        return format!(
            "span recall@k and margin stay inside the pick's intervals at every size of {span}, \
             so {WEAK_ADVICE}"
        );
    }
    // The size with the highest span recall; a size only as good as the pick's does not raise
    // recall, so on a tie the pick is the top.
    let top = sizes
        .iter()
        .copied()
        .max_by(|a, b| a.span_recall.total_cmp(&b.span_recall))
        .filter(|top| top.span_recall > w.span_recall)
        .unwrap_or(w);
    // The size recall rises towards, and the configuration at the other end it rises from.
    let (larger, from, to) = if top.chunk_size > w.chunk_size {
        (true, w, top)
    } else if top.chunk_size < w.chunk_size {
        (false, w, top)
    } else if w.chunk_size == last.chunk_size && first.span_recall < w.span_recall {
        (true, first, w)
    } else if w.chunk_size == first.chunk_size && last.span_recall < w.span_recall {
        (false, last, w)
    } else {
        return format!(
            "span recall@k peaks at the pick's size among {span} ({} at {} to {} at {}), so \
             another size in that range will not fix it: {WEAK_ADVICE}",
            f3(first.span_recall),
            thousands(first.chunk_size as f64),
            f3(last.span_recall),
            thousands(last.chunk_size as f64),
        );
    };
    format!(
        "{} chunks raise recall here (`{}` at {} {} finds span recall@k {} against {} at {}): \
         sweep {} sizes{} before blaming the retriever",
        if larger { "larger" } else { "smaller" },
        to.config_id,
        thousands(to.chunk_size as f64),
        to.size_unit,
        f3(to.span_recall),
        f3(from.span_recall),
        thousands(from.chunk_size as f64),
        if larger { "larger" } else { "smaller" },
        if larger && w.budget_tokens.is_some() {
            " and larger budgets"
        } else {
            ""
        }
    )
}
