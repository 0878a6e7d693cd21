//! Ports: the small async traits the domain talks to. Adapters implement them — the embedded
//! store now, DynamoDB/S3 next. Keys are shaped for a single DynamoDB table: every record that
//! belongs to a tenant lives under a `TENANT#<id>` partition, and every write that must not
//! clobber (creating a user, a tenant) is conditional.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::domain::{
    DomainPattern, Email, Message, Session, SessionStatus, Step, Task, TaskRef, Tenant, User,
};

/// Storage failures, mapped from each adapter's own errors.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A conditional write failed: the record already exists or changed meanwhile.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The record an update needs does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Throttled or temporarily unavailable; the operation may be retried.
    #[error("unavailable (retryable): {0}")]
    Unavailable(String),
    /// Anything else; never shown to clients.
    #[error("store failure: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Users, keyed by their (globally unique) login email.
#[async_trait]
pub trait UserStore: Send + Sync {
    /// Creates a user; `Conflict` if the email is taken.
    async fn create_user(&self, user: &User) -> StoreResult<()>;
    /// The user with this email, if any.
    async fn user_by_email(&self, email: &Email) -> StoreResult<Option<User>>;
    /// Disables or re-enables a user; `NotFound` if there is none.
    async fn set_user_disabled(&self, email: &Email, disabled: bool) -> StoreResult<User>;
    /// Users of one tenant, or of all tenants (administration only).
    async fn list_users(&self, tenant_id: Option<&str>) -> StoreResult<Vec<User>>;
}

/// Tenants and their allowed-domain patterns.
#[async_trait]
pub trait TenantStore: Send + Sync {
    /// Creates a tenant; `Conflict` if the id is taken.
    async fn create_tenant(&self, tenant: &Tenant) -> StoreResult<()>;
    async fn tenant(&self, tenant_id: &str) -> StoreResult<Option<Tenant>>;
    async fn list_tenants(&self) -> StoreResult<Vec<Tenant>>;
    /// Adds a pattern; `false` if it was already there; `NotFound` for an unknown tenant.
    async fn add_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool>;
    /// Removes a pattern; `false` if it was not there.
    async fn remove_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool>;
    /// The tenant's patterns, sorted.
    async fn allowed_domains(&self, tenant_id: &str) -> StoreResult<Vec<DomainPattern>>;
}

/// Revoked access-token ids, kept until the token would have expired anyway.
#[async_trait]
pub trait RevokedTokenStore: Send + Sync {
    /// Revokes `jti` until `until`; `false` if it was already revoked (one conditional write).
    async fn revoke(&self, tenant_id: &str, jti: &str, until: DateTime<Utc>) -> StoreResult<bool>;
    /// Whether `jti` is revoked at `now` (entries past `until` no longer count).
    async fn is_revoked(&self, tenant_id: &str, jti: &str, now: DateTime<Utc>)
        -> StoreResult<bool>;
}

/// Fixed-window counters for rate limits. A window is identified by its start; the entry may
/// be dropped after `expires_at`.
#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Adds `amount` only while the count stays at or below `limit`, atomically: `Some(new
    /// count)`, or `None` (nothing added) when it would not. Parallel callers can never push
    /// the count past `limit`.
    async fn add_below(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
        amount: u64,
        limit: u64,
    ) -> StoreResult<Option<u64>>;
    /// Adds `delta` to a live counter (a negative one never takes it below zero: it is then
    /// left as it is); an absent or expired counter is left alone.
    async fn adjust(&self, key: &str, window_start: i64, delta: i64) -> StoreResult<()>;
    /// Adds one while the count is below `limit` (see [`RateLimitStore::add_below`]).
    async fn increment_below(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
        limit: u64,
    ) -> StoreResult<Option<u64>> {
        self.add_below(key, window_start, expires_at, 1, limit)
            .await
    }
    /// Takes one back (never below zero); gives back a count whose request was refused later.
    async fn decrement(&self, key: &str, window_start: i64) -> StoreResult<()> {
        self.adjust(key, window_start, -1).await
    }
    /// The current count (0 when absent).
    async fn count(&self, key: &str, window_start: i64) -> StoreResult<u64>;
    /// Drops the counter.
    async fn reset(&self, key: &str, window_start: i64) -> StoreResult<()>;
}

/// Tasks and their steps.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Creates a task; `Conflict` if the id is taken.
    async fn create_task(&self, task: &Task) -> StoreResult<()>;
    /// The task, if it exists in this tenant and has not expired.
    async fn task(&self, tenant_id: &str, task_id: &str) -> StoreResult<Option<Task>>;
    /// Saves `task` if the stored version is still `task.version`; returns it with the
    /// version bumped. `Conflict` if someone saved in between; `NotFound` if it is gone.
    async fn save_task(&self, task: &Task) -> StoreResult<Task>;
    /// Takes the task's lease for `owner` until `until` if the task is `user_id`'s and nobody
    /// holds an unexpired lease at `now`. `Conflict` when busy, `NotFound` when there is no
    /// such task or it is another user's (which is never leased).
    async fn acquire_lease(
        &self,
        tenant_id: &str,
        task_id: &str,
        user_id: &str,
        owner: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Task>;
    /// Gives the lease back if `owner` still holds it (otherwise does nothing).
    async fn release_lease(&self, tenant_id: &str, task_id: &str, owner: &str) -> StoreResult<()>;
    /// Appends step `step.index`, which must be the task's next step. Exactly one of several
    /// concurrent writers of the same index succeeds; the others get `Conflict`.
    async fn append_step(&self, step: &Step) -> StoreResult<()>;
    /// Creates a new task together with its first step, in one transaction.
    async fn start_task(&self, task: &Task, first_step: &Step) -> StoreResult<()>;
    /// Appends `step` (the task's next index) and, in the same transaction, stores `task` as
    /// the task's new state (its step count, version and lease are set here: the count after
    /// the step, the version bumped, the lease released). `Conflict` if the index is taken or
    /// the lease is no longer held by `lease_owner`.
    async fn record_step(&self, step: &Step, task: &Task, lease_owner: &str) -> StoreResult<()>;
    /// The task's steps in order.
    async fn steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<Step>>;
    /// Tasks whose retention ended at or before `now` (oldest first, at most `limit`).
    async fn expired_tasks(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<TaskRef>>;
    /// Active tasks not updated since `idle_before` (oldest first, at most `limit`).
    async fn idle_tasks(
        &self,
        idle_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<TaskRef>>;
    /// Marks a task `interrupted` if it is still active and idle since `idle_before`;
    /// `false` when it no longer qualifies.
    async fn mark_interrupted(
        &self,
        task: &TaskRef,
        idle_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// Deletes the task, its steps and its messages; returns how many items went. Deleting
    /// what is already gone is not an error.
    async fn delete_task(&self, task: &TaskRef) -> StoreResult<usize>;
}

/// Who a session id belongs to. Session ids are chosen by clients and name realtime channels
/// (`private-session-<id>`) that are global, so an id belongs to exactly one tenant and user.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOwner {
    pub tenant_id: String,
    pub user_id: String,
}

/// What creating a session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionCreated {
    Created,
    /// The session already exists in this tenant (nothing changed).
    Exists,
    /// The id belongs to another tenant or user (nothing changed).
    Taken,
}

/// Sessions and their messages.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Creates the session and claims its id (see [`SessionOwner`]) in one transaction.
    async fn create_session(&self, session: &Session) -> StoreResult<SessionCreated>;
    async fn session(&self, tenant_id: &str, session_id: &str) -> StoreResult<Option<Session>>;
    /// The owner of a session id, across all tenants.
    async fn session_owner(&self, session_id: &str) -> StoreResult<Option<SessionOwner>>;
    /// Claims an existing session's id for its tenant and user (sessions stored before ids were
    /// claimed); `true` when the id is theirs now, `false` when another account holds it.
    async fn claim_session(&self, session: &Session) -> StoreResult<bool>;
    /// Appends a message, assigning the next sequence number; returns it as stored.
    /// `NotFound` if the session does not exist.
    async fn append_message(&self, message: &Message) -> StoreResult<Message> {
        let mut stored = self
            .append_messages(
                &message.tenant_id,
                &message.session_id,
                std::slice::from_ref(message),
                None,
            )
            .await?;
        stored
            .pop()
            .ok_or_else(|| StoreError::Internal("no message stored".into()))
    }
    /// Appends messages in order with consecutive sequence numbers, in one transaction. When the
    /// session does not exist it is created from `create_if_missing` (else `NotFound`), its id
    /// claimed in the same transaction (`Conflict` when another account owns the id).
    async fn append_messages(
        &self,
        tenant_id: &str,
        session_id: &str,
        messages: &[Message],
        create_if_missing: Option<&Session>,
    ) -> StoreResult<Vec<Message>> {
        self.append_messages_after(
            tenant_id,
            session_id,
            messages,
            create_if_missing,
            KnownSession::Unknown,
        )
        .await
    }
    /// Like [`SessionStore::append_messages`], starting from what the caller has just read about
    /// the session (saves a read; a stale view only costs a retry).
    async fn append_messages_after(
        &self,
        tenant_id: &str,
        session_id: &str,
        messages: &[Message],
        create_if_missing: Option<&Session>,
        known: KnownSession<'_>,
    ) -> StoreResult<Vec<Message>>;
    /// Messages in ascending sequence, optionally only those after `since`.
    async fn messages(
        &self,
        tenant_id: &str,
        session_id: &str,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> StoreResult<Vec<Message>>;
}

/// What a caller already knows about a session.
#[derive(Debug, Clone, Copy)]
pub enum KnownSession<'a> {
    /// Nothing: read it.
    Unknown,
    /// Just read: it does not exist.
    Missing,
    /// Just read: this is it.
    Present(&'a Session),
}

/// State of an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum Reservation {
    /// First use (or the earlier claim lapsed): the caller now owns the key.
    New,
    /// Another request with the key and the same body is still running.
    Pending,
    /// A request with the key and the same body completed with this response.
    Done(serde_json::Value),
    /// The key was used with a different request body.
    Mismatch,
}

/// A request's claim on an idempotency key.
#[derive(Debug, Clone, Copy)]
pub struct KeyClaim<'a> {
    /// SHA-256 of the request body: the key answers only requests with this body.
    pub request_hash: &'a str,
    /// Who holds the claim (the request id): only the holder completes or abandons it.
    pub holder: &'a str,
    /// When the claim lapses if the request never completes.
    pub until: DateTime<Utc>,
}

/// Idempotency keys of retried requests, per tenant and user. A claim lives only as long as
/// a request can run (a request that died frees its key soon); a completed key remembers its
/// response for longer. Each key remembers the hash of the request body that claimed it.
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `key`, or reports what happened to it.
    async fn reserve(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        claim: &KeyClaim<'_>,
    ) -> StoreResult<Reservation>;
    /// Stores the response of a key `holder` claimed, kept until `keep_until` (nothing happens
    /// when the claim lapsed and another request holds the key now).
    async fn complete(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        holder: &str,
        response: &serde_json::Value,
        keep_until: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Releases a key `holder` claimed after a failure, so a retry runs again (another
    /// request's claim on it is left alone).
    async fn abandon(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        holder: &str,
    ) -> StoreResult<()>;
}

/// Which sessions a listing returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionFilter {
    pub status: Option<SessionStatus>,
    pub include_archived: bool,
}

/// Changes to a session (unset fields stay).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionChanges {
    pub title: Option<String>,
    pub is_renamed: Option<bool>,
    pub status: Option<SessionStatus>,
    /// `Some(None)` clears it.
    pub waiting_task_id: Option<Option<String>>,
    /// The whole session memory, replacing the stored one.
    pub memory: Option<std::collections::BTreeMap<String, String>>,
}

/// A user's sessions.
#[async_trait]
pub trait SessionQueries: Send + Sync {
    /// The user's sessions, newest first, and how many match in all.
    async fn list_sessions(
        &self,
        tenant_id: &str,
        user_id: &str,
        filter: SessionFilter,
        limit: usize,
        offset: usize,
    ) -> StoreResult<(Vec<Session>, usize)>;
    /// The most recently updated session that is not archived.
    async fn latest_session(&self, tenant_id: &str, user_id: &str) -> StoreResult<Option<Session>>;
    /// The most recently updated session on a root domain, optionally with a status.
    async fn session_by_domain(
        &self,
        tenant_id: &str,
        user_id: &str,
        domain: &str,
        status: Option<SessionStatus>,
    ) -> StoreResult<Option<Session>>;
    /// Applies changes; `NotFound` if the session does not exist.
    async fn update_session(
        &self,
        tenant_id: &str,
        session_id: &str,
        changes: &SessionChanges,
        now: DateTime<Utc>,
    ) -> StoreResult<Session>;
}

/// A user's stored preferences.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPreferences {
    pub preferences: serde_json::Map<String, serde_json::Value>,
    pub synced_at: DateTime<Utc>,
}

/// Preferences per tenant and user.
#[async_trait]
pub trait PreferencesStore: Send + Sync {
    async fn preferences(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<Option<StoredPreferences>>;
    async fn save_preferences(
        &self,
        tenant_id: &str,
        user_id: &str,
        preferences: &serde_json::Map<String, serde_json::Value>,
        now: DateTime<Utc>,
    ) -> StoreResult<StoredPreferences>;
}

/// One debug log entry.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DebugLog {
    pub id: String,
    pub tenant_id: String,
    /// Whose request wrote it: logs are read per user (they can quote what the user did).
    #[serde(default)]
    pub user_id: String,
    #[serde(default)]
    pub task_id: Option<String>,
    pub log_type: String,
    pub message: String,
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    pub timestamp: DateTime<Utc>,
    pub expires_at: i64,
}

/// Debug logs per tenant and user (kept until they expire).
#[async_trait]
pub trait DebugLogStore: Send + Sync {
    async fn append_log(&self, log: &DebugLog) -> StoreResult<()>;
    /// One user's logs, newest first, filtered.
    async fn logs(
        &self,
        tenant_id: &str,
        user_id: &str,
        task_id: Option<&str>,
        log_type: Option<&str>,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> StoreResult<Vec<DebugLog>>;
}

/// A stored page snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRef {
    pub key: String,
    /// Size before compression.
    pub bytes: usize,
    /// Size as stored (compressed).
    pub stored_bytes: usize,
}

/// Large payloads (DOM snapshots) kept outside the table, compressed, keyed
/// `snapshots/<tenant>/<task>/<step>`.
#[async_trait]
pub trait SnapshotStore: Send + Sync {
    async fn put_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        content: &[u8],
    ) -> StoreResult<SnapshotRef>;
    /// The snapshot's content, decompressed.
    async fn snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
    ) -> StoreResult<Option<Vec<u8>>>;
    /// Steps that have a snapshot, ascending.
    async fn snapshot_steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<u32>>;
    /// Deletes every snapshot of the task; returns how many went.
    async fn delete_snapshots(&self, tenant_id: &str, task_id: &str) -> StoreResult<usize>;
    /// A URL that fetches the stored (compressed) snapshot for `ttl_seconds`.
    async fn presign_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        ttl_seconds: u64,
    ) -> StoreResult<String>;
}

/// Everything a table adapter provides, as one object.
pub trait Store:
    UserStore
    + TenantStore
    + RevokedTokenStore
    + RateLimitStore
    + TaskStore
    + SessionStore
    + SessionQueries
    + IdempotencyStore
    + PreferencesStore
    + DebugLogStore
{
}
impl<T> Store for T where
    T: UserStore
        + TenantStore
        + RevokedTokenStore
        + RateLimitStore
        + TaskStore
        + SessionStore
        + SessionQueries
        + IdempotencyStore
        + PreferencesStore
        + DebugLogStore
{
}
