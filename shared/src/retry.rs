//! How the server tries again: one policy type (attempts, a first pause doubling to a cap,
//! with or without jitter) and one helper, each caller naming its policy. The SDK's clients
//! (DynamoDB, S3, Step Functions, Bedrock) retry by the SDK's own standard mode, and the state
//! machine's `Retry` fields follow the Amazon States Language; neither is here.

use std::future::Future;
use std::time::Duration;

/// A retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Attempts in all, the first included (at least one is always made).
    pub attempts: u32,
    /// The pause after the first failure; it doubles after each further one.
    pub first: Duration,
    /// The longest pause.
    pub cap: Duration,
    /// Whether a pause is drawn at random from its upper half (so callers that failed
    /// together do not collide again in lockstep).
    pub jitter: bool,
}

/// A busy store met while recording something already done (an approved call's outcome, a
/// command's output): two more tries, 100 then 200 ms apart.
pub const BUSY_STORE: Policy = Policy {
    attempts: 3,
    first: Duration::from_millis(100),
    cap: Duration::from_millis(200),
    jitter: false,
};

impl Policy {
    /// The pause after `failed` failed attempts (1 after the first), `unit` in [0, 1] placing
    /// it within its jitter range.
    pub fn pause_at(&self, failed: u32, unit: f64) -> Duration {
        let doublings = failed.saturating_sub(1).min(16);
        let full = self.first.saturating_mul(1 << doublings).min(self.cap);
        if self.jitter {
            full.mul_f64(0.5 + unit.clamp(0.0, 1.0) / 2.0)
        } else {
            full
        }
    }

    /// Waits out the pause after `failed` failed attempts.
    pub async fn wait(&self, failed: u32) {
        tokio::time::sleep(self.pause_at(failed, rand::random::<f64>())).await;
    }

    /// Whether another attempt follows `failed` failed ones.
    pub fn allows_another(&self, failed: u32) -> bool {
        failed < self.attempts
    }
}

/// Runs `op` (given the attempt's number, from 1) until it succeeds, fails in a way `again`
/// says not to retry, or the policy's attempts are spent; the last result.
pub async fn retry<T, E, F, Fut>(
    policy: &Policy,
    mut op: F,
    again: impl Fn(&E) -> bool,
) -> Result<T, E>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut failed = 0;
    loop {
        match op(failed + 1).await {
            Ok(v) => return Ok(v),
            Err(e) => {
                failed += 1;
                if !again(&e) || !policy.allows_another(failed) {
                    return Err(e);
                }
                policy.wait(failed).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn pauses_double_to_the_cap() {
        let p = Policy {
            attempts: 8,
            first: MS(50),
            cap: MS(1600),
            jitter: false,
        };
        let pauses: Vec<_> = (1..=8).map(|n| p.pause_at(n, 0.3)).collect();
        assert_eq!(
            pauses,
            [50, 100, 200, 400, 800, 1600, 1600, 1600].map(MS).to_vec()
        );
        assert_eq!(p.pause_at(u32::MAX, 0.0), MS(1600));
        assert_eq!(BUSY_STORE.pause_at(1, 1.0), MS(100));
        assert_eq!(BUSY_STORE.pause_at(2, 0.0), MS(200));
    }

    #[test]
    fn jitter_draws_from_the_upper_half() {
        let p = Policy {
            attempts: 8,
            first: MS(5),
            cap: MS(200),
            jitter: true,
        };
        assert_eq!(p.pause_at(1, 0.0), Duration::from_micros(2500));
        assert_eq!(p.pause_at(1, 1.0), MS(5));
        assert_eq!(p.pause_at(7, 0.0), MS(100));
        assert_eq!(
            p.pause_at(7, 7.0),
            MS(200),
            "out-of-range draws are clamped"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn retries_what_may_pass_and_stops_at_the_rest() {
        let calls = AtomicU32::new(0);
        let busy = |n: u32| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 3 {
                    Err("busy")
                } else {
                    Ok(n)
                }
            }
        };
        let started = tokio::time::Instant::now();
        assert_eq!(retry(&BUSY_STORE, busy, |_| true).await, Ok(3));
        assert_eq!(started.elapsed(), MS(300), "100 then 200 ms");
        assert_eq!(calls.swap(0, Ordering::SeqCst), 3);

        let always = |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>("busy") }
        };
        assert_eq!(retry(&BUSY_STORE, always, |_| true).await, Err("busy"));
        assert_eq!(calls.swap(0, Ordering::SeqCst), 3, "the attempts are spent");

        let refused = |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>("refused") }
        };
        assert_eq!(
            retry(&BUSY_STORE, refused, |e| *e != "refused").await,
            Err("refused")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1, "not retried");
    }
}
