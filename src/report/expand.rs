//! The "Expansion" section of report.md and report.html, rendered from the expansion comparison
//! ([`crate::select::expand`]).

use super::doc::{Align, Block, DocSection, Prose, Table};
use super::paired_text::{Columns, before_after, change, counts_p, explained, p_text};
use crate::select::expand::{BestAgainstSingle, ExpandComparison, Expansions};
use crate::select::{SelectionSettings, thousands};

/// "at a budget of 2,000 tokens" or "at k = 5".
fn cut_text(budget: Option<usize>, top_k: usize) -> String {
    match budget {
        Some(b) => format!("at a budget of {} tokens", thousands(b as f64)),
        None => format!("at k = {top_k}"),
    }
}

/// The "Expansion" section: what the columns mean, one row per expanded configuration and cut,
/// and per cut one sentence on the best expansion against the best single size.
pub fn section(expansions: &Expansions, settings: &SelectionSettings) -> DocSection {
    let conf = format!("{:.0}", settings.confidence * 100.0);
    let intro = explained(
        "Each expanded configuration (neighbours:N sends each retrieved chunk with N chunks \
         before and after it; parent:P sends its section, cut to at most P tokens) against the \
         same configuration sending its chunks alone, at the same cut and on the same questions \
         (expand_comparison.csv has every column). Span recall, coverage and IoU read the text \
         sent; a budget takes hits in rank order while the units they add fit, never over it; \
         MRR stays on the ranking. ",
        &conf,
        &Columns {
            delta: "expanded − alone",
            counts: "−/+",
            counted: "count the questions whose span recall is higher alone / higher expanded; ",
            test: "is the exact sign test on them",
        },
    );
    let mut blocks = vec![
        Block::Para(intro),
        Block::Table(table(&expansions.rows, &conf)),
    ];
    if let Some(p) = changed_nothing(&expansions.rows) {
        blocks.push(Block::Para(p));
    }
    for b in &expansions.best {
        blocks.push(Block::Para(best_sentence(b, settings.alpha)));
    }
    DocSection::new("Expansion", blocks)
}

/// The expanded configurations that sent exactly what their chunks alone send, on every
/// question (`same_as_none`), in one sentence; `None` when there is none.
fn changed_nothing(rows: &[ExpandComparison]) -> Option<Prose> {
    let same: Vec<&ExpandComparison> = rows.iter().filter(|c| c.same_as_none == 1).collect();
    let (last, rest) = same.split_last()?;
    let mut p = Prose::new();
    for (i, c) in rest.iter().enumerate() {
        p = p
            .c(&c.config_id)
            .t(if i + 1 < rest.len() { ", " } else { " and " });
    }
    let one = rest.is_empty();
    Some(p.c(&last.config_id).t(format!(
        " sent exactly what the same configuration sends with its chunks alone, on every \
         question (the same ranges, the same tokens; marked \"changed nothing\" above): {} \
         changed nothing here (each hit's window or parent is the chunk itself), so {} left out \
         of the best expansion.",
        if one {
            "its expansion"
        } else {
            "their expansions"
        },
        if one { "it is" } else { "they are" },
    )))
}

/// One sentence: the best expansion of a cut against the best single size, worded by its test.
pub fn best_sentence(b: &BestAgainstSingle, alpha: f64) -> Prose {
    let at = cut_text(b.budget_tokens, b.top_k);
    let numbers = format!(
        "span recall {:.3} against {:.3} at {} and {} tokens per query; higher on {} \
         question{}, lower on {}; sign test, Holm p {}",
        b.span_recall,
        b.single_span_recall,
        thousands(b.tokens_per_query),
        thousands(b.single_tokens_per_query),
        b.better,
        if b.better == 1 { "" } else { "s" },
        b.worse,
        p_text(b.p_holm)
    );
    let lead = Prose::new().c(&b.config_id);
    if b.significant {
        lead.t(" beats the best single size ")
            .c(&b.single_id)
            .t(format!(" {at} ({numbers} < {alpha})."))
    } else if b.span_recall > b.single_span_recall {
        lead.t(" has a higher span recall than the best single size ")
            .c(&b.single_id)
            .t(format!(
                " {at}, but the test cannot tell them apart ({numbers})."
            ))
    } else {
        Prose::text("No expansion has a higher span recall than the best single size ")
            .c(&b.single_id)
            .t(format!(" {at}; the best expansion is "))
            .c(&b.config_id)
            .t(format!(" ({numbers})."))
    }
}

/// One row per expanded configuration and cut.
fn table(rows: &[ExpandComparison], conf: &str) -> Table {
    use Align::{Default as L, Right as R};
    let head = vec![
        "cut".to_string(),
        "strategy".into(),
        "size".into(),
        "expand".into(),
        "span recall alone → expanded".into(),
        format!("Δ span recall [{conf}% CI]"),
        "−/+, p".into(),
        "coverage".into(),
        "IoU".into(),
        "tokens/query".into(),
    ];
    let rows = rows
        .iter()
        .map(|c| {
            [
                match c.budget_tokens {
                    Some(b) => format!("budget {}", thousands(b as f64)),
                    None => format!("k = {}", c.top_k),
                },
                c.strategy.clone(),
                c.chunk_size.to_string(),
                match c.same_as_none {
                    1 => format!("{} (changed nothing)", c.expand),
                    _ => c.expand.clone(),
                },
                before_after(c.span_recall_none, c.span_recall),
                change(
                    c.delta_span_recall,
                    c.delta_span_recall_lo,
                    c.delta_span_recall_hi,
                ),
                counts_p(c.sign_b, c.sign_c, c.sign_p),
                before_after(c.coverage_none, c.coverage),
                before_after(c.char_iou_none, c.char_iou),
                format!(
                    "{} → {}",
                    thousands(c.tokens_per_query_none.round()),
                    thousands(c.tokens_per_query.round())
                ),
            ]
            .into_iter()
            .map(Prose::text)
            .collect()
        })
        .collect();
    Table {
        head,
        align: vec![L, L, R, L, L, L, L, L, L, L],
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(span_recall: f64, p_holm: f64, significant: bool) -> BestAgainstSingle {
        BestAgainstSingle {
            budget_tokens: Some(2000),
            top_k: 0,
            config_id: "recursive-128-o19-none-bm25+parent1024-b2000".into(),
            span_recall,
            tokens_per_query: 1850.0,
            single_id: "recursive-512-o76-none-bm25-b2000".into(),
            single_span_recall: 0.8,
            single_tokens_per_query: 1900.0,
            better: 9,
            worse: 1,
            p_value: p_holm,
            p_holm,
            significant,
        }
    }

    fn text(b: &BestAgainstSingle) -> String {
        super::super::doc::to_markdown(&[DocSection::new(
            "t",
            vec![Block::Para(best_sentence(b, 0.05))],
        )])
    }

    #[test]
    fn the_sentence_claims_no_more_than_its_test() {
        let beats = text(&best(0.9, 0.021, true));
        assert!(
            beats.contains(
                "`recursive-128-o19-none-bm25+parent1024-b2000` beats the best single size \
                 `recursive-512-o76-none-bm25-b2000` at a budget of 2,000 tokens (span recall \
                 0.900 against 0.800 at 1,850 and 1,900 tokens per query; higher on 9 questions, \
                 lower on 1; sign test, Holm p 0.021 < 0.05)."
            ),
            "{beats}"
        );
        let higher = text(&best(0.9, 0.2, false));
        assert!(
            higher.contains("but the test cannot tell them apart"),
            "{higher}"
        );
        assert!(!higher.contains("beats"), "{higher}");
        let lower = text(&best(0.7, 1.0, false));
        assert!(
            lower.contains("No expansion has a higher span recall than the best single size"),
            "{lower}"
        );
    }

    fn row(config_id: &str, same_as_none: u8) -> ExpandComparison {
        ExpandComparison {
            strategy: "markdown".into(),
            chunk_size: 512,
            chunk_overlap: 76,
            prefix: "none".into(),
            retriever: "bm25".into(),
            rerank: "none".into(),
            expand: "parent:1024".into(),
            cut: "budget".into(),
            top_k: 0,
            budget_tokens: Some(1000),
            config_id: config_id.into(),
            baseline_id: "markdown-512-o76-none-bm25-b1000".into(),
            n_questions: 40,
            span_recall_none: 0.9,
            span_recall: 0.9,
            delta_span_recall: 0.0,
            delta_span_recall_lo: 0.0,
            delta_span_recall_hi: 0.0,
            sign_b: 0,
            sign_c: 0,
            sign_p: 1.0,
            coverage_none: 0.9,
            coverage: 0.9,
            char_iou_none: 0.1,
            char_iou: 0.1,
            mrr_none: 0.5,
            mrr: 0.5,
            tokens_per_query_none: 900.0,
            tokens_per_query: 900.0,
            same_as_none,
        }
    }

    #[test]
    fn an_expansion_that_changed_nothing_is_said_to() {
        let id = "markdown-512-o76-none-bm25+parent1024-b1000";
        let expansions = Expansions {
            rows: vec![
                row(id, 1),
                row("markdown-128-o19-none-bm25+parent1024-b1000", 0),
            ],
            best: Vec::new(),
        };
        let md =
            super::super::doc::to_markdown(&[section(&expansions, &SelectionSettings::default())]);
        assert!(
            md.contains(&format!(
                "`{id}` sent exactly what the same configuration sends with its chunks alone, \
                 on every question (the same ranges, the same tokens; marked \"changed nothing\" \
                 above): its expansion changed nothing here (each hit's window or parent is the \
                 chunk itself), so it is left out of the best expansion."
            )),
            "{md}"
        );
        assert_eq!(
            md.matches("| parent:1024 (changed nothing) |").count(),
            1,
            "{md}"
        );
        assert_eq!(md.matches("| parent:1024 |").count(), 1, "{md}");
        assert!(changed_nothing(&expansions.rows[1..]).is_none());
    }
}
