//! How verdicts are asked: the requests of the judge stage, and the one place where the judge
//! mode is read ([`Ask::plan`]): one call per criterion on its own template (reply
//! `{"verdict", "reason"}`), or one call on `combined.md` for every criterion (reply
//! `{"<criterion>": …, "reason"}`).

use super::criteria::Criterion;
use super::prompts::{COMBINED, GENERATE, PromptSet};
use super::settings::{JudgeMode, JudgeSettings};
use super::verdict::{Graded, grade, grade_combined};
use crate::llm::{ChatMessage, ChatRequest, LlmClient, LlmError};

/// The inputs of a verdict: `[question, context (fenced), answer, reference]` (an empty
/// reference when there is none).
pub(crate) type VerdictInputs<'a> = [&'a str; 4];

/// One verdict call.
#[derive(Debug, Clone)]
pub(crate) enum Ask {
    /// One criterion, on its own template.
    One(Criterion),
    /// Several criteria (`asked`, some of the run's criteria `all`) on `combined.md`.
    Combined {
        /// Every criterion of the run (the reply's schema names them all).
        all: Vec<Criterion>,
        /// The criteria this call must grade.
        asked: Vec<Criterion>,
    },
}

impl Ask {
    /// The calls that grade `asked` (criteria of `all`) in `mode`: one per criterion, or one for
    /// all (none when nothing is asked).
    pub(crate) fn plan(mode: JudgeMode, all: &[Criterion], asked: Vec<&Criterion>) -> Vec<Self> {
        let asked: Vec<Criterion> = asked.into_iter().cloned().collect();
        match mode {
            JudgeMode::PerCriterion => asked.into_iter().map(Ask::One).collect(),
            JudgeMode::Combined if asked.is_empty() => Vec::new(),
            JudgeMode::Combined => vec![Ask::Combined {
                all: all.to_vec(),
                asked,
            }],
        }
    }

    /// The template file the call renders.
    pub(crate) fn template(&self) -> String {
        match self {
            Ask::One(c) => c.file_name(),
            Ask::Combined { .. } => COMBINED.to_string(),
        }
    }

    /// The call's stage in its tag and in calls.csv: the criterion's name, or `combined`.
    pub(crate) fn stage(&self) -> &str {
        match self {
            Ask::One(c) => &c.name,
            Ask::Combined { .. } => "combined",
        }
    }

    /// The judge's request for `inputs`, with the settings' model, cap, temperature and seed.
    pub(crate) fn request(
        &self,
        prompts: &PromptSet,
        s: &JudgeSettings,
        inputs: VerdictInputs<'_>,
    ) -> ChatRequest {
        let [question, context, answer, reference] = inputs;
        let values = [
            ("question", question),
            ("context", context),
            ("answer", answer),
            ("reference", reference),
        ];
        request(
            &s.judge_model,
            prompts.render(&self.template(), &values),
            s.judge_max_tokens,
            s,
        )
    }

    /// Sends `req` (tagged `tag`) and reads the verdict of every criterion asked: (criterion
    /// name, verdict), in order.
    ///
    /// # Errors
    /// As [`grade`]: failures that are not results.
    pub(crate) async fn grade(
        &self,
        client: &LlmClient,
        tag: &str,
        req: ChatRequest,
    ) -> Result<Vec<(String, Graded)>, LlmError> {
        match self {
            Ask::One(c) => Ok(vec![(c.name.clone(), grade(client, tag, req).await?)]),
            Ask::Combined { all, asked } => {
                let refs: Vec<&Criterion> = asked.iter().collect();
                let graded = grade_combined(client, tag, req, all, &refs).await?;
                Ok(asked.iter().map(|c| c.name.clone()).zip(graded).collect())
            }
        }
    }
}

/// The template files a run in `mode` uses: `generate.md`, every criterion's, and those of its
/// verdict calls (`combined.md` in combined mode).
pub(crate) fn templates(mode: JudgeMode, criteria: &[Criterion]) -> Vec<String> {
    let mut out = vec![GENERATE.to_string()];
    out.extend(criteria.iter().map(Criterion::file_name));
    for ask in Ask::plan(mode, criteria, criteria.iter().collect()) {
        let t = ask.template();
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The generator's request: `generate.md` on the question and its fenced context, cut answers
/// rejected.
pub(crate) fn generate_request(
    prompts: &PromptSet,
    s: &JudgeSettings,
    question: &str,
    context: &str,
) -> ChatRequest {
    let text = prompts.render(GENERATE, &[("question", question), ("context", context)]);
    let mut r = request(&s.generator_model, text, s.max_tokens, s);
    r.reject_truncated = true;
    r
}

fn request(model: &str, text: String, max_tokens: u32, s: &JudgeSettings) -> ChatRequest {
    let mut r = ChatRequest::new(model, vec![ChatMessage::user(text)]);
    r.temperature = Some(s.temperature);
    r.max_tokens = Some(max_tokens);
    r.seed = s.seed;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::criteria::builtin;

    #[test]
    fn the_mode_decides_the_calls_and_the_templates() {
        let all = builtin();
        let two: Vec<&Criterion> = all.iter().take(2).collect();
        let per = Ask::plan(JudgeMode::PerCriterion, &all, two.clone());
        assert_eq!(
            per.iter().map(|a| a.template()).collect::<Vec<_>>(),
            ["faithfulness.md", "relevancy.md"]
        );
        assert_eq!(per[1].stage(), "relevancy");
        let combined = Ask::plan(JudgeMode::Combined, &all, two);
        assert_eq!(combined.len(), 1);
        assert_eq!(
            (combined[0].template().as_str(), combined[0].stage()),
            (COMBINED, "combined")
        );
        assert!(Ask::plan(JudgeMode::Combined, &all, Vec::new()).is_empty());
        assert_eq!(
            templates(JudgeMode::PerCriterion, &all),
            [
                "generate.md",
                "faithfulness.md",
                "relevancy.md",
                "correctness.md"
            ]
        );
        assert_eq!(
            templates(JudgeMode::Combined, &all).last().unwrap(),
            COMBINED
        );
    }
}
