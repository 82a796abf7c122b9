//! The criteria the judge grades, as values: a criterion is its name, its template and what its
//! template needs. Every file of the judge stage (judge_questions.csv's verdict and reason
//! columns, judge.csv's rate and trust columns, the report's columns and tests, the labels a
//! person can give) is generated from the run's list ([`JudgeSettings::criteria`]), so a new
//! criterion is its template (`prompts/<name>.md`) and one [`Criterion`] value.
//!
//! [`JudgeSettings::criteria`]: super::settings::JudgeSettings::criteria

/// A criterion the judge grades pass or fail for each answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    /// Its name: the verdict column of judge_questions.csv (and `<name>_reason`), the prefix of
    /// its judge.csv columns, its call tag, its column in the report. Lower case, `[a-z_]`.
    pub name: String,
    /// Its template when the run uses the built-in prompts (no `--prompts` folder): the text of
    /// `prompts/<name>.md`. With a prompts folder, `<name>.md` is read from there.
    pub default_prompt: String,
    /// Placeholders its template must contain (of `question`, `context`, `answer`,
    /// `reference`); a labelled item of the criterion must have the inputs they name.
    pub placeholders: Vec<&'static str>,
    /// Graded only for questions with a reference answer (`na` for the others).
    pub needs_reference: bool,
}

impl Criterion {
    /// A criterion graded on every answer, with its template text.
    pub fn new(name: &str, default_prompt: &str, placeholders: &[&'static str]) -> Self {
        Criterion {
            name: name.to_string(),
            default_prompt: default_prompt.to_string(),
            placeholders: placeholders.to_vec(),
            needs_reference: placeholders.contains(&"reference"),
        }
    }

    /// Its template's file name, `<name>.md`.
    pub fn file_name(&self) -> String {
        format!("{}.md", self.name)
    }

    /// Whether its template reads the retrieved context (`{context}`).
    pub fn needs_context(&self) -> bool {
        self.placeholders.contains(&"context")
    }

    /// Whether it is graded on an answer to a question with (`true`) or without a reference.
    pub fn applies(&self, has_reference: bool) -> bool {
        has_reference || !self.needs_reference
    }
}

/// Name of the built-in faithfulness criterion (every claim supported by the retrieved context).
pub const FAITHFULNESS: &str = "faithfulness";
/// Name of the built-in answer relevancy criterion (the answer addresses the question).
pub const RELEVANCY: &str = "relevancy";
/// Name of the built-in correctness criterion (agrees with the reference answer).
pub const CORRECTNESS: &str = "correctness";

/// The built-in criteria, in report order: **faithfulness** (every claim of the answer is
/// supported by the retrieved context; `prompts/faithfulness.md`), **relevancy** (the answer
/// addresses the question asked; `prompts/relevancy.md`) and **correctness** (the answer agrees
/// with the golden set's reference answer, graded only when there is one;
/// `prompts/correctness.md`). Definitions as in the seeds' RAG evaluation articles.
pub fn builtin() -> Vec<Criterion> {
    vec![
        Criterion::new(
            FAITHFULNESS,
            include_str!("../../prompts/faithfulness.md"),
            &["context", "answer"],
        ),
        Criterion::new(
            RELEVANCY,
            include_str!("../../prompts/relevancy.md"),
            &["question", "answer"],
        ),
        Criterion::new(
            CORRECTNESS,
            include_str!("../../prompts/correctness.md"),
            &["answer", "reference"],
        ),
    ]
}

/// The criterion named `name` in `criteria`.
pub fn find<'a>(criteria: &'a [Criterion], name: &str) -> Option<&'a Criterion> {
    criteria.iter().find(|c| c.name == name)
}

/// The names of `criteria`, in order.
pub fn names(criteria: &[Criterion]) -> Vec<String> {
    criteria.iter().map(|c| c.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_criteria_are_in_report_order_and_know_what_they_need() {
        let b = builtin();
        assert_eq!(names(&b), ["faithfulness", "relevancy", "correctness"]);
        assert_eq!(
            b.iter().map(|c| c.needs_reference).collect::<Vec<_>>(),
            [false, false, true]
        );
        assert!(b[0].needs_context() && !b[1].needs_context());
        assert!(!b[2].applies(false) && b[2].applies(true) && b[0].applies(false));
        assert_eq!(b[1].file_name(), "relevancy.md");
        assert_eq!(
            b[2].default_prompt,
            std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/correctness.md")
            )
            .unwrap()
        );
    }
}
