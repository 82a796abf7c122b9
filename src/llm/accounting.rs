//! Accounting: one call's context, its tokens (the server's usage or estimates), the record of
//! what it cost and how it went, and the ledger every record goes to.

use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use tokio::sync::mpsc;

use super::cache::CachedResponse;
use super::cost::count_tokens;
use super::format::ResponseFormatKind;
use super::record::{CallKind, CallRecord, rfc3339, rfc3339_utc};
use super::transport::{Attempts, ms};
use super::types::WireUsage;

/// Token accounting of a successful reply.
pub(super) struct Tokens {
    pub(super) prompt: u64,
    pub(super) completion: u64,
    pub(super) estimated: bool,
}

/// Usage from the server when complete; otherwise estimates for what is missing, flagged.
pub(super) fn chat_tokens(usage: Option<&WireUsage>, est_prompt: u64, content: &str) -> Tokens {
    let p = usage.and_then(|u| u.prompt_tokens);
    let c = usage.and_then(|u| u.completion_tokens);
    Tokens {
        prompt: p.unwrap_or(est_prompt),
        completion: c.unwrap_or_else(|| count_tokens(content)),
        estimated: p.is_none() || c.is_none(),
    }
}

/// One call being made: what the records of its outcome say about it.
pub(super) struct CallCtx<'a> {
    stage: &'a str,
    kind: CallKind,
    pub(super) model: &'a str,
    request_key: String,
    started: SystemTime,
    t0: Instant,
}

impl<'a> CallCtx<'a> {
    /// A call starting now; `key` is the request's cache key (its first 16 hex digits go into
    /// the record).
    pub(super) fn new(stage: &'a str, kind: CallKind, model: &'a str, key: &str) -> Self {
        CallCtx {
            stage,
            kind,
            model,
            request_key: key.chars().take(16).collect(),
            started: SystemTime::now(),
            t0: Instant::now(),
        }
    }

    fn base(&self) -> CallRecord {
        CallRecord {
            stage: self.stage.to_string(),
            kind: self.kind,
            model: self.model.to_string(),
            request_key: self.request_key.clone(),
            started_at: rfc3339_utc(self.started),
            latency_ms_first_byte: None,
            latency_ms_total: None,
            wall_ms: ms(self.t0.elapsed()),
            prompt_tokens: 0,
            completion_tokens: 0,
            tokens_estimated: false,
            cost_usd: None,
            attempts: 0,
            cache_hit: false,
            response_format: None,
            http_status: None,
            error: None,
            batch_id: None,
            batch_submitted_at: None,
            batch_completed_at: None,
        }
    }

    /// The base record of a call, with the batch that carried it (if any).
    fn base_of(&self, att: &Attempts) -> CallRecord {
        let mut r = self.base();
        if let Some(b) = &att.batch {
            r.batch_id = Some(b.batch_id.clone());
            r.batch_submitted_at = Some(rfc3339(b.submitted_at));
            r.batch_completed_at = b.completed_at.map(rfc3339);
        }
        r
    }

    /// The record of a call answered from the cache: its stored tokens, no cost.
    pub(super) fn hit(&self, hit: &CachedResponse) -> CallRecord {
        CallRecord {
            prompt_tokens: hit.prompt_tokens,
            completion_tokens: hit.completion_tokens,
            tokens_estimated: hit.tokens_estimated,
            cost_usd: Some(0.0),
            cache_hit: true,
            response_format: hit.response_format,
            ..self.base()
        }
    }

    /// The record of a call the server answered, with its cost in USD (`None` without prices).
    pub(super) fn answered(
        &self,
        att: Attempts,
        tokens: &Tokens,
        mode: Option<ResponseFormatKind>,
        cost_usd: Option<f64>,
    ) -> CallRecord {
        CallRecord {
            latency_ms_first_byte: att.latency.map(|l| l.0),
            latency_ms_total: att.latency.map(|l| l.1),
            prompt_tokens: tokens.prompt,
            completion_tokens: tokens.completion,
            tokens_estimated: tokens.estimated,
            cost_usd,
            attempts: att.count,
            response_format: mode,
            http_status: att.last_status,
            ..self.base_of(&att)
        }
    }

    /// The record of a call that failed with `error` (already scrubbed). Its tokens are those of
    /// [`unanswered_tokens`]: never a silent 0 for a request that was sent.
    pub(super) fn failed(
        &self,
        att: Attempts,
        mode: Option<ResponseFormatKind>,
        error: String,
    ) -> CallRecord {
        let tokens = unanswered_tokens(&att);
        CallRecord {
            latency_ms_first_byte: att.latency.map(|l| l.0),
            latency_ms_total: att.latency.map(|l| l.1),
            prompt_tokens: tokens.prompt,
            completion_tokens: tokens.completion,
            tokens_estimated: tokens.estimated,
            attempts: att.count,
            response_format: mode,
            http_status: att.last_status,
            error: Some(error),
            ..self.base_of(&att)
        }
    }
}

/// The tokens of a call that got no usable reply. Nothing sent (`att.count` 0): 0 tokens, which
/// is exact. Otherwise the server reported nothing readable, so they are unknown and estimated
/// (flagged `estimated`): the prompt at the request's estimate before sending
/// (`att.est_prompt`), the completion at the cl100k_base tokens of the last 2xx body that could
/// not be read, 0 when no such body came back (a timeout, a dropped connection, a 429 or 5xx);
/// a `usage` object readable in that body is taken as given for the counts it holds.
pub(super) fn unanswered_tokens(att: &Attempts) -> Tokens {
    if att.count == 0 {
        return Tokens {
            prompt: 0,
            completion: 0,
            estimated: false,
        };
    }
    let Some(body) = &att.unreadable_2xx else {
        return Tokens {
            prompt: att.est_prompt,
            completion: 0,
            estimated: true,
        };
    };
    let usage = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("usage")
                .filter(|u| u.is_object())
                .map(WireUsage::from_value)
        });
    let p = usage.and_then(|u| u.prompt_tokens);
    let c = usage.and_then(|u| u.completion_tokens);
    Tokens {
        prompt: p.unwrap_or(att.est_prompt),
        completion: c.unwrap_or_else(|| count_tokens(body)),
        estimated: p.is_none() || c.is_none(),
    }
}

/// Every record of a client, in completion order, and the channels that receive each one.
#[derive(Default)]
pub(super) struct Ledger {
    records: Mutex<Vec<CallRecord>>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<CallRecord>>>,
}

impl Ledger {
    /// Appends `record` and sends it to every subscriber still listening.
    pub(super) fn push(&self, record: CallRecord) {
        self.records
            .lock()
            .expect("records lock")
            .push(record.clone());
        self.subscribers
            .lock()
            .expect("lock")
            .retain(|tx| tx.send(record.clone()).is_ok());
    }

    /// A copy of every record so far.
    pub(super) fn records(&self) -> Vec<CallRecord> {
        self.records.lock().expect("records lock").clone()
    }

    /// Removes and returns the records so far.
    pub(super) fn take(&self) -> Vec<CallRecord> {
        std::mem::take(&mut *self.records.lock().expect("records lock"))
    }

    /// A channel that receives every record from now on.
    pub(super) fn subscribe(&self) -> mpsc::UnboundedReceiver<CallRecord> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.subscribers.lock().expect("lock").push(tx);
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_usage_is_flagged() {
        let u = WireUsage {
            prompt_tokens: Some(100),
            completion_tokens: None,
        };
        let t = chat_tokens(Some(&u), 7, "hello world");
        assert_eq!((t.prompt, t.completion, t.estimated), (100, 2, true));
        let u = WireUsage {
            prompt_tokens: Some(100),
            completion_tokens: Some(9),
        };
        let t = chat_tokens(Some(&u), 7, "hello world");
        assert_eq!((t.prompt, t.completion, t.estimated), (100, 9, false));
        let t = chat_tokens(None, 7, "hello world");
        assert_eq!((t.prompt, t.completion, t.estimated), (7, 2, true));
    }

    #[test]
    fn a_call_without_a_readable_reply_has_estimated_tokens_never_a_silent_zero() {
        let tokens = |att: &Attempts| {
            let t = unanswered_tokens(att);
            (t.prompt, t.completion, t.estimated)
        };
        // nothing sent: nothing spent, exactly
        assert_eq!(tokens(&Attempts::estimated_at(40)), (0, 0, false));
        // sent, no reply (timeouts, 429, 5xx): the prompt as estimated, flagged
        let mut att = Attempts::estimated_at(40);
        att.count = 2;
        assert_eq!(tokens(&att), (40, 0, true));
        // a 200 whose body cannot be read: its text counted as the completion
        att.unreadable_2xx = Some("<html>gateway</html>".into());
        assert_eq!(
            tokens(&att),
            (40, count_tokens("<html>gateway</html>"), true)
        );
        // … and its usage taken as given where it is readable
        att.unreadable_2xx = Some(
            r#"{"choices": [], "usage": {"prompt_tokens": 31, "completion_tokens": 4}}"#.into(),
        );
        assert_eq!(tokens(&att), (31, 4, false));
        att.unreadable_2xx = Some(r#"{"choices": [], "usage": {"prompt_tokens": 31}}"#.into());
        assert_eq!(tokens(&att).0, 31);
        assert!(tokens(&att).2);
    }
}
