//! The realtime port: events delivered to the side panel on a channel (Pusher's protocol).
//! Failures are logged by callers and never fail a request: the client polls messages when
//! realtime is down.

use async_trait::async_trait;
use serde_json::Value;

/// Delivers events to subscribed clients.
#[async_trait]
pub trait Realtime: Send + Sync {
    /// Triggers `event` with `data` on `channel`.
    async fn trigger(&self, channel: &str, event: &str, data: &Value) -> Result<(), String>;
    /// The `auth` value for a private-channel subscription (`key:signature`).
    fn channel_auth(&self, socket_id: &str, channel: &str) -> String;
}

/// The channel of a session's events.
pub fn session_channel(session_id: &str) -> String {
    format!("private-session-{session_id}")
}
