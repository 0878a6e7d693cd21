//! Records of the agent tools: workspaces (defined by administrators), agent sessions (a user's
//! choice of workspace), pending approvals and audit items. Plain data; the rules over it live
//! in `tiers` and `approvals`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An allowlisted program: every argument must match one of `args` (anchored regexes).
/// `writes`: the program may change files (in the cloud its changes are written back to the
/// workspace; other programs' changes are discarded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRule {
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes: bool,
}

/// A workspace: a root the tenant's users may work in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRecord {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    /// `s3://bucket/prefix`, or a directory relative to `AGENT_WORKSPACES_DIR`.
    pub root: String,
    #[serde(default)]
    pub allowed_commands: Vec<CommandRule>,
    pub created_at: DateTime<Utc>,
}

/// A user's agent session: which workspace their tool calls work in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub workspace_id: String,
    pub status: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: DateTime<Utc>,
}

/// Approval tiers, as in the extension: `auto` runs at once, `batch` may be approved as a
/// listed group, `individual` one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Auto,
    Batch,
    Individual,
}

/// Where an approval stands. `Running` is taken by exactly one decision; the call then ends
/// `Done` or `Failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    Pending,
    Running,
    Done,
    Failed,
    Rejected,
    Expired,
    /// Shown for a call still `running` long after it started: its process ended without
    /// recording an outcome. It is never run again.
    Interrupted,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Running => "running",
            ApprovalStatus::Done => "done",
            ApprovalStatus::Failed => "failed",
            ApprovalStatus::Rejected => "rejected",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Interrupted => "interrupted",
        }
    }
}

/// A tool call waiting for (or past) a decision. `args` is the call's arguments; large ones
/// (a whole file to write) are kept in the snapshot store and `args` is then `null` in the
/// stored item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub id: String,
    pub tenant_id: String,
    pub session_id: String,
    pub user_id: String,
    pub workspace_id: String,
    pub workspace_name: String,
    pub tool_name: String,
    pub args: Value,
    #[serde(default)]
    pub args_stored: bool,
    /// Bytes of the call as parked (what counts against the user's pending bytes); 0 for
    /// approvals parked before pending approvals were counted.
    #[serde(default)]
    pub args_bytes: u64,
    pub tier: Tier,
    pub status: ApprovalStatus,
    pub created_at: DateTime<Utc>,
    /// Epoch seconds after which the approval can no longer be decided.
    pub decide_by: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// `ok` or the error code the call ended with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// One audited action: a tool call, an approval decision or its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: String,
    pub session_id: String,
    pub user_id: String,
    /// A tool name (`fs.write`, ...) or `approval.approve` / `approval.reject`.
    pub action: String,
    /// The path, approval id or command the action was about.
    pub target: String,
    /// `true` ran without or with an approval, `false` rejected, `null` awaiting a decision.
    pub approved: Option<bool>,
    pub timestamp: DateTime<Utc>,
    /// `ok`, `pending`, `rejected`, `expired` or the error code it failed with.
    pub outcome: String,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
}

impl AuditEntry {
    /// An action that ran approved and ended `ok` (a new id; no duration, no approval).
    pub fn ok(session: &str, user: &str, action: &str, target: &str, at: DateTime<Utc>) -> Self {
        Self {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: session.into(),
            user_id: user.into(),
            action: action.into(),
            target: target.into(),
            approved: Some(true),
            timestamp: at,
            outcome: "ok".into(),
            duration_ms: 0,
            approval_id: None,
        }
    }
}

/// How a command run ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecStatus {
    Running,
    /// It exited by itself (`exitCode` says how).
    Exited,
    /// Stopped at its time limit.
    TimedOut,
    /// Stopped on the user's request.
    Cancelled,
    /// Stopped when its output reached the limit.
    OutputLimit,
    /// It could not be started (or its runner failed).
    Failed,
}

impl ExecStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecStatus::Running => "running",
            ExecStatus::Exited => "exited",
            ExecStatus::TimedOut => "timed_out",
            ExecStatus::Cancelled => "cancelled",
            ExecStatus::OutputLimit => "output_limit",
            ExecStatus::Failed => "failed",
        }
    }
}

/// One command run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecRecord {
    pub id: String,
    pub tenant_id: String,
    pub session_id: String,
    pub user_id: String,
    pub workspace_id: String,
    pub program: String,
    pub args: Vec<String>,
    pub timeout_seconds: u64,
    pub status: ExecStatus,
    #[serde(default)]
    pub cancel_requested: bool,
    pub started_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub output_bytes: u64,
    /// Why it failed, when it did (never internal detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A piece of a command's output, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Chunk {
    pub seq: u64,
    pub stream: Stream,
    pub data: String,
    pub at: DateTime<Utc>,
}

/// An MCP server a tenant's agent tools may call (Streamable HTTP).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRecord {
    pub tenant_id: String,
    /// Short name, unique in the tenant (`[A-Za-z0-9_-]`).
    pub name: String,
    /// `https://…/mcp` (or `http://` for a server on this host).
    pub url: String,
    /// Where its credential comes from: `env:AGENT_MCP_SECRET_<NAME>` or
    /// `secretsmanager:<secret id>`; sent as `Authorization: Bearer <value>` unless
    /// `auth_header` names another header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_header: Option<String>,
    /// Tiers the administrator lowered (or raised) per tool; others are `individual`.
    #[serde(default)]
    pub tiers: std::collections::BTreeMap<String, Tier>,
    pub created_at: DateTime<Utc>,
}
