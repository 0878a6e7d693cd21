//! Fixed-window rate limiting over the `RateLimitStore` port. A window is
//! `[floor(now / len) * len, +len)`; its counter expires with it.

use chrono::{DateTime, Duration, Utc};

use crate::error::Error;
use crate::ports::RateLimitStore;

/// A limit of `limit` events per `window_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWindow {
    pub limit: u64,
    pub window_seconds: i64,
}

impl FixedWindow {
    /// Start of the window containing `now`, and when it ends.
    pub fn window(&self, now: DateTime<Utc>) -> (i64, DateTime<Utc>) {
        let len = self.window_seconds.max(1);
        let start = now.timestamp().div_euclid(len) * len;
        let reset =
            DateTime::from_timestamp(start + len, 0).unwrap_or(now + Duration::seconds(len));
        (start, reset)
    }

    /// The error for a used-up window.
    pub fn limited(&self, now: DateTime<Utc>) -> Error {
        // Rounded up: a client that waits Retry-After seconds must find the window over.
        let (retry_after_seconds, reset_at) = self.renewal(now);
        Error::RateLimited {
            retry_after_seconds,
            reset_at,
        }
    }

    /// Counts one event for `key` if the window still has room, atomically; `false` (nothing
    /// counted) when it is used up. However many requests race, at most `limit` are counted.
    pub async fn take(
        &self,
        store: &dyn RateLimitStore,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, Error> {
        let (start, reset_at) = self.window(now);
        Ok(store
            .increment_below(key, start, reset_at, self.limit)
            .await?
            .is_some())
    }

    /// Takes back an event counted by [`FixedWindow::take`] whose request was refused for
    /// another reason. Failures are logged: the count expires with its window anyway.
    pub async fn give_back(&self, store: &dyn RateLimitStore, key: &str, now: DateTime<Utc>) {
        let (start, _) = self.window(now);
        if let Err(e) = store.decrement(key, start).await {
            tracing::warn!(error = %e, "could not give back a rate-limit count");
        }
    }

    /// Adds `amount` for `key` if the window has room for all of it, atomically; `false`
    /// (nothing added) when it has not.
    pub async fn take_amount(
        &self,
        store: &dyn RateLimitStore,
        key: &str,
        amount: u64,
        now: DateTime<Utc>,
    ) -> Result<bool, Error> {
        let (start, reset_at) = self.window(now);
        Ok(store
            .add_below(key, start, reset_at, amount, self.limit)
            .await?
            .is_some())
    }

    /// Corrects `key`'s count by `delta` (a reservation settled at its real size). Failures
    /// are logged: the count expires with its window anyway.
    pub async fn adjust(
        &self,
        store: &dyn RateLimitStore,
        key: &str,
        delta: i64,
        now: DateTime<Utc>,
    ) {
        let (start, _) = self.window(now);
        if let Err(e) = store.adjust(key, start, delta).await {
            tracing::warn!(error = %e, "could not adjust a counter");
        }
    }

    /// Seconds until the window of `now` ends (at least one) and when it does.
    pub fn renewal(&self, now: DateTime<Utc>) -> (i64, DateTime<Utc>) {
        let (_, reset_at) = self.window(now);
        let secs = (reset_at - now).num_milliseconds();
        (((secs + 999) / 1000).max(1), reset_at)
    }

    /// Forgets `key`'s count in the current window.
    pub async fn reset(
        &self,
        store: &dyn RateLimitStore,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<(), Error> {
        let (start, _) = self.window(now);
        Ok(store.reset(key, start).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn windows_align_to_multiples_of_their_length() {
        let w = FixedWindow {
            limit: 1,
            window_seconds: 900,
        };
        let now = Utc.timestamp_opt(1_800_000_123, 0).single().expect("ts");
        let (start, reset) = w.window(now);
        assert_eq!(start % 900, 0);
        assert!(start <= now.timestamp() && now < reset);
        assert_eq!(reset.timestamp() - start, 900);
    }

    #[test]
    fn retry_after_rounds_up_and_is_at_least_one_second() {
        let w = FixedWindow {
            limit: 1,
            window_seconds: 10,
        };
        let now = Utc
            .timestamp_millis_opt(1_800_000_009_500)
            .single()
            .expect("ts");
        match w.limited(now) {
            Error::RateLimited {
                retry_after_seconds,
                ..
            } => assert_eq!(retry_after_seconds, 1),
            other => panic!("unexpected {other:?}"),
        }
    }
}
