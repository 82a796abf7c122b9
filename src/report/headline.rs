//! The decision in one sentence, the report's headline: the cut, the pick, and the trade-off
//! together ("At a budget of 1,000 tokens per query use `X` (…); the data say more context
//! helps: …"), with a recommendation at the edge of the budget grid and a pick whose chunks are
//! often skipped for size said in words with their numbers.

use super::doc::Prose;
use crate::select::tradeoff::Tradeoff;
use crate::select::{ConfigSelection, Selection, thousands, trim};
use crate::stats::Class;

/// The headline of the deciding cut `sel`, with the budget trade-off `t` when the sweep has two
/// budgets or more. Every figure it cites is in selection.csv (the pick's row) or in the budget
/// trade-off table.
pub fn headline(sel: &Selection, t: Option<&Tradeoff>) -> Prose {
    let w = sel.winner();
    let unit = w.unit();
    let cut = match w.budget_tokens {
        Some(b) => format!(
            "At a budget of {} {unit} per query use ",
            thousands(b as f64)
        ),
        None => format!("At k = {} use ", w.top_k),
    };
    let mut p = Prose::text(cut).c(&w.config_id).t(format!(
        " ({} chunking at chunk size {} {} with overlap {}; about {} {unit} and {:.1} chunks per \
         query)",
        w.strategy,
        thousands(w.chunk_size as f64),
        w.size_unit,
        thousands(w.chunk_overlap as f64),
        thousands(w.tokens_per_query),
        w.chunks_retrieved_mean
    ));
    if let Some(words) = t.and_then(|t| more_context(t, sel)) {
        p = p.t("; ").p(words);
    }
    if let Some(words) = skipped_for_size(w) {
        p = p.t(format!("; {words}"));
    }
    p.t(".")
}

/// What more context buys, from the budget trade-off: this budget's best against the largest
/// budget's best (the test names both), then the recommended budget, said to be the largest
/// swept when it is, with recall still rising towards it. `None` at top k, or when the deciding
/// budget is the largest.
fn more_context(t: &Tradeoff, sel: &Selection) -> Option<Prose> {
    let w = sel.winner();
    let budget = w.budget_tokens?;
    let largest = t.steps.last()?;
    let unit = w.unit();
    let here = t.step(budget)?;
    let mut p = Prose::new();
    if largest.budget_tokens != budget {
        let vs = here.vs_largest.as_ref()?;
        let (says, class) = match vs.ni.class {
            Class::Worse => ("the data say more context helps", "worse by more than"),
            Class::Undetermined => ("more context may help", "undetermined within"),
            Class::NonInferior => (
                "the data do not show that more context helps",
                "non-inferior within",
            ),
        };
        p = p
            .t(format!(
                "{says}: at {} {unit} the best, ",
                thousands(largest.budget_tokens as f64)
            ))
            .c(&largest.best)
            .t(format!(
                ", finds span recall@k {:.3} against {:.3} for this budget's best ",
                largest.span_recall, here.span_recall
            ))
            .c(&here.best)
            .t(format!(
                " ({class} δ = {}: mean difference {:.3}, one-sided {}% bounds {:.3} to {:.3})",
                trim(sel.settings.delta),
                vs.ni.mean_difference,
                trim((1.0 - sel.settings.alpha) * 100.0),
                vs.ni.lower,
                vs.ni.upper
            ));
    }
    let edge = t.recommended == largest.budget_tokens && t.steps.len() >= 2;
    if t.recommended != budget || edge {
        if largest.budget_tokens != budget {
            p = p.t("; ");
        }
        p = p.t(format!(
            "the recommended budget is {} {unit}",
            thousands(t.recommended as f64)
        ));
        if edge {
            p = p.t(edge_words(t, unit));
        }
    }
    Some(p)
}

/// ", the largest swept, with span recall@k still rising towards it (0.954 at 2,000 → 0.989):
/// sweep larger budgets", or ", the largest swept: …" when the last step is flat.
fn edge_words(t: &Tradeoff, unit: &str) -> String {
    let n = t.steps.len();
    let (before, last) = (&t.steps[n - 2], &t.steps[n - 1]);
    let rising = before
        .vs_next
        .as_ref()
        .is_some_and(|c| c.ni.class != Class::NonInferior && c.ni.mean_difference < 0.0);
    if rising {
        format!(
            ", the largest swept, with span recall@k still rising towards it ({:.3} at {} → \
             {:.3} at {} {unit}): sweep larger budgets before settling on it",
            before.span_recall,
            thousands(before.budget_tokens as f64),
            last.span_recall,
            thousands(last.budget_tokens as f64),
        )
    } else {
        ", the largest swept".into()
    }
}

/// "21 of its 492 chunks are larger than the budget and never sent; one was skipped for size on
/// 15 of 35 questions" for a pick whose chunks are skipped for size on some question.
fn skipped_for_size(w: &ConfigSelection) -> Option<String> {
    (w.budget_tokens.is_some() && w.questions_skipped_for_size > 0).then(|| {
        format!(
            "{} of its {} chunks are larger than the budget and never sent, and one was skipped \
             for size on {} of {} questions (the next chunks that fit were sent instead)",
            thousands(w.chunks_over_budget as f64),
            thousands(w.n_chunks as f64),
            thousands(w.questions_skipped_for_size as f64),
            thousands(w.n_questions as f64)
        )
    })
}
