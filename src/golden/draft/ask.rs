//! What the model is asked: the drafting request for a passage (`prompts/draft.md`), the answer
//! check (`prompts/draft_check.md`), their JSON schemas, and the estimate of the calls.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::sample::{Length, Passage};
use crate::budget::CostEstimate;
use crate::corpus::Corpus;
use crate::llm::config::ClientConfig;
use crate::llm::cost::{cost_usd, count_tokens, estimate_chat_prompt_tokens};
use crate::llm::{ChatMessage, ChatRequest};

/// The drafting template, compiled in (`prompts/draft.md`).
pub const DRAFT_PROMPT: &str = include_str!("../../../prompts/draft.md");
/// The answer-check template, compiled in (`prompts/draft_check.md`).
pub const CHECK_PROMPT: &str = include_str!("../../../prompts/draft_check.md");

/// SHA-256 (hex) of a template's text: the `prompt_sha256` of every drafted item.
pub fn prompt_sha256(template: &str) -> String {
    hex::encode(Sha256::digest(template.as_bytes()))
}

/// The schema of a drafted item: `{"question", "answer", "evidence": [strings]}`, with at most
/// `max_quotes` quotes and bounded lengths (in characters: question 300, answer 500, quote 1,000),
/// so that a server that enforces the schema (llama.cpp's grammar) cannot ramble to the token
/// cap. `"additionalProperties": false`: without it llama.cpp's grammar lets a model add keys of
/// its own until the token cap. A server that does not enforce the schema is still checked by the
/// filters.
///
/// serde_json sends the properties sorted (answer, evidence, question: the crate is built without
/// `preserve_order`), so a grammar-constrained model writes the question last, whatever order the
/// prompt asks for; the reply is read by key, so only the model's order of thought changes.
pub fn draft_schema(max_quotes: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1, "maxLength": 300},
            "answer": {"type": "string", "minLength": 1, "maxLength": 500},
            "evidence": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 1000},
                "minItems": 1,
                "maxItems": max_quotes
            }
        },
        "required": ["question", "answer", "evidence"],
        "additionalProperties": false
    })
}

/// The schema of the answer check: `{"supported": "yes" | "no", "reason"}`, no other key.
pub fn check_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "supported": {"type": "string", "enum": ["yes", "no"]},
            "reason": {"type": "string"}
        },
        "required": ["supported"],
        "additionalProperties": false
    })
}

/// The model settings of the calls.
#[derive(Debug, Clone)]
pub struct Asking {
    /// The chat model.
    pub model: String,
    /// Seed sent with each request (servers that accept one).
    pub seed: u64,
    /// Completion cap per call, tokens.
    pub max_tokens: u32,
    /// Most quotes asked for.
    pub max_quotes: usize,
}

/// `text` with the passage fence's closing tag broken, so a document cannot end the block.
fn fenced(text: &str, tag: &str) -> String {
    text.replace(&format!("</{tag}>"), &format!("</ {tag}>"))
}

fn request(asking: &Asking, prompt: String) -> ChatRequest {
    ChatRequest {
        temperature: Some(0.0),
        max_tokens: Some(asking.max_tokens),
        seed: Some(asking.seed as i64),
        reject_truncated: true,
        ..ChatRequest::new(asking.model.clone(), vec![ChatMessage::user(prompt)])
    }
}

/// The drafting request for `passage`.
pub fn draft_request(corpus: &Corpus, passage: &Passage, asking: &Asking) -> ChatRequest {
    let doc = &corpus.docs[passage.doc];
    let length = match passage.length {
        Length::Short => "one short quote (one sentence, list item or table row)",
        Length::Long => "one to three longer quotes (several sentences, list items or table rows)",
    };
    let max_quotes = asking.max_quotes.to_string();
    let text = fenced(
        doc.slice_chars(passage.start, passage.end).trim_end(),
        "passage",
    );
    let prompt = crate::template::render(
        DRAFT_PROMPT,
        &[
            ("document", doc.id.as_str()),
            ("passage", &text),
            ("length", length),
            ("max_quotes", &max_quotes),
        ],
    );
    request(asking, prompt)
}

/// The answer-check request for a question, its evidence (quotes joined by blank lines) and its
/// answer.
pub fn check_request(question: &str, evidence: &str, answer: &str, asking: &Asking) -> ChatRequest {
    let prompt = crate::template::render(
        CHECK_PROMPT,
        &[
            ("question", &fenced(question, "question")),
            ("evidence", &fenced(evidence, "evidence")),
            ("answer", &fenced(answer, "answer")),
        ],
    );
    request(asking, prompt)
}

/// Calls, tokens and cost of a drafting run, before anything is sent: one call per passage in
/// `requests` (drafting, each sent with `schema`) and, with `check`, as many answer checks (an
/// upper bound: an answer found in its evidence is not checked), each counted as the check
/// template, its schema and 400 tokens for the question, evidence and answer; completion tokens
/// at the cap; `cfg` gives `model`'s prices.
pub fn drafting_estimate(
    requests: &[ChatRequest],
    schema: &Value,
    check: bool,
    cfg: &ClientConfig,
    model: &str,
) -> CostEstimate {
    let draft_schema = count_tokens(&schema.to_string());
    let mut prompt_tokens: u64 = requests
        .iter()
        .map(|r| estimate_chat_prompt_tokens(&r.messages) + draft_schema)
        .sum();
    let mut calls = requests.len();
    if check {
        let per = count_tokens(CHECK_PROMPT) + count_tokens(&check_schema().to_string()) + 400;
        prompt_tokens += per * requests.len() as u64;
        calls *= 2;
    }
    let cap = requests.first().and_then(|r| r.max_tokens).unwrap_or(0);
    let completion_tokens = calls as u64 * u64::from(cap);
    CostEstimate {
        calls,
        prompt_tokens,
        completion_tokens,
        cost_usd: cost_usd(cfg.model(model), prompt_tokens, completion_tokens),
    }
}

/// One line: `N chat calls to SERVER (model M), about P prompt tokens and at most C completion
/// tokens; estimated cost $X (cache hits cost nothing)`.
pub fn drafting_line(e: &CostEstimate, server: &str, model: &str) -> String {
    let cost = e.cost_text("no price for the model in [llm.models]");
    format!(
        "{} chat calls to {server} (model {model}), about {} prompt tokens and at most {} completion tokens; estimated cost {cost} (cache hits cost nothing)",
        e.calls, e.prompt_tokens, e.completion_tokens
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_schemas_forbid_keys_of_the_models_own() {
        let draft = draft_schema(3);
        assert_eq!(draft["additionalProperties"], json!(false));
        assert_eq!(draft["required"], json!(["question", "answer", "evidence"]));
        assert_eq!(draft["properties"]["evidence"]["maxItems"], json!(3));
        let check = check_schema();
        assert_eq!(check["additionalProperties"], json!(false));
        assert_eq!(check["required"], json!(["supported"]));
    }
}
