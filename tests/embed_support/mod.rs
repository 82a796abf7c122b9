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
