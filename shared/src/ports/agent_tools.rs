//! Records of the server-hosted agent tools: workspaces, agent sessions, approvals and the
//! audit trail, all under the tenant's partitions.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;
use crate::domain::agent_tools::{
    AgentSession, Approval, ApprovalStatus, AuditEntry, Chunk, ExecRecord, ExecStatus,
    McpServerRecord, WorkspaceRecord,
};

/// A decision's change to an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalChange<'a> {
    pub from: ApprovalStatus,
    pub to: ApprovalStatus,
    pub at: DateTime<Utc>,
    pub decided_by: Option<&'a str>,
    pub outcome: Option<&'a str>,
}

#[async_trait]
pub trait AgentToolStore: Send + Sync {
    /// Creates a workspace; `Conflict` when the id is taken in the tenant.
    async fn create_workspace(&self, ws: &WorkspaceRecord) -> StoreResult<()>;
    async fn workspace(&self, tenant_id: &str, id: &str) -> StoreResult<Option<WorkspaceRecord>>;
    /// The tenant's workspaces, by id.
    async fn workspaces(&self, tenant_id: &str) -> StoreResult<Vec<WorkspaceRecord>>;
    /// `false` when there was none.
    async fn delete_workspace(&self, tenant_id: &str, id: &str) -> StoreResult<bool>;

    /// Adds an MCP server; `Conflict` when the name is taken in the tenant.
    async fn create_mcp_server(&self, server: &McpServerRecord) -> StoreResult<()>;
    /// The tenant's MCP servers, by name.
    async fn mcp_servers(&self, tenant_id: &str) -> StoreResult<Vec<McpServerRecord>>;
    /// `false` when there was none.
    async fn delete_mcp_server(&self, tenant_id: &str, name: &str) -> StoreResult<bool>;

    /// Creates or replaces an agent session, kept until `expires_at`.
    async fn put_agent_session(
        &self,
        session: &AgentSession,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()>;
    async fn agent_session(&self, tenant_id: &str, id: &str) -> StoreResult<Option<AgentSession>>;

    /// Stores a new pending approval, kept until `expires_at`.
    async fn create_approval(&self, a: &Approval, expires_at: DateTime<Utc>) -> StoreResult<()>;
    async fn approval(&self, tenant_id: &str, id: &str) -> StoreResult<Option<Approval>>;
    /// A session's approvals, newest first: at most `limit` of those older than the one at
    /// position `before` ([`approval_position`]; from the newest when `None`), and whether
    /// more may follow.
    async fn session_approvals(
        &self,
        tenant_id: &str,
        session_id: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<(Vec<Approval>, bool)>;
    /// Moves an approval from `change.from` to `change.to` and appends `audit` (kept until
    /// `audit_expires_at`) in one transaction; leaving `pending` also requires its `decideBy`
    /// not to have passed. `Conflict` (and nothing written) when it is no longer in `from` or
    /// has expired: of parallel decisions exactly one wins, and none goes unaudited.
    async fn change_approval(
        &self,
        tenant_id: &str,
        id: &str,
        change: ApprovalChange<'_>,
        audit: &AuditEntry,
        audit_expires_at: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Appends an audit item, kept until `expires_at`.
    async fn append_audit(
        &self,
        tenant_id: &str,
        entry: &AuditEntry,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// A session's audit trail, newest first: at most `limit` items older than the one at
    /// position `before` ([`audit_position`]; from the newest when `None`), and whether more
    /// may follow.
    async fn audit_trail(
        &self,
        tenant_id: &str,
        session_id: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<(Vec<AuditEntry>, bool)>;

    /// Records a command run that has started, kept until `expires_at`.
    async fn create_exec(&self, exec: &ExecRecord, expires_at: DateTime<Utc>) -> StoreResult<()>;
    async fn exec(&self, tenant_id: &str, id: &str) -> StoreResult<Option<ExecRecord>>;
    /// Takes a recorded run for its runner (one conditional write): `false` when it was taken
    /// already or is no longer running — a second delivery of the same run does nothing.
    async fn claim_exec(&self, tenant_id: &str, id: &str, now: DateTime<Utc>) -> StoreResult<bool>;
    /// Flags a running command for cancellation; `false` when it is no longer running.
    async fn request_cancel(&self, tenant_id: &str, id: &str) -> StoreResult<bool>;
    /// Records how a running command ended (only once: `Conflict` if it already has).
    async fn finish_exec(&self, tenant_id: &str, id: &str, end: &ExecEnd) -> StoreResult<()>;
    /// Appends output chunks of a command (sequence numbers chosen by its one runner).
    async fn append_chunks(
        &self,
        tenant_id: &str,
        exec_id: &str,
        chunks: &[Chunk],
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Chunks after sequence number `after` (all when `None`), in order, at most `limit`, and
    /// whether more follow (the store may return fewer than `limit` for size).
    async fn chunks(
        &self,
        tenant_id: &str,
        exec_id: &str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<(Vec<Chunk>, bool)>;
}

/// Where an audit item stands in its session's trail (its time, then its id): what a page of
/// the trail continues after.
pub fn audit_position(e: &AuditEntry) -> String {
    format!("{}#{}", crate::time::iso(e.timestamp), e.id)
}

/// Where an approval stands among its session's approvals (created, then id).
pub fn approval_position(a: &Approval) -> String {
    format!("{}#{}", crate::time::iso(a.created_at), a.id)
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecEnd {
    pub status: ExecStatus,
    pub exit_code: Option<i32>,
    pub ended_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub output_bytes: u64,
    pub error: Option<String>,
}
