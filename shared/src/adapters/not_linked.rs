//! Stand-ins for adapters a function is built without: the agent tools' adapters in functions
//! that serve no agent-tool route (their binaries link neither the MCP SDK nor the Lambda
//! client), the snapshot store in functions that touch only the table (no S3 client). Reaching
//! one anyway is a wiring fault, reported as such.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::domain::agent_tools::ExecRecord;
use crate::domain::agent_tools::McpServerRecord;
use crate::ports::mcp::{McpAnswer, McpClient, McpError, McpTool};
use crate::ports::runner::CommandRunner;
use crate::ports::workspace::{Workspace, Workspaces, WsError, WsResult};
use crate::ports::{Compressed, SnapshotRef, SnapshotStore, StoreError, StoreResult};

/// An adapter this function was built without.
#[derive(Debug, Clone, Copy)]
pub struct NotLinked;

const NOT_LINKED: &str = "agent tools are not part of this function";
const NO_OBJECTS: &str = "page snapshots are not part of this function";

fn no_objects<T>() -> StoreResult<T> {
    Err(StoreError::Internal(NO_OBJECTS.into()))
}

#[async_trait]
impl McpClient for NotLinked {
    async fn list_tools(&self, _server: &McpServerRecord) -> Result<Vec<McpTool>, McpError> {
        Err(McpError::Unavailable(NOT_LINKED.into()))
    }

    async fn call_tool(
        &self,
        _server: &McpServerRecord,
        _tool: &str,
        _arguments: Map<String, Value>,
    ) -> Result<McpAnswer, McpError> {
        Err(McpError::Unavailable(NOT_LINKED.into()))
    }
}

#[async_trait]
impl CommandRunner for NotLinked {
    async fn start(&self, _exec: &ExecRecord, _root: &str, _writes: bool) -> Result<(), String> {
        Err(NOT_LINKED.into())
    }

    async fn check(&self) -> Result<(), String> {
        Err(NOT_LINKED.into())
    }
}

impl Workspaces for NotLinked {
    fn open(&self, _root: &str) -> WsResult<Arc<dyn Workspace>> {
        Err(WsError::Unavailable(NOT_LINKED.into()))
    }
}

#[async_trait]
impl SnapshotStore for NotLinked {
    async fn put_compressed(
        &self,
        _tenant_id: &str,
        _task_id: &str,
        _step: u32,
        _snapshot: &Compressed,
    ) -> StoreResult<SnapshotRef> {
        no_objects()
    }

    async fn snapshot(&self, _: &str, _: &str, _: u32) -> StoreResult<Option<Vec<u8>>> {
        no_objects()
    }

    async fn snapshot_steps(&self, _tenant_id: &str, _task_id: &str) -> StoreResult<Vec<u32>> {
        no_objects()
    }

    async fn delete_snapshots(&self, _tenant_id: &str, _task_id: &str) -> StoreResult<usize> {
        no_objects()
    }

    async fn presign_snapshot(&self, _: &str, _: &str, _: u32, _: u64) -> StoreResult<String> {
        no_objects()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_call_fails_with_a_clear_reason() {
        let server = McpServerRecord {
            tenant_id: "acme".into(),
            name: "files".into(),
            url: "http://127.0.0.1:1/mcp".into(),
            auth_secret: None,
            auth_header: None,
            tiers: Default::default(),
            created_at: chrono::DateTime::UNIX_EPOCH,
        };
        let listed = NotLinked.list_tools(&server).await;
        assert_eq!(listed, Err(McpError::Unavailable(NOT_LINKED.into())));
        assert!(matches!(
            NotLinked.open("acme/project"),
            Err(WsError::Unavailable(m)) if m == NOT_LINKED
        ));
        assert_eq!(NotLinked.check().await, Err(NOT_LINKED.to_owned()));
        let stored = NotLinked
            .put_snapshot("acme", "task", 1, b"<p>page</p>")
            .await;
        assert!(matches!(stored, Err(StoreError::Internal(m)) if m == NO_OBJECTS));
        let listed = NotLinked.snapshot_steps("acme", "task").await;
        assert!(matches!(listed, Err(StoreError::Internal(m)) if m == NO_OBJECTS));
    }
}
