//! Sessions (the side panel's conversation threads, created by the client) and their
//! messages, numbered by a strictly increasing sequence.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Session states, as the contract names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Active,
    Completed,
    Failed,
    Interrupted,
    Archived,
}

/// A conversation thread of one user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub session_id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub title: String,
    pub url: String,
    pub domain: String,
    pub status: SessionStatus,
    pub is_renamed: bool,
    /// Messages currently stored.
    pub message_count: u64,
    /// Highest sequence number handed out (never reused, even after deletions).
    #[serde(default)]
    pub last_sequence: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    User,
    Assistant,
    System,
}

/// One message of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub message_id: String,
    pub session_id: String,
    pub tenant_id: String,
    #[serde(default)]
    pub task_id: Option<String>,
    pub role: MessageRole,
    pub content: String,
    pub timestamp: DateTime<Utc>,
    /// Assigned by the store on append.
    #[serde(default)]
    pub sequence_number: u64,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub action_string: Option<String>,
    #[serde(default)]
    pub action_payload: Option<Value>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub dom_summary: Option<String>,
    #[serde(default)]
    pub snapshot_id: Option<String>,
    #[serde(default)]
    pub metadata: Option<Value>,
    /// Messages of a task expire with it (epoch seconds).
    #[serde(default)]
    pub expires_at: Option<i64>,
}
