//! Per-question rows of sweep_questions.csv, grouped by configuration and aligned on one
//! question order, so that every paired test compares the same questions.

use std::collections::HashMap;

use super::types::SelectError;
use crate::sweep::{QuestionRow, SweepRow};

/// Per-question columns of one configuration, in the shared question order.
pub(crate) struct Columns {
    pub(crate) hit: Vec<bool>,
    pub(crate) span_recall: Vec<f64>,
    pub(crate) coverage: Vec<f64>,
    pub(crate) margin: Vec<f64>,
    pub(crate) spans_found: u64,
    pub(crate) spans: u64,
}

/// Question ids and types in the shared order, and each configuration's columns in that order.
pub(crate) struct Aligned {
    pub(crate) ids: Vec<String>,
    pub(crate) types: Vec<String>,
    /// Token length of every evidence span of every question (empty for runs that did not
    /// record them).
    pub(crate) span_tokens: Vec<usize>,
    pub(crate) columns: Vec<Columns>,
}

impl Aligned {
    /// Only the configurations at `keep` (indices into `columns`, in that order).
    pub(crate) fn keep(self, keep: &[usize]) -> Aligned {
        let mut columns: Vec<Option<Columns>> = self.columns.into_iter().map(Some).collect();
        Aligned {
            ids: self.ids,
            types: self.types,
            span_tokens: self.span_tokens,
            columns: keep
                .iter()
                .map(|&i| columns[i].take().expect("each configuration kept once"))
                .collect(),
        }
    }
}

/// Groups the per-question rows by configuration and aligns them on the first configuration's
/// question order.
pub(crate) fn align(rows: &[SweepRow], questions: &[QuestionRow]) -> Result<Aligned, SelectError> {
    let mut by_config: HashMap<&str, Vec<&QuestionRow>> = HashMap::new();
    for q in questions {
        by_config.entry(q.config_id.as_str()).or_default().push(q);
    }
    let first = &rows[0].config_id;
    let reference = by_config
        .get(first.as_str())
        .ok_or_else(|| SelectError::MissingQuestions(first.clone()))?;
    let ids: Vec<String> = reference.iter().map(|q| q.question_id.clone()).collect();
    let types: Vec<String> = reference.iter().map(|q| q.question_type.clone()).collect();
    let span_tokens: Vec<usize> = reference
        .iter()
        .flat_map(|q| q.span_tokens.split('|'))
        .filter_map(|t| t.parse().ok())
        .collect();
    let position: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    if position.len() != ids.len() {
        return Err(SelectError::DifferentQuestions {
            config_id: first.clone(),
            first: first.clone(),
            detail: "a question id appears twice".into(),
        });
    }
    let mut columns = Vec::with_capacity(rows.len());
    for row in rows {
        let qs = by_config
            .get(row.config_id.as_str())
            .ok_or_else(|| SelectError::MissingQuestions(row.config_id.clone()))?;
        let differ = |detail: String| SelectError::DifferentQuestions {
            config_id: row.config_id.clone(),
            first: first.clone(),
            detail,
        };
        if qs.len() != ids.len() {
            return Err(differ(format!("{} questions, not {}", qs.len(), ids.len())));
        }
        let mut slots: Vec<Option<&QuestionRow>> = vec![None; ids.len()];
        for q in qs {
            let i = *position
                .get(q.question_id.as_str())
                .ok_or_else(|| differ(format!("question {} is not in both", q.question_id)))?;
            if slots[i].replace(q).is_some() {
                return Err(differ(format!("question {} appears twice", q.question_id)));
            }
        }
        let qs: Vec<&QuestionRow> = slots.into_iter().map(|s| s.expect("filled")).collect();
        columns.push(Columns {
            hit: qs.iter().map(|q| q.hit != 0).collect(),
            span_recall: qs.iter().map(|q| q.span_recall).collect(),
            coverage: qs.iter().map(|q| q.coverage).collect(),
            margin: qs.iter().map(|q| q.margin).collect(),
            // Spans found per question: span_recall × n_spans, an integer up to rounding.
            spans_found: qs
                .iter()
                .map(|q| (q.span_recall * q.n_spans as f64).round() as u64)
                .sum(),
            spans: qs.iter().map(|q| q.n_spans as u64).sum(),
        });
    }
    Ok(Aligned {
        ids,
        types,
        span_tokens,
        columns,
    })
}
