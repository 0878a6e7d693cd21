//! MCP servers (Model Context Protocol) as the agent tools reach them: list their tools, call
//! one. The adapter speaks Streamable HTTP with the official Rust SDK.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::domain::agent_tools::McpServerRecord;

/// One tool a server offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpAnswer {
    pub content: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    pub is_error: bool,
}

/// Why a server could not be used (never its credential).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("the MCP server is unreachable or refused: {0}")]
    Unavailable(String),
    #[error("the MCP server did not answer in time (a call may still have run there)")]
    Timeout,
}

#[async_trait]
pub trait McpClient: Send + Sync {
    /// The tools `server` offers (its credential resolved by the adapter).
    async fn list_tools(&self, server: &McpServerRecord) -> Result<Vec<McpTool>, McpError>;
    /// Calls `tool` on `server` with `arguments`.
    async fn call_tool(
        &self,
        server: &McpServerRecord,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpAnswer, McpError>;
}
