//! The clock and the sleeper of a batch wait, injectable: [`RealWaiter`] sleeps and stops on
//! Ctrl-C; [`VirtualWaiter`] only advances its own clock, so tests wait for nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// What a batch wait needs from time.
pub trait Waiter: Send + Sync {
    /// The time now.
    fn now(&self) -> SystemTime;
    /// Waits `d`; `false` when the wait was stopped before (Ctrl-C): the caller stops waiting,
    /// and the batch goes on at the provider.
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = bool> + Send + '_>>;
}

/// The system clock; a sleep ends early, returning `false`, on Ctrl-C, and every sleep after
/// that returns `false` at once (the user asked to stop waiting for this process's batches).
#[derive(Debug, Default, Clone, Copy)]
pub struct RealWaiter;

/// Whether Ctrl-C stopped a wait of this process.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Waiter for RealWaiter {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        use std::sync::atomic::Ordering;
        Box::pin(async move {
            if INTERRUPTED.load(Ordering::SeqCst) {
                return false;
            }
            tokio::select! {
                _ = tokio::time::sleep(d) => true,
                _ = tokio::signal::ctrl_c() => {
                    INTERRUPTED.store(true, Ordering::SeqCst);
                    false
                }
            }
        })
    }
}

/// A clock that moves only when slept on, for tests: every sleep returns at once and adds its
/// duration to the clock; after `stop_after` sleeps (when set), a sleep returns `false` as if
/// Ctrl-C had been pressed.
#[derive(Debug)]
pub struct VirtualWaiter {
    state: Mutex<(SystemTime, usize)>,
    stop_after: Option<usize>,
}

impl VirtualWaiter {
    /// A clock at `start` that never stops a wait (`stop_after` `None`) or stops the wait at
    /// sleep number `stop_after + 1`.
    pub fn new(start: SystemTime, stop_after: Option<usize>) -> Self {
        VirtualWaiter {
            state: Mutex::new((start, 0)),
            stop_after,
        }
    }

    /// Sleeps so far (a stopped one included).
    pub fn sleeps(&self) -> usize {
        self.state.lock().expect("clock lock").1
    }
}

impl Waiter for VirtualWaiter {
    fn now(&self) -> SystemTime {
        self.state.lock().expect("clock lock").0
    }

    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        let mut s = self.state.lock().expect("clock lock");
        let go_on = self.stop_after.is_none_or(|n| s.1 < n);
        s.1 += 1;
        if go_on {
            s.0 += d;
        }
        Box::pin(std::future::ready(go_on))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_virtual_clock_moves_by_what_is_slept_and_stops_when_told() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let w = VirtualWaiter::new(t0, Some(2));
        assert!(w.sleep(Duration::from_secs(30)).await);
        assert!(w.sleep(Duration::from_secs(30)).await);
        assert!(!w.sleep(Duration::from_secs(30)).await);
        assert_eq!(w.now(), t0 + Duration::from_secs(60));
        assert_eq!(w.sleeps(), 3);
    }
}
