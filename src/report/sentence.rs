//! The decision in sentences a reviewer can check against selection.csv: the pick against the
//! best at its cut, and the pick at every cut of the ranked list.

use super::doc::{Align, Block, Prose, Table};
use crate::select::diagnose::{cheaper_evidence, needed_words, undetermined_cheaper};
use crate::select::{ConfigSelection, Rule, Selection, fmt_p, trim as trim_num};

/// "k = 5", or "a budget of 2,000 tokens per query (4.2 chunks on average)".
pub fn cut_words(c: &ConfigSelection) -> String {
    match c.budget_tokens {
        Some(b) => format!(
            "a budget of {} {} per query ({:.1} chunks on average)",
            thousands(b as f64),
            c.unit(),
            c.chunks_retrieved_mean
        ),
        None => format!("k = {}", c.top_k),
    }
}

/// The pick at every cut, the deciding cut first: equal-budget comparisons lead, since at a fixed
/// k bigger chunks simply send more text. A paragraph, the table and a sentence per other cut.
pub fn cut_table(sel: &Selection, others: &[Selection]) -> Vec<Block> {
    let lead = Prose::new().b(Prose::text("At every cut")).t(
        " (each cut compares its configurations with each other; the first row decides and the \
         judge retrieves with it):",
    );
    let head = [
        "cut",
        "pick",
        "tokens/query",
        "chunks (mean)",
        "span recall@k",
        "best",
        "on the plateau",
        "pick at the largest size",
    ];
    use Align::{Default as L, Right as R};
    let rows = std::iter::once(sel)
        .chain(others)
        .map(|s| {
            let w = s.winner();
            let largest = s.configs.iter().map(|c| c.chunk_size).max().unwrap_or(0);
            let cut = match w.budget_tokens {
                Some(b) => format!("budget {} {}", thousands(b as f64), w.unit()),
                None => format!("k = {}", w.top_k),
            };
            vec![
                Prose::text(cut),
                Prose::new().c(&w.config_id),
                Prose::text(format!("{:.0}", w.tokens_per_query)),
                Prose::text(format!("{:.1}", w.chunks_retrieved_mean)),
                Prose::text(format!("{:.3}", w.span_recall)),
                Prose::new()
                    .c(&s.best().config_id)
                    .t(format!(" ({:.3})", s.best().span_recall)),
                Prose::text(format!(
                    "{} of {}",
                    s.configs.iter().filter(|c| c.kept).count(),
                    s.configs.len()
                )),
                Prose::text(if w.chunk_size == largest { "yes" } else { "no" }),
            ]
        })
        .collect();
    vec![
        Block::Para(lead),
        Block::Table(Table {
            head: head.map(String::from).to_vec(),
            align: vec![L, L, R, R, R, L, R, L],
            rows,
        }),
        Block::List(others.iter().map(decision_sentence).collect()),
    ]
}

/// The decision in one sentence a reviewer can check against selection.csv, e.g. "At k = 5
/// (about 1,840 tokens per query), `recursive-512-…` is not significantly worse than the best
/// (`fixed-1024-…`: higher on 3 questions, lower on 5, sign test Holm p = 0.620) and costs 48%
/// fewer tokens per query and 35% fewer index tokens."
pub fn decision_sentence(sel: &Selection) -> Prose {
    let w = sel.winner();
    let b = sel.best();
    let cut = match w.budget_tokens {
        Some(b) => format!(
            "At {} {} per query ({:.1} chunks on average)",
            thousands(b as f64),
            w.unit(),
            w.chunks_retrieved_mean
        ),
        None => format!(
            "At k = {} (about {} {} per query)",
            w.top_k,
            thousands(w.tokens_per_query),
            w.unit()
        ),
    };
    let equivalence = sel.settings.rule == Rule::Equivalence;
    if sel.winner == sel.best {
        return Prose::text(format!("{cut}, "))
            .c(&w.config_id)
            .t(format!(
                " has the best span recall@k ({:.3}) and {}: ",
                w.span_recall,
                if equivalence {
                    "no cheaper configuration is shown to be as good"
                } else {
                    "nothing cheaper is as good"
                }
            ))
            .ticked(&cheaper_evidence(sel))
            .t(".");
    }
    let unit = w.unit();
    // "52% fewer tokens per query" or "11% more index tokens".
    let change = |pick: f64, best: f64, what: &str| {
        let pct = if best > 0.0 {
            (1.0 - pick / best) * 100.0
        } else {
            0.0
        };
        if pct >= 0.0 {
            format!("{pct:.0}% fewer {what}")
        } else {
            format!("{:.0}% more {what}", -pct)
        }
    };
    let vs = match (w.best_better, w.this_better, w.sign_p_holm) {
        (Some(lower), Some(higher), Some(p)) => format!(
            "higher on {higher} questions, lower on {lower}, sign test Holm p {}",
            fmt_p(p)
        ),
        _ => "no paired test".into(),
    };
    let (claim, vs) = match (equivalence, w.diff_mean, w.diff_lower) {
        (true, Some(m), Some(lo)) => (
            format!(
                " is non-inferior to the best within δ = {} (",
                trim_num(sel.settings.delta)
            ),
            format!(
                "mean difference {m:.3}, one-sided {}% lower bound {lo:.3} ≥ −{}",
                trim_num((1.0 - sel.settings.alpha) * 100.0),
                trim_num(sel.settings.delta)
            ),
        ),
        _ => (
            " is not significantly worse than the best (".to_string(),
            vs,
        ),
    };
    let open = if equivalence {
        let open = undetermined_cheaper(sel);
        if open.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = open.iter().take(5).map(|c| needed_words(c)).collect();
            format!(
                "; cheaper but undetermined against the best: {}{}",
                names.join(", "),
                if open.len() > 5 {
                    format!(" and {} more", open.len() - 5)
                } else {
                    String::new()
                }
            )
        }
    } else {
        String::new()
    };
    Prose::text(format!("{cut}, "))
        .c(&w.config_id)
        .t(claim)
        .c(&b.config_id)
        .t(format!(
            ": span recall@k {:.3} vs {:.3}; {vs}) and costs {} and {}{open}.",
            w.span_recall,
            b.span_recall,
            change(
                w.tokens_per_query,
                b.tokens_per_query,
                &format!("{unit} per query")
            ),
            change(
                w.index_tokens as f64,
                b.index_tokens as f64,
                &format!("index {unit}")
            )
        ))
}

/// A whole number with thousands separators: 8971.4 → "8,971".
pub fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if x < -0.5 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(8971.4), "8,971");
        assert_eq!(thousands(999.6), "1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(thousands(1234567.0), "1,234,567");
    }
}
