//! The values report.html is made from ([`Page`], [`Texts`]) and the store of chunk texts the
//! page's script reads.

use std::collections::HashMap;

use crate::corpus::Corpus;
use crate::golden::{GoldenSet, Location};
use crate::judge::rows::JudgeQuestionRow;
use crate::select::Selection;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// The corpus and golden set the run scored, for the questions' and chunks' texts.
#[derive(Debug, Clone, Copy)]
pub struct Texts<'a> {
    /// The corpus (chunk text).
    pub corpus: &'a Corpus,
    /// The golden set (question text, reference answer, evidence locations).
    pub golden: &'a GoldenSet,
}

/// Everything the page shows.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The run's name (its folder's name).
    pub run_name: &'a str,
    /// report.md as written: its sections are shown as HTML.
    pub markdown: &'a str,
    /// sweep.svg's text, shown inline.
    pub plot_svg: Option<&'a str>,
    /// Rows of sweep.csv (the retriever of each configuration).
    pub sweep: &'a [SweepRow],
    /// The selection.
    pub selection: &'a Selection,
    /// Rows of sweep_questions.csv.
    pub questions: &'a [QuestionRow],
    /// Rows of judge_questions.csv (empty without a judge run).
    pub judge: &'a [JudgeQuestionRow],
    /// Texts of the questions and chunks; without them the questions show ids and figures only.
    pub texts: Option<Texts<'a>>,
    /// Why `texts` is missing, shown on the page.
    pub texts_note: Option<&'a str>,
}

/// Distinct chunk texts, each stored once, by location.
#[derive(Default)]
pub struct TextStore {
    texts: Vec<String>,
    index: HashMap<Location, usize>,
}

impl TextStore {
    /// The index of the text at `loc` (stored on first sight) and the text.
    pub fn add(&mut self, corpus: &Corpus, loc: Location) -> (usize, &str) {
        let i = *self.index.entry(loc).or_insert_with(|| {
            self.texts.push(
                corpus.docs[loc.doc]
                    .slice_chars(loc.start, loc.end)
                    .to_string(),
            );
            self.texts.len() - 1
        });
        (i, &self.texts[i])
    }

    /// The texts as a JSON array that is safe inside a `<script>` element.
    pub fn json(&self) -> String {
        script_json(&self.texts)
    }
}

/// A number with three decimals, as the tables show metrics.
pub fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

/// `value` as JSON that is safe inside a `<script>` element: every `<` is written `\u003c`, so
/// no text can close the element or open a comment.
pub fn script_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c")
}
