//! Sessions, their owners, messages and listings.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{StoreError, StoreResult};
use crate::domain::{Message, Session, SessionStatus};

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
    /// At most `limit` messages from where `from` says, in ascending sequence; every mode
    /// reads at most `limit + 1` live items.
    async fn messages(
        &self,
        tenant_id: &str,
        session_id: &str,
        from: MessagesFrom,
        limit: usize,
    ) -> StoreResult<MessagePage>;
}

/// Which page of a session's messages to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessagesFrom {
    /// The newest messages.
    Newest,
    /// The oldest messages with a higher sequence number: the lossless polling cursor.
    After(u64),
    /// The newest messages with a lower sequence number: older history.
    Before(u64),
    /// The newest messages stamped at or after this time. Inclusive, because one step's
    /// messages share a timestamp; stored timestamps never decrease along the sequence.
    Since(DateTime<Utc>),
}

/// One page of messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessagePage {
    /// Ascending sequence.
    pub messages: Vec<Message>,
    /// More messages match beyond this page (older ones for `Newest`/`Before`/`Since`, newer
    /// ones for `After`).
    pub has_more: bool,
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
    /// The page the session is about, named by its first task when the session was made
    /// without one.
    pub place: Option<SessionPlace>,
    /// The whole metadata, replacing the stored one (a task's secret scrubbed from it).
    pub metadata: Option<serde_json::Value>,
}

/// A session's page: its URL and root domain, with the owner whose by-domain listing it joins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPlace {
    pub user_id: String,
    pub url: String,
    pub domain: String,
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
