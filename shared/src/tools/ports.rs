//! What the agent-tool use cases use, borrowed for one request from what the function
//! assembled at start (`AppContext::tools`): the store, the snapshots, the clock, workspace
//! storage, the command runner, the MCP client, the search turns and status cache of this
//! process, and the tools' settings.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::health::StatusCache;
use crate::clock::Clock;
use crate::config::ToolsConfig;
use crate::ports::mcp::McpClient;
use crate::ports::runner::CommandRunner;
use crate::ports::workspace::Workspaces;
use crate::ports::{SnapshotStore, Store};

/// The ports and settings of the agent tools.
#[derive(Clone, Copy)]
pub struct ToolPorts<'a> {
    pub store: &'a dyn Store,
    pub snapshots: &'a dyn SnapshotStore,
    pub clock: &'a dyn Clock,
    pub workspaces: &'a dyn Workspaces,
    /// Where approved commands run.
    pub runner: &'a dyn CommandRunner,
    pub mcp: &'a dyn McpClient,
    /// Turns of the workspace searches this process runs at once.
    pub search_turns: &'a Arc<Semaphore>,
    /// Recent workspace-storage checks of the status route.
    pub tools_status: &'a StatusCache,
    pub tools: &'a ToolsConfig,
}
