//! The session's realtime events: each stored message and the step's answer sent on the
//! session's channel, as a courtesy bounded in time (the client also polls).

use serde_json::{json, Value};

use crate::ports::realtime::{session_channel, Realtime};

/// Longest wait for realtime delivery: events are a courtesy, the client also polls.
const REALTIME_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// Sends `new_message` (with the full message) for every stored message, then, when given,
/// `interact_response`, on the session's channel. Failures are logged, never returned; without
/// realtime configured nothing is sent.
pub async fn notify(
    realtime: Option<&dyn Realtime>,
    session_id: &str,
    task_id: Option<&str>,
    messages: &[crate::domain::Message],
    response: Option<&Value>,
) {
    let Some(rt) = realtime else {
        return;
    };
    let channel = session_channel(session_id);
    let sends = async {
        for m in messages {
            let data = json!({ "type": "new_message", "sessionId": session_id, "message": crate::views::MessageView::from(m) });
            if let Err(e) = rt.trigger(&channel, "new_message", &data).await {
                tracing::warn!(error = %e, "realtime new_message failed");
            }
        }
        if let Some(response) = response {
            let data = json!({ "type": "interact_response", "sessionId": session_id, "taskId": task_id, "response": response });
            if let Err(e) = rt.trigger(&channel, "interact_response", &data).await {
                tracing::warn!(error = %e, "realtime interact_response failed");
            }
        }
    };
    if tokio::time::timeout(REALTIME_WAIT, sends).await.is_err() {
        tracing::warn!("realtime delivery timed out");
    }
}
