//! MCP over Streamable HTTP with `rmcp` (the official Rust SDK), client side: a session per
//! operation (initialize, then list or call, then close), every step under a time limit, and
//! answers bounded in size.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{Map, Value};

use crate::ports::mcp::{McpAnswer, McpClient, McpEndpoint, McpError, McpTool};

/// Longest a listing (connect, initialize, list) may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Most tools kept per server.
pub const MAX_TOOLS: usize = 200;
/// Longest description kept, in characters.
const MAX_DESCRIPTION: usize = 2_000;
/// Largest input schema or answer kept, serialised.
const MAX_JSON_BYTES: usize = 1024 * 1024;

/// The `rmcp` client.
#[derive(Debug, Default, Clone)]
pub struct RmcpClient;

type Session = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn connect(server: &McpEndpoint) -> Result<Session, McpError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
    match &server.auth {
        Some((name, value)) if name.eq_ignore_ascii_case("authorization") => {
            let token = value.strip_prefix("Bearer ").unwrap_or(value);
            config = config.auth_header(token.to_owned());
        }
        Some((name, value)) => {
            let header = http::HeaderName::try_from(name.as_str()).map_err(|_| {
                McpError::Unavailable("the configured header name is invalid".into())
            })?;
            let value = http::HeaderValue::try_from(value.as_str()).map_err(|_| {
                McpError::Unavailable("the configured credential is not a header value".into())
            })?;
            config = config.custom_headers(HashMap::from([(header, value)]));
        }
        None => {}
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport)
        .await
        .map_err(|e| McpError::Unavailable(short(&e.to_string())))
}

fn short(s: &str) -> String {
    s.chars().take(300).collect()
}

fn bounded(v: Value) -> Result<Value, McpError> {
    match serde_json::to_vec(&v) {
        Ok(b) if b.len() <= MAX_JSON_BYTES => Ok(v),
        _ => Err(McpError::TooLarge),
    }
}

#[async_trait]
impl McpClient for RmcpClient {
    async fn list_tools(&self, server: &McpEndpoint) -> Result<Vec<McpTool>, McpError> {
        let work = async {
            let session = connect(server).await?;
            let listed = session
                .list_all_tools()
                .await
                .map_err(|e| McpError::Unavailable(short(&e.to_string())));
            let _ = session.cancel().await;
            listed
        };
        let tools = tokio::time::timeout(LIST_TIMEOUT, work)
            .await
            .map_err(|_| McpError::Timeout)??;
        Ok(tools
            .into_iter()
            .take(MAX_TOOLS)
            .map(|t| McpTool {
                name: t.name.to_string(),
                description: t
                    .description
                    .as_deref()
                    .unwrap_or_default()
                    .chars()
                    .take(MAX_DESCRIPTION)
                    .collect(),
                input_schema: bounded(Value::Object((*t.input_schema).clone()))
                    .unwrap_or_else(|_| Value::Object(Map::new())),
            })
            .collect())
    }

    async fn call_tool(
        &self,
        server: &McpEndpoint,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpAnswer, McpError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let work = async {
            let session = connect(server).await?;
            let called = session
                .call_tool(params)
                .await
                .map_err(|e| McpError::Unavailable(short(&e.to_string())));
            let _ = session.cancel().await;
            called
        };
        let result = tokio::time::timeout(CALL_TIMEOUT, work)
            .await
            .map_err(|_| McpError::Timeout)??;
        let content = serde_json::to_value(&result.content)
            .map_err(|e| McpError::Unavailable(short(&e.to_string())))?;
        Ok(McpAnswer {
            content: bounded(content)?,
            structured_content: result.structured_content.map(bounded).transpose()?,
            is_error: result.is_error.unwrap_or(false),
        })
    }
}
