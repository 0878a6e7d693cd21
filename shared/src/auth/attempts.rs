//! Login attempts, per email and per client address. Each scope keeps two counters in the
//! login window: its attempts (failures plus attempts in flight, taken atomically while below
//! the limit before a password is checked, so parallel guesses never get more checks than the
//! limit) and its failures alone. A window full of failures refuses (`429` until it ends, the
//! right password too); one whose attempts are used up by attempts still in flight — which
//! give their slot back when they succeed — makes the attempt wait for a slot instead, so
//! correct passwords that arrive together are not refused (an office behind one NAT, a client
//! retrying in parallel).
//!
//! An attempt waits as long as the login request may: the time a queue of correct passwords
//! takes to drain is set by the store's speed and the queue's length, not by the rule, so the
//! bound is the function's time budget less the check that follows. (Waiting by reading the
//! counters and taking only when they show room was tried: on moto, forty logins from one
//! address made 1 000 store requests instead of 870 and took 7.5-8.1 s instead of 6.3-7.6 s,
//! the waiters that saw room all trying at once.)

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::rate_limit::FixedWindow;
use crate::clock::Clock;
use crate::config::LoginLimits;
use crate::error::Error;
use crate::ports::RateLimitStore;

/// How long an attempt waits for a slot held by attempts in flight before it is refused: the
/// login function's 29 s timeout (API Gateway cuts at 30 s) less 9 s for what follows (the
/// password check, about 0.3 s at 256 MB, the token's write and a slow store's answers).
pub const MAX_WAIT: Duration = Duration::from_secs(20);
/// First pause between tries for a slot (doubled up to [`MAX_PAUSE`], with jitter).
const FIRST_PAUSE: Duration = Duration::from_millis(20);
const MAX_PAUSE: Duration = Duration::from_millis(320);

/// One counted scope: an email or an address.
struct Scope {
    window: FixedWindow,
    attempts: String,
    failures: String,
}

impl Scope {
    fn new(name: &str, id: &str, limit: u64, window_seconds: i64) -> Self {
        Self {
            window: FixedWindow {
                limit,
                window_seconds,
            },
            attempts: format!("login-{name}#{id}"),
            failures: format!("login-{name}-failures#{id}"),
        }
    }

    /// `Ok(true)` when a slot was taken.
    async fn take(&self, store: &dyn RateLimitStore, now: DateTime<Utc>) -> Result<bool, Error> {
        self.window.take(store, &self.attempts, now).await
    }

    /// Whether the window is full of failures (rather than of attempts in flight).
    async fn failed_out(
        &self,
        store: &dyn RateLimitStore,
        now: DateTime<Utc>,
    ) -> Result<bool, Error> {
        let (start, _) = self.window.window(now);
        Ok(store.count(&self.failures, start).await? >= self.window.limit)
    }

    async fn count_failure(&self, store: &dyn RateLimitStore, now: DateTime<Utc>) {
        let (start, reset_at) = self.window.window(now);
        if let Err(e) = store
            .add_below(&self.failures, start, reset_at, 1, u64::MAX)
            .await
        {
            tracing::warn!(error = %e, "could not count a failed login");
        }
    }
}

/// What a try found.
enum Door {
    /// A slot taken in every scope.
    Open,
    /// A window full of failures: refused until it ends.
    Shut(Error),
    /// Slots held by attempts in flight.
    Busy,
}

/// The counters of one login attempt.
pub struct LoginAttempt {
    email: Scope,
    address: Option<Scope>,
}

/// An attempt that holds its slots, taken in the window of `at`.
#[derive(Debug, Clone, Copy)]
pub struct Entered {
    at: DateTime<Utc>,
}

impl LoginAttempt {
    /// The counters of an attempt for `email` (normalised) from `address` (when known).
    pub fn new(limits: &LoginLimits, email: &str, address: Option<&str>) -> Self {
        let w = limits.window_seconds;
        Self {
            email: Scope::new("email", email, limits.max_failures_per_email, w),
            address: address
                .map(|ip| Scope::new("address", ip, limits.max_failures_per_address, w)),
        }
    }

    fn scopes(&self) -> impl Iterator<Item = &Scope> {
        std::iter::once(&self.email).chain(self.address.as_ref())
    }

    /// Takes a slot in every scope, waiting while slots are held by attempts in flight;
    /// `429` when a scope's window is full of failures (until it ends), or when no slot came
    /// free within [`MAX_WAIT`] (retry in a second). Nothing stays taken when it fails.
    pub async fn enter(
        &self,
        store: &dyn RateLimitStore,
        clock: &dyn Clock,
    ) -> Result<Entered, Error> {
        let started = tokio::time::Instant::now();
        let mut pause = FIRST_PAUSE;
        loop {
            let now = clock.now();
            match self.try_take(store, now).await? {
                Door::Open => return Ok(Entered { at: now }),
                Door::Shut(e) => return Err(e),
                Door::Busy => {}
            }
            // Slots held by attempts in flight: wait for one to come back.
            let jitter = rand::random::<u64>() % (pause.as_millis() as u64 / 2 + 1);
            let sleep = pause + Duration::from_millis(jitter);
            if started.elapsed() + sleep > MAX_WAIT {
                return Err(Error::RateLimited {
                    retry_after_seconds: 1,
                    reset_at: now + chrono::Duration::seconds(1),
                });
            }
            tokio::time::sleep(sleep).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// One try: a slot taken in every scope (`Open`), or nothing left taken.
    async fn try_take(
        &self,
        store: &dyn RateLimitStore,
        now: DateTime<Utc>,
    ) -> Result<Door, Error> {
        // The failures are read with every try: a success clears an email's attempts while
        // others may still fail, so a free slot alone does not mean the window has room.
        let (taken, failed_out) = tokio::join!(
            futures::future::join_all(self.scopes().map(|s| s.take(store, now))),
            futures::future::join_all(self.scopes().map(|s| s.failed_out(store, now))),
        );
        let refused = self
            .scopes()
            .zip(&failed_out)
            .find(|(_, out)| matches!(out, Ok(true)))
            .map(|(scope, _)| scope.window.limited(now));
        if refused.is_none() && taken.iter().all(|t| matches!(t, Ok(true))) {
            return Ok(Door::Open);
        }
        // Give back whatever this try took.
        for (scope, t) in self.scopes().zip(&taken) {
            if matches!(t, Ok(true)) {
                scope.window.give_back(store, &scope.attempts, now).await;
            }
        }
        if let Some(e) = refused {
            return Ok(Door::Shut(e));
        }
        for (t, out) in taken.into_iter().zip(failed_out) {
            t?;
            out?;
        }
        Ok(Door::Busy)
    }

    /// The password was wrong (or the account may not log in): the slots stay taken and the
    /// failure is counted.
    pub async fn failed(&self, store: &dyn RateLimitStore, entered: Entered) {
        futures::future::join_all(self.scopes().map(|s| s.count_failure(store, entered.at))).await;
    }

    /// The attempt could not be decided (the store or the hasher failed): its slots are given
    /// back, nothing is counted.
    pub async fn abandoned(&self, store: &dyn RateLimitStore, entered: Entered) {
        futures::future::join_all(
            self.scopes()
                .map(|s| s.window.give_back(store, &s.attempts, entered.at)),
        )
        .await;
    }

    /// The password was right: the email's failures are forgotten and the address's slot is
    /// given back (an address's failures stay counted whoever succeeds from it).
    pub async fn succeeded(
        &self,
        store: &dyn RateLimitStore,
        entered: Entered,
    ) -> Result<(), Error> {
        let at = entered.at;
        let (a, b, ()) = tokio::join!(
            self.email.window.reset(store, &self.email.attempts, at),
            self.email.window.reset(store, &self.email.failures, at),
            async {
                if let Some(s) = &self.address {
                    s.window.give_back(store, &s.attempts, at).await;
                }
            }
        );
        a.and(b)
    }
}
