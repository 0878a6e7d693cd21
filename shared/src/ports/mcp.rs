//! MCP servers (Model Context Protocol) as the agent tools reach them: list their tools, call
//! one. The adapter speaks Streamable HTTP with the official Rust SDK.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Map, Value};

/// How to reach one server.
#[derive(Clone)]
pub struct McpEndpoint {
    pub url: String,
    /// A header (name, value) carrying the credential, if any.
    pub auth: Option<(String, String)>,
}

impl std::fmt::Debug for McpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The credential stays out of logs.
        f.debug_struct("McpEndpoint")
            .field("url", &self.url)
            .field("auth", &self.auth.as_ref().map(|(h, _)| h))
            .finish()
    }
}

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
    async fn list_tools(&self, server: &McpEndpoint) -> Result<Vec<McpTool>, McpError>;
    async fn call_tool(
        &self,
        server: &McpEndpoint,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpAnswer, McpError>;
}
