//! `GET /api/v1/agent/status`: online, degraded or offline, with the reason per part. Cheap to
//! poll: the store is the authentication's own read, and a tenant's checks (a directory's
//! metadata, S3 `HeadObject` on one fixed key, each MCP server listing its tools) are
//! remembered for a few seconds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use crate::context::AppContext;

/// How long a tenant's storage check is reused.
const CHECK_TTL: Duration = Duration::from_secs(10);
/// Most tenants remembered (the cache is cleared beyond).
const MAX_CACHED: usize = 1_000;
/// Most workspace roots checked per request.
const MAX_CHECKED: usize = 10;

/// Health of one part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    Online,
    Degraded,
    Offline,
}

/// One part's state and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    pub name: String,
    pub status: Health,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Part {
    pub fn online(name: &str) -> Self {
        Self {
            name: name.into(),
            status: Health::Online,
            reason: None,
        }
    }
    pub fn down(name: &str, status: Health, reason: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status,
            reason: Some(reason.into()),
        }
    }
}

/// The overall state: offline when the store or the storage is, degraded when any part is
/// short of online.
pub fn overall(parts: &[Part]) -> Health {
    let essential = |n: &str| n == "store" || n == "workspaceStorage";
    if parts
        .iter()
        .any(|p| essential(&p.name) && p.status == Health::Offline)
    {
        Health::Offline
    } else if parts.iter().any(|p| p.status != Health::Online) {
        Health::Degraded
    } else {
        Health::Online
    }
}

/// Remembered storage checks per tenant.
#[derive(Debug, Default)]
pub struct StatusCache {
    entries: Mutex<HashMap<String, (Instant, Vec<Part>)>>,
}

impl StatusCache {
    fn get(&self, tenant: &str) -> Option<Vec<Part>> {
        let map = self.entries.lock().ok()?;
        map.get(tenant)
            .filter(|(at, _)| at.elapsed() < CHECK_TTL)
            .map(|(_, p)| p.clone())
    }

    fn put(&self, tenant: &str, part: Vec<Part>) {
        if let Ok(mut map) = self.entries.lock() {
            if map.len() >= MAX_CACHED {
                map.clear();
            }
            map.insert(tenant.to_owned(), (Instant::now(), part));
        }
    }
}

/// A tenant's parts, remembered for a few seconds: its workspace storage and each of its MCP
/// servers (`mcp:<name>`).
pub async fn tenant_parts(ctx: &AppContext, tenant_id: &str) -> Vec<Part> {
    if let Some(parts) = ctx.tools_status.get(tenant_id) {
        return parts;
    }
    let (storage, mut mcp) = tokio::join!(storage_part(ctx, tenant_id), mcp_parts(ctx, tenant_id));
    mcp.insert(0, storage);
    ctx.tools_status.put(tenant_id, mcp.clone());
    mcp
}

/// Each MCP server: `online` when it lists its tools.
async fn mcp_parts(ctx: &AppContext, tenant_id: &str) -> Vec<Part> {
    let Ok(servers) = ctx.store.mcp_servers(tenant_id).await else {
        return Vec::new();
    };
    futures::future::join_all(
        servers
            .iter()
            .take(super::mcp::MAX_SERVERS)
            .map(|s| async move {
                let name = format!("mcp:{}", s.name);
                let listed = match super::mcp::endpoint(s).await {
                    Ok(e) => ctx.mcp.list_tools(&e).await.map(|_| ()),
                    Err(e) => Err(e),
                };
                match listed {
                    Ok(()) => Part::online(&name),
                    Err(e) => Part::down(&name, Health::Offline, e.to_string()),
                }
            }),
    )
    .await
}

/// The workspace storage of a tenant: each distinct root checked (at most ten).
async fn storage_part(ctx: &AppContext, tenant_id: &str) -> Part {
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

/// The status body.
pub fn body(enabled: bool, parts: &[Part]) -> Value {
    let status = if enabled {
        overall(parts)
    } else {
        Health::Offline
    };
    json!({
        "status": status,
        "enabled": enabled,
        "reason": (!enabled).then_some("The agent tools are switched off on this server (AGENT_TOOLS_ENABLED)"),
        "runsOn": "server",
        "parts": parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overall_state_follows_the_essential_parts() {
        let on = |n: &str| Part::online(n);
        assert_eq!(
            overall(&[on("store"), on("workspaceStorage")]),
            Health::Online
        );
        assert_eq!(
            overall(&[
                on("store"),
                Part::down("workspaceStorage", Health::Degraded, "x")
            ]),
            Health::Degraded
        );
        assert_eq!(
            overall(&[
                Part::down("store", Health::Offline, "x"),
                on("workspaceStorage")
            ]),
            Health::Offline
        );
        assert_eq!(
            overall(&[
                on("store"),
                on("workspaceStorage"),
                Part::down("mcp:x", Health::Offline, "x")
            ]),
            Health::Degraded
        );
        assert_eq!(body(false, &[])["status"], "offline");
    }
}
