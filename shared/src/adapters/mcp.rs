//! MCP over Streamable HTTP with `rmcp` (the official Rust SDK), client side: a session per
//! operation (initialize, then list or call, then close), under a time limit that fits an API
//! request, answers bounded in size (each response, pages, tools, schemas), and failures
//! reported by kind only.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{Map, Value};

use crate::domain::agent_tools::McpServerRecord;
use crate::domain::mcp_credential::{is_mcp_secret, SECRET_ENV_PREFIX};
use crate::ports::mcp::{McpAnswer, McpClient, McpError, McpTool};

/// How to reach one server: its URL and the header (name, value) carrying its credential.
struct McpEndpoint {
    url: String,
    auth: Option<(String, String)>,
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

/// A credential's value.
async fn secret(reference: &str) -> Result<String, McpError> {
    match reference.split_once(':') {
        Some(("env", name)) if name.starts_with(SECRET_ENV_PREFIX) => std::env::var(name)
            .map_err(|_| McpError::Unavailable(format!("{name} is not set on the server"))),
        Some(("secretsmanager", id)) if is_mcp_secret(id) => secrets_extension(id).await,
        _ => Err(McpError::Unavailable(
            "the credential reference is invalid".into(),
        )),
    }
}

/// A secret through the AWS Parameters and Secrets Lambda Extension (a layer on the function;
/// it caches, so a call costs no Secrets Manager request most of the time).
async fn secrets_extension(id: &str) -> Result<String, McpError> {
    let token = std::env::var("AWS_SESSION_TOKEN").map_err(|_| {
        McpError::Unavailable("secretsmanager: credentials work only inside AWS Lambda".into())
    })?;
    let port =
        std::env::var("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT").unwrap_or_else(|_| "2773".into());
    let answer: Value = super::tls::client()
        .get(format!("http://localhost:{port}/secretsmanager/get"))
        .query(&[("secretId", id)])
        .header("X-Aws-Parameters-Secrets-Token", token)
        .timeout(std::time::Duration::from_secs(5))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|_| {
            McpError::Unavailable(
                "the secrets extension did not answer (is its layer attached?)".into(),
            )
        })?
        .json()
        .await
        .map_err(|_| McpError::Unavailable("the secrets extension's answer is not JSON".into()))?;
    answer["SecretString"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| McpError::Unavailable("the secret has no string value".into()))
}

/// How to reach `server`, with its credential resolved.
async fn endpoint(server: &McpServerRecord) -> Result<McpEndpoint, McpError> {
    let auth = match &server.auth_secret {
        None => None,
        Some(r) => {
            let value = secret(r).await?;
            let header = server
                .auth_header
                .clone()
                .unwrap_or_else(|| "Authorization".into());
            let value =
                if header.eq_ignore_ascii_case("authorization") && !value.starts_with("Bearer ") {
                    format!("Bearer {value}")
                } else {
                    value
                };
            Some((header, value))
        }
    };
    Ok(McpEndpoint {
        url: server.url.clone(),
        auth,
    })
}

/// Longest a listing (connect, initialize, every page) may take.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(8);
/// Longest a call (connect, initialize, call) may take: inside the 29 s of an API request,
/// with room to record the outcome.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// Most tools kept per server.
pub const MAX_TOOLS: usize = 200;
/// Most pages of a tool listing read.
const MAX_PAGES: usize = 10;
/// Longest description kept, in characters.
const MAX_DESCRIPTION: usize = 2_000;
/// Largest input schema kept, serialised.
const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Largest answer (one JSON response or SSE event) accepted from a server.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The `rmcp` client.
#[derive(Debug, Default, Clone)]
pub struct RmcpClient;

type Session = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A failure as clients may see it: never the server's URL (a key may sit in it), headers or
/// body — just what kind of failure it was.
fn classify(e: &impl std::fmt::Display) -> McpError {
    let text = e.to_string();
    let kind = if text.contains("401") || text.contains("403") || text.contains("AuthRequired") {
        "the server refused the credential"
    } else if text.contains("error sending request") || text.contains("connect") {
        "the server could not be reached"
    } else if text.contains("429") {
        "the server is rate limiting"
    } else if text.contains("50") {
        "the server failed"
    } else {
        "the server answered outside the protocol"
    };
    McpError::Unavailable(kind.into())
}

async fn connect(server: &McpEndpoint) -> Result<Session, McpError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(server.url.clone())
        .max_json_response_size(MAX_ANSWER_BYTES)
        .max_sse_event_size(MAX_ANSWER_BYTES)
        // A call is never re-sent on a new session: it may have run already.
        .reinit_on_expired_session(false);
    if let Some((name, value)) = &server.auth {
        let header = http::HeaderName::try_from(name.as_str())
            .map_err(|_| McpError::Unavailable("the configured header name is invalid".into()))?;
        let value = http::HeaderValue::try_from(value.as_str()).map_err(|_| {
            McpError::Unavailable("the configured credential is not a header value".into())
        })?;
        config = config.custom_headers(HashMap::from([(header, value)]));
    }
    let transport =
        StreamableHttpClientTransport::with_client(crate::adapters::tls::client(), config);
    ().serve(transport).await.map_err(|e| classify(&e))
}

fn schema(v: Value) -> Value {
    match serde_json::to_vec(&v) {
        Ok(b) if b.len() <= MAX_SCHEMA_BYTES => v,
        _ => Value::Object(Map::new()),
    }
}

#[async_trait]
impl McpClient for RmcpClient {
    async fn list_tools(&self, server: &McpServerRecord) -> Result<Vec<McpTool>, McpError> {
        let server = endpoint(server).await?;
        let work = async {
            let session = connect(&server).await?;
            let mut tools = Vec::new();
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_PAGES {
                let params = PaginatedRequestParams::default().with_cursor(cursor.take());
                let page = session
                    .list_tools(Some(params))
                    .await
                    .map_err(|e| classify(&e))?;
                tools.extend(page.tools);
                match page.next_cursor {
                    Some(next) if tools.len() < MAX_TOOLS => cursor = Some(next),
                    _ => break,
                }
            }
            // The session closes in the background when dropped.
            drop(session);
            Ok::<_, McpError>(tools)
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
                input_schema: schema(Value::Object((*t.input_schema).clone())),
            })
            .collect())
    }

    async fn call_tool(
        &self,
        server: &McpServerRecord,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpAnswer, McpError> {
        let server = endpoint(server).await?;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        // Only connecting and the call itself are timed: once the answer is in, closing the
        // session cannot turn it into a failure.
        let work = async {
            let session = connect(&server).await?;
            let answer = session.call_tool(params).await.map_err(|e| classify(&e));
            Ok::<_, McpError>((session, answer))
        };
        let (session, answer) = tokio::time::timeout(CALL_TIMEOUT, work)
            .await
            .map_err(|_| McpError::Timeout)??;
        drop(session);
        let result = answer?;
        let content = serde_json::to_value(&result.content).map_err(|e| classify(&e))?;
        Ok(McpAnswer {
            content,
            structured_content: result.structured_content,
            is_error: result.is_error.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// A server record with no credential.
    fn record(url: &str) -> McpServerRecord {
        McpServerRecord {
            tenant_id: "acme".into(),
            name: "files".into(),
            url: url.into(),
            auth_secret: None,
            auth_header: None,
            tiers: Default::default(),
            created_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    /// An MCP server on HTTPS is spoken to over TLS: the first bytes that reach it are a TLS
    /// handshake record (rmcp's own reqwest had no TLS at all, so an `https://` server was
    /// never reached).
    #[tokio::test]
    async fn an_https_server_is_reached_over_tls() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let server = record(&format!(
            "https://{}/mcp",
            listener.local_addr().expect("addr")
        ));
        let client = tokio::spawn(async move { RmcpClient.list_tools(&server).await });
        let (mut socket, _) = tokio::time::timeout(Duration::from_secs(5), listener.accept())
            .await
            .expect("the client connected")
            .expect("accept");
        let mut head = [0u8; 3];
        socket.read_exact(&mut head).await.expect("read");
        assert_eq!(head, [0x16, 0x03, 0x01], "a TLS ClientHello record");
        drop(socket);
        let refused = client
            .await
            .expect("joined")
            .expect_err("no TLS server there");
        assert!(matches!(refused, McpError::Unavailable(_)), "{refused:?}");
    }
}
