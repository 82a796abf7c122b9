//! Embeddings: [`LlmClient::embed`], one vector per input in input order.

use serde_json::json;

use super::LlmClient;
use crate::llm::accounting::Tokens;
use crate::llm::cost::estimate_embed_tokens;
use crate::llm::error::LlmError;
use crate::llm::record::CallKind;
use crate::llm::transport::{Attempts, SendError, Sent};
use crate::llm::types::{EmbedOutcome, EmbedRequest, WireEmbeddings};

/// The embeddings endpoint, after the base URL.
const EMBED: &str = "/embeddings";

impl LlmClient {
    /// Embeds `req.inputs` in one request; one vector per input, in input order.
    ///
    /// # Errors
    /// As [`chat`](Self::chat); [`LlmError::BadResponse`] if the server returns a different
    /// number of vectors than inputs; [`LlmError::Config`] for an empty input list.
    pub async fn embed(&self, stage: &str, req: EmbedRequest) -> Result<EmbedOutcome, LlmError> {
        let body = req.to_body();
        let (key, info) = self.key_for("embed", &req.model, json!({"request": body}));
        let ctx = self.ctx(stage, CallKind::Embed, &req.model, &key);
        if req.inputs.is_empty() {
            let e = LlmError::Config("embeddings request with no inputs".into());
            return Err(self.fail(&ctx, Attempts::default(), None, e));
        }
        let n = req.inputs.len();

        if let Some(hit) = self.cached(&key, &ctx).await?
            && let Some(embeddings) = serde_json::from_str::<WireEmbeddings>(&hit.body)
                .ok()
                .and_then(|w| ordered_embeddings(w, n).ok())
        {
            let record = self.hit(&ctx, &hit);
            return Ok(EmbedOutcome { embeddings, record });
        }

        let est = estimate_embed_tokens(&req.inputs);
        let mut att = Attempts::estimated_at(est);
        let parse = |text: &str| {
            serde_json::from_str::<WireEmbeddings>(text).map_err(|e| format!("not JSON: {e}"))
        };
        let build = || (body.clone(), None);
        match self
            .send(EMBED, stage, &req.model, &build, est, &mut att, parse)
            .await
        {
            Ok(Sent {
                reply: wire,
                raw,
                debited,
                ..
            }) => {
                let tokens = match wire.usage.as_ref().and_then(|u| u.prompt_tokens) {
                    Some(p) => Tokens {
                        prompt: p,
                        completion: 0,
                        estimated: false,
                    },
                    None => Tokens {
                        prompt: est,
                        completion: 0,
                        estimated: true,
                    },
                };
                let embeddings = match ordered_embeddings(wire, n) {
                    Ok(e) => e,
                    Err(detail) => {
                        let e = LlmError::bad_response(EMBED, detail);
                        return Err(self.fail(&ctx, att, None, e));
                    }
                };
                let note = self
                    .settle(&key, info, raw, &tokens, None, &req.model, debited)
                    .await;
                let record = self.ok(&ctx, att, &tokens, None, note);
                Ok(EmbedOutcome { embeddings, record })
            }
            Err(SendError::Refused(e, _) | SendError::Fatal(e)) => {
                Err(self.fail(&ctx, att, None, e))
            }
        }
    }
}

fn ordered_embeddings(w: WireEmbeddings, n: usize) -> Result<Vec<Vec<f32>>, String> {
    if w.data.len() != n {
        return Err(format!("{} vectors for {n} inputs", w.data.len()));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, e) in w.data.into_iter().enumerate() {
        let i = e.index.unwrap_or(pos);
        match slots.get_mut(i) {
            Some(slot @ None) => *slot = Some(e.embedding),
            _ => return Err(format!("bad or repeated embedding index {i}")),
        }
    }
    Ok(slots.into_iter().map(|s| s.unwrap_or_default()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_reordered_by_index() {
        let w: WireEmbeddings = serde_json::from_str(
            r#"{"data":[{"index":1,"embedding":[2.0]},{"index":0,"embedding":[1.0]}]}"#,
        )
        .unwrap();
        assert_eq!(
            ordered_embeddings(w, 2).unwrap(),
            vec![vec![1.0], vec![2.0]]
        );
        let w: WireEmbeddings = serde_json::from_str(r#"{"data":[{"embedding":[1.0]}]}"#).unwrap();
        assert!(ordered_embeddings(w, 2).is_err());
    }
}
