//! `GET /api/v1/agent/status`: online, degraded or offline, with the reason per part. Cheap to
//! poll: the store is the authentication's own read, and a tenant's checks (a directory's
//! metadata, S3 `HeadObject` on one fixed key, each MCP server listing its tools) are
//! remembered for a few seconds.

use super::health::{Health, Part};
use super::ToolPorts;

/// Most workspace roots checked per request.
const MAX_CHECKED: usize = 10;

/// A tenant's parts, remembered for a few seconds: its workspace storage and each of its MCP
/// servers (`mcp:<name>`).
pub async fn tenant_parts(ctx: &ToolPorts<'_>, tenant_id: &str) -> Vec<Part> {
    if let Some(parts) = ctx.tools_status.get(tenant_id) {
        return parts;
    }
    let (storage, mut mcp) = tokio::join!(storage_part(ctx, tenant_id), mcp_parts(ctx, tenant_id));
    mcp.insert(0, storage);
    ctx.tools_status.put(tenant_id, mcp.clone());
    mcp
}

/// Each MCP server: `online` when it lists its tools.
async fn mcp_parts(ctx: &ToolPorts<'_>, tenant_id: &str) -> Vec<Part> {
    let Ok(servers) = ctx.store.mcp_servers(tenant_id).await else {
        return Vec::new();
    };
    futures::future::join_all(
        servers
            .iter()
            .take(super::mcp::MAX_SERVERS)
            .map(|s| async move {
                let name = format!("mcp:{}", s.name);
                let listed = ctx.mcp.list_tools(s).await.map(|_| ());
                match listed {
                    Ok(()) => Part::online(&name),
                    Err(e) => Part::down(&name, Health::Offline, e.to_string()),
                }
            }),
    )
    .await
}

/// The workspace storage of a tenant: each distinct root checked (at most ten).
async fn storage_part(ctx: &ToolPorts<'_>, tenant_id: &str) -> Part {
    const NAME: &str = "workspaceStorage";
    match ctx.store.workspaces(tenant_id).await {
        Err(_) => Part::down(
            NAME,
            Health::Offline,
            "the workspace list could not be read",
        ),
        Ok(list) if list.is_empty() => Part::down(
            NAME,
            Health::Degraded,
            "no workspace is defined for this organisation yet (agent-admin workspace add)",
        ),
        Ok(list) => {
            let mut roots: Vec<&str> = list.iter().map(|w| w.root.as_str()).collect();
            roots.sort_unstable();
            roots.dedup();
            roots.truncate(MAX_CHECKED);
            let checks = futures::future::join_all(roots.iter().map(|r| async move {
                match ctx.workspaces.open(r) {
                    Ok(ws) => ws.check().await,
                    Err(e) => Err(e.to_string()),
                }
            }))
            .await;
            let failed: Vec<String> = checks.into_iter().filter_map(Result::err).collect();
            match failed.len() {
                0 => Part::online(NAME),
                n if n == roots.len() => Part::down(NAME, Health::Offline, failed.join("; ")),
                n => Part::down(
                    NAME,
                    Health::Degraded,
                    format!(
                        "{n} of {} workspace roots unavailable: {}",
                        roots.len(),
                        failed.join("; ")
                    ),
                ),
            }
        }
    }
}
