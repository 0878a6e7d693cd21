//! Every storage port implemented once over a [`TableBackend`] — so the embedded store and
//! DynamoDB share one implementation and differ only in how a backend executes reads,
//! conditional writes, queries and transactions. Items whose TTL has passed are treated as
//! absent on every read (DynamoDB deletes them only eventually).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{json, Value};

use super::keys;
#[cfg(feature = "embedded")]
use super::sqlite::SqliteTable;
use super::table::{
    body_of, is_expired, item_of, key_of, Cond, Index, Item, Query, SkCond, TableBackend, Update,
    Write, EXPIRES_AT, PK, SK,
};
use crate::clock::Clock;
use crate::domain::{
    DomainPattern, Email, Message, Session, SessionStatus, Step, Task, TaskRef, TaskStatus, Tenant,
    User,
};
use crate::ports::{
    DebugLog, DebugLogStore, IdempotencyStore, KeyClaim, KnownSession, MessagePage, MessagesFrom,
    PreferencesStore, RateLimitStore, Reservation, RevokedTokenStore, SessionChanges,
    SessionCreated, SessionFilter, SessionOwner, SessionQueries, SessionStore, StoreError,
    StoreResult, StoredPreferences, TaskStore, TenantStore, UserStore, MAX_STEPS_PER_WRITE,
};

/// A conditional write that lost a race: tried eight times in all, after a random pause
/// doubling from 5 ms up to 200 ms, so racers (and transactions cancelled for conflicting with
/// each other) do not collide again in lockstep.
const RACE: crate::retry::Policy = crate::retry::Policy {
    attempts: 8,
    first: std::time::Duration::from_millis(5),
    cap: std::time::Duration::from_millis(200),
    jitter: true,
};
/// How often a conditional write that lost a race is tried.
const RACE_RETRIES: u32 = RACE.attempts;

/// After losing the race of attempt `attempt` (from 0).
async fn race_pause(attempt: u32) {
    RACE.wait(attempt + 1).await;
}

/// The ports over one table.
#[derive(Clone)]
pub struct TableStore {
    table: Arc<dyn TableBackend>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for TableStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TableStore")
    }
}

impl TableStore {
    pub fn new(table: Arc<dyn TableBackend>, clock: Arc<dyn Clock>) -> Self {
        Self { table, clock }
    }

    /// The embedded store in `data_dir`.
    #[cfg(feature = "embedded")]
    pub fn embedded(data_dir: &std::path::Path, clock: Arc<dyn Clock>) -> StoreResult<Self> {
        Ok(Self::new(Arc::new(SqliteTable::open(data_dir)?), clock))
    }

    /// A private in-memory store.
    #[cfg(feature = "embedded")]
    pub fn memory(clock: Arc<dyn Clock>) -> StoreResult<Self> {
        Ok(Self::new(Arc::new(SqliteTable::in_memory()?), clock))
    }

    /// The backend underneath (for tests that check raw items).
    pub fn table(&self) -> &Arc<dyn TableBackend> {
        &self.table
    }

    fn now(&self) -> i64 {
        self.clock.now().timestamp()
    }

    async fn get_live<T: DeserializeOwned>(&self, pk: &str, sk: &str) -> StoreResult<Option<T>> {
        let now = self.now();
        match self.table.get(pk, sk).await? {
            Some(item) if !is_expired(&item, now) => Ok(Some(body_of(item)?)),
            _ => Ok(None),
        }
    }

    /// Every live item of a query, following pages.
    async fn query_all(&self, mut q: Query) -> StoreResult<Vec<Item>> {
        let now = self.now();
        let mut out = Vec::new();
        loop {
            let page = self.table.query(q.clone()).await?;
            out.extend(page.items.into_iter().filter(|i| !is_expired(i, now)));
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => return Ok(out),
            }
        }
    }
}

impl TableStore {
    /// Up to `want` live bodies of a query, in its order, following pages; the first body
    /// `keep` refuses ends the read.
    async fn query_bodies<T, F>(&self, mut q: Query, want: usize, keep: F) -> StoreResult<Vec<T>>
    where
        T: DeserializeOwned + Send,
        F: Fn(&T) -> bool + Send,
    {
        let now = self.now();
        let mut out = Vec::new();
        q.limit = Some(want);
        while out.len() < want {
            let page = self.table.query(q.clone()).await?;
            for item in page.items.into_iter().filter(|i| !is_expired(i, now)) {
                let body: T = body_of(item)?;
                if !keep(&body) {
                    return Ok(out);
                }
                out.push(body);
                if out.len() == want {
                    return Ok(out);
                }
            }
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => break,
            }
        }
        Ok(out)
    }
}

fn set(pairs: Vec<(&str, Value)>) -> Item {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Serialises a small value (a status, a timestamp) for an update.
fn to_json<T: Serialize>(value: &T) -> StoreResult<Value> {
    serde_json::to_value(value).map_err(|e| StoreError::Internal(e.to_string()))
}

mod agent_tools;
mod exec;
mod identity;
mod queries;
mod rates;
mod recipes;
mod records;
mod session_counts;
mod sessions;
mod tasks;
