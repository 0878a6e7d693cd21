//! Stand-ins for the agent tools' adapters in functions that serve no agent-tool route: such a
//! function never builds the MCP client or a command runner, so its binary links neither the
//! MCP SDK nor the Lambda client. Reaching one anyway is a wiring fault, reported as such.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::ports::mcp::{McpAnswer, McpClient, McpEndpoint, McpError, McpTool};
use crate::ports::runner::CommandRunner;
use crate::tools::model::ExecRecord;

/// An adapter this function was built without.
#[derive(Debug, Clone, Copy)]
pub struct NotLinked;

const NOT_LINKED: &str = "agent tools are not part of this function";

#[async_trait]
impl McpClient for NotLinked {
    async fn list_tools(&self, _server: &McpEndpoint) -> Result<Vec<McpTool>, McpError> {
        Err(McpError::Unavailable(NOT_LINKED.into()))
    }

    async fn call_tool(
        &self,
        _server: &McpEndpoint,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_call_fails_with_a_clear_reason() {
        let server = McpEndpoint {
            url: "http://127.0.0.1:1/mcp".into(),
            auth: None,
        };
        let listed = NotLinked.list_tools(&server).await;
        assert_eq!(listed, Err(McpError::Unavailable(NOT_LINKED.into())));
        assert_eq!(NotLinked.check().await, Err(NOT_LINKED.to_owned()));
    }
}
