//! Token estimates (tiktoken's cl100k_base) and cost in USD from the per-model price table.

use crate::tokenize::{TokenCounter, TokenizerKind};

use super::config::{ClientConfig, ModelConfig};
use super::types::ChatMessage;

/// Tokens in `text` under cl100k_base. Exact for OpenAI's GPT-3.5/4 family, an estimate for
/// other models.
pub fn count_tokens(text: &str) -> u64 {
    TokenCounter::new(TokenizerKind::Cl100kBase).count(text) as u64
}

/// Estimated prompt tokens of a chat request: each message's content plus 4 tokens of framing per
/// message and 3 for the reply's priming (OpenAI's published counting recipe).
pub fn estimate_chat_prompt_tokens(messages: &[ChatMessage]) -> u64 {
    messages
        .iter()
        .map(|m| 4 + count_tokens(&m.content))
        .sum::<u64>()
        + 3
}

/// Estimated tokens of an embeddings request: the sum of the inputs' tokens.
pub fn estimate_embed_tokens(inputs: &[String]) -> u64 {
    inputs.iter().map(|s| count_tokens(s)).sum()
}

/// Cost in USD of `prompt_tokens` input and `completion_tokens` output tokens at the model's
/// prices per million tokens. `None` if the model has no input price (or, when output tokens were
/// used, no output price).
pub fn cost_usd(model: &ModelConfig, prompt_tokens: u64, completion_tokens: u64) -> Option<f64> {
    let input = model.input_usd_per_mtok?;
    let output = match model.output_usd_per_mtok {
        Some(p) => p,
        None if completion_tokens == 0 => 0.0,
        None => return None,
    };
    Some((prompt_tokens as f64 * input + completion_tokens as f64 * output) / 1_000_000.0)
}

/// What a call to `model` of `prompt_tokens` and `completion_tokens` will cost under `cfg`, in
/// USD: [`cost_usd`] at the model's prices, times its `batch_discount` when `cfg` sends calls
/// as batches. `None` as for [`cost_usd`].
pub fn planned_cost_usd(
    cfg: &ClientConfig,
    model: &str,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Option<f64> {
    let m = cfg.model(model);
    let discount = if cfg.batch.enabled {
        m.batch_discount
    } else {
        1.0
    };
    cost_usd(m, prompt_tokens, completion_tokens).map(|c| c * discount)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_from_price_table() {
        let m = ModelConfig {
            input_usd_per_mtok: Some(2.5),
            output_usd_per_mtok: Some(10.0),
            ..Default::default()
        };
        let c = cost_usd(&m, 1000, 200).unwrap();
        assert!((c - 0.0045).abs() < 1e-12, "{c}");
        assert_eq!(cost_usd(&ModelConfig::default(), 1000, 200), None);
        let embed_only = ModelConfig {
            input_usd_per_mtok: Some(0.02),
            ..Default::default()
        };
        assert!((cost_usd(&embed_only, 1_000_000, 0).unwrap() - 0.02).abs() < 1e-12);
        assert_eq!(cost_usd(&embed_only, 10, 5), None);
    }

    #[test]
    fn a_batched_call_is_planned_at_the_batch_price() {
        let mut cfg = ClientConfig::default();
        cfg.defaults.input_usd_per_mtok = Some(2.0);
        cfg.defaults.output_usd_per_mtok = Some(8.0);
        assert_eq!(planned_cost_usd(&cfg, "m", 1_000_000, 0), Some(2.0));
        cfg.batch.enabled = true;
        assert_eq!(planned_cost_usd(&cfg, "m", 1_000_000, 500_000), Some(3.0));
        cfg.defaults.batch_discount = 0.25;
        assert_eq!(planned_cost_usd(&cfg, "m", 0, 1_000_000), Some(2.0));
    }

    #[test]
    fn token_estimates() {
        assert_eq!(count_tokens("hello world"), 2);
        let msgs = [ChatMessage::user("hello world")];
        assert_eq!(estimate_chat_prompt_tokens(&msgs), 2 + 4 + 3);
    }
}
