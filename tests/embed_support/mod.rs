//! A mock OpenAI-compatible /embeddings reply whose vectors are chosen by keyword, so that every
//! similarity, ranking and split in a test is known by hand. Shared by the tests that embed.

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

/// Vector of `text`, one dimension per keyword group and one more: dimension `i` is 1 when the
/// lowercased text contains any word of `groups[i]`; the last is 1 when no group matched.
pub fn keyword_vector(text: &str, groups: &[&[&str]]) -> Vec<f32> {
    let t = text.to_lowercase();
    let mut v: Vec<f32> = groups
        .iter()
        .map(|words| f32::from(u8::from(words.iter().any(|w| t.contains(w)))))
        .collect();
    v.push(f32::from(u8::from(v.iter().all(|&x| x == 0.0))));
    v
}

/// Reads an /embeddings request body and answers it with [`keyword_vector`] of each input.
/// Returns the model, the inputs in order, and the reply (usage: whitespace-separated words).
pub fn embeddings_reply(
    body: &Value,
    groups: &[&[&str]],
) -> (String, Vec<String>, ResponseTemplate) {
    let model = body["model"].as_str().unwrap().to_string();
    let inputs: Vec<String> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"object": "embedding", "index": i, "embedding": keyword_vector(s, groups)}))
        .collect();
    let tokens: usize = inputs.iter().map(|s| s.split_whitespace().count()).sum();
    let reply = ResponseTemplate::new(200).set_body_json(json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
    }));
    (model, inputs, reply)
}

/// A config file's text for a test folder holding `corpus/` and `golden.jsonl`, with the chat
/// and embeddings server at `base` (no key, no pacing, caches in the folder); callers append
/// their own sections.
#[allow(dead_code)] // not every test that embeds writes a config file
pub fn mock_config(base: &str) -> String {
    format!(
        r#"corpus = "corpus"
golden = "golden.jsonl"

[llm]
base_url = "{base}/v1"
api_key_env = "CHUNKSWEEP_TEST_NO_SUCH_KEY"
cache_path = "cache.sqlite"

[llm.defaults]
rpm = 0
max_in_flight = 8
timeout_s = 10.0

[embed]
model = "e5-passage"
query_model = "e5-query"
cache_path = "embed.sqlite"
"#
    )
}

/// The mock reranker's score of `document` for `query`: the number of distinct words of the
/// query (lowercased runs of letters, 4 letters or more) that occur among the document's words.
/// A known function of the two texts, so every reranked order in a test is known by hand.
#[allow(dead_code)] // only the rerank tests rerank
pub fn overlap_score(query: &str, document: &str) -> f64 {
    let words = |t: &str| -> std::collections::BTreeSet<String> {
        t.to_lowercase()
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_string)
            .collect()
    };
    let d = words(document);
    words(query).iter().filter(|w| d.contains(*w)).count() as f64
}

/// Reads a /v1/rerank request body (`{"model", "query", "documents", "top_n"}`) and answers it
/// with [`overlap_score`] of each document, best first as Cohere does (`results[{index,
/// relevance_score}]`, usage: whitespace-separated words of the query and documents). Returns
/// the query, the number of documents and the reply.
#[allow(dead_code)] // only the rerank tests rerank
pub fn rerank_reply(body: &Value) -> (String, usize, ResponseTemplate) {
    let query = body["query"].as_str().unwrap().to_string();
    let docs: Vec<&str> = body["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let mut results: Vec<(usize, f64)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (i, overlap_score(&query, d)))
        .collect();
    results.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let results: Vec<Value> = results
        .into_iter()
        .map(|(i, s)| json!({"index": i, "relevance_score": s}))
        .collect();
    let tokens: usize = docs
        .iter()
        .map(|d| d.split_whitespace().count() + query.split_whitespace().count())
        .sum();
    let reply = ResponseTemplate::new(200).set_body_json(json!({
        "id": "rerank-1",
        "results": results,
        "usage": {"total_tokens": tokens}
    }));
    (query, docs.len(), reply)
}
