//! MCP tools as agent tools: the tenant's servers (defined by the operator), their tools with
//! tiers (`individual` unless the administrator lowered one), and calls — parked for approval
//! like any other tool, then run once. Credentials come from the server's environment
//! (`env:AGENT_MCP_SECRET_*`) or AWS Secrets Manager (through the Lambda extension), never
//! from the store, and are never logged or returned.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::context::AppContext;
use crate::domain::agent_tools::{McpServerRecord, Tier};
use crate::error::Error;
use crate::ports::mcp::{McpEndpoint, McpError};

/// Prefix of the environment variables an `env:` credential may name.
pub const SECRET_ENV_PREFIX: &str = "AGENT_MCP_SECRET_";
/// Most MCP servers listed per tenant.
pub const MAX_SERVERS: usize = 20;
/// Largest arguments accepted, serialised.
const MAX_ARGUMENT_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpArgs {
    pub server: String,
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

impl McpArgs {
    pub fn validate(&self) -> Result<(), Error> {
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.len() <= 128
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !name_ok(&self.server) {
            return Err(Error::field("server", "must be an MCP server name"));
        }
        if !name_ok(&self.tool) {
            return Err(Error::field("tool", "must be a tool name"));
        }
        if serde_json::to_vec(&self.arguments).map_or(true, |b| b.len() > MAX_ARGUMENT_BYTES) {
            return Err(Error::field("arguments", "are larger than 256 KiB"));
        }
        Ok(())
    }
}

/// The names MCP credentials in Secrets Manager must have: the agent tools' roles may read
/// these and no other (never the server's own keys, which they may read too).
pub const MCP_SECRET_PREFIX: &str = "browser-agent/mcp/";

/// Whether `id` names a secret under [`MCP_SECRET_PREFIX`], by name or by ARN
/// (`arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`).
fn is_mcp_secret(id: &str) -> bool {
    let name = match id.strip_prefix("arn:") {
        Some(_) => match id.split(':').collect::<Vec<_>>()[..] {
            ["arn", _, "secretsmanager", _, _, "secret", name] => name,
            _ => return false,
        },
        None => id,
    };
    id.len() <= 2048 && name.len() > MCP_SECRET_PREFIX.len() && name.starts_with(MCP_SECRET_PREFIX)
}

/// Checks a credential reference as an administrator gives it.
pub fn check_secret_ref(raw: &str) -> Result<(), String> {
    match raw.split_once(':') {
        Some(("env", name))
            if name.starts_with(SECRET_ENV_PREFIX)
                && name.len() > SECRET_ENV_PREFIX.len()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
        {
            Ok(())
        }
        Some(("secretsmanager", id)) if is_mcp_secret(id) => Ok(()),
        _ => Err(format!(
            "use env:{SECRET_ENV_PREFIX}<NAME> or secretsmanager:<name or ARN of a secret named \
             {MCP_SECRET_PREFIX}...>"
        )),
    }
}

/// The tier of `tool` on `server`.
pub fn tier_of(server: &McpServerRecord, tool: &str) -> Tier {
    server.tiers.get(tool).copied().unwrap_or(Tier::Individual)
}

fn server_missing() -> Error {
    Error::NotFound {
        code: "MCP_SERVER_NOT_FOUND",
        message: "No such MCP server in this organisation".into(),
    }
}

/// The tenant's server `name`.
pub async fn server(ctx: &AppContext, tenant: &str, name: &str) -> Result<McpServerRecord, Error> {
    ctx.store
        .mcp_servers(tenant)
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(server_missing)
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
    let answer: Value = crate::adapters::tls::client()
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
pub async fn endpoint(server: &McpServerRecord) -> Result<McpEndpoint, McpError> {
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

/// Every server's tools (listed concurrently), or why a server could not be listed.
pub async fn list(ctx: &AppContext, tenant: &str) -> Result<Value, Error> {
    let servers = ctx.store.mcp_servers(tenant).await?;
    let listed = futures::future::join_all(servers.iter().take(MAX_SERVERS).map(|s| async move {
        let tools = match endpoint(s).await {
            Ok(e) => ctx.mcp.list_tools(&e).await,
            Err(e) => Err(e),
        };
        (s, tools)
    }))
    .await;
    let mut tools = Vec::new();
    let mut servers_view = Vec::new();
    for (s, result) in listed {
        match result {
            Ok(list) => {
                servers_view
                    .push(json!({ "name": s.name, "status": "online", "tools": list.len() }));
                for t in list {
                    tools.push(
                        json!({ "server": s.name, "name": t.name, "description": t.description,
                        "inputSchema": t.input_schema, "tier": tier_of(s, &t.name) }),
                    );
                }
            }
            Err(e) => servers_view
                .push(json!({ "name": s.name, "status": "offline", "reason": e.to_string() })),
        }
    }
    Ok(json!({ "tools": tools, "servers": servers_view }))
}

/// Runs an (approved or auto-tier) call.
pub async fn call(ctx: &AppContext, tenant: &str, args: &McpArgs) -> Result<Value, Error> {
    let s = server(ctx, tenant, &args.server).await?;
    let unavailable = |e: McpError| Error::Upstream {
        code: "MCP_ERROR",
        message: e.to_string(),
    };
    let e = endpoint(&s).await.map_err(unavailable)?;
    let answer = ctx
        .mcp
        .call_tool(&e, &args.tool, args.arguments.clone())
        .await
        .map_err(unavailable)?;
    Ok(
        json!({ "server": s.name, "tool": args.tool, "isError": answer.is_error,
        "content": answer.content, "structuredContent": answer.structured_content }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_come_only_from_named_places() {
        assert!(check_secret_ref("env:AGENT_MCP_SECRET_GITHUB").is_ok());
        assert!(check_secret_ref("secretsmanager:browser-agent/mcp/github").is_ok());
        assert!(check_secret_ref(
            "secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:browser-agent/mcp/gh-AbCdEf"
        )
        .is_ok());
        for bad in [
            "env:JWT_SECRET",
            // The server's own keys, which the agent tools' roles may also read.
            "secretsmanager:browser-agent/jwt-secret",
            "secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:browser-agent/jwt-secret",
            "secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:x:browser-agent/mcp/x",
            "secretsmanager:browser-agent/mcp/",
            &format!("secretsmanager:browser-agent/mcp/{}", "x".repeat(100_000)),
            "secretsmanager:",
            "env:AGENT_MCP_SECRET_",
            "env:agent_mcp_secret_x",
            "plain",
            "file:/etc/x",
        ] {
            assert!(check_secret_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn arguments_are_checked() {
        let ok = McpArgs {
            server: "gh".into(),
            tool: "search_issues".into(),
            arguments: Map::new(),
        };
        assert!(ok.validate().is_ok());
        let bad = McpArgs {
            server: "../x".into(),
            ..ok.clone()
        };
        assert!(bad.validate().is_err());
        let mut big = Map::new();
        big.insert("x".into(), Value::String("y".repeat(300 * 1024)));
        assert!(McpArgs {
            arguments: big,
            ..ok
        }
        .validate()
        .is_err());
    }
}
