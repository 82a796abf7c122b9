//! Planted controls and repeats: verdicts whose right answer is known, asked in every judged run
//! so the report can say how far the judge's verdicts can be trusted ([`super::trust`]).
//!
//! Negative controls (the right verdict is fail):
//! - `other_context`: faithfulness of a generated answer against another question's retrieved
//!   context (same candidate);
//! - `perturbed`: faithfulness of a generated answer with one fact its context states changed
//!   (a number or name, never a list marker, an identifier or a file name:
//!   [`super::perturb::plant`]);
//! - `added_claim`: in place of `perturbed` for an answer that states no such fact, faithfulness
//!   of the answer with a claim appended that its context does not hold;
//! - `other_answer`: relevancy of another question's answer;
//! - `other_reference`: correctness of another question's reference answer.
//!
//! Positive controls (the right verdict is pass), from the golden set:
//! - `reference_evidence`: faithfulness of the reference answer against its evidence spans;
//! - `reference_relevant`: relevancy of the reference answer to its own question;
//! - `reference_itself`: correctness of the reference answer against itself.
//!
//! Each kind samples `max(ceil(fraction × judged answers), 5)` of the items it can be built for
//! (fewer when fewer can be). "Another question" is the next judged question, in golden-set
//! order and cyclically, of the same candidate whose context, answer or reference differs.
//! Sampling orders the items by the SHA-256 of `kind␟config␟question`, so it is deterministic
//! and does not follow file order. Controls built from the reference answer depend on the
//! question only, so they are sampled over distinct questions.
//!
//! Repeats: `max(ceil(repeat_fraction × judged answers), 5)` judged answers are graded again on
//! every criterion they got a pass or fail for, with the seed plus one; see
//! [`super::accuracy::Agreement`].

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::criteria::{CORRECTNESS, FAITHFULNESS, RELEVANCY};
use super::perturb::{Planted, plant};
use super::pipeline::Job;
use super::probes::Probe;
use super::prompts::fence_context;
use super::settings::JudgeSettings;
use super::verdict::Verdict;
use crate::corpus::Corpus;
use crate::golden::{GoldenSet, Question};

/// The fewest items of a control kind or of repeats (when that many can be built).
pub const MIN_PER_KIND: usize = 5;

/// A planted control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ControlKind {
    /// Faithfulness against another question's context: fail.
    OtherContext,
    /// Faithfulness with one fact its context states changed: fail.
    Perturbed,
    /// Faithfulness with a claim its context does not hold appended (planted in place of
    /// `Perturbed` for an answer that states no such fact): fail.
    AddedClaim,
    /// Relevancy of another question's answer: fail.
    OtherAnswer,
    /// Correctness of another question's reference: fail.
    OtherReference,
    /// Faithfulness of the reference against its evidence: pass.
    ReferenceEvidence,
    /// Relevancy of the reference to its question: pass.
    ReferenceRelevant,
    /// Correctness of the reference against itself: pass.
    ReferenceItself,
}

impl ControlKind {
    /// Every kind, negatives first.
    pub const ALL: [ControlKind; 8] = [
        ControlKind::OtherContext,
        ControlKind::Perturbed,
        ControlKind::AddedClaim,
        ControlKind::OtherAnswer,
        ControlKind::OtherReference,
        ControlKind::ReferenceEvidence,
        ControlKind::ReferenceRelevant,
        ControlKind::ReferenceItself,
    ];

    /// Name in judge_checks.csv.
    pub fn name(self) -> &'static str {
        match self {
            ControlKind::OtherContext => "other_context",
            ControlKind::Perturbed => "perturbed",
            ControlKind::AddedClaim => "added_claim",
            ControlKind::OtherAnswer => "other_answer",
            ControlKind::OtherReference => "other_reference",
            ControlKind::ReferenceEvidence => "reference_evidence",
            ControlKind::ReferenceRelevant => "reference_relevant",
            ControlKind::ReferenceItself => "reference_itself",
        }
    }

    /// The name of the built-in criterion it grades (a run without that criterion plants
    /// none of this kind; other criteria are measured by repeats only).
    pub fn criterion(self) -> &'static str {
        match self {
            ControlKind::OtherContext
            | ControlKind::Perturbed
            | ControlKind::AddedClaim
            | ControlKind::ReferenceEvidence => FAITHFULNESS,
            ControlKind::OtherAnswer | ControlKind::ReferenceRelevant => RELEVANCY,
            ControlKind::OtherReference | ControlKind::ReferenceItself => CORRECTNESS,
        }
    }

    /// The right verdict: pass (`true`) for the positive controls.
    pub fn expected(self) -> bool {
        matches!(
            self,
            ControlKind::ReferenceEvidence
                | ControlKind::ReferenceRelevant
                | ControlKind::ReferenceItself
        )
    }

    /// Whether `name` is a control kind's name (and not `repeat` or `label`).
    pub fn is_control(name: &str) -> bool {
        ControlKind::ALL.iter().any(|k| k.name() == name)
    }
}

/// A judged answer (or, for a dry run, one to be judged) that controls and repeats are built
/// from.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Configuration id.
    pub config_id: String,
    /// Question id.
    pub question_id: String,
    /// The question.
    pub question: String,
    /// The retrieved context, fenced.
    pub context: String,
    /// The reference answer (empty if none).
    pub reference: String,
    /// The evidence spans' texts, fenced as documents (`<doc id>#evidence<n>`).
    pub evidence: String,
    /// The generated answer (empty when none was generated).
    pub answer: String,
    /// The verdicts it got, by criterion name in the run's order (pass or fail only are
    /// repeated).
    pub verdicts: Vec<(String, Verdict)>,
}

/// The evidence spans of `q` fenced as context: the first location of each span, in golden-set
/// order; empty when there is none.
pub fn evidence_context(q: &Question, corpus: &Corpus) -> String {
    let spans: Vec<(String, String)> = q
        .spans
        .iter()
        .enumerate()
        .filter_map(|(n, s)| {
            let loc = s.locations.first()?;
            let doc = corpus.docs.get(loc.doc)?;
            Some((
                format!("{}#evidence{n}", doc.id),
                doc.slice_chars(loc.start, loc.end).to_string(),
            ))
        })
        .collect();
    fence_context(spans.iter().map(|(i, t)| (i.as_str(), t.as_str())))
}

/// `max(ceil(fraction × n), MIN_PER_KIND)`; 0 when `fraction` is 0.
fn sample_size(fraction: f64, n: usize) -> usize {
    if fraction <= 0.0 {
        return 0;
    }
    ((fraction * n as f64).ceil() as usize).max(MIN_PER_KIND)
}

/// The first `n` of `items` ordered by the SHA-256 of `salt␟config␟question`.
fn sample<'a>(salt: &str, mut items: Vec<&'a Source>, n: usize) -> Vec<&'a Source> {
    let key = |s: &Source| {
        Sha256::digest(format!("{salt}\u{1f}{}\u{1f}{}", s.config_id, s.question_id).as_bytes())
            .to_vec()
    };
    items.sort_by_cached_key(|s| key(s));
    items.truncate(n);
    items
}

/// The next source after `s` (cyclically, in `sources` order) of the same candidate and another
/// question that `ok` accepts.
fn partner(sources: &[Source], at: usize, ok: impl Fn(&Source) -> bool) -> Option<&Source> {
    let s = &sources[at];
    (1..sources.len())
        .map(|d| &sources[(at + d) % sources.len()])
        .find(|o| o.config_id == s.config_id && o.question_id != s.question_id && ok(o))
}

fn item(kind: ControlKind, s: &Source, other: Option<&Source>) -> Probe {
    Probe {
        kind: kind.name().into(),
        config_id: s.config_id.clone(),
        item_id: s.question_id.clone(),
        other_id: other.map(|o| o.question_id.clone()).unwrap_or_default(),
        criterion: kind.criterion().to_string(),
        question: s.question.clone(),
        context: s.context.clone(),
        answer: s.answer.clone(),
        reference: s.reference.clone(),
        expected: Some(kind.expected()),
        seed_offset: 0,
    }
}

/// Builds the item of `kind` for `sources[at]`, or `None` when it cannot be built.
fn build(kind: ControlKind, sources: &[Source], at: usize) -> Option<Probe> {
    let s = &sources[at];
    let has_answer = !s.answer.is_empty();
    let has_ref = !s.reference.is_empty();
    match kind {
        ControlKind::OtherContext => {
            let o = partner(sources, at, |o| o.context != s.context).filter(|_| has_answer)?;
            Some(Probe {
                context: o.context.clone(),
                ..item(kind, s, Some(o))
            })
        }
        ControlKind::Perturbed | ControlKind::AddedClaim => {
            if !has_answer {
                return None;
            }
            let (kind, answer) = match plant(&s.answer, &s.context) {
                Planted::Changed(a) => (ControlKind::Perturbed, a),
                Planted::Added(a) => (ControlKind::AddedClaim, a),
            };
            Some(Probe {
                answer,
                ..item(kind, s, None)
            })
        }
        ControlKind::OtherAnswer => {
            let o = partner(sources, at, |o| {
                !o.answer.is_empty() && o.answer != s.answer
            })?;
            Some(Probe {
                answer: o.answer.clone(),
                ..item(kind, s, Some(o))
            })
        }
        ControlKind::OtherReference => {
            let o = partner(sources, at, |o| {
                !o.reference.is_empty() && o.reference != s.reference
            })
            .filter(|_| has_ref)?;
            Some(Probe {
                answer: o.reference.clone(),
                ..item(kind, s, Some(o))
            })
        }
        ControlKind::ReferenceEvidence => (has_ref && !s.evidence.is_empty()).then(|| Probe {
            answer: s.reference.clone(),
            context: s.evidence.clone(),
            config_id: String::new(),
            ..item(kind, s, None)
        }),
        ControlKind::ReferenceRelevant | ControlKind::ReferenceItself => has_ref.then(|| Probe {
            answer: s.reference.clone(),
            config_id: String::new(),
            ..item(kind, s, None)
        }),
    }
}

/// The planted controls for `sources` (the judged answers, in candidate then golden-set order):
/// for each kind whose criterion is among `criteria` (names), a sample of
/// `max(ceil(fraction × sources), 5)` of the items it can be built for. Empty when `fraction` is
/// 0.
pub fn plan_controls(sources: &[Source], fraction: f64, criteria: &[String]) -> Vec<Probe> {
    let n = sample_size(fraction, sources.len());
    let mut out = Vec::new();
    // `added_claim` items come from the `perturbed` sample (one per answer, whichever it is)
    let graded = ControlKind::ALL
        .into_iter()
        .filter(|&k| k != ControlKind::AddedClaim)
        .filter(|k| criteria.iter().any(|c| c == k.criterion()));
    for kind in graded {
        let by_question = kind.expected() || kind == ControlKind::OtherReference;
        let mut seen = HashSet::new();
        let mut built: Vec<(&Source, Probe)> = Vec::new();
        for (at, s) in sources.iter().enumerate() {
            if by_question && !seen.insert(s.question_id.as_str()) {
                continue;
            }
            if let Some(it) = build(kind, sources, at) {
                built.push((s, it));
            }
        }
        let chosen = sample(kind.name(), built.iter().map(|b| b.0).collect(), n);
        for (s, it) in built {
            if chosen.iter().any(|c| std::ptr::eq(*c, s)) {
                out.push(it);
            }
        }
    }
    out
}

/// The repeats: a sample of `max(ceil(fraction × sources), 5)` answered sources, each graded
/// again on every criterion it got a pass or fail for, with the seed plus one; the first verdict
/// is the item's `expected`. Empty when `fraction` is 0.
pub fn plan_repeats(sources: &[Source], fraction: f64) -> Vec<Probe> {
    let n = sample_size(fraction, sources.len());
    let answered: Vec<&Source> = sources.iter().filter(|s| !s.answer.is_empty()).collect();
    let mut chosen = sample("repeat", answered, n);
    // back in source order
    chosen.sort_by_key(|c| sources.iter().position(|s| std::ptr::eq(s, *c)));
    chosen
        .into_iter()
        .flat_map(|s| {
            s.verdicts.iter().filter_map(move |(c, v)| {
                Some(Probe {
                    kind: "repeat".into(),
                    config_id: s.config_id.clone(),
                    item_id: s.question_id.clone(),
                    other_id: String::new(),
                    criterion: c.clone(),
                    question: s.question.clone(),
                    context: s.context.clone(),
                    answer: s.answer.clone(),
                    reference: s.reference.clone(),
                    expected: Some(v.outcome()?),
                    seed_offset: 1,
                })
            })
        })
        .collect()
}

/// The controls (when on) and repeats planned over `sources`.
pub fn plan_probes(settings: &JudgeSettings, sources: &[Source]) -> Vec<Probe> {
    let names = super::criteria::names(&settings.criteria);
    let mut items = if settings.controls {
        plan_controls(sources, settings.control_fraction, &names)
    } else {
        Vec::new()
    };
    items.extend(plan_repeats(sources, settings.repeat_fraction));
    items
}

/// A job's answer and its verdicts (by criterion name, in order); `None`: no answer.
pub type Answered = Option<(String, Vec<(String, Verdict)>)>;

/// What a job's answer and verdicts are.
pub type AnswerOf<'a> = dyn Fn(&Job) -> Answered + 'a;

/// The controls' sources: every job with an answer, with its question's reference and evidence.
pub fn sources(
    jobs: &[Job],
    golden: &GoldenSet,
    corpus: &Corpus,
    answer: &AnswerOf<'_>,
) -> Vec<Source> {
    jobs.iter()
        .filter_map(|j| {
            let (answer, verdicts) = answer(j)?;
            let q = golden.questions.get(j.question_index)?;
            Some(Source {
                config_id: j.config_id.clone(),
                question_id: j.question_id.clone(),
                question: j.question.clone(),
                context: j.context.clone(),
                reference: j.reference.clone().unwrap_or_default(),
                evidence: evidence_context(q, corpus),
                answer,
                verdicts,
            })
        })
        .collect()
}

/// For an estimate before any answer exists: every job answered with an answer at the cap, and a
/// pass on each of its criteria (so every control and repeat that could be asked is counted).
pub fn placeholders(settings: &JudgeSettings) -> impl Fn(&Job) -> Answered {
    let answer = format!(
        "1{}",
        " x".repeat(settings.max_tokens.saturating_sub(1) as usize)
    );
    let criteria = settings.criteria.clone();
    move |j: &Job| {
        let verdicts = criteria
            .iter()
            .filter(|c| c.applies(j.reference.is_some()))
            .map(|c| (c.name.clone(), Verdict::Pass))
            .collect();
        Some((format!("{answer} {}", j.question_id), verdicts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(cfg: &str, q: &str, answer: &str, reference: &str) -> Source {
        let verdicts = vec![
            (FAITHFULNESS.to_string(), Verdict::Pass),
            (RELEVANCY.to_string(), Verdict::Fail),
            (CORRECTNESS.to_string(), Verdict::Error),
        ];
        Source {
            config_id: cfg.into(),
            question_id: q.into(),
            question: format!("question {q}?"),
            context: format!("context of {q}"),
            reference: reference.into(),
            evidence: if reference.is_empty() {
                String::new()
            } else {
                format!("evidence of {q}")
            },
            answer: answer.into(),
            verdicts,
        }
    }

    #[test]
    fn controls_are_sampled_per_kind_and_built_right() {
        // 2 candidates × 4 questions; q4 has no reference; answers of q3 have nothing to perturb
        let mut sources = Vec::new();
        for cfg in ["A", "B"] {
            sources.push(source(cfg, "q1", "It takes 2 cores.", "Two cores."));
            sources.push(source(cfg, "q2", "User 1750.", "User 1750."));
            sources.push(source(cfg, "q3", "Thirty days.", "Thirty days."));
            sources.push(source(cfg, "q4", "On the first day.", ""));
        }
        let names = crate::judge::criteria::names(&crate::judge::criteria::builtin());
        let items = plan_controls(&sources, 0.1, &names);
        let count = |k: ControlKind| items.iter().filter(|i| i.kind == k.name()).count();
        // at least 5 of each when that many can be built
        assert_eq!(count(ControlKind::OtherContext), 5);
        assert_eq!(count(ControlKind::OtherAnswer), 5);
        // one per sampled answer: a fact its context states changed, else a claim added (the
        // contexts here state no number of the answers)
        assert_eq!(
            count(ControlKind::Perturbed) + count(ControlKind::AddedClaim),
            5
        );
        assert_eq!(count(ControlKind::Perturbed), 0);
        // reference controls: distinct questions with a reference only
        assert_eq!(count(ControlKind::ReferenceItself), 3);
        assert_eq!(count(ControlKind::ReferenceEvidence), 3);
        assert_eq!(count(ControlKind::OtherReference), 3);
        for it in &items {
            let kind = ControlKind::ALL
                .into_iter()
                .find(|k| k.name() == it.kind)
                .unwrap();
            assert_eq!(it.expected, Some(kind.expected()));
            assert_eq!(it.criterion, kind.criterion());
            match kind {
                ControlKind::OtherContext => {
                    assert_eq!(it.context, format!("context of {}", it.other_id));
                    assert_ne!(it.other_id, it.item_id);
                }
                ControlKind::OtherAnswer => {
                    let other = sources
                        .iter()
                        .find(|s| s.config_id == it.config_id && s.question_id == it.other_id)
                        .unwrap();
                    assert_eq!(it.answer, other.answer);
                }
                ControlKind::ReferenceItself => assert_eq!(it.answer, it.reference),
                ControlKind::ReferenceEvidence => {
                    assert_eq!(it.context, format!("evidence of {}", it.item_id));
                }
                ControlKind::OtherReference => {
                    assert_ne!(it.answer, it.reference);
                    assert!(!it.answer.is_empty());
                }
                _ => {}
            }
        }
        // deterministic
        assert_eq!(plan_controls(&sources, 0.1, &names), items);
        assert!(plan_controls(&sources, 0.0, &names).is_empty());
        // no correctness criterion in the run: no correctness control
        let two = &names[..2];
        assert!(
            plan_controls(&sources, 0.1, two)
                .iter()
                .all(|i| i.criterion != CORRECTNESS)
        );
    }

    #[test]
    fn repeats_keep_the_first_verdict_and_change_the_seed() {
        let sources: Vec<Source> = (0..20)
            .map(|q| source("A", &format!("q{q}"), "An answer.", ""))
            .collect();
        let items = plan_repeats(&sources, 0.1);
        // max(ceil(0.1 × 20), 5) = 5 sources × 2 criteria with a pass or fail
        assert_eq!(items.len(), 10);
        assert!(
            items
                .iter()
                .all(|i| i.seed_offset == 1 && i.kind == "repeat")
        );
        assert_eq!(
            items
                .iter()
                .filter(|i| i.criterion == RELEVANCY)
                .map(|i| i.expected)
                .collect::<Vec<_>>(),
            vec![Some(false); 5]
        );
    }
}
