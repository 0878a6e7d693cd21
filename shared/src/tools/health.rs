//! The agent tools' health as data: each part's state and why, the overall state, the body
//! `GET /api/v1/agent/status` answers with, and the few seconds a tenant's checks are
//! remembered. Pure, apart from the clock the cache reads.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

/// How long a tenant's storage check is reused.
const CHECK_TTL: Duration = Duration::from_secs(10);
/// Most tenants remembered (the cache is cleared beyond).
const MAX_CACHED: usize = 1_000;

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
    pub fn get(&self, tenant: &str) -> Option<Vec<Part>> {
        let map = self.entries.lock().ok()?;
        map.get(tenant)
            .filter(|(at, _)| at.elapsed() < CHECK_TTL)
            .map(|(_, p)| p.clone())
    }

    pub fn put(&self, tenant: &str, part: Vec<Part>) {
        if let Ok(mut map) = self.entries.lock() {
            if map.len() >= MAX_CACHED {
                map.clear();
            }
            map.insert(tenant.to_owned(), (Instant::now(), part));
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
