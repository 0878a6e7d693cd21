//! A run's record as it goes: where it is recorded and announced ([`RunEnv`]), its end
//! (stored, audited, pushed as `exec_exit`) and its events on the agent session's realtime
//! channel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::clock::Clock;
use crate::domain::agent_tools::{AuditEntry, ExecRecord, ExecStatus};
use crate::ports::realtime::Realtime;
use crate::ports::{ExecEnd, Store};

/// What a run needs besides the command: where to record it and how.
#[derive(Clone)]
pub struct RunEnv {
    pub store: Arc<dyn Store>,
    pub realtime: Option<Arc<dyn Realtime>>,
    pub clock: Arc<dyn Clock>,
    pub retention_days: i64,
    pub output_cap: u64,
}

impl RunEnv {
    pub fn expires(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now() + chrono::Duration::days(self.retention_days)
    }
}

/// The realtime channel of an agent session (signed by `/api/pusher/auth` for its owner).
pub fn agent_channel(session_id: &str) -> String {
    format!("private-agent-{session_id}")
}

/// A run's end as a failure, `why`.
pub fn failed(env: &RunEnv, started: Instant, why: String) -> ExecEnd {
    ExecEnd {
        status: ExecStatus::Failed,
        exit_code: None,
        ended_at: env.clock.now(),
        duration_ms: started.elapsed().as_millis() as u64,
        output_bytes: 0,
        error: Some(why),
    }
}

/// Records the end, audits it and announces it.
pub async fn finish(env: &RunEnv, exec: &ExecRecord, end: ExecEnd) {
    if let Err(e) = env.store.finish_exec(&exec.tenant_id, &exec.id, &end).await {
        tracing::error!(exec = %exec.id, error = %e, "the end of a command was not recorded");
    }
    let outcome = match (end.status, end.exit_code) {
        (ExecStatus::Exited, Some(code)) => format!("exited:{code}"),
        (s, _) => s.as_str().to_owned(),
    };
    let (session, now) = (&exec.session_id, env.clock.now());
    let entry = AuditEntry {
        outcome,
        duration_ms: end.duration_ms,
        ..AuditEntry::ok(session, &exec.user_id, "exec.end", &exec.id, now)
    };
    if let Err(e) = env
        .store
        .append_audit(&exec.tenant_id, &entry, env.expires())
        .await
    {
        tracing::error!(exec = %exec.id, error = %e, "the end of a command was not audited");
    }
    announce(
        env,
        exec,
        "exec_exit",
        json!({ "execId": exec.id, "status": end.status, "exitCode": end.exit_code,
            "durationMs": end.duration_ms }),
    )
    .await;
}

/// Pushes `event` on the run's agent session channel (a courtesy: at most a second).
pub async fn announce(env: &RunEnv, exec: &ExecRecord, event: &str, data: serde_json::Value) {
    if let Some(rt) = &env.realtime {
        let channel = agent_channel(&exec.session_id);
        let send = rt.trigger(&channel, event, &data);
        match tokio::time::timeout(Duration::from_secs(1), send).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "realtime {event} failed"),
            Err(_) => tracing::warn!("realtime {event} timed out"),
        }
    }
}
