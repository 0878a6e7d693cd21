//! Creating tenants and users with every rule checked: used by the admin CLI and by
//! local-api's first-start demo account, so both provision exactly the same way.

use chrono::{DateTime, Utc};

use crate::auth::password::{MAX_PASSWORD_LEN, MIN_PASSWORD_LEN};
use crate::auth::PasswordHasher;
use crate::domain::identity::validate_id;
use crate::domain::{Email, Role, Tenant, User};
use crate::ports::{Store, StoreError};

/// Longest display name for tenants and users.
pub const MAX_NAME_LEN: usize = 100;

/// Why provisioning was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
    #[error("{0}")]
    Exists(String),
    #[error("{0}")]
    Missing(String),
    #[error("{0}")]
    Store(StoreError),
    #[error("{0}")]
    Hashing(String),
    /// A workspace's files could not be prepared.
    #[error("workspace: {0}")]
    Workspace(String),
}

fn invalid(field: &'static str, problem: impl Into<String>) -> ProvisionError {
    ProvisionError::Invalid {
        field,
        problem: problem.into(),
    }
}

fn check_name(field: &'static str, name: &str) -> Result<String, ProvisionError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(invalid(field, "must not be empty"));
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Err(invalid(
            field,
            format!("must be at most {MAX_NAME_LEN} characters"),
        ));
    }
    Ok(name.to_owned())
}

/// Creates a tenant; the id defaults to a fresh UUID.
pub async fn create_tenant(
    store: &dyn Store,
    id: Option<&str>,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Tenant, ProvisionError> {
    let name = check_name("name", name)?;
    let id = match id {
        Some(id) => {
            validate_id(id).map_err(|p| invalid("id", p))?;
            id.to_owned()
        }
        None => uuid::Uuid::new_v4().to_string(),
    };
    let tenant = Tenant {
        id,
        name,
        created_at: now,
    };
    match store.create_tenant(&tenant).await {
        Ok(()) => Ok(tenant),
        Err(StoreError::Conflict(_)) => Err(ProvisionError::Exists(format!(
            "tenant {} already exists",
            tenant.id
        ))),
        Err(e) => Err(ProvisionError::Store(e)),
    }
}

/// What an administrator gives for a new user.
#[derive(Debug, Clone, Copy)]
pub struct NewUser<'a> {
    pub tenant_id: &'a str,
    pub email: &'a str,
    pub name: &'a str,
    pub password: &'a str,
    pub role: Role,
}

/// Creates a user in an existing tenant with an argon2id hash of the password.
pub async fn create_user(
    store: &dyn Store,
    hasher: &PasswordHasher,
    new: NewUser<'_>,
    now: DateTime<Utc>,
) -> Result<User, ProvisionError> {
    let NewUser {
        tenant_id,
        email,
        name,
        password,
        role,
    } = new;
    let email = Email::parse(email).map_err(|p| invalid("email", p))?;
    let name = check_name("name", name)?;
    let len = password.chars().count();
    if len < MIN_PASSWORD_LEN {
        return Err(invalid(
            "password",
            format!("must be at least {MIN_PASSWORD_LEN} characters"),
        ));
    }
    if len > MAX_PASSWORD_LEN {
        return Err(invalid(
            "password",
            format!("must be at most {MAX_PASSWORD_LEN} characters"),
        ));
    }
    if store
        .tenant(tenant_id)
        .await
        .map_err(ProvisionError::Store)?
        .is_none()
    {
        return Err(ProvisionError::Missing(format!(
            "tenant {tenant_id} does not exist"
        )));
    }
    let password_hash = hasher
        .hash(password)
        .map_err(|e| ProvisionError::Hashing(e.to_string()))?;
    let user = User {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: tenant_id.to_owned(),
        email,
        name,
        password_hash,
        disabled: false,
        role,
        created_at: now,
        tokens_valid_after: None,
    };
    match store.create_user(&user).await {
        Ok(()) => Ok(user),
        Err(StoreError::Conflict(_)) => Err(ProvisionError::Exists(format!(
            "a user with email {} already exists",
            user.email
        ))),
        Err(e) => Err(ProvisionError::Store(e)),
    }
}

/// `Missing` unless the tenant exists.
async fn require_tenant(store: &dyn Store, tenant_id: &str) -> Result<(), ProvisionError> {
    match store
        .tenant(tenant_id)
        .await
        .map_err(ProvisionError::Store)?
    {
        Some(_) => Ok(()),
        None => Err(ProvisionError::Missing(format!(
            "tenant {tenant_id} does not exist"
        ))),
    }
}

/// What an administrator gives for a new workspace.
#[derive(Debug, Clone)]
pub struct NewWorkspace<'a> {
    pub tenant_id: &'a str,
    pub id: Option<&'a str>,
    pub name: &'a str,
    /// `s3://bucket/prefix` or a directory relative to `AGENT_WORKSPACES_DIR`.
    pub root: &'a str,
    /// `PROGRAM` or `PROGRAM=PATTERN...` entries (see `tools::commands`); with no entries
    /// here nor in `writers`, the default allowlist (`tools::commands::default_rules`).
    pub allow: &'a [String],
    /// Entries like `allow` whose programs may change files (written back after a run).
    pub writers: &'a [String],
}

/// Defines a workspace of a tenant; the id defaults to a fresh UUID.
pub async fn create_workspace(
    store: &dyn Store,
    new: NewWorkspace<'_>,
    now: DateTime<Utc>,
) -> Result<crate::domain::agent_tools::WorkspaceRecord, ProvisionError> {
    let name = check_name("name", new.name)?;
    let id = match new.id {
        Some(id) => {
            validate_id(id).map_err(|p| invalid("id", p))?;
            id.to_owned()
        }
        None => uuid::Uuid::new_v4().to_string(),
    };
    let root = crate::domain::ws_root::Root::parse(new.root).map_err(|p| invalid("root", p))?;
    if !root.belongs_to(new.tenant_id) {
        return Err(invalid(
            "root",
            format!(
                "must lie inside the tenant's own area: `{t}/...` under AGENT_WORKSPACES_DIR, or `s3://<bucket>/workspaces/{t}/...`",
                t = new.tenant_id
            ),
        ));
    }
    let mut allowed_commands = new
        .allow
        .iter()
        .map(|r| crate::tools::commands::parse_rule(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|p| invalid("allow", p))?;
    if new.allow.is_empty() && new.writers.is_empty() {
        allowed_commands = crate::tools::commands::default_rules();
    }
    for raw in new.writers {
        let mut rule = crate::tools::commands::parse_rule(raw).map_err(|p| invalid("writer", p))?;
        rule.writes = true;
        allowed_commands.push(rule);
    }
    require_tenant(store, new.tenant_id).await?;
    let ws = crate::domain::agent_tools::WorkspaceRecord {
        id,
        tenant_id: new.tenant_id.to_owned(),
        name,
        root: new.root.trim_end_matches('/').to_owned(),
        allowed_commands,
        created_at: now,
    };
    match store.create_workspace(&ws).await {
        Ok(()) => Ok(ws),
        Err(StoreError::Conflict(_)) => Err(ProvisionError::Exists(format!(
            "workspace {} already exists in tenant {}",
            ws.id, ws.tenant_id
        ))),
        Err(e) => Err(ProvisionError::Store(e)),
    }
}

/// What an administrator gives for a tenant's MCP server.
#[derive(Debug, Clone)]
pub struct NewMcpServer<'a> {
    pub tenant_id: &'a str,
    pub name: &'a str,
    pub url: &'a str,
    /// `env:AGENT_MCP_SECRET_<NAME>` or `secretsmanager:<id>`.
    pub auth_secret: Option<&'a str>,
    /// The header the credential goes in (default `Authorization`, as a bearer token).
    pub auth_header: Option<&'a str>,
    /// `TOOL=auto|batch|individual` entries.
    pub tiers: &'a [String],
}

/// Adds an MCP server to a tenant.
pub async fn create_mcp_server(
    store: &dyn Store,
    new: NewMcpServer<'_>,
    now: DateTime<Utc>,
) -> Result<crate::domain::agent_tools::McpServerRecord, ProvisionError> {
    use crate::domain::agent_tools::Tier;
    validate_id(new.name).map_err(|p| invalid("name", p))?;
    let url = new.url.trim();
    let parsed = reqwest::Url::parse(url).map_err(|_| invalid("url", "is not a URL"))?;
    let loopback = matches!(parsed.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match parsed.scheme() {
        "https" if parsed.host_str().is_some() => {}
        // Plain HTTP only to this host (a credential must not cross a network in the clear).
        "http" if loopback => {}
        _ => {
            return Err(invalid(
                "url",
                "must be an https URL (http only on 127.0.0.1)",
            ))
        }
    }
    if let Some(r) = new.auth_secret {
        crate::domain::mcp_credential::check_secret_ref(r)
            .map_err(|p| invalid("auth-secret", p))?;
    }
    if let Some(h) = new.auth_header {
        http::HeaderName::try_from(h)
            .map_err(|_| invalid("auth-header", "is not a header name"))?;
    }
    let mut tiers = std::collections::BTreeMap::new();
    for raw in new.tiers {
        let (tool, tier) = raw
            .split_once('=')
            .ok_or_else(|| invalid("tier", "use TOOL=auto|batch|individual"))?;
        let tier = match tier {
            "auto" => Tier::Auto,
            "batch" => Tier::Batch,
            "individual" => Tier::Individual,
            _ => return Err(invalid("tier", "use TOOL=auto|batch|individual")),
        };
        tiers.insert(tool.to_owned(), tier);
    }
    require_tenant(store, new.tenant_id).await?;
    let server = crate::domain::agent_tools::McpServerRecord {
        tenant_id: new.tenant_id.to_owned(),
        name: new.name.to_owned(),
        url: url.to_owned(),
        auth_secret: new.auth_secret.map(str::to_owned),
        auth_header: new.auth_header.map(str::to_owned),
        tiers,
        created_at: now,
    };
    match store.create_mcp_server(&server).await {
        Ok(()) => Ok(server),
        Err(StoreError::Conflict(_)) => Err(ProvisionError::Exists(format!(
            "MCP server {} already exists in tenant {}",
            server.name, server.tenant_id
        ))),
        Err(e) => Err(ProvisionError::Store(e)),
    }
}
