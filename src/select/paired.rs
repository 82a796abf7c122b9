//! Two configurations of one sweep compared on the same questions: which rows are twins
//! ([`twins_but`]), their per-question rows paired ([`ByConfig::rows`]), and the change of span
//! recall with a paired bootstrap interval and hit with an exact McNemar test
//! ([`ByConfig::pair`]). Shared by the rerank comparison ([`crate::select::rerank`]), the
//! comparison of an external retriever with exact cosine ([`crate::select::engines`]), the
//! expansion comparison ([`crate::select::expand`]) and the prefix comparison
//! ([`crate::select::prefix`]).

use std::collections::HashMap;

use crate::select::types::SelectionSettings;
use crate::stats;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// The factor in which two rows paired as twins may differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    /// The retriever (an external engine against exact cosine).
    Retriever,
    /// Reranking on against off.
    Rerank,
    /// An expansion against none.
    Expand,
    /// A contextual prefix against none.
    Prefix,
}

/// Whether `a` and `b` are the same configuration at the same cut but for `factor`: the same
/// strategy, size, overlap, prefix, tokenizer and cut, and the same value of every other factor.
pub fn twins_but(a: &SweepRow, b: &SweepRow, factor: Factor) -> bool {
    a.strategy == b.strategy
        && a.chunk_size == b.chunk_size
        && a.chunk_overlap == b.chunk_overlap
        && (factor == Factor::Prefix || a.prefix == b.prefix)
        && a.cut == b.cut
        && a.top_k == b.top_k
        && a.budget_tokens == b.budget_tokens
        && a.tokenizer == b.tokenizer
        && (factor == Factor::Retriever || a.retriever == b.retriever)
        && (factor == Factor::Rerank || a.rerank == b.rerank)
        && (factor == Factor::Expand || a.expand == b.expand)
}

/// sweep_questions.csv's rows by configuration id, then question id.
pub struct ByConfig<'a>(HashMap<&'a str, HashMap<&'a str, &'a QuestionRow>>);

/// What the pairing found. The delta is `row − base`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Questions present in both.
    pub n_questions: usize,
    /// Paired bootstrap lower bound of the mean change of span recall (same question draws for
    /// both), at the settings' confidence.
    pub delta_lo: f64,
    /// Its upper bound.
    pub delta_hi: f64,
    /// Questions hit by the base and missed by the row.
    pub mcnemar_b: u64,
    /// Questions hit by the row and missed by the base.
    pub mcnemar_c: u64,
    /// Exact two-sided McNemar p-value on hit.
    pub mcnemar_p: f64,
}

impl<'a> ByConfig<'a> {
    /// Indexes `questions`.
    pub fn new(questions: &'a [QuestionRow]) -> Self {
        let mut by: HashMap<&str, HashMap<&str, &QuestionRow>> = HashMap::new();
        for q in questions {
            by.entry(q.config_id.as_str())
                .or_default()
                .insert(q.question_id.as_str(), q);
        }
        ByConfig(by)
    }

    /// The rows of `base_id` and `row_id` for each question both have, `(base, row)`, in
    /// question id order (a stable order for bootstrap draws); empty when either has none.
    pub fn rows(&self, base_id: &str, row_id: &str) -> Vec<(&'a QuestionRow, &'a QuestionRow)> {
        let (Some(base), Some(row)) = (self.0.get(base_id), self.0.get(row_id)) else {
            return Vec::new();
        };
        let mut ids: Vec<&&str> = base.keys().filter(|id| row.contains_key(**id)).collect();
        ids.sort();
        ids.iter().map(|id| (base[**id], row[**id])).collect()
    }

    /// `row_id` against `base_id` on the questions both have, in question id order (a stable
    /// order for the bootstrap draws of `settings`' seed).
    pub fn pair(&self, base_id: &str, row_id: &str, settings: &SelectionSettings) -> Paired {
        let pairs = self.rows(base_id, row_id);
        let n = pairs.len();
        let hits_base: Vec<bool> = pairs.iter().map(|(a, _)| a.hit == 1).collect();
        let hits_row: Vec<bool> = pairs.iter().map(|(_, b)| b.hit == 1).collect();
        let test = stats::mcnemar_paired(&hits_base, &hits_row);
        let resamples = stats::bootstrap_indices(n, settings.bootstrap_resamples, settings.seed);
        let delta: Vec<f64> = pairs
            .iter()
            .map(|(a, b)| b.span_recall - a.span_recall)
            .collect();
        let ci = stats::bootstrap_mean(&delta, &resamples, settings.confidence);
        Paired {
            n_questions: n,
            delta_lo: ci.lo,
            delta_hi: ci.hi,
            mcnemar_b: test.b,
            mcnemar_c: test.c,
            mcnemar_p: test.p_value,
        }
    }
}
