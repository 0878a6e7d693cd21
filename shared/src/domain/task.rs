//! Tasks (one user instruction carried out over many steps) and their steps (one action
//! each). A task is written by one request at a time (a lease) and every change bumps its
//! version; step N is appended by exactly one writer.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task stands; the names are the contract's `status` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Planning,
    Executing,
    Verifying,
    Correcting,
    Completed,
    Failed,
    NeedsUserInput,
    AwaitingUser,
    /// Idle for longer than the configured time (the cleanup function sets it).
    Interrupted,
}

impl TaskStatus {
    /// Finished for good: further interacts answer `409 TASK_COMPLETED`.
    pub fn is_finished(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed)
    }

    /// Still being worked on (not finished, not interrupted): candidates for the idle sweep.
    pub fn is_active(self) -> bool {
        !self.is_finished() && self != TaskStatus::Interrupted
    }
}

/// A task of one user in one tenant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    #[serde(default)]
    pub session_id: Option<String>,
    pub status: TaskStatus,
    pub query: String,
    pub url: String,
    #[serde(default)]
    pub plan: Option<Value>,
    /// Steps appended so far (the next step's index).
    pub step_count: u32,
    /// Bumped by every save; saves are conditional on it.
    pub version: u64,
    /// The request currently working on the task, and until when (epoch seconds).
    #[serde(default)]
    pub lease_owner: Option<String>,
    #[serde(default)]
    pub lease_until: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When the task and everything belonging to it may be deleted (epoch seconds).
    pub expires_at: i64,
}

/// Enough to find a task and what belongs to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRef {
    pub tenant_id: String,
    pub task_id: String,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// One step of a task: the action decided, what the page looked like before it, and what
/// came of it. Large payloads (the page itself) live in the snapshot store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub tenant_id: String,
    pub task_id: String,
    pub index: u32,
    pub thought: String,
    pub action: String,
    /// URL, page hash, skeleton summary and snapshot key before the action.
    #[serde(default)]
    pub before_state: Option<Value>,
    #[serde(default)]
    pub expected_outcome: Option<Value>,
    #[serde(default)]
    pub verification: Option<Value>,
    #[serde(default)]
    pub correction: Option<Value>,
    /// What the client reported about the previous action.
    #[serde(default)]
    pub client_outcome: Option<Value>,
    /// The user's reply to a question, when this step's request carried one.
    #[serde(default)]
    pub user_input: Option<String>,
    #[serde(default)]
    pub usage: Option<Value>,
    #[serde(default)]
    pub timings: Option<Value>,
    pub created_at: DateTime<Utc>,
    pub expires_at: i64,
}
