//! The `Clock` port: every rule that depends on time (token expiry, revocation, rate-limit
//! windows, TTL filtering) asks a clock instead of the system, so tests control time.

use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// Source of the current time.
pub trait Clock: Send + Sync {
    /// The current instant, UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock forward (or back, with a negative duration).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now += by;
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}
