//! `agent-admin workspace ...`: the agent tools' workspaces of a tenant (the roots its users'
//! tool calls work in, and the commands allowed there).

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::json;
use shared::config::ToolsConfig;
use shared::domain::ws_root::Root;
use shared::ports::Store;
use shared::provisioning::{self, NewWorkspace};

#[derive(Debug, Subcommand)]
pub enum WorkspaceCmd {
    /// Define a workspace. A local root is a directory relative to AGENT_WORKSPACES_DIR
    /// (default DATA_DIR/workspaces; created if missing); in the cloud, `s3://bucket/prefix`.
    Add {
        #[arg(long)]
        tenant: String,
        /// Display name.
        #[arg(long)]
        name: String,
        #[arg(long)]
        root: String,
        /// Id to use (letters, digits, '-', '_'); a UUID by default.
        #[arg(long)]
        id: Option<String>,
        /// An allowed command, repeatable: `PROGRAM` (no arguments) or
        /// `PROGRAM=PATTERN PATTERN...` (each argument must match one pattern, whole).
        #[arg(long = "allow")]
        allow: Vec<String>,
        /// Like `--allow`, for a program whose file changes are kept (written back to the
        /// workspace after it exits); other programs' changes are discarded.
        #[arg(long = "allow-writer")]
        writers: Vec<String>,
    },
    /// List a tenant's workspaces.
    List {
        #[arg(long)]
        tenant: String,
    },
    /// Remove a workspace definition (its files stay where they are).
    Remove {
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        id: String,
    },
}

fn workspaces_dir(data_dir: Option<PathBuf>) -> Result<PathBuf, String> {
    let cfg = ToolsConfig::from_lookup(|k| match (k, &data_dir) {
        ("DATA_DIR", Some(d)) => Some(d.display().to_string()),
        _ => std::env::var(k).ok(),
    })
    .map_err(|e| e.to_string())?;
    Ok(cfg.workspaces_dir)
}

pub async fn run(
    store: &dyn Store,
    cmd: WorkspaceCmd,
    data_dir: Option<PathBuf>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(serde_json::Value, Vec<String>), String> {
    match cmd {
        WorkspaceCmd::Add {
            tenant,
            name,
            root,
            id,
            allow,
            writers,
        } => {
            let ws = provisioning::create_workspace(
                store,
                NewWorkspace {
                    tenant_id: &tenant,
                    id: id.as_deref(),
                    name: &name,
                    root: &root,
                    allow: &allow,
                    writers: &writers,
                },
                now,
            )
            .await
            .map_err(|e| e.to_string())?;
            for rule in ws
                .allowed_commands
                .iter()
                .filter(|r| shared::tools::commands::reaches_outside(r))
            {
                eprintln!(
                    "agent-admin: warning: `{}` accepts paths outside the workspace (absolute, `..`); \
                     match path arguments with tools::commands::SAFE_PATH unless it never opens them",
                    rule.program
                );
            }
            if let Ok(Root::Dir(rel)) = Root::parse(&ws.root) {
                let mut dir = workspaces_dir(data_dir)?;
                dir.extend(rel.segments());
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            Ok((json!(ws), vec![ws.id]))
        }
        WorkspaceCmd::List { tenant } => {
            let list = store.workspaces(&tenant).await.map_err(|e| e.to_string())?;
            let lines = list
                .iter()
                .map(|w| {
                    let cmds: Vec<&str> = w
                        .allowed_commands
                        .iter()
                        .map(|c| c.program.as_str())
                        .collect();
                    format!("{}\t{}\t{}\t{}", w.id, w.name, w.root, cmds.join(","))
                })
                .collect();
            Ok((json!(list), lines))
        }
        WorkspaceCmd::Remove { tenant, id } => {
            let gone = store.delete_workspace(&tenant, &id).await;
            removed(gone, &tenant, "workspace", &id)
        }
    }
}

/// The answer to a `remove` command: what went, or why nothing did.
pub fn removed(
    gone: Result<bool, shared::ports::StoreError>,
    tenant: &str,
    kind: &str,
    id: &str,
) -> Result<(serde_json::Value, Vec<String>), String> {
    if !gone.map_err(|e| e.to_string())? {
        return Err(format!("tenant {tenant} has no {kind} {id}"));
    }
    Ok((
        json!({ "id": id, "removed": true }),
        vec![format!("removed {id}")],
    ))
}
