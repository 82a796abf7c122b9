//! Identical configurations, merged before any statistics: two configurations of one cut that
//! retrieve the same chunk ranges with the same scores for every question, from indexes of the
//! same number of chunks and index tokens, are one configuration under two names (for example
//! `markdown` on plain-text files, where it finds no heading and splits as `recursive` does).
//! Compared as two, they would enlarge the Holm family and split the halves between them by a
//! tie-break; merged, they are one row of the selection that lists its aliases.

use std::collections::HashMap;

use super::align::Aligned;
use crate::sweep::{QuestionRow, SweepRow};

/// Configurations of one cut grouped by what they retrieve: each group's row indices in sweep
/// order, the first (the earliest in sweep.csv) naming the group. Configurations whose
/// per-question rows record no retrieved ranges (hand-made tables) are never merged.
pub(crate) fn groups(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    aligned: &Aligned,
) -> Vec<Vec<usize>> {
    let position: HashMap<&str, usize> = aligned
        .ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    // Per configuration: its retrieved ranges and scores, question by question in the shared order.
    let mut retrieved: HashMap<&str, Vec<String>> = HashMap::new();
    for q in questions {
        let slots = retrieved
            .entry(q.config_id.as_str())
            .or_insert_with(|| vec![String::new(); aligned.ids.len()]);
        if let Some(&i) = position.get(q.question_id.as_str()) {
            slots[i] = format!("{}#{}", q.retrieved_ranges, q.retrieved_scores);
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut keys: Vec<Option<(&SweepRow, &Vec<String>)>> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let key = retrieved
            .get(row.config_id.as_str())
            .filter(|r| r.iter().any(|s| s.len() > 1))
            .map(|r| (row, r));
        let twin = key.and_then(|(row, r)| {
            keys.iter()
                .position(|k| k.is_some_and(|(other, o)| same_index(row, other) && o == r))
        });
        match twin {
            Some(g) => groups[g].push(i),
            None => {
                groups.push(vec![i]);
                keys.push(key);
            }
        }
    }
    groups
}

/// Same retriever, prefix, token unit and cut, and indexes of the same size.
fn same_index(a: &SweepRow, b: &SweepRow) -> bool {
    a.retriever == b.retriever
        && a.prefix == b.prefix
        && a.tokenizer == b.tokenizer
        && a.budget_tokens == b.budget_tokens
        && a.top_k == b.top_k
        && a.n_chunks == b.n_chunks
        && a.index_tokens == b.index_tokens
}
