//! Storage keys of the single-table design, shared by every backend so SQLite and DynamoDB
//! lay records out identically. Tenant-owned records sit under `TENANT#<id>` partitions;
//! users are found by login email before any tenant is known, so they sit under
//! `USER#<email>` and carry their tenant inside. The two indexes are overloaded: tasks use
//! them for the cleanup sweeps, sessions for per-user listings.
//!
//! | record | PK | SK | GSI1 (PK / SK) | GSI2 (PK / SK) | access pattern |
//! |---|---|---|---|---|---|
//! | tenant | `TENANT#<t>` | `TENANT` | | | login/session: tenant name |
//! | allowed domain | `TENANT#<t>` | `DOMAIN#<pattern>` | | | knowledge filter (SK prefix) |
//! | revoked token | `TENANT#<t>` | `REVOKED#<jti>` | | | every authenticated request (TTL) |
//! | task | `TENANT#<t>` | `TASK#<id>` | `SWEEP#EXPIRES` / `<expiresAt>#<t>#<id>` | `SWEEP#ACTIVE` / `<updatedAtMs>#<t>#<id>` (active only) | interact; cleanup: expired and idle sweeps |
//! | step | `TENANT#<t>#TASK#<id>` | `STEP#<index>` | | | history of a task (conditional append, TTL) |
//! | task list entry | `TENANT#<t>#TASKS` | `<createdAtMs>#<id>` | | | a tenant's tasks newest first, with their users (the inspector's list; TTL with its task) |
//! | session | `TENANT#<t>` | `SESSION#<id>` | `TENANT#<t>#USER#<u>#SESSIONS#<status>` / `<updatedAt>` | `TENANT#<t>#USER#<u>#DOMAIN#<d>` / `<updatedAt>` | latest session, session list, by domain |
//! | message | `TENANT#<t>#SESSION#<s>` | `MSG#<sequence>` | | | messages of a session in order (TTL with its task) |
//! | user | `USER#<email>` | `USER` | | | login by email |
//! | session owner | `SESSIONID#<s>` | `OWNER` | | | a client-chosen session id belongs to one tenant and user (realtime channels are global) |
//! | rate-limit window | `RATE#<scope>#<id>` | `W#<window start>` | | | login throttling, interact limits per user and tenant (TTL) |
//! | idempotency key | `TENANT#<t>` | `IDEM#<u>#<key>` | | | replay of a retried interact (TTL: a step deadline while pending, a day when done) |
//! | agent workspace | `TENANT#<t>` | `WORKSPACE#<id>` | | | workspaces of a tenant (SK prefix) |
//! | MCP server | `TENANT#<t>` | `MCP#<name>` | | | the tenant's MCP servers (SK prefix) |
//! | agent session | `TENANT#<t>` | `AGENTSESSION#<id>` | | | the workspace a user's tool calls work in (TTL) |
//! | approval | `TENANT#<t>` | `APPROVAL#<id>` | `TENANT#<t>#AGENTSESSION#<s>#APPROVALS` / `<createdAt>` | | a decision by id; a session's approvals (TTL) |
//! | command run | `TENANT#<t>` | `EXEC#<id>` | | | a run's state, cancellation flag and end (TTL) |
//! | output chunk | `TENANT#<t>#EXEC#<id>` | `CHUNK#<seq>` | | | a run's output in order, read after a sequence number (TTL) |
//! | audit item | `TENANT#<t>#AGENTSESSION#<s>` | `AUDIT#<timestamp>#<id>` | | | a session's audit trail, newest first (TTL) |
//! | recipe | `TENANT#<t>#RECIPES` | `RECIPE#<id>` | `TENANT#<t>#RECIPESITE#<domain><path>` / `<id>` | | a task's recipe by site pattern; the operator's list (TTL) |
//! | recipe count | `TENANT#<t>#RECIPES` | `COUNT`, `COUNT#<member>` | | | the tenant's and each member's cap on recipes |
//! | debug log | `TENANT#<t>#USER#<u>#LOGS` | `<timestamp>#<id>` | | | a user's debug logs, newest first (TTL) |
//!
//! Snapshots live in the object store under `snapshots/<t>/<task>/<step>`
//! ([`crate::ports::snapshot_key`]).

pub const TENANT_SK: &str = "TENANT";
pub const USER_SK: &str = "USER";
pub const DOMAIN_PREFIX: &str = "DOMAIN#";
pub const TENANT_PK_PREFIX: &str = "TENANT#";
pub const USER_PK_PREFIX: &str = "USER#";
pub const STEP_PREFIX: &str = "STEP#";
pub const MESSAGE_PREFIX: &str = "MSG#";
pub const SWEEP_EXPIRES: &str = "SWEEP#EXPIRES";
pub const SWEEP_ACTIVE: &str = "SWEEP#ACTIVE";

pub fn tenant_pk(tenant_id: &str) -> String {
    format!("{TENANT_PK_PREFIX}{tenant_id}")
}

pub fn user_pk(email: &str) -> String {
    format!("{USER_PK_PREFIX}{email}")
}

pub fn domain_sk(pattern: &str) -> String {
    format!("{DOMAIN_PREFIX}{pattern}")
}

pub fn revoked_sk(jti: &str) -> String {
    format!("REVOKED#{jti}")
}

pub fn rate_pk(key: &str) -> String {
    format!("RATE#{key}")
}

pub fn rate_sk(window_start: i64) -> String {
    format!("W#{window_start}")
}

pub fn task_sk(task_id: &str) -> String {
    format!("TASK#{task_id}")
}

/// The partition listing a tenant's tasks by creation time.
pub fn task_list_pk(tenant_id: &str) -> String {
    format!("TENANT#{tenant_id}#TASKS")
}

/// A task's entry in its tenant's list: creation time (ms, zero-padded) then id.
pub fn task_list_sk(created_ms: i64, task_id: &str) -> String {
    format!("{:013}#{task_id}", created_ms.max(0))
}

pub fn task_children_pk(tenant_id: &str, task_id: &str) -> String {
    format!("TENANT#{tenant_id}#TASK#{task_id}")
}

pub fn step_sk(index: u32) -> String {
    format!("{STEP_PREFIX}{index:06}")
}

/// Sort key of the expiry sweep: fixed-width seconds so string order is time order.
pub fn expires_sweep_sk(expires_at: i64, tenant_id: &str, task_id: &str) -> String {
    format!("{expires_at:012}#{tenant_id}#{task_id}")
}

/// Sort key of the idle sweep: fixed-width milliseconds.
pub fn active_sweep_sk(updated_at_ms: i64, tenant_id: &str, task_id: &str) -> String {
    format!("{updated_at_ms:015}#{tenant_id}#{task_id}")
}

pub fn session_sk(session_id: &str) -> String {
    format!("SESSION#{session_id}")
}

pub const SESSION_OWNER_SK: &str = "OWNER";

/// The global claim on a session id (not under a tenant: ids are unique across tenants).
pub fn session_owner_pk(session_id: &str) -> String {
    format!("SESSIONID#{session_id}")
}

pub fn session_children_pk(tenant_id: &str, session_id: &str) -> String {
    format!("TENANT#{tenant_id}#SESSION#{session_id}")
}

/// Index partition of a user's sessions in one status, newest first by `updatedAt`.
pub fn user_sessions_pk(tenant_id: &str, user_id: &str, status: &str) -> String {
    format!("TENANT#{tenant_id}#USER#{user_id}#SESSIONS#{status}")
}

/// Index partition all of a user's sessions had before they were indexed by status (read
/// once per user, to move them).
pub fn legacy_user_sessions_pk(tenant_id: &str, user_id: &str) -> String {
    format!("TENANT#{tenant_id}#USER#{user_id}#SESSIONS")
}

/// Sort key (in the tenant's partition) of a user's session counts by status.
pub fn session_counts_sk(user_id: &str) -> String {
    format!("SESSIONCOUNTS#{user_id}")
}

pub fn user_domain_sessions_pk(tenant_id: &str, user_id: &str, domain: &str) -> String {
    format!("TENANT#{tenant_id}#USER#{user_id}#DOMAIN#{domain}")
}

/// The highest sequence number a message key can hold (ten digits keep keys in order).
pub const MAX_MESSAGE_SEQUENCE: u64 = 9_999_999_999;

pub fn message_sk(sequence: u64) -> String {
    format!("{MESSAGE_PREFIX}{sequence:010}")
}

pub const WORKSPACE_PREFIX: &str = "WORKSPACE#";
pub const AUDIT_PREFIX: &str = "AUDIT#";

pub fn workspace_sk(id: &str) -> String {
    format!("{WORKSPACE_PREFIX}{id}")
}

pub fn agent_session_sk(id: &str) -> String {
    format!("AGENTSESSION#{id}")
}

pub fn approval_sk(id: &str) -> String {
    format!("APPROVAL#{id}")
}

pub fn agent_session_children_pk(tenant_id: &str, session_id: &str) -> String {
    format!("TENANT#{tenant_id}#AGENTSESSION#{session_id}")
}

pub fn session_approvals_pk(tenant_id: &str, session_id: &str) -> String {
    format!("TENANT#{tenant_id}#AGENTSESSION#{session_id}#APPROVALS")
}

pub const CHUNK_PREFIX: &str = "CHUNK#";

pub fn exec_sk(id: &str) -> String {
    format!("EXEC#{id}")
}

pub fn exec_chunks_pk(tenant_id: &str, exec_id: &str) -> String {
    format!("TENANT#{tenant_id}#EXEC#{exec_id}")
}

pub fn chunk_sk(seq: u64) -> String {
    format!("{CHUNK_PREFIX}{seq:010}")
}

pub const MCP_PREFIX: &str = "MCP#";

pub fn mcp_sk(name: &str) -> String {
    format!("{MCP_PREFIX}{name}")
}

pub const RECIPE_PREFIX: &str = "RECIPE#";
pub const RECIPE_COUNT_SK: &str = "COUNT";

pub fn recipes_pk(tenant_id: &str) -> String {
    format!("{TENANT_PK_PREFIX}{tenant_id}#RECIPES")
}

pub fn recipe_sk(id: &str) -> String {
    format!("{RECIPE_PREFIX}{id}")
}

/// The count of the recipes one member's runs added.
pub fn recipe_member_count_sk(member: &str) -> String {
    format!("{RECIPE_COUNT_SK}#{member}")
}

pub fn recipe_site_pk(tenant_id: &str, origin: &str, path: &str) -> String {
    format!("{TENANT_PK_PREFIX}{tenant_id}#RECIPESITE#{origin}{path}")
}
