//! Where approved commands run: a child process here (local-api), or the `agent-exec` function.

use async_trait::async_trait;

use crate::domain::agent_tools::ExecRecord;

#[async_trait]
pub trait CommandRunner: Send + Sync {
    /// Starts `exec` (already recorded as running) in the workspace at `root`; returns once it
    /// is under way. `writes`: the program's file changes are written back.
    async fn start(&self, exec: &ExecRecord, root: &str, writes: bool) -> Result<(), String>;
    /// Whether commands can be started (for the status route).
    async fn check(&self) -> Result<(), String>;
}
