//! Per-model pacing: requests in flight, tokens per minute, requests per minute.
//!
//! Order of acquisition for each attempt: an in-flight permit (tokio `Semaphore`), then any pause a
//! server imposed (`Retry-After` on a 429 pauses the whole model, so the other tasks do not keep
//! hitting a throttled server), then the estimated tokens from the TPM limiter, then a cell
//! from the RPM limiter, and last the pause again: a pause imposed while a task waited for tokens
//! or a cell holds it too, so no request to a paused model leaves. The RPM limiter comes late so
//! that the moment it releases is the moment the request leaves: waiting for it while holding the
//! permit means no queue forms behind a released slot and releases all at once.
//!
//! **Burst size.** The RPM limiter is a GCRA with a burst of 1: one request every 60/R seconds,
//! never two at once. A larger burst (the in-flight cap, say) would let up to that many requests go
//! together after any idle moment, which a provider that enforces its per-minute quota over
//! one-second windows (as OpenAI documents it may) counts as a violation. A burst of 1 costs no
//! throughput while requests are waiting, which is the only time pacing matters; an idle limiter
//! lets the next request through at once either way. The TPM limiter has a burst of one tenth of
//! the per-minute quota (six seconds' worth): token counts vary per request, so it needs room for
//! one large request, but not for a whole minute at once. A request estimated above that burst is
//! debited in pieces, so nothing is under-counted; pieces are taken greedily as cells free up,
//! because governor reserves nothing for a caller waiting on `until_n_ready`.
//!
//! **Correction.** governor can debit but not refund. The estimate (prompt tokens plus
//! `max_tokens`) is debited before sending; when the response's usage shows more, the difference
//! is debited afterwards in a background task; when it shows less, the surplus is lost (the
//! limiter errs on the slow side).
//!
//! governor sleeps with futures-timer, so `tokio::time::pause` does not speed it up.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::DefaultClock;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::config::ModelConfig;

type Direct = RateLimiter<NotKeyed, InMemoryState, DefaultClock>;

/// The limits of one model, shared by every call to it.
#[derive(Debug)]
pub struct ModelLimiter {
    in_flight: Arc<Semaphore>,
    rpm: Option<Direct>,
    tpm: Option<Arc<Tpm>>,
    paused_until: Mutex<Option<Instant>>,
}

#[derive(Debug)]
struct Tpm {
    limiter: Direct,
    burst: NonZeroU32,
}

impl Tpm {
    /// Debits `tokens`, waiting as needed. governor's `until_n_ready(n)` reserves nothing while
    /// it waits, so a large debit would be starved by small ones taking the cells as they come
    /// back. Instead take whatever is free now (pieces halved down to 1/64 of the burst) and
    /// wait only for the smallest piece; what is taken is gone for everyone else.
    async fn debit(&self, tokens: u64) {
        let burst = u64::from(self.burst.get());
        let min_piece = (burst / 64).max(1);
        let mut left = tokens;
        while left > 0 {
            let mut piece = left.min(burst);
            loop {
                let n = NonZeroU32::new(piece as u32).expect("piece > 0");
                match self.limiter.check_n(n) {
                    Ok(Ok(())) => break,
                    Ok(Err(_)) if piece > min_piece => piece = (piece / 2).max(min_piece),
                    // piece <= burst, so capacity is never insufficient; wait for this piece
                    _ => {
                        let _ = self.limiter.until_n_ready(n).await;
                        break;
                    }
                }
            }
            left -= piece;
        }
    }
}

/// The requests-per-minute quota: one request every 60/`rpm` seconds, burst 1.
fn rpm_quota(rpm: NonZeroU32) -> Quota {
    let per = Duration::from_secs_f64(60.0 / f64::from(rpm.get()));
    Quota::with_period(per)
        .expect("period > 0")
        .allow_burst(NonZeroU32::MIN)
}

/// The tokens-per-minute quota: `tpm` per minute, burst a tenth of it (at least 1).
fn tpm_quota(tpm: NonZeroU32) -> Quota {
    let burst = NonZeroU32::new((tpm.get() / 10).max(1)).expect(">= 1");
    Quota::per_minute(tpm).allow_burst(burst)
}

/// Proof that an attempt may be sent; holding it keeps one in-flight slot.
#[derive(Debug)]
pub struct Admission {
    _permit: OwnedSemaphorePermit,
    /// Tokens debited from the TPM budget for this attempt.
    pub debited_tokens: u64,
}

impl ModelLimiter {
    /// Builds the limiters for a model (`rpm`/`tpm` of 0 mean unlimited).
    pub fn new(cfg: &ModelConfig) -> Self {
        let rpm = NonZeroU32::new(cfg.rpm).map(|rpm| RateLimiter::direct(rpm_quota(rpm)));
        let tpm = NonZeroU32::new(cfg.tpm).map(|tpm| {
            let quota = tpm_quota(tpm);
            Arc::new(Tpm {
                limiter: RateLimiter::direct(quota),
                burst: quota.burst_size(),
            })
        });
        ModelLimiter {
            in_flight: Arc::new(Semaphore::new(cfg.max_in_flight.max(1) as usize)),
            rpm,
            tpm,
            paused_until: Mutex::new(None),
        }
    }

    /// Waits until one attempt estimated at `est_tokens` tokens may be sent.
    pub async fn admit(&self, est_tokens: u64) -> Admission {
        let permit = Arc::clone(&self.in_flight)
            .acquire_owned()
            .await
            .expect("semaphore never closed");
        self.wait_out_pause().await;
        let mut debited = 0;
        if let Some(tpm) = &self.tpm {
            tpm.debit(est_tokens).await;
            debited = est_tokens;
        }
        if let Some(rpm) = &self.rpm {
            rpm.until_ready().await;
        }
        self.wait_out_pause().await;
        Admission {
            _permit: permit,
            debited_tokens: debited,
        }
    }

    /// Returns once no pause is in force (at once if none is).
    async fn wait_out_pause(&self) {
        loop {
            let until = *self.paused_until.lock().expect("lock");
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t).await,
                _ => break,
            }
        }
    }

    /// Holds back every attempt to this model for `wait` (a server's `Retry-After`), those
    /// already waiting for tokens or a request cell included.
    pub fn pause_for(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut p = self.paused_until.lock().expect("lock");
        if p.is_none_or(|cur| cur < until) {
            *p = Some(until);
        }
    }

    /// Debits tokens the estimate missed (`actual - debited`, if positive) without blocking the
    /// caller.
    pub fn correct(&self, debited: u64, actual: u64) {
        if let Some(tpm) = &self.tpm
            && actual > debited
        {
            let tpm = Arc::clone(tpm);
            tokio::spawn(async move { tpm.debit(actual - debited).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    /// The instants (ms) at which a request is let through when one is tried every millisecond
    /// for `ms` milliseconds, on governor's fake clock (no real time passes).
    fn admitted_at(quota: Quota, n: u32, ms: u64) -> Vec<u64> {
        let clock = FakeRelativeClock::default();
        let lim = RateLimiter::direct_with_clock(quota, clock.clone());
        let n = NonZeroU32::new(n).unwrap();
        let mut out = Vec::new();
        for t in 0..ms {
            if matches!(lim.check_n(n), Ok(Ok(()))) {
                out.push(t);
            }
            clock.advance(Duration::from_millis(1));
        }
        out
    }

    #[test]
    fn rpm_lets_one_request_through_every_slot_never_two() {
        // 1200 per minute: one every 50 ms, the first at once
        let at = admitted_at(rpm_quota(NonZeroU32::new(1200).unwrap()), 1, 500);
        assert_eq!(at, (0..10).map(|i| i * 50).collect::<Vec<_>>());
        // 60 per minute: one a second
        let at = admitted_at(rpm_quota(NonZeroU32::new(60).unwrap()), 1, 2500);
        assert_eq!(at, [0, 1000, 2000]);
    }

    #[test]
    fn tpm_burst_is_a_tenth_and_refills_at_the_rate() {
        // 6000 tokens a minute = 100 a second, burst 600
        let quota = tpm_quota(NonZeroU32::new(6000).unwrap());
        assert_eq!(quota.burst_size().get(), 600);
        let clock = FakeRelativeClock::default();
        let lim = RateLimiter::direct_with_clock(quota, clock.clone());
        let n = |k| NonZeroU32::new(k).unwrap();
        assert!(matches!(lim.check_n(n(600)), Ok(Ok(()))));
        assert!(matches!(lim.check_n(n(150)), Ok(Err(_))));
        clock.advance(Duration::from_millis(1490));
        assert!(matches!(lim.check_n(n(150)), Ok(Err(_))));
        clock.advance(Duration::from_millis(10));
        assert!(matches!(lim.check_n(n(150)), Ok(Ok(()))));
        // more than the burst can never pass at once
        assert!(lim.check_n(n(601)).is_err());
    }

    #[tokio::test]
    async fn rpm_spaces_requests_with_burst_one() {
        let lim = ModelLimiter::new(&ModelConfig {
            rpm: 1200, // one every 50 ms
            max_in_flight: 8,
            ..Default::default()
        });
        let start = std::time::Instant::now();
        for _ in 0..6 {
            let _a = lim.admit(0).await;
        }
        // five full slots after the first (a lower bound: a busy machine only adds time)
        let e = start.elapsed();
        assert!(e >= Duration::from_millis(240), "{e:?}");
    }

    #[tokio::test]
    async fn tpm_debits_large_requests_in_pieces() {
        // 6000 tokens/min = 100/s, burst 600
        let lim = ModelLimiter::new(&ModelConfig {
            rpm: 0,
            tpm: 6000,
            ..Default::default()
        });
        let start = std::time::Instant::now();
        let a = lim.admit(600).await; // the full burst
        assert_eq!(a.debited_tokens, 600);
        drop(a);
        let _b = lim.admit(150).await; // 150 tokens at 100/s: at least 1.5 s
        let e = start.elapsed();
        assert!(e >= Duration::from_millis(1400), "{e:?}");
    }

    #[tokio::test]
    async fn usage_above_the_estimate_is_debited_afterwards() {
        // 6000 tokens/min = 100/s, burst 600
        let lim = ModelLimiter::new(&ModelConfig {
            rpm: 0,
            tpm: 6000,
            ..Default::default()
        });
        let a = lim.admit(100).await;
        // the reply used 700 tokens: 600 more than debited, i.e. the whole remaining bucket
        // plus 100 that must be waited for
        lim.correct(a.debited_tokens, 700);
        drop(a);
        tokio::time::sleep(Duration::from_millis(20)).await; // let the correction run
        let start = std::time::Instant::now();
        let _b = lim.admit(100).await;
        let e = start.elapsed();
        // without the correction this would be immediate (500 tokens left in the bucket)
        // 100 tokens of the correction and 100 of this request are missing at 100/s
        assert!(e >= Duration::from_millis(900), "{e:?}");
    }

    #[tokio::test]
    async fn a_pause_holds_a_request_already_waiting_for_its_cell() {
        // 60 per minute: the second request waits about 1 s for its cell
        let lim = Arc::new(ModelLimiter::new(&ModelConfig {
            rpm: 60,
            ..Default::default()
        }));
        drop(lim.admit(0).await);
        let start = std::time::Instant::now();
        let waiting = {
            let lim = Arc::clone(&lim);
            tokio::spawn(async move {
                let _a = lim.admit(0).await;
                std::time::Instant::now()
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        lim.pause_for(Duration::from_secs(2)); // a 429 with Retry-After: 2 elsewhere
        let admitted = waiting.await.unwrap();
        assert!(
            admitted - start >= Duration::from_millis(2090),
            "{:?}",
            admitted - start
        );
    }

    #[tokio::test]
    async fn pause_holds_everyone() {
        let lim = ModelLimiter::new(&ModelConfig {
            rpm: 0,
            ..Default::default()
        });
        lim.pause_for(Duration::from_millis(300));
        let start = std::time::Instant::now();
        let _a = lim.admit(0).await;
        assert!(start.elapsed() >= Duration::from_millis(290));
    }
}
