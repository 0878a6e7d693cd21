//! First-start conveniences so `local-api` needs no set-up: a development JWT key kept in the
//! data directory, and a demo tenant and user created when the store has no tenants.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::distributions::Alphanumeric;
use rand::{Rng, RngCore};
use shared::ports::workspace::Precondition;
use shared::provisioning::{self, ProvisionError};
use shared::AppContext;

/// File (in the data directory) holding the generated development signing key.
pub const DEV_KEY_FILE: &str = "dev-jwt-secret";
/// File (in the data directory) holding the demo account's credentials.
pub const DEMO_CREDENTIALS_FILE: &str = "demo-credentials.json";

pub const DEMO_TENANT_ID: &str = "demo";
pub const DEMO_EMAIL: &str = "demo@example.com";

/// Where the signing key came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Environment,
    Generated(PathBuf),
    Existing(PathBuf),
    Ephemeral,
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(contents.as_bytes())
}

fn random_key() -> String {
    let mut bytes = [0u8; 48];
    rand::thread_rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The development key: the one kept in `data_dir`, or a new one written there. Without a
/// data directory (memory store) the key lives only as long as the process.
pub fn dev_jwt_key(data_dir: Option<&Path>) -> std::io::Result<(String, KeySource)> {
    let Some(dir) = data_dir else {
        return Ok((random_key(), KeySource::Ephemeral));
    };
    std::fs::create_dir_all(dir)?;
    let path = dir.join(DEV_KEY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(key) if !key.trim().is_empty() => Ok((key.trim().to_owned(), KeySource::Existing(path))),
        _ => {
            let key = random_key();
            let _ = std::fs::remove_file(&path);
            write_private(&path, &key)?;
            Ok((key, KeySource::Generated(path)))
        }
    }
}

/// Id of the demo tenant's workspace (root `demo` under AGENT_WORKSPACES_DIR).
pub const DEMO_WORKSPACE_ID: &str = "demo";

/// Files the demo workspace starts with (only written where absent).
const DEMO_FILES: &[(&str, &str)] = &[
    (
        "README.md",
        "# Demo workspace\n\nServer-hosted agent tools work here: list, read, search, write and patch\nfiles through `/api/v1/agent/*`. Actions run on the server host, not in the browser.\n",
    ),
    (
        "src/hello.py",
        "def greet(name):\n    return f\"Hello, {name}!\"\n\n\nif __name__ == \"__main__\":\n    print(greet(\"world\"))\n",
    ),
];

/// The demo tenant's workspace with a few files, when the agent tools are on and the demo
/// tenant exists without one (also on a later start that switched the tools on).
async fn demo_workspace(ctx: &AppContext) -> Result<(), ProvisionError> {
    if !ctx.config.tools.enabled {
        return Ok(());
    }
    let store = ctx.store.as_ref();
    let (tenant, existing) = tokio::join!(
        store.tenant(DEMO_TENANT_ID),
        store.workspace(DEMO_TENANT_ID, DEMO_WORKSPACE_ID)
    );
    if tenant.map_err(ProvisionError::Store)?.is_none()
        || existing.map_err(ProvisionError::Store)?.is_some()
    {
        return Ok(());
    }
    let ws = provisioning::create_workspace(
        ctx.store.as_ref(),
        provisioning::NewWorkspace {
            tenant_id: DEMO_TENANT_ID,
            id: Some(DEMO_WORKSPACE_ID),
            name: "Demo project",
            root: "demo",
            allow: &[],
            writers: &[],
        },
        ctx.clock.now(),
    )
    .await?;
    let files = ctx
        .workspaces
        .open(&ws.root)
        .map_err(|e| ProvisionError::Workspace(e.to_string()))?;
    for (path, text) in DEMO_FILES {
        let Ok(p) = shared::domain::ws_path::WsPath::parse(path) else {
            continue;
        };
        let written = files
            .write(&p, text.as_bytes().to_vec(), Precondition::Absent)
            .await;
        if let Err(e) = written {
            if !matches!(e, shared::ports::workspace::WsError::AlreadyExists(_)) {
                return Err(ProvisionError::Workspace(e.to_string()));
            }
        }
    }
    Ok(())
}

/// Credentials of the demo account.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DemoCredentials {
    pub email: String,
    pub password: String,
}

/// Creates the demo tenant and user when the store has no tenant yet, and returns the demo
/// credentials when they are known (just created, or kept in `data_dir` from the first start).
pub async fn demo_account(
    ctx: &AppContext,
    data_dir: Option<&Path>,
) -> Result<Option<DemoCredentials>, ProvisionError> {
    let creds = demo_tenant(ctx, data_dir).await?;
    demo_workspace(ctx).await?;
    Ok(creds)
}

/// The demo tenant and user (see [`demo_account`]).
async fn demo_tenant(
    ctx: &AppContext,
    data_dir: Option<&Path>,
) -> Result<Option<DemoCredentials>, ProvisionError> {
    let store = ctx.store.as_ref();
    let file = data_dir.map(|d| d.join(DEMO_CREDENTIALS_FILE));
    let tenants = store.list_tenants().await.map_err(ProvisionError::Store)?;
    if !tenants.is_empty() {
        let saved = file
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|s| serde_json::from_str(&s).ok());
        return Ok(saved);
    }
    let now = ctx.clock.now();
    provisioning::create_tenant(store, Some(DEMO_TENANT_ID), "Demo", now).await?;
    let password: String = rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(20)
        .map(char::from)
        .collect();
    provisioning::create_user(
        store,
        &ctx.passwords,
        provisioning::NewUser {
            tenant_id: DEMO_TENANT_ID,
            email: DEMO_EMAIL,
            name: "Demo User",
            password: &password,
            role: shared::domain::Role::Admin,
        },
        now,
    )
    .await?;
    let creds = DemoCredentials {
        email: DEMO_EMAIL.into(),
        password,
    };
    if let Some(f) = file {
        let json = serde_json::to_string_pretty(&creds).unwrap_or_default();
        let _ = std::fs::remove_file(&f);
        write_private(&f, &json)
            .map_err(|e| ProvisionError::Hashing(format!("cannot write {}: {e}", f.display())))?;
    }
    Ok(Some(creds))
}
