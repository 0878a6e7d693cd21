//! `agent-admin mcp ...`: a tenant's MCP servers (Streamable HTTP), their credential reference
//! and the tiers of their tools.

use clap::Subcommand;
use serde_json::json;
use shared::ports::Store;
use shared::provisioning::{self, NewMcpServer};

#[derive(Debug, Subcommand)]
pub enum McpCmd {
    /// Add a server. Its tools need an individual approval unless `--tier TOOL=auto|batch`.
    Add {
        #[arg(long)]
        tenant: String,
        /// Short name (letters, digits, '-', '_').
        #[arg(long)]
        name: String,
        /// The server's Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp.
        #[arg(long)]
        url: String,
        /// Where the credential is: env:AGENT_MCP_SECRET_<NAME> or secretsmanager:<id> (a secret
        /// named browser-agent/mcp/..., by name or ARN).
        #[arg(long = "auth-secret")]
        auth_secret: Option<String>,
        /// The header it goes in (default Authorization, as a bearer token).
        #[arg(long = "auth-header")]
        auth_header: Option<String>,
        /// TOOL=auto|batch|individual, repeatable.
        #[arg(long = "tier")]
        tiers: Vec<String>,
    },
    /// List a tenant's servers.
    List {
        #[arg(long)]
        tenant: String,
    },
    /// Remove a server.
    Remove {
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        name: String,
    },
}

pub async fn run(
    store: &dyn Store,
    cmd: McpCmd,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(serde_json::Value, Vec<String>), String> {
    match cmd {
        McpCmd::Add {
            tenant,
            name,
            url,
            auth_secret,
            auth_header,
            tiers,
        } => {
            let s = provisioning::create_mcp_server(
                store,
                NewMcpServer {
                    tenant_id: &tenant,
                    name: &name,
                    url: &url,
                    auth_secret: auth_secret.as_deref(),
                    auth_header: auth_header.as_deref(),
                    tiers: &tiers,
                },
                now,
            )
            .await
            .map_err(|e| e.to_string())?;
            Ok((json!(s), vec![s.name]))
        }
        McpCmd::List { tenant } => {
            let list = store
                .mcp_servers(&tenant)
                .await
                .map_err(|e| e.to_string())?;
            let lines = list
                .iter()
                .map(|s| {
                    format!(
                        "{}\t{}\t{}",
                        s.name,
                        s.url,
                        s.auth_secret.as_deref().unwrap_or("-")
                    )
                })
                .collect();
            Ok((json!(list), lines))
        }
        McpCmd::Remove { tenant, name } => {
            let gone = store.delete_mcp_server(&tenant, &name).await;
            crate::workspace::removed(gone, &tenant, "MCP server", &name)
        }
    }
}
