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

impl SessionStatus {
    /// Every status.
    pub const ALL: [SessionStatus; 5] = [
        SessionStatus::Active,
        SessionStatus::Completed,
        SessionStatus::Failed,
        SessionStatus::Interrupted,
        SessionStatus::Archived,
    ];

    /// The contract's name (as serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
            SessionStatus::Interrupted => "interrupted",
            SessionStatus::Archived => "archived",
        }
    }
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
    /// Whether the id's global claim is stored (sessions stored before claims existed lack it
    /// until their next message).
    #[serde(default)]
    pub id_claimed: bool,
    /// The session's task that waits for the user (`needs_user_input`, `awaiting_user`): the
    /// client sends the user's reply without a `taskId`, and it continues this task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_task_id: Option<String>,
    /// Notes tasks exported to the session (`exportToSession`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub memory: std::collections::BTreeMap<String, String>,
    /// Timestamp of the newest message: the next ones are stamped no earlier (`updatedAt`
    /// also moves with renames, so it cannot serve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message_at: Option<DateTime<Utc>>,
}

impl Session {
    /// A new, empty, active session.
    #[allow(clippy::too_many_arguments)]
    pub fn new_active(
        session_id: String,
        tenant_id: String,
        user_id: String,
        url: String,
        domain: String,
        title: String,
        metadata: Option<Value>,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            session_id,
            tenant_id,
            user_id,
            title,
            url,
            domain,
            status: SessionStatus::Active,
            is_renamed: false,
            message_count: 0,
            last_sequence: 0,
            created_at: now,
            updated_at: now,
            metadata,
            id_claimed: false,
            waiting_task_id: None,
            memory: std::collections::BTreeMap::new(),
            last_message_at: None,
        }
    }
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

impl Message {
    /// A message in a session — of a task, when given as `(task id, expiry)`, expiring with
    /// it — at `at`; its sequence number is assigned when it is stored.
    pub fn new(
        tenant_id: &str,
        session_id: &str,
        task: Option<(&str, i64)>,
        role: MessageRole,
        content: &str,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            message_id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.to_owned(),
            tenant_id: tenant_id.to_owned(),
            task_id: task.map(|(id, _)| id.to_owned()),
            role,
            content: content.to_owned(),
            timestamp: at,
            sequence_number: 0,
            status: None,
            action_string: None,
            action_payload: None,
            error: None,
            dom_summary: None,
            snapshot_id: None,
            metadata: None,
            expires_at: task.map(|(_, expires)| expires),
        }
    }
}

/// Parses a session status as the query string spells it.
pub fn parse_status(s: &str) -> Option<SessionStatus> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).ok()
}

/// The root domain a session is about: the given domain (or host), else the URL's host when it
/// is a web page; empty for the extension's own pages.
pub fn session_domain(domain: Option<&str>, url: &str) -> String {
    use super::site::{host_of, root_domain};
    let given = domain
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .and_then(host_of);
    let from_url = (url.starts_with("http://") || url.starts_with("https://"))
        .then(|| host_of(url))
        .flatten();
    given
        .or(from_url)
        .map(|h| root_domain(&h))
        .unwrap_or_default()
}

/// Longest title kept.
pub const MAX_TITLE_CHARS: usize = 120;

/// The automatic title: `{domain}: {task}`, or what is known of it.
pub fn auto_title(domain: &str, query: Option<&str>) -> String {
    let title = match (domain.is_empty(), query) {
        (false, Some(q)) => format!("{domain}: {q}"),
        (true, Some(q)) => q.to_owned(),
        (false, None) => domain.to_owned(),
        (true, None) => "New session".to_owned(),
    };
    crate::text::truncate_chars(&title, MAX_TITLE_CHARS)
}

/// A user's title with the session's `{domain}: ` prefix kept.
pub fn renamed_title(domain: &str, title: &str) -> String {
    let prefix = format!("{domain}: ");
    let title = if domain.is_empty() || title.starts_with(&prefix) {
        title.to_owned()
    } else {
        format!("{prefix}{title}")
    };
    crate::text::truncate_chars(&title, MAX_TITLE_CHARS + prefix.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_carry_the_domain_prefix() {
        assert_eq!(
            auto_title("example.com", Some("Buy shoes")),
            "example.com: Buy shoes"
        );
        assert_eq!(auto_title("", None), "New session");
        assert_eq!(
            renamed_title("example.com", "My shoes"),
            "example.com: My shoes"
        );
        assert_eq!(
            renamed_title("example.com", "example.com: Mine"),
            "example.com: Mine"
        );
        assert_eq!(renamed_title("", "Mine"), "Mine");
    }

    #[test]
    fn session_domains_come_from_domain_or_web_urls() {
        assert_eq!(
            session_domain(Some("www.example.co.uk"), "chrome-extension://x/popup.html"),
            "example.co.uk"
        );
        assert_eq!(
            session_domain(Some(""), "chrome-extension://x/popup.html"),
            ""
        );
        assert_eq!(
            session_domain(None, "http://127.0.0.1:3000/test-page"),
            "127.0.0.1"
        );
        assert_eq!(parse_status("archived"), Some(SessionStatus::Archived));
        assert_eq!(parse_status("nope"), None);
    }
}
