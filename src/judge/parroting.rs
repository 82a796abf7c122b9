//! Parroted replies: a judge's reasons that repeat its prompt template's own text (the reply
//! format's placeholder "one sentence", a line of the instructions, a verdict word alone) or that
//! contradict the verdict they come with (`"reason": "fail"` with `"verdict": "pass"`). A small
//! model that echoes its instructions gives verdicts that were not reasoned about; a pass rate
//! built on them says little, whatever the controls say.
//!
//! A reason repeats the template when, written as lower-case words (letters and digits; every
//! other character a word break), it is a run of at least two whole words of one of the
//! templates, or a verdict word alone (a single other word, such as `supported`, is not
//! counted: it may be the judge's own). It contradicts its verdict when, without the filler
//! words of [`FILLER`], it is the other verdict alone (`fail`, `failed`, `fails`; `pass`,
//! `passed`, `passes`). An empty reason is neither.

use serde::Serialize;

use super::criteria::Criterion;
use super::prompts::{COMBINED, PromptSet};
use super::verdict::FORMAT_REMINDER;

/// Share of a criterion's reasons above which the judge's replies are flagged as parroted.
pub const PARROTING_WARN_SHARE: f64 = 0.2;

/// Words left out when asking whether a reason is a verdict alone ("The verdict is fail.").
pub const FILLER: [&str; 8] = ["the", "verdict", "is", "it", "answer", "should", "be", "a"];

/// How many of a criterion's reasons are parroted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Parroting {
    /// Pass or fail verdicts looked at (errors and `na` are not).
    pub n: usize,
    /// Reasons that repeat the template's text.
    pub template: usize,
    /// Reasons that name the other verdict.
    pub contradicting: usize,
    /// Reasons that do either (each counted once).
    pub parroted: usize,
}

/// `text` as lower-case words joined by single spaces, with a space at both ends.
fn words(text: &str) -> String {
    let w: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!(" {} ", w.join(" "))
}

/// `Some(true)` for a pass word, `Some(false)` for a fail word.
fn verdict_word(w: &str) -> Option<bool> {
    match w {
        "pass" | "passed" | "passes" => Some(true),
        "fail" | "failed" | "fails" => Some(false),
        _ => None,
    }
}

impl Parroting {
    /// Counts the parroted reasons among `replies` (`(verdict, reason)`, verdict pass = `true`)
    /// against the texts of `templates` (the prompt templates the verdicts were asked with).
    pub fn of<'a>(
        replies: impl IntoIterator<Item = (bool, &'a str)>,
        templates: &[&str],
    ) -> Parroting {
        let templates: Vec<String> = templates.iter().map(|t| words(t)).collect();
        let mut out = Parroting::default();
        for (verdict, reason) in replies {
            out.n += 1;
            let r = words(reason);
            if r.trim().is_empty() {
                continue;
            }
            let all: Vec<&str> = r.split_whitespace().collect();
            let long_enough = all.len() >= 2 || all.iter().all(|w| verdict_word(w).is_some());
            let repeats = long_enough && templates.iter().any(|t| t.contains(&r));
            let kept: Vec<&str> = r
                .split_whitespace()
                .filter(|w| !FILLER.contains(w))
                .collect();
            let contradicts = matches!(kept.as_slice(), [w] if verdict_word(w) == Some(!verdict));
            out.template += usize::from(repeats);
            out.contradicting += usize::from(contradicts);
            out.parroted += usize::from(repeats || contradicts);
        }
        out
    }

    /// Parroted reasons among the verdicts; `None` without a verdict.
    pub fn share(&self) -> Option<f64> {
        (self.n > 0).then(|| self.parroted as f64 / self.n as f64)
    }

    /// Whether the share passes [`PARROTING_WARN_SHARE`].
    pub fn warns(&self) -> bool {
        self.share().is_some_and(|s| s > PARROTING_WARN_SHARE)
    }

    /// The warning for criterion `criterion` when [`warns`](Self::warns), e.g. "12 of 12
    /// faithfulness reasons (100 %) repeat the prompt template's text or contradict their
    /// verdict (12 repeat the template, 2 contradict): the judge may be echoing its instructions
    /// rather than grading".
    pub fn warning(&self, criterion: &str) -> Option<String> {
        self.warns().then(|| {
            format!(
                "{} of {} {criterion} reasons ({:.0} %) repeat the prompt template's text or contradict their verdict ({} repeat the template, {} contradict): the judge may be echoing its instructions rather than grading",
                self.parroted,
                self.n,
                100.0 * self.share().unwrap_or(0.0),
                self.template,
                self.contradicting
            )
        })
    }
}

/// The texts a reason is checked against: each criterion's template of `prompts`, its
/// `combined.md`, and the format reminder sent after an unreadable reply.
pub fn template_texts(prompts: &PromptSet, criteria: &[Criterion]) -> Vec<String> {
    criteria
        .iter()
        .map(|c| prompts.get(&c.file_name()).text.clone())
        .chain([
            prompts.get(COMBINED).text.clone(),
            FORMAT_REMINDER.to_string(),
        ])
        .collect()
}

/// [`template_texts`] of the built-in templates of the built-in criteria: what `run`'s trust
/// table checks reasons against (a `--prompts` folder's templates usually keep their reply
/// format, placeholder included).
pub fn builtin_template_texts() -> Vec<String> {
    let criteria = super::criteria::builtin();
    template_texts(&PromptSet::defaults(&criteria), &criteria)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "Task: grade faithfulness.\n- pass: every factual claim in the answer is stated in the documents.\n\nReply with a JSON object only: {\"verdict\": \"pass\" or \"fail\", \"reason\": \"one sentence\"}.";

    #[test]
    fn template_text_and_contradictions_are_counted() {
        let replies = [
            (true, "one sentence"),
            (false, "One sentence."),
            (true, "fail"),                  // template text and a contradiction
            (true, "The verdict is failed"), // a contradiction only
            (false, "fail"),                 // template text (a verdict word alone)
            (
                true,
                "Every factual claim in the answer is stated in the documents.",
            ),
            (true, "The answer says two cores, as the context does."),
            (false, "It says four cores where the context says two."),
            (true, ""),
            (true, "sentence one"), // words of the template, not a run of them
            (true, "Documents."),   // one word of the template, not a verdict
        ];
        let p = Parroting::of(replies, &[TEMPLATE]);
        assert_eq!(
            p,
            Parroting {
                n: 11,
                template: 5,
                contradicting: 2,
                parroted: 6
            }
        );
        assert_eq!(p.share(), Some(6.0 / 11.0));
        assert!(p.warns());
        assert_eq!(
            p.warning("faithfulness").unwrap(),
            "6 of 11 faithfulness reasons (55 %) repeat the prompt template's text or contradict their verdict (5 repeat the template, 2 contradict): the judge may be echoing its instructions rather than grading"
        );
        // 2 of 10 is at the threshold, not over it
        let some = [(true, "one sentence"); 2]
            .into_iter()
            .chain([(true, "Two cores, as stated."); 8]);
        let p = Parroting::of(some, &[TEMPLATE]);
        assert_eq!((p.parroted, p.share()), (2, Some(0.2)));
        assert!(!p.warns());
        assert_eq!(p.warning("relevancy"), None);
        assert_eq!(Parroting::of([], &[TEMPLATE]).share(), None);
    }

    #[test]
    fn the_builtin_templates_hold_the_reply_placeholder() {
        let texts = builtin_template_texts();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        // three criteria, combined.md, the reminder
        assert_eq!(refs.len(), 5);
        let p = Parroting::of([(true, "one sentence"), (true, "Two cores.")], &refs);
        assert_eq!((p.template, p.parroted), (1, 1));
    }
}
