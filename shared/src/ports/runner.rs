//! Where approved commands run: a child process here (local-api), or the `agent-exec` function.

use std::sync::Arc;

use async_trait::async_trait;

use crate::domain::agent_tools::ExecRecord;
use crate::ports::workspace::Workspace;

#[async_trait]
pub trait CommandRunner: Send + Sync {
    /// Starts `exec` (already recorded as running) in the workspace at `root`; returns once it
    /// is under way. `writes`: the program's file changes are written back.
    async fn start(&self, exec: &ExecRecord, root: &str, writes: bool) -> Result<(), String>;
    /// Whether commands can be started (for the status route).
    async fn check(&self) -> Result<(), String>;
}

/// Runs a recorded command in this process to its end and records how it ended (the work of
/// the `agent-exec` function, which reads the run from the store first).
#[async_trait]
pub trait Jobs: Send + Sync {
    /// Runs `exec` in `ws`; `writes`: the program's file changes are written back.
    async fn run(&self, ws: Arc<dyn Workspace>, exec: ExecRecord, writes: bool);
    /// Records that `exec` ended without running, for `why`.
    async fn refuse(&self, exec: &ExecRecord, why: String);
}
