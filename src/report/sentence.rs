//! The decision in sentences a reviewer can check against selection.csv: the pick against the
//! best at its cut, and the pick at every cut of the ranked list.

use super::doc::{Align, Block, Prose, Table};
use crate::select::cheaper::{cheaper_evidence, needed_words, undetermined_cheaper};
use crate::select::questions_words;
use crate::select::tradeoff::Tradeoff;
use crate::select::{Rule, Selection, fmt_p, thousands, trim as trim_num};
use crate::stats::Class;

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
        "pick vs best within δ",
        "on the plateau",
        "cheaper, undetermined (questions that would show it within δ if as good as the best; P(worse by more than δ))",
        "diagnoses",
    ];
    use Align::{Default as L, Right as R};
    let rows = std::iter::once(sel)
        .chain(others)
        .map(|s| {
            let w = s.winner();
            let cut = match w.budget_tokens {
                Some(b) => format!("budget {} {}", thousands(b as f64), w.unit()),
                None => format!("k = {}", w.top_k),
            };
            let open = undetermined_cheaper(s);
            let open = if open.is_empty() {
                Prose::text("none")
            } else {
                open.iter().enumerate().fold(Prose::new(), |p, (i, c)| {
                    let p = if i > 0 { p.t(", ") } else { p };
                    p.c(&c.config_id).t(format!(
                        " ({}; P(worse) {:.2})",
                        questions_words(c.questions_needed),
                        c.p_worse.unwrap_or(f64::NAN)
                    ))
                })
            };
            let diagnoses: Vec<&str> = s.diagnoses.iter().map(|d| d.kind.title()).collect();
            vec![
                Prose::text(cut),
                Prose::new().c(&w.config_id),
                Prose::text(thousands(w.tokens_per_query)),
                Prose::text(format!("{:.1}", w.chunks_retrieved_mean)),
                Prose::text(format!("{:.3}", w.span_recall)),
                Prose::new()
                    .c(&s.best().config_id)
                    .t(format!(" ({:.3})", s.best().span_recall)),
                Prose::text(match w.diff_mean {
                    Some(m) => format!("{} ({m:.3})", w.vs_best_class),
                    None => "the best".into(),
                }),
                Prose::text(format!(
                    "{} of {}",
                    s.configs.iter().filter(|c| c.kept).count(),
                    s.configs.len()
                )),
                open,
                Prose::text(if diagnoses.is_empty() {
                    "none".to_string()
                } else {
                    diagnoses.join("; ").to_lowercase()
                }),
            ]
        })
        .collect();
    vec![
        Block::Para(lead),
        Block::Table(Table {
            head: head.map(String::from).to_vec(),
            align: vec![L, L, R, R, R, L, L, R, L, L],
            rows,
        }),
        Block::List(others.iter().map(decision_sentence).collect()),
    ]
}

/// The budget trade-off as a paragraph, a table (each budget's best, its span recall@k and cost,
/// the paired difference to the next budget's best with its tests) and the recommendation.
pub fn tradeoff_blocks(t: &Tradeoff, sel: &Selection) -> Vec<Block> {
    let unit = sel.winner().unit();
    let s = &sel.settings;
    let lead = Prose::new().b(Prose::text("Budget trade-off")).t(format!(
        " (each budget's best configuration; the paired difference in span recall@k to the next \
         budget's best on the same questions, with the exact sign test and the class within \
         δ = {}):",
        trim_num(s.delta)
    ));
    use Align::{Default as L, Right as R};
    let rows = t
        .steps
        .iter()
        .map(|st| {
            let vs = |c: &Option<crate::select::tradeoff::BudgetComparison>| match c {
                Some(c) => Prose::text(format!(
                    "{:.3} vs {} {}: lower on {}, higher on {}, sign test p {}; {}",
                    c.ni.mean_difference,
                    thousands(c.budget_tokens as f64),
                    unit,
                    c.sign.b,
                    c.sign.c,
                    fmt_p(c.sign.p_value),
                    c.ni.class.name()
                )),
                None => Prose::text("—"),
            };
            vec![
                Prose::text(format!("{} {unit}", thousands(st.budget_tokens as f64))),
                Prose::new().c(&st.best),
                Prose::text(format!("{:.3}", st.span_recall)),
                Prose::text(thousands(st.tokens_per_query)),
                vs(&st.vs_next),
                Prose::text(match &st.vs_largest {
                    Some(c) => c.ni.class.name().to_string(),
                    None => "the largest".to_string(),
                }),
            ]
        })
        .collect();
    let largest = t.steps.last().map_or(0, |s| s.budget_tokens);
    let recommendation = Prose::new().b(Prose::text("Recommendation:")).t(format!(
        " {} {unit} per query, the smallest budget whose best configuration is non-inferior \
         within δ = {} to the best at the largest budget ({} {unit}){}.",
        thousands(t.recommended as f64),
        trim_num(s.delta),
        thousands(largest as f64),
        if t.recommended == largest {
            ": no smaller budget is shown to be as good"
        } else {
            ""
        }
    ));
    vec![
        Block::Para(lead),
        Block::Table(Table {
            head: [
                "budget",
                "best",
                "span recall@k",
                "tokens/query",
                "difference to the next budget's best",
                "vs the largest budget's best",
            ]
            .map(String::from)
            .to_vec(),
            align: vec![R, L, R, R, L, L],
            rows,
        }),
        Block::Para(recommendation),
    ]
}

/// What the deciding budget gives up against the best at the largest budget, e.g. "At 1,000
/// tokens per query the pick gives up 0.087 span recall@k against the best at 4,000 tokens
/// (`…`, 0.989): …". `None` when the selection is not at a budget or it is the largest one.
pub fn gives_up(t: &Tradeoff, sel: &Selection) -> Option<Prose> {
    let w = sel.winner();
    let budget = w.budget_tokens?;
    let largest = t.steps.last()?;
    if largest.budget_tokens == budget {
        return None;
    }
    let unit = w.unit();
    let step = t.step(budget)?;
    let here = step.vs_largest.as_ref()?;
    Some(
        Prose::new()
            .b(Prose::text("What this budget gives up:"))
            .t(format!(
                " at {} {unit} per query the pick finds span recall@k {:.3}; at {} {unit} the \
                 best, ",
                thousands(budget as f64),
                w.span_recall,
                thousands(largest.budget_tokens as f64),
            ))
            .c(&largest.best)
            .t(format!(
                ", finds {:.3} ({} {unit} per query): {:.3} more. The test is of this budget's \
                 best, ",
                largest.span_recall,
                thousands(largest.tokens_per_query),
                largest.span_recall - w.span_recall,
            ))
            .c(&step.best)
            .t(if step.best == w.config_id {
                " (the pick)"
            } else {
                " (not the pick)"
            })
            .t(", against ")
            .c(&largest.best)
            .t(format!(
                ": {} δ = {} (mean difference {:.3}, one-sided {}% bounds {:.3} to {:.3}); the \
                 recommended budget is {} {unit}.",
                match here.ni.class {
                    Class::Worse => "worse by more than",
                    Class::NonInferior => "non-inferior within",
                    Class::Undetermined => "undetermined within",
                },
                trim_num(sel.settings.delta),
                here.ni.mean_difference,
                trim_num((1.0 - sel.settings.alpha) * 100.0),
                here.ni.lower,
                here.ni.upper,
                thousands(t.recommended as f64),
            )),
    )
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
                    "no cheaper configuration stays on the plateau"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Inline;
    use crate::select::tests::{Fake, tables};
    use crate::select::{SelectionSettings, select};

    /// The plain text of `p` (code as its text).
    fn plain(p: &Prose) -> String {
        p.0.iter()
            .map(|i| match i {
                Inline::Text(s) | Inline::Code(s) => s.clone(),
                _ => String::new(),
            })
            .collect()
    }

    #[test]
    fn a_best_pick_never_says_a_cheaper_configuration_is_as_good() {
        // fixed-64 finds nothing, fixed-256 everything: the best is the pick under every rule.
        let (rows, qs) = tables(&[
            Fake::new("fixed-64", 64, 300.0, vec![0.0; 40], vec![0.1; 40]),
            Fake::new("fixed-256", 256, 1200.0, vec![1.0; 40], vec![0.1; 40]),
        ]);
        for (rule, says) in [
            (
                Rule::Equivalence,
                "no cheaper configuration is shown to be as good",
            ),
            (
                Rule::Paired,
                "no cheaper configuration stays on the plateau",
            ),
            (Rule::Seed, "no cheaper configuration stays on the plateau"),
        ] {
            let settings = SelectionSettings {
                rule,
                ..SelectionSettings::default()
            };
            let sel = select(&rows, &qs, &settings).unwrap();
            assert_eq!(sel.winner().config_id, "fixed-256");
            let text = plain(&decision_sentence(&sel));
            assert!(text.contains(says), "{rule:?}: {text}");
            assert!(!text.contains("is as good"), "{rule:?}: {text}");
        }
    }
}
