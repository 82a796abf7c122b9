//! Reranking: [`LlmClient::rerank`], one relevance score per document in document order.
//!
//! Two wire shapes ([`RerankApi`]):
//! - `/rerank` after a `/v1` base URL, the shape of Cohere, Jina, llama.cpp's server and vLLM:
//!   `{"model", "query", "documents", "top_n"}` → `{"results": [{"index", "relevance_score"}]}`;
//! - TEI's `/rerank` (text-embeddings-inference) after the server's root URL:
//!   `{"query", "texts", "raw_scores": false}` → `[{"index", "score"}]`.
//!
//! Every document sent must come back once with a numeric score: an index out of range, a
//! repeated index, fewer results than documents or a score that is not a finite number is
//! [`LlmError::BadResponse`] naming what is wrong, and nothing of the reply is used (or cached).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::LlmClient;
use crate::llm::accounting::Tokens;
use crate::llm::config::ModelConfig;
use crate::llm::cost::{cost_usd, count_tokens};
use crate::llm::error::LlmError;
use crate::llm::record::{CallKind, CallRecord};
use crate::llm::transport::{Attempts, SendError, Sent};

/// The rerank endpoint, after the base URL (`…/v1` for [`RerankApi::V1`], the server's root
/// for [`RerankApi::Tei`]).
const RERANK: &str = "/rerank";

/// Which rerank wire shape a server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RerankApi {
    /// `/v1/rerank` as Cohere, Jina, llama.cpp's server and vLLM serve it (the default).
    #[default]
    V1,
    /// text-embeddings-inference's `/rerank`.
    Tei,
}

impl std::str::FromStr for RerankApi {
    type Err = String;
    /// `v1` or `tei`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "v1" => Ok(RerankApi::V1),
            "tei" => Ok(RerankApi::Tei),
            other => Err(format!("unknown rerank API {other:?}: use v1 or tei")),
        }
    }
}

/// One rerank request: a query and the documents to score against it.
#[derive(Debug, Clone, PartialEq)]
pub struct RerankRequest {
    /// Reranker model name (TEI serves one model and is not sent it).
    pub model: String,
    /// The query.
    pub query: String,
    /// The documents, in order; the outcome has one score per document, in the same order.
    pub documents: Vec<String>,
    /// The wire shape.
    pub api: RerankApi,
}

impl RerankRequest {
    fn to_body(&self) -> Value {
        match self.api {
            RerankApi::V1 => json!({
                "model": self.model,
                "query": self.query,
                "documents": self.documents,
                "top_n": self.documents.len(),
            }),
            RerankApi::Tei => json!({
                "query": self.query,
                "texts": self.documents,
                "raw_scores": false,
            }),
        }
    }

    /// The cl100k_base estimate of the request's input tokens: the query once per document
    /// (a cross-encoder reads each pair) plus every document.
    pub fn estimated_tokens(&self) -> u64 {
        let q = count_tokens(&self.query);
        self.documents
            .iter()
            .map(|d| q + count_tokens(d))
            .sum::<u64>()
    }
}

/// The result of [`LlmClient::rerank`].
#[derive(Debug, Clone, PartialEq)]
pub struct RerankOutcome {
    /// The relevance score of each document, in document order, on the reranker's scale
    /// (higher is more relevant).
    pub scores: Vec<f64>,
    /// The accounting record of this call.
    pub record: CallRecord,
}

/// What a rerank call of `prompt_tokens` input tokens costs at `model`'s prices: its price per
/// request (`usd_per_request`, a search as Cohere bills it) plus its input tokens at
/// `input_usd_per_mtok`; `None` when the model has neither price.
pub fn rerank_cost_usd(model: &ModelConfig, prompt_tokens: u64) -> Option<f64> {
    match (model.usd_per_request, cost_usd(model, prompt_tokens, 0)) {
        (None, None) => None,
        (r, t) => Some(r.unwrap_or(0.0) + t.unwrap_or(0.0)),
    }
}

impl LlmClient {
    /// Scores `req.documents` against `req.query` in one request (cache first); one score per
    /// document, in document order.
    ///
    /// # Errors
    /// As [`chat`](Self::chat); [`LlmError::BadResponse`] for a reply that does not score
    /// every document once with a finite number (see the module documentation);
    /// [`LlmError::Config`] for an empty document list.
    pub async fn rerank(
        &self,
        stage: &str,
        req: &RerankRequest,
    ) -> Result<RerankOutcome, LlmError> {
        let body = req.to_body();
        let (key, info) = self.key_for("rerank", &req.model, json!({"request": body}));
        let ctx = self.ctx(stage, CallKind::Rerank, &req.model, &key);
        if req.documents.is_empty() {
            let e = LlmError::Config("rerank request with no documents".into());
            return Err(self.fail(&ctx, Attempts::default(), None, e));
        }
        let n = req.documents.len();
        if let Some(hit) = self.cached(&key, &ctx).await?
            && let Ok(scores) = read_scores(&hit.body, req.api, n)
        {
            let record = self.hit(&ctx, &hit);
            return Ok(RerankOutcome { scores, record });
        }
        let est = req.estimated_tokens();
        let mut att = Attempts::estimated_at(est);
        let parse =
            |text: &str| serde_json::from_str::<Value>(text).map_err(|e| format!("not JSON: {e}"));
        let build = || (body.clone(), None);
        match self
            .send(RERANK, stage, &req.model, &build, est, &mut att, parse)
            .await
        {
            Ok(Sent {
                reply,
                raw,
                debited,
                ..
            }) => {
                let scores = match scores_of(&reply, req.api, n) {
                    Ok(s) => s,
                    Err(detail) => {
                        let e = LlmError::bad_response(RERANK, detail);
                        return Err(self.fail(&ctx, att, None, e));
                    }
                };
                let tokens = match usage_tokens(&reply) {
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
                let note = self
                    .settle(&key, info, raw, &tokens, None, &req.model, debited)
                    .await;
                let mut record = self.build_ok(&ctx, att, &tokens, None);
                record.cost_usd = rerank_cost_usd(self.model_cfg(&req.model), tokens.prompt);
                record.error = note;
                self.push(record.clone());
                Ok(RerankOutcome { scores, record })
            }
            Err(SendError::Refused(e, _) | SendError::Fatal(e)) => {
                Err(self.fail(&ctx, att, None, e))
            }
        }
    }

    /// Whether the response cache answers `req` (nothing is sent, nothing recorded): what a
    /// dry run counts with. `false` without a cache.
    ///
    /// # Errors
    /// [`LlmError::Cache`] when the cache cannot be read.
    pub async fn rerank_is_cached(&self, req: &RerankRequest) -> Result<bool, LlmError> {
        let body = req.to_body();
        let (key, _) = self.key_for("rerank", &req.model, json!({"request": body}));
        let Some(cache) = &self.inner.cache else {
            return Ok(false);
        };
        Ok(cache
            .get(&key)
            .await?
            .is_some_and(|hit| read_scores(&hit.body, req.api, req.documents.len()).is_ok()))
    }
}

fn read_scores(body: &str, api: RerankApi, n: usize) -> Result<Vec<f64>, String> {
    let v: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    scores_of(&v, api, n)
}

/// Input tokens the server reports: `usage.prompt_tokens`, `usage.total_tokens` (vLLM,
/// llama.cpp, Jina) or `meta.billed_units.input_tokens` (Cohere).
fn usage_tokens(reply: &Value) -> Option<u64> {
    let u = &reply["usage"];
    u["prompt_tokens"]
        .as_u64()
        .or_else(|| u["total_tokens"].as_u64())
        .or_else(|| reply["meta"]["billed_units"]["input_tokens"].as_u64())
}

/// One score per document from a reply, in document order.
///
/// # Errors
/// What is wrong: no results list, a result without an index or with one out of range, a
/// repeated index, a score that is missing or not a finite number, fewer results than documents.
fn scores_of(reply: &Value, api: RerankApi, n: usize) -> Result<Vec<f64>, String> {
    let (results, field) = match api {
        RerankApi::V1 => (reply["results"].as_array(), "relevance_score"),
        RerankApi::Tei => (reply.as_array(), "score"),
    };
    let results = results.ok_or_else(|| match api {
        RerankApi::V1 => "no \"results\" list".to_string(),
        RerankApi::Tei => "the reply is not a list of results".to_string(),
    })?;
    let mut scores: Vec<Option<f64>> = vec![None; n];
    for (pos, r) in results.iter().enumerate() {
        let index = r["index"]
            .as_u64()
            .ok_or_else(|| format!("result {} has no whole-number \"index\"", pos + 1))?
            as usize;
        let slot = scores.get_mut(index).ok_or_else(|| {
            format!(
                "result {} names document {index}, out of range for {n} documents",
                pos + 1
            )
        })?;
        if slot.is_some() {
            return Err(format!("document {index} is scored twice"));
        }
        let score = r[field].as_f64().filter(|s| s.is_finite()).ok_or_else(|| {
            format!(
                "result {} (document {index}) has {field} {}, not a number",
                pos + 1,
                r[field]
            )
        })?;
        *slot = Some(score);
    }
    let missing = scores.iter().filter(|s| s.is_none()).count();
    if missing > 0 {
        return Err(format!(
            "{} results for {n} documents ({missing} documents not scored)",
            n - missing
        ));
    }
    Ok(scores.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1(results: Value) -> Result<Vec<f64>, String> {
        scores_of(&json!({ "results": results }), RerankApi::V1, 3)
    }

    #[test]
    fn scores_are_put_back_in_document_order() {
        let r = v1(json!([
            {"index": 2, "relevance_score": 0.9},
            {"index": 0, "relevance_score": 0.5},
            {"index": 1, "relevance_score": -1.25}
        ]));
        assert_eq!(r.unwrap(), vec![0.5, -1.25, 0.9]);
        let tei = scores_of(
            &json!([{"index": 1, "score": 0.25}, {"index": 0, "score": 0.75}]),
            RerankApi::Tei,
            2,
        );
        assert_eq!(tei.unwrap(), vec![0.75, 0.25]);
    }

    #[test]
    fn each_bad_reply_is_named() {
        let e = v1(json!([{"index": 3, "relevance_score": 0.1}])).unwrap_err();
        assert_eq!(e, "result 1 names document 3, out of range for 3 documents");
        let e = v1(json!([
            {"index": 1, "relevance_score": 0.1},
            {"index": 1, "relevance_score": 0.2}
        ]))
        .unwrap_err();
        assert_eq!(e, "document 1 is scored twice");
        let e = v1(json!([
            {"index": 0, "relevance_score": 0.1},
            {"index": 1, "relevance_score": 0.2}
        ]))
        .unwrap_err();
        assert_eq!(e, "2 results for 3 documents (1 documents not scored)");
        let e = v1(json!([{"index": 0, "relevance_score": "high"}])).unwrap_err();
        assert_eq!(
            e,
            "result 1 (document 0) has relevance_score \"high\", not a number"
        );
        let e = scores_of(&json!({"data": []}), RerankApi::V1, 1).unwrap_err();
        assert_eq!(e, "no \"results\" list");
    }

    #[test]
    fn a_rerank_call_costs_its_request_price_and_its_tokens() {
        let m = ModelConfig {
            usd_per_request: Some(0.002),
            ..ModelConfig::default()
        };
        assert_eq!(rerank_cost_usd(&m, 1_000_000), Some(0.002));
        let m = ModelConfig {
            input_usd_per_mtok: Some(0.05),
            ..m
        };
        assert!((rerank_cost_usd(&m, 1_000_000).unwrap() - 0.052).abs() < 1e-12);
        assert_eq!(rerank_cost_usd(&ModelConfig::default(), 10), None);
    }

    #[test]
    fn the_two_wire_shapes() {
        let req = RerankRequest {
            model: "m".into(),
            query: "q".into(),
            documents: vec!["a".into(), "b".into()],
            api: RerankApi::V1,
        };
        assert_eq!(
            req.to_body(),
            json!({"model": "m", "query": "q", "documents": ["a", "b"], "top_n": 2})
        );
        let tei = RerankRequest {
            api: RerankApi::Tei,
            ..req
        };
        assert_eq!(
            tei.to_body(),
            json!({"query": "q", "texts": ["a", "b"], "raw_scores": false})
        );
    }
}
