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
    // Runs from before chunks_retrieved_mean was recorded read it as 0.
    let chunks = if w.chunks_retrieved_mean > 0.0 {
        format!(" and {:.1} chunks", w.chunks_retrieved_mean)
    } else {
        String::new()
    };
    let mut p = Prose::text(cut).c(&w.config_id).t(format!(
        " ({} chunking at chunk size {} {} with overlap {}; about {} {unit}{chunks} per query)",
        w.strategy,
        thousands(w.chunk_size as f64),
        w.size_unit,
        thousands(w.chunk_overlap as f64),
        thousands(w.tokens_per_query),
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
/// 15 of 35 questions" for a pick whose chunks are skipped for size on some question; under an
/// expansion the units a hit sends alone ("40 of its 131 neighbours:1 windows").
fn skipped_for_size(w: &ConfigSelection) -> Option<String> {
    (w.budget_tokens.is_some() && w.questions_skipped_for_size > 0).then(|| {
        let next = match w.is_expanded() {
            true => "hits whose units",
            false => "chunks",
        };
        format!(
            "{} of its {} {} are larger than the budget and never sent, and one was skipped \
             for size on {} of {} questions (the next {next} that fit were sent instead)",
            thousands(w.units_over_budget as f64),
            thousands(w.n_units as f64),
            w.units_noun(),
            thousands(w.questions_skipped_for_size as f64),
            thousands(w.n_questions as f64)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Inline;
    use crate::select::tests::{Fake, tables};
    use crate::select::{SelectionSettings, select_cuts};

    /// The plain text of `p` (code as `code`).
    fn plain(p: &Prose) -> String {
        p.0.iter()
            .map(|i| match i {
                Inline::Text(s) => s.clone(),
                Inline::Code(s) => format!("`{s}`"),
                _ => String::new(),
            })
            .collect()
    }

    /// `n` values, the first `ones` 1 and the rest 0.
    fn ones(n: usize, ones: usize) -> Vec<f64> {
        (0..n).map(|i| if i < ones { 1.0 } else { 0.0 }).collect()
    }

    #[test]
    fn one_sentence_carries_the_cut_the_trade_off_the_grid_edge_and_the_skipped_chunks() {
        // 40 questions. At 1,000 tokens fixed-256 finds 20 (0.500), fixed-1024 2 (0.050, most
        // of its chunks over the budget); at 2,000 tokens fixed-256 finds 28; at 4,000 tokens
        // 36 (0.900). 1,000 vs 4,000: 16 questions lower, Δ = −0.4, s = 0.496139,
        // s/√40 = 0.078446, t(0.95, 39) = 1.684875: bounds −0.532 to −0.268, worse by more
        // than δ. 2,000 vs 4,000: Δ = −0.2, upper −0.2 + 1.684875 · 0.064051 = −0.092 < −0.05:
        // worse, and still rising: the recommendation is 4,000, the largest swept.
        let n = 40;
        let (mut rows, mut qs) = tables(&[
            Fake::new("fixed-256-b1000", 256, 900.0, ones(n, 20), vec![0.1; n]),
            Fake::new("fixed-1024-b1000", 1024, 500.0, ones(n, 2), vec![0.1; n]),
            Fake::new("fixed-256-b2000", 256, 1900.0, ones(n, 28), vec![0.1; n]),
            Fake::new("fixed-256-b4000", 256, 3800.0, ones(n, 36), vec![0.1; n]),
        ]);
        let budget = |id: &str| id.rsplit("-b").next().unwrap().parse::<usize>().unwrap();
        for r in &mut rows {
            r.budget_tokens = Some(budget(&r.config_id));
            r.cut = "budget".into();
            r.top_k = 0;
        }
        for q in &mut qs {
            q.budget_tokens = Some(budget(&q.config_id));
            q.cut = "budget".into();
        }
        rows[0].n_chunks = 400;
        rows[0].chunks_over_budget = 12;
        rows[0].questions_skipped_for_size = 7;
        let cuts = select_cuts(&rows, &qs, &SelectionSettings::default()).unwrap();
        let sel = &cuts.selections[0];
        assert_eq!(sel.winner().config_id, "fixed-256-b1000");
        let text = plain(&headline(sel, cuts.tradeoff.as_ref()));
        assert_eq!(
            text,
            "At a budget of 1,000 tokens per query use `fixed-256-b1000` (fixed chunking at chunk \
             size 256 tokens with overlap 0; about 900 tokens and 5.0 chunks per query); the data \
             say more context helps: at 4,000 tokens the best, `fixed-256-b4000`, finds span \
             recall@k 0.900 against 0.500 for this budget's best `fixed-256-b1000` (worse by \
             more than δ = 0.05: mean difference -0.400, one-sided 95% bounds -0.532 to -0.268); \
             the recommended budget is 4,000 tokens, the largest swept, with span recall@k \
             still rising towards it (0.700 at 2,000 → 0.900 at 4,000 tokens): sweep larger \
             budgets before settling on it; 12 of its 400 chunks are larger than the budget and \
             never sent, and one was skipped for size on 7 of 40 questions (the next chunks that \
             fit were sent instead)."
        );
        // At top k there is no trade-off and nothing is skipped for size.
        let (rows, qs) = tables(&[Fake::new(
            "fixed-256",
            256,
            1280.0,
            ones(n, 30),
            vec![0.1; n],
        )]);
        let cuts = select_cuts(&rows, &qs, &SelectionSettings::default()).unwrap();
        assert_eq!(
            plain(&headline(&cuts.selections[0], cuts.tradeoff.as_ref())),
            "At k = 5 use `fixed-256` (fixed chunking at chunk size 256 tokens with overlap 0; \
             about 1,280 tokens and 5.0 chunks per query)."
        );
    }
}
