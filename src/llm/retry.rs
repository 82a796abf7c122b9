//! When and how long to wait before retrying.
//!
//! Retried: 408, 429, every 5xx (except a 500 that refuses `response_format`, see
//! [`structured`](super::structured)), timeouts, connection errors, and 2xx replies whose body is
//! not the JSON we expect. Not retried: every other 4xx.
//!
//! The wait is the server's hint when it gives one (`retry-after-ms`, then `Retry-After` as
//! seconds, fractional seconds or an HTTP date, then `x-ratelimit-reset-requests` /
//! `x-ratelimit-reset-tokens` in Go duration syntax like `6m0s`, `1.5s`, `250ms`), plus up to 10%
//! jitter; otherwise exponential backoff with full jitter.

use std::time::{Duration, SystemTime};

use rand::RngExt;
use reqwest::header::HeaderMap;

use super::config::RetryConfig;

/// Whether an HTTP status is worth retrying.
pub fn is_retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || (500..=599).contains(&status)
}

/// Parses a `Retry-After` value: delay in (possibly fractional) seconds, or an HTTP date
/// (a date in the past gives zero).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return secs_to_duration(secs);
    }
    let date = httpdate::parse_http_date(v).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses a Go-style duration as used by `x-ratelimit-reset-*`: `"6m0s"`, `"1.5s"`, `"250ms"`,
/// `"1h2m3.5s"`, `"20us"`; a bare number is seconds.
pub fn parse_go_duration(value: &str) -> Option<Duration> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if let Ok(secs) = v.parse::<f64>() {
        return secs_to_duration(secs);
    }
    let mut total = 0.0f64;
    let mut rest = v;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit_len..];
    }
    secs_to_duration(total)
}

fn secs_to_duration(secs: f64) -> Option<Duration> {
    if secs.is_finite() && secs >= 0.0 {
        Some(Duration::from_secs_f64(secs))
    } else {
        None
    }
}

/// The server's requested wait, from the first of: `retry-after-ms`, `Retry-After`, and the
/// `x-ratelimit-reset-{requests,tokens}` pair (the one whose `x-ratelimit-remaining-*` is 0, or the
/// longer of the two when that is not said).
pub fn retry_hint(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && let Some(d) = secs_to_duration(ms / 1000.0)
    {
        return Some(d);
    }
    if let Some(d) = get("retry-after").and_then(|v| parse_retry_after(v, now)) {
        return Some(d);
    }
    let req = get("x-ratelimit-reset-requests").and_then(parse_go_duration);
    let tok = get("x-ratelimit-reset-tokens").and_then(parse_go_duration);
    let exhausted = |name: &str| get(name).map(|v| v.trim() == "0");
    match (
        exhausted("x-ratelimit-remaining-requests"),
        exhausted("x-ratelimit-remaining-tokens"),
    ) {
        (Some(true), Some(false)) if req.is_some() => req,
        (Some(false), Some(true)) if tok.is_some() => tok,
        _ => req.max(tok),
    }
}

/// Exponential backoff with full jitter for the `attempt`-th failure (1-based): uniform in
/// `[0, min(max_delay_s, base_delay_ms * 2^(attempt-1))]`.
pub fn backoff(cfg: &RetryConfig, attempt: u32) -> Duration {
    let ceiling = (cfg.base_delay_ms as f64 / 1000.0) * 2f64.powi(attempt.saturating_sub(1) as i32);
    let ceiling = ceiling.min(cfg.max_delay_s).max(0.0);
    Duration::from_secs_f64(rand::rng().random_range(0.0..=ceiling))
}

/// A server hint plus up to 10% (at most 1 s) of jitter, so clients told the same instant do not
/// return in lockstep. Never shorter than the hint.
pub fn hinted_wait(hint: Duration) -> Duration {
    let extra = (hint.as_secs_f64() * 0.1).min(1.0);
    hint + Duration::from_secs_f64(rand::rng().random_range(0.0..=extra))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn hm(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(parse_retry_after(&date, now), Some(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(
            parse_go_duration("1h2m3.5s"),
            Some(Duration::from_secs_f64(3723.5))
        );
        assert_eq!(parse_go_duration("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_go_duration("3 days"), None);
        assert_eq!(parse_go_duration("ms"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn hint_precedence() {
        let now = SystemTime::now();
        let h = hm(&[("retry-after-ms", "250"), ("retry-after", "9")]);
        assert_eq!(retry_hint(&h, now), Some(Duration::from_millis(250)));
        let h = hm(&[("retry-after", "9"), ("x-ratelimit-reset-requests", "1s")]);
        assert_eq!(retry_hint(&h, now), Some(Duration::from_secs(9)));
        // tokens exhausted, requests not: wait for the token reset
        let h = hm(&[
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-ratelimit-reset-tokens", "6m0s"),
            ("x-ratelimit-remaining-requests", "10"),
            ("x-ratelimit-remaining-tokens", "0"),
        ]);
        assert_eq!(retry_hint(&h, now), Some(Duration::from_secs(360)));
        let h = hm(&[
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-ratelimit-reset-tokens", "6m0s"),
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-remaining-tokens", "500"),
        ]);
        assert_eq!(retry_hint(&h, now), Some(Duration::from_millis(120)));
        // remaining not sent: the longer
        let h = hm(&[
            ("x-ratelimit-reset-requests", "1.5s"),
            ("x-ratelimit-reset-tokens", "250ms"),
        ]);
        assert_eq!(retry_hint(&h, now), Some(Duration::from_millis(1500)));
        assert_eq!(retry_hint(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_is_bounded_full_jitter() {
        let cfg = RetryConfig {
            base_delay_ms: 100,
            max_delay_s: 1.0,
            max_retry_after_s: 10.0,
        };
        let mut max_seen = Duration::ZERO;
        for _ in 0..500 {
            let d = backoff(&cfg, 3);
            assert!(d <= Duration::from_millis(400), "{d:?}");
            max_seen = max_seen.max(d);
        }
        // full jitter spreads over the whole range, so some draws land in the top half
        assert!(max_seen > Duration::from_millis(200), "{max_seen:?}");
        for _ in 0..100 {
            assert!(backoff(&cfg, 30) <= Duration::from_secs(1));
        }
    }

    #[test]
    fn hinted_wait_never_shorter() {
        for _ in 0..100 {
            let w = hinted_wait(Duration::from_secs(2));
            assert!(
                w >= Duration::from_secs(2) && w <= Duration::from_millis(2200),
                "{w:?}"
            );
        }
    }

    #[test]
    fn retryable_statuses() {
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }
}
