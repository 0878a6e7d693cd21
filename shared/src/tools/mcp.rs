//! MCP tools as agent tools: the tenant's servers (defined by the operator), their tools with
//! tiers (`individual` unless the administrator lowered one), and calls — parked for approval
//! like any other tool, then run once. Credentials ([`crate::domain::mcp_credential`]) are
//! resolved by the MCP adapter, never stored, logged or returned.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::ToolPorts;
use crate::domain::agent_tools::{McpServerRecord, Tier};
use crate::error::Error;
use crate::ports::mcp::McpError;

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
pub async fn server(
    ctx: &ToolPorts<'_>,
    tenant: &str,
    name: &str,
) -> Result<McpServerRecord, Error> {
    ctx.store
        .mcp_servers(tenant)
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(server_missing)
}

/// Every server's tools (listed concurrently), or why a server could not be listed.
pub async fn list(ctx: &ToolPorts<'_>, tenant: &str) -> Result<Value, Error> {
    let servers = ctx.store.mcp_servers(tenant).await?;
    let listed = futures::future::join_all(servers.iter().take(MAX_SERVERS).map(|s| async move {
        let tools = ctx.mcp.list_tools(s).await;
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
pub async fn call(ctx: &ToolPorts<'_>, tenant: &str, args: &McpArgs) -> Result<Value, Error> {
    let s = server(ctx, tenant, &args.server).await?;
    let unavailable = |e: McpError| Error::Upstream {
        code: "MCP_ERROR",
        message: e.to_string(),
    };
    let answer = ctx
        .mcp
        .call_tool(&s, &args.tool, args.arguments.clone())
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
