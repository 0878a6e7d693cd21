//! The shapes the extension reads for sessions and messages: camelCase, timestamps as ISO-8601
//! strings with milliseconds, `role` always present, no DOM in messages.

use serde::Serialize;
use serde_json::Value;

use crate::domain::{Message, MessageRole, Session, SessionStatus};
use crate::time::iso;

/// `Session` of the contract.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub session_id: String,
    pub title: String,
    pub url: String,
    pub domain: String,
    pub status: SessionStatus,
    pub is_renamed: bool,
    pub message_count: u64,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl From<&Session> for SessionView {
    fn from(s: &Session) -> Self {
        Self {
            session_id: s.session_id.clone(),
            title: s.title.clone(),
            url: s.url.clone(),
            domain: s.domain.clone(),
            status: s.status,
            is_renamed: s.is_renamed,
            message_count: s.message_count,
            created_at: iso(s.created_at),
            updated_at: iso(s.updated_at),
            metadata: s.metadata.clone(),
        }
    }
}

/// `Message` of the contract.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageView {
    pub message_id: String,
    pub role: MessageRole,
    pub content: String,
    pub timestamp: String,
    pub sequence_number: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_string: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_payload: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dom_summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl From<&Message> for MessageView {
    fn from(m: &Message) -> Self {
        Self {
            message_id: m.message_id.clone(),
            role: m.role,
            content: m.content.clone(),
            timestamp: iso(m.timestamp),
            sequence_number: m.sequence_number,
            status: m.status.clone(),
            action_string: m.action_string.clone(),
            action_payload: m.action_payload.clone(),
            error: m.error.clone(),
            dom_summary: m
                .dom_summary
                .as_deref()
                .map(|d| crate::text::truncate_chars(d, 200)),
            snapshot_id: m.snapshot_id.clone(),
            metadata: m.metadata.clone(),
        }
    }
}
