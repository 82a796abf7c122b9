//! `chunksweep golden draft`: a golden set drafted by a model from a bare corpus, every evidence
//! span verified against the documents.
//!
//! 1. [`sample`]: passages cut at paragraph breaks, picked stratified by document and position,
//!    tables and lists among them, short and long evidence asked for in turn (seeded).
//! 2. [`ask`]: one structured-output call per passage through the project's LLM client (its
//!    rate limits, retries and SQLite cache: a rerun after a kill sends only what did not
//!    finish), asking for `{"question", "answer", "evidence": [verbatim quotes]}`.
//! 3. [`verify`]: each quote located in its document, exactly or after collapsing whitespace
//!    (stored with the document's own text and code-point offsets); a near miss is rejected,
//!    never rewritten. Then the filters, each counted ([`Reason`]): too many quotes, quote not
//!    found, evidence under the minimum length or found more than once in the corpus, a question
//!    copying its evidence ([`words::copied_share`]), an answer the evidence neither contains nor
//!    (asked with `--check-answers`) supports, and a question nearly the same as one kept before
//!    it (word Jaccard, or embedding cosine with an embeddings model).
//!
//! Drafting sees only the corpus, never a sweep result (seed 004: "label before you run").
//! Every kept item carries `"source": "draft"`, the model, the prompt's SHA-256 and
//! `"reviewed": false`.

pub mod ask;
pub mod output;
pub mod sample;
pub mod verify;
pub mod words;

use std::collections::BTreeMap;
use std::path::Path;

use thiserror::Error;

use crate::budget::{CostEstimate, Refusal};
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent};
use crate::golden::Finder;
use crate::llm::{ChatRequest, EmbedRequest, LlmClient, LlmError};
use crate::vector::cosine;
use ask::Asking;
use sample::Passage;
pub use verify::Reason;
use verify::{Limits, Quote, Rejection, Reply};

/// The defaults of [`DraftSettings`], written once: its `Default` and the flags' defaults read
/// them.
pub mod defaults {
    /// Passages to draft from.
    pub const QUESTIONS: usize = 20;
    /// Seed of the passage sampling.
    pub const SEED: u64 = 42;
    /// Most quotes per item.
    pub const MAX_QUOTES: usize = 5;
    /// Fewest code points per quote.
    pub const MIN_EVIDENCE_CHARS: usize = 25;
    /// Largest share of a question's word trigrams found in its evidence.
    pub const MAX_COPIED_SHARE: f64 = 0.5;
    /// Word Jaccard of a near-duplicate.
    pub const MAX_JACCARD: f64 = 0.7;
    /// Embedding cosine of a near-duplicate.
    pub const MAX_COSINE: f64 = 0.92;
    /// Completion cap per call, tokens.
    pub const MAX_TOKENS: u32 = 400;
    /// Longest passage, code points.
    pub const PASSAGE_CHARS: usize = 1500;
}

/// The settings of a drafting run (flags of `chunksweep golden draft`).
#[derive(Debug, Clone)]
pub struct DraftSettings {
    /// Passages to draft from (one call each): the most items the run can keep.
    pub questions: usize,
    /// The chat model.
    pub model: String,
    /// Seed of the passage sampling, also sent to the model.
    pub seed: u64,
    /// Most quotes an item may have (Chroma's generator rejects more than 5).
    pub max_quotes: usize,
    /// Fewest code points a quote may have (shorter ones are rarely unique).
    pub min_evidence_chars: usize,
    /// Largest share of the question's word trigrams found in its evidence.
    pub max_copied_share: f64,
    /// Word Jaccard of two questions at or above which the later one is a near-duplicate.
    pub max_jaccard: f64,
    /// With `embed_model`: embedding cosine at or above which the later question is a
    /// near-duplicate (then used instead of Jaccard).
    pub max_cosine: f64,
    /// Embedding model for the near-duplicate filter; `None`: word Jaccard.
    pub embed_model: Option<String>,
    /// Prepended to each question before it is embedded (e.g. `query: `).
    pub embed_prefix: String,
    /// Ask the model whether the evidence supports an answer it does not contain word for word.
    pub check_answers: bool,
    /// Completion cap per call, tokens.
    pub max_tokens: u32,
    /// Longest passage, code points (a single longer paragraph stays whole).
    pub passage_chars: usize,
}

impl Default for DraftSettings {
    fn default() -> Self {
        DraftSettings {
            questions: defaults::QUESTIONS,
            model: crate::llm::config::default_chat_model(),
            seed: defaults::SEED,
            max_quotes: defaults::MAX_QUOTES,
            min_evidence_chars: defaults::MIN_EVIDENCE_CHARS,
            max_copied_share: defaults::MAX_COPIED_SHARE,
            max_jaccard: defaults::MAX_JACCARD,
            max_cosine: defaults::MAX_COSINE,
            embed_model: None,
            embed_prefix: String::new(),
            check_answers: false,
            max_tokens: defaults::MAX_TOKENS,
            passage_chars: defaults::PASSAGE_CHARS,
        }
    }
}

impl DraftSettings {
    fn asking(&self) -> Asking {
        Asking {
            model: self.model.clone(),
            seed: self.seed,
            max_tokens: self.max_tokens,
            max_quotes: self.max_quotes,
        }
    }
}

/// Errors of a drafting run.
#[derive(Debug, Error)]
pub enum DraftError {
    /// The corpus has no passage long enough to draft from.
    #[error("the corpus under {0} has no passage of 40 or more non-blank characters to draft from")]
    NoPassage(String),
    /// `--max-cost` without a price for the model.
    #[error(
        "--max-cost ${max} needs a price for {model}: set input_usd_per_mtok and output_usd_per_mtok in [llm.models.\"{model}\"]"
    )]
    Unpriced {
        /// The budget, USD.
        max: f64,
        /// The model.
        model: String,
    },
    /// The estimate passes `--max-cost`.
    #[error(
        "the estimate ${estimate:.4} passes --max-cost ${max}: draft fewer questions (--questions) or raise the budget"
    )]
    OverBudget {
        /// The estimate, USD.
        estimate: f64,
        /// The budget, USD.
        max: f64,
    },
    /// The client could not be built, or the server refused the key or the model.
    #[error("{0}")]
    Llm(#[from] LlmError),
    /// No drafting call gave a usable reply: each was answered with nothing readable (no JSON,
    /// a reply cut at the token cap) or got no reply at all. The drafting CSV is written.
    #[error(
        "no usable reply ({answered} calls answered, none readable; {failed} got no reply) from {server}; the first error: {error}; each item's outcome is in {}",
        csv.display()
    )]
    NoUsableReply {
        /// Calls answered with a reply that could not be used.
        answered: usize,
        /// Calls that got no reply (after the client's retries).
        failed: usize,
        /// The server, credentials redacted.
        server: String,
        /// The first call's error.
        error: String,
        /// The drafting CSV written.
        csv: std::path::PathBuf,
    },
    /// Replies were usable, but the filters rejected every item: no golden set is written.
    #[error(
        "kept 0 of {items} drafted item(s), no golden set written to {}: rejected by filter {rejected}; each item's outcome is in {}",
        out.display(),
        csv.display()
    )]
    NothingKept {
        /// Items drafted.
        items: usize,
        /// The non-zero counts per filter, `name N, name N`.
        rejected: String,
        /// The golden set that was not written.
        out: std::path::PathBuf,
        /// The drafting CSV written.
        csv: std::path::PathBuf,
    },
    /// The output could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl DraftError {
    /// The refusal of a drafting estimate under `--max-cost`; `model` is the drafting model.
    pub fn over_budget(refusal: Refusal, model: &str) -> Self {
        match refusal {
            Refusal::Unpriced { max } => DraftError::Unpriced {
                max,
                model: model.to_string(),
            },
            Refusal::Over { estimate, max, .. } => DraftError::OverBudget { estimate, max },
        }
    }

    /// Usage (2) for the input, the budget and the key; failure (1) otherwise (a run that keeps
    /// no item included).
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        use crate::exit::ExitClass;
        match self {
            DraftError::NoPassage(_)
            | DraftError::Unpriced { .. }
            | DraftError::OverBudget { .. } => ExitClass::Usage,
            DraftError::Llm(e) => e.exit_class(),
            DraftError::NoUsableReply { .. }
            | DraftError::NothingKept { .. }
            | DraftError::Write { .. } => ExitClass::Failure,
        }
    }
}

/// A drafting run planned: the passages, their requests and the estimate; nothing sent.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The sampled passages, in asking order.
    pub passages: Vec<Passage>,
    /// One request per passage.
    pub requests: Vec<ChatRequest>,
    /// Calls, tokens and cost.
    pub estimate: CostEstimate,
}

/// Samples the passages and builds their requests; `cfg` prices the estimate.
///
/// # Errors
/// [`DraftError::NoPassage`] when the corpus gives none.
pub fn plan(
    corpus: &Corpus,
    settings: &DraftSettings,
    cfg: &crate::llm::ClientConfig,
) -> Result<Planned, DraftError> {
    let passages = sample::sample(
        sample::passages(corpus, settings.passage_chars),
        settings.questions,
        settings.seed,
    );
    if passages.is_empty() {
        return Err(DraftError::NoPassage(corpus.root.display().to_string()));
    }
    let asking = settings.asking();
    let requests: Vec<ChatRequest> = passages
        .iter()
        .map(|p| ask::draft_request(corpus, p, &asking))
        .collect();
    let estimate = ask::drafting_estimate(
        &requests,
        &ask::draft_schema(settings.max_quotes),
        settings.check_answers,
        cfg,
        &settings.model,
    );
    Ok(Planned {
        passages,
        requests,
        estimate,
    })
}

/// One drafted item: its passage, what the model wrote, and whether it was kept.
#[derive(Debug, Clone)]
pub struct Item {
    /// `draft-NNN`, numbered by passage (stable across reruns).
    pub id: String,
    /// The passage it was drafted from.
    pub passage: Passage,
    /// The model's reply, when there was a usable one.
    pub reply: Option<Reply>,
    /// The located quotes when kept, else why not.
    pub outcome: Result<Vec<Quote>, Rejection>,
}

/// What a drafting run did.
#[derive(Debug, Clone)]
pub struct Drafted {
    /// Every item, in passage order.
    pub items: Vec<Item>,
    /// The chat model.
    pub model: String,
    /// SHA-256 of `prompts/draft.md`.
    pub prompt_sha256: String,
    /// Calls answered from the cache (nothing sent).
    pub cached_calls: usize,
    /// Calls sent (every call not answered from the cache): usable replies, unusable replies
    /// and calls that got no reply.
    pub sent_calls: usize,
    /// Calls answered with a reply that could not be used (no readable JSON, a reply cut at the
    /// token cap, JSON without a usable question, answer or evidence): their tokens were spent; never cached, so a rerun sends them again.
    pub unusable_calls: usize,
    /// Calls that got no reply (after the client's retries): never cached either.
    pub failed_calls: usize,
    /// The first drafting call's error, if any.
    pub first_error: Option<String>,
    /// USD spent on sent calls, unusable replies included (`None` when no sent call has a
    /// price).
    pub spent_usd: Option<f64>,
}

impl Drafted {
    /// The kept items.
    pub fn kept(&self) -> impl Iterator<Item = (&Item, &Reply, &[Quote])> {
        self.items
            .iter()
            .filter_map(|i| match (&i.reply, &i.outcome) {
                (Some(r), Ok(q)) => Some((i, r, q.as_slice())),
                _ => None,
            })
    }

    /// Items left out, by reason (every reason listed, zeros included), in filter order.
    pub fn rejected(&self) -> BTreeMap<Reason, usize> {
        let mut counts: BTreeMap<Reason, usize> = Reason::ALL.iter().map(|&r| (r, 0)).collect();
        for item in &self.items {
            if let Err((reason, _)) = &item.outcome {
                *counts.entry(*reason).or_default() += 1;
            }
        }
        counts
    }

    /// `None` when at least one item was kept; else why the run failed: no usable reply at all
    /// ([`DraftError::NoUsableReply`]) or every item rejected by a filter
    /// ([`DraftError::NothingKept`]). `server` is named in the first, `out` (not written) in the
    /// second, `csv` (written) in both.
    pub fn failure(&self, server: &str, out: &Path, csv: &Path) -> Option<DraftError> {
        if self.kept().next().is_some() {
            return None;
        }
        if self.items.iter().all(|i| i.reply.is_none()) {
            return Some(DraftError::NoUsableReply {
                answered: self.unusable_calls,
                failed: self.failed_calls,
                server: server.to_string(),
                error: self.first_error.clone().unwrap_or_default(),
                csv: csv.to_path_buf(),
            });
        }
        let rejected: Vec<String> = self
            .rejected()
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(reason, n)| format!("{} {n}", reason.name()))
            .collect();
        Some(DraftError::NothingKept {
            items: self.items.len(),
            rejected: rejected.join(", "),
            out: out.to_path_buf(),
            csv: csv.to_path_buf(),
        })
    }
}

#[derive(Default)]
struct Calls {
    cached: usize,
    sent: usize,
    unusable: usize,
    failed: usize,
}

impl Calls {
    fn add(&mut self, record: &crate::llm::CallRecord) {
        if record.cache_hit {
            self.cached += 1;
        } else {
            self.sent += 1;
        }
    }

    /// A call that ended in `error`: sent all the same; answered but unusable when the error is
    /// the server's answer ([`LlmError::is_result`]), else without a reply.
    fn add_error(&mut self, error: &LlmError) {
        self.sent += 1;
        if error.is_result() {
            self.unusable += 1;
        } else {
            self.failed += 1;
        }
    }
}

/// USD of the sent calls in `records` that have a price; `None` when none has.
fn spent(records: &[crate::llm::CallRecord]) -> Option<f64> {
    let costs: Vec<f64> = records
        .iter()
        .filter(|r| !r.cache_hit)
        .filter_map(|r| r.cost_usd)
        .collect();
    (!costs.is_empty()).then(|| costs.iter().sum())
}

/// Sends the planned calls (all at once: the client's limits pace them), checks every reply and
/// applies the filters in order.
///
/// # Errors
/// [`DraftError::Llm`] when the server refuses the key or the model (no more results are
/// awaited). A run with no usable reply is returned as it is: see [`Drafted::failure`].
pub async fn run(
    corpus: &Corpus,
    planned: Planned,
    settings: &DraftSettings,
    client: &LlmClient,
    embedder: Option<&LlmClient>,
    events: Events<'_>,
) -> Result<Drafted, DraftError> {
    let schema = ask::draft_schema(settings.max_quotes);
    let total = planned.requests.len();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for (n, req) in planned.requests.into_iter().enumerate() {
        let (client, schema, tx) = (client.clone(), schema.clone(), tx.clone());
        tokio::spawn(async move {
            let _ = tx.send((n, client.chat_json("golden_draft", req, &schema).await));
        });
    }
    drop(tx);
    let mut answers: Vec<Option<Result<crate::llm::JsonOutcome, LlmError>>> =
        (0..total).map(|_| None).collect();
    while let Some((n, answered)) = rx.recv().await {
        let answered = match answered {
            Err(e) if e.stops_run() => return Err(e.into()),
            other => other,
        };
        events(RunEvent::Note(format!(
            "answered {} of {total} ({}){}",
            answers.iter().filter(|a| a.is_some()).count() + 1,
            format_args!("draft-{:03}", n + 1),
            match &answered {
                Ok(out) if out.record.cache_hit => " from the cache".to_string(),
                Ok(_) => String::new(),
                Err(e) => format!(": {e}"),
            }
        )));
        answers[n] = Some(answered);
    }
    let mut calls = Calls::default();
    let mut finder = Finder::new(corpus);
    let limits = Limits {
        max_quotes: settings.max_quotes,
        min_evidence_chars: settings.min_evidence_chars,
        max_copied_share: settings.max_copied_share,
    };
    let mut items = Vec::with_capacity(total);
    let mut first_error = None;
    for (n, (answered, passage)) in answers.into_iter().zip(planned.passages).enumerate() {
        let answered = answered
            .ok_or_else(|| LlmError::Config("a drafting task ended without an answer".into()))?;
        let (reply, outcome) = match answered {
            Ok(out) => {
                calls.add(&out.record);
                match Reply::from_json(&out.value) {
                    Ok(reply) => {
                        let checked = verify::check(&reply, &passage, corpus, &mut finder, limits);
                        (Some(reply), checked)
                    }
                    Err(rejection) => {
                        calls.unusable += 1;
                        first_error.get_or_insert_with(|| rejection.1.clone());
                        (None, Err(rejection))
                    }
                }
            }
            Err(e) => {
                calls.add_error(&e);
                first_error.get_or_insert_with(|| e.to_string());
                (None, Err((Reason::NoReply, e.to_string())))
            }
        };
        items.push(Item {
            id: format!("draft-{:03}", n + 1),
            passage,
            reply,
            outcome,
        });
    }
    check_answers(&mut items, settings, client, &mut calls).await?;
    near_duplicates(&mut items, settings, embedder, &mut calls).await?;
    let mut records = client.records();
    records.extend(embedder.map(LlmClient::records).unwrap_or_default());
    Ok(Drafted {
        items,
        model: settings.model.clone(),
        prompt_sha256: ask::prompt_sha256(ask::DRAFT_PROMPT),
        cached_calls: calls.cached,
        sent_calls: calls.sent,
        unusable_calls: calls.unusable,
        failed_calls: calls.failed,
        first_error,
        spent_usd: spent(&records),
    })
}

/// Collapsed, lower-cased text, to see whether the evidence contains the answer.
fn plain(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Rejects items whose answer is not in their evidence and which the model check (when asked
/// for) says the evidence does not support.
async fn check_answers(
    items: &mut [Item],
    settings: &DraftSettings,
    client: &LlmClient,
    calls: &mut Calls,
) -> Result<(), DraftError> {
    if !settings.check_answers {
        return Ok(());
    }
    let asking = settings.asking();
    let schema = ask::check_schema();
    let mut pending = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let (Some(reply), Ok(quotes)) = (&item.reply, &item.outcome) else {
            continue;
        };
        let evidence: Vec<&str> = quotes.iter().map(|q| q.text.as_str()).collect();
        let evidence = evidence.join("\n\n");
        let answer = plain(reply.answer.trim_end_matches('.'));
        if plain(&evidence).contains(&answer) {
            continue;
        }
        let req = ask::check_request(&reply.question, &evidence, &reply.answer, &asking);
        let (client, schema) = (client.clone(), schema.clone());
        pending.push((
            i,
            tokio::spawn(async move { client.chat_json("golden_draft_check", req, &schema).await }),
        ));
    }
    for (i, handle) in pending {
        let answered = handle
            .await
            .map_err(|e| LlmError::Config(format!("a check task failed: {e}")))?;
        let verdict = match answered {
            Ok(out) => {
                calls.add(&out.record);
                let reason = out.value["reason"].as_str().unwrap_or_default().to_string();
                (out.value["supported"] == "yes").then_some(()).ok_or((
                    Reason::AnswerUnsupported,
                    format!("the model check says no: {reason}"),
                ))
            }
            Err(e) if e.stops_run() => return Err(e.into()),
            Err(e) => {
                calls.add_error(&e);
                Err((Reason::NoReply, format!("answer check failed: {e}")))
            }
        };
        if let Err(rejection) = verdict {
            items[i].outcome = Err(rejection);
        }
    }
    Ok(())
}

/// Rejects each question nearly the same as one kept before it: embedding cosine at or above
/// `max_cosine` with an embeddings model, else word Jaccard at or above `max_jaccard`.
async fn near_duplicates(
    items: &mut [Item],
    settings: &DraftSettings,
    embedder: Option<&LlmClient>,
    calls: &mut Calls,
) -> Result<(), DraftError> {
    let passing: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].outcome.is_ok())
        .collect();
    let question = |i: usize| items[i].reply.as_ref().map_or("", |r| r.question.as_str());
    let vectors = match (embedder, &settings.embed_model) {
        (Some(client), Some(model)) if !passing.is_empty() => {
            let inputs = passing
                .iter()
                .map(|&i| format!("{}{}", settings.embed_prefix, question(i)))
                .collect();
            let req = EmbedRequest {
                model: model.clone(),
                inputs,
            };
            let out = client.embed("golden_draft_dedup", req).await?;
            calls.add(&out.record);
            Some(out.embeddings)
        }
        _ => None,
    };
    let mut kept: Vec<usize> = Vec::new();
    let mut found = Vec::new();
    for (k, &i) in passing.iter().enumerate() {
        let similar = kept.iter().find_map(|&j| {
            let (sim, limit, measure) = match &vectors {
                Some(v) => (
                    cosine(&v[k], &v[j]),
                    settings.max_cosine,
                    "embedding cosine",
                ),
                None => (
                    words::jaccard(question(i), question(passing[j])),
                    settings.max_jaccard,
                    "word Jaccard",
                ),
            };
            (sim >= limit).then(|| {
                format!(
                    "{measure} {sim:.2} with {} (limit {limit})",
                    items[passing[j]].id
                )
            })
        });
        match similar {
            Some(detail) => found.push((i, detail)),
            None => kept.push(k),
        }
    }
    for (i, detail) in found {
        items[i].outcome = Err((Reason::NearDuplicate, detail));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sample::{Kind, Length, Position};

    fn item(n: usize, question: &str) -> Item {
        Item {
            id: format!("draft-{n:03}"),
            passage: Passage {
                doc: 0,
                start: 0,
                end: 1,
                position: Position::Start,
                kind: Kind::Prose,
                length: Length::Short,
            },
            reply: Some(Reply {
                question: question.into(),
                answer: "a".into(),
                quotes: vec!["q".into()],
            }),
            outcome: Ok(Vec::new()),
        }
    }

    #[tokio::test]
    async fn a_question_nearly_the_same_as_an_earlier_kept_one_is_rejected_with_both_named() {
        let mut items = vec![
            item(1, "How long is the refund window?"),
            item(2, "What is the refund window, how long?"),
            item(3, "Where do visitors sign in?"),
        ];
        // Item 3 was rejected before: it is neither compared nor changed.
        items[2].outcome = Err((Reason::QuoteNotFound, "x".into()));
        let mut calls = Calls::default();
        near_duplicates(&mut items, &DraftSettings::default(), None, &mut calls)
            .await
            .unwrap();
        assert!(items[0].outcome.is_ok());
        // {long, refund, window} against the same set: Jaccard 1.
        assert_eq!(
            items[1].outcome,
            Err((
                Reason::NearDuplicate,
                "word Jaccard 1.00 with draft-001 (limit 0.7)".into()
            ))
        );
        assert_eq!(items[2].outcome, Err((Reason::QuoteNotFound, "x".into())));
    }
}
