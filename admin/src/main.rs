//! `agent-admin`: provisions tenants, users, allowed-domain patterns and agent workspaces in the configured
//! store (the same `STORE`/`DATA_DIR` variables the functions read). Passwords are read from
//! standard input or a prompt, never from the command line (where `ps` and shell history
//! would show them).

mod mcp;
mod recipe;
mod workspace;

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use shared::auth::PasswordHasher;
use shared::clock::{Clock, SystemClock};
use shared::config::StoreConfig;
use shared::context::open_stores;
use shared::domain::{DomainPattern, Email, Role};
use shared::ports::{Store, StoreError};
use shared::provisioning;

/// Administer tenants, users and allowed domains.
#[derive(Debug, Parser)]
#[command(name = "agent-admin", version, about, long_about = None)]
struct Cli {
    /// Data directory of the embedded store (default: DATA_DIR, else .data).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Print results as JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create and list tenants.
    #[command(subcommand)]
    Tenant(TenantCmd),
    /// Create, disable, enable and list users.
    #[command(subcommand)]
    User(UserCmd),
    /// Manage a tenant's allowed-domain patterns (which sites get its knowledge).
    #[command(subcommand)]
    Domain(DomainCmd),
    /// Prepare the configured store.
    #[command(subcommand)]
    Store(StoreCmd),
    /// Define, list and remove the agent tools' workspaces of a tenant.
    #[command(subcommand)]
    Workspace(workspace::WorkspaceCmd),
    /// Add, list and remove a tenant's MCP servers.
    #[command(subcommand)]
    Mcp(mcp::McpCmd),
    /// List, show and delete a tenant's recipes (verified runs replayed without the model).
    #[command(subcommand)]
    Recipe(recipe::RecipeCmd),
}

#[derive(Debug, Subcommand)]
enum StoreCmd {
    /// With STORE=dynamodb: create the table (keys, indexes, TTL) and the snapshot bucket if
    /// they do not exist — for a local DynamoDB/S3-compatible server (on AWS the SAM template
    /// creates them). The embedded store creates itself.
    Init,
}

#[derive(Debug, Subcommand)]
enum TenantCmd {
    /// Create a tenant and print its id.
    Create {
        /// Display name.
        #[arg(long)]
        name: String,
        /// Id to use (letters, digits, '-', '_'); a UUID by default.
        #[arg(long)]
        id: Option<String>,
    },
    /// List tenants.
    List,
}

#[derive(Debug, Subcommand)]
enum UserCmd {
    /// Create a user. The password is read from standard input (first line) when it is not a
    /// terminal, else prompted for twice.
    Create {
        /// Tenant id the user belongs to.
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        email: String,
        /// Display name.
        #[arg(long)]
        name: String,
        /// `member` (default) or `admin` (also reads the tenant's debug logs).
        #[arg(long, default_value = "member", value_parser = parse_role)]
        role: Role,
    },
    /// Disable a user: logins answer 403 and sessions 401.
    Disable {
        #[arg(long)]
        email: String,
    },
    /// Re-enable a disabled user.
    Enable {
        #[arg(long)]
        email: String,
    },
    /// List users, of one tenant or of all.
    List {
        #[arg(long)]
        tenant: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum DomainCmd {
    /// Add a pattern: `app.acme.com` or `*.acme.com` (the domain and all its subdomains).
    Add {
        #[arg(long)]
        tenant: String,
        pattern: String,
    },
    /// Remove a pattern.
    Remove {
        #[arg(long)]
        tenant: String,
        pattern: String,
    },
    /// List a tenant's patterns.
    List {
        #[arg(long)]
        tenant: String,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent-admin: {e}");
            ExitCode::FAILURE
        }
    }
}

fn store_config(data_dir: Option<PathBuf>) -> Result<StoreConfig, String> {
    let cfg = StoreConfig::from_lookup(|k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
    Ok(match (cfg, data_dir) {
        (StoreConfig::Embedded { .. }, Some(dir)) => StoreConfig::Embedded { data_dir: dir },
        (cfg, _) => cfg,
    })
}

fn read_password() -> Result<String, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let first = rpassword::prompt_password("Password: ")
            .map_err(|e| format!("cannot read password: {e}"))?;
        let second = rpassword::prompt_password("Repeat password: ")
            .map_err(|e| format!("cannot read password: {e}"))?;
        if first != second {
            return Err("the passwords do not match".into());
        }
        Ok(first)
    } else {
        let mut line = String::new();
        stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read password from standard input: {e}"))?;
        let pw = line.trim_end_matches(['\r', '\n']).to_owned();
        if pw.is_empty() {
            return Err("no password on standard input (pipe it in, e.g. `printf '%s\\n' \"$PW\" | agent-admin user create ...`)".into());
        }
        Ok(pw)
    }
}

fn print_rows(json: bool, value: serde_json::Value, lines: Vec<String>) {
    if json {
        println!("{value}");
    } else {
        for l in lines {
            println!("{l}");
        }
    }
}

fn parse_role(raw: &str) -> Result<Role, String> {
    Role::parse(raw).ok_or_else(|| format!("unknown role {raw:?}: use member or admin"))
}

fn store_err(e: StoreError) -> String {
    e.to_string()
}

fn pattern(raw: &str) -> Result<DomainPattern, String> {
    DomainPattern::parse(raw).map_err(|p| format!("pattern: {p}"))
}

async fn set_disabled(
    store: &dyn Store,
    json: bool,
    email: &str,
    disabled: bool,
) -> Result<(), String> {
    let email = Email::parse(email).map_err(|p| format!("email: {p}"))?;
    let u = match store.set_user_disabled(&email, disabled).await {
        Err(StoreError::NotFound(_)) => return Err(format!("no user with email {email}")),
        other => other.map_err(store_err)?,
    };
    let state = if u.disabled { "disabled" } else { "enabled" };
    print_rows(
        json,
        serde_json::json!({"email": u.email, "disabled": u.disabled}),
        vec![format!("{} {state}", u.email)],
    );
    Ok(())
}

async fn init_store(cfg: &StoreConfig, json: bool) -> Result<(), String> {
    let StoreConfig::DynamoDb(aws) = cfg else {
        // Opening the embedded store (done before the command runs) created it.
        print_rows(
            json,
            serde_json::json!({ "ready": true }),
            vec!["the store is ready".into()],
        );
        return Ok(());
    };
    let (ddb, s3) = shared::context::aws_clients(aws).await;
    let table = shared::adapters::dynamo::ensure_table(&ddb, &aws.table)
        .await
        .map_err(store_err)?;
    let bucket = shared::adapters::snapshots::ensure_bucket(&s3, &aws.bucket)
        .await
        .map_err(store_err)?;
    let word = |created: bool| if created { "created" } else { "exists" };
    print_rows(
        json,
        serde_json::json!({ "table": aws.table, "tableCreated": table, "bucket": aws.bucket, "bucketCreated": bucket }),
        vec![
            format!("table {}: {}", aws.table, word(table)),
            format!("bucket {}: {}", aws.bucket, word(bucket)),
        ],
    );
    Ok(())
}

async fn run(cli: Cli) -> Result<(), String> {
    let store_cfg = store_config(cli.data_dir.clone())?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let store: Arc<dyn Store> = open_stores(&store_cfg, clock.clone())
        .await
        .map_err(store_err)?
        .store;
    let store = store.as_ref();
    let now = clock.now();
    let json = cli.json;
    match cli.command {
        Command::Tenant(TenantCmd::Create { name, id }) => {
            let t = provisioning::create_tenant(store, id.as_deref(), &name, now)
                .await
                .map_err(|e| e.to_string())?;
            print_rows(
                json,
                serde_json::json!({ "id": t.id, "name": t.name }),
                vec![t.id],
            );
        }
        Command::Tenant(TenantCmd::List) => {
            let tenants = store.list_tenants().await.map_err(store_err)?;
            let value = serde_json::json!(tenants
                .iter()
                .map(|t| serde_json::json!({"id": t.id, "name": t.name}))
                .collect::<Vec<_>>());
            print_rows(
                json,
                value,
                tenants
                    .iter()
                    .map(|t| format!("{}\t{}", t.id, t.name))
                    .collect(),
            );
        }
        Command::User(UserCmd::Create {
            tenant,
            email,
            name,
            role,
        }) => {
            let password = read_password()?;
            let u = provisioning::create_user(
                store,
                &PasswordHasher::new(),
                provisioning::NewUser {
                    tenant_id: &tenant,
                    email: &email,
                    name: &name,
                    password: &password,
                    role,
                },
                now,
            )
            .await
            .map_err(|e| e.to_string())?;
            print_rows(
                json,
                serde_json::json!({"id": u.id, "email": u.email, "tenantId": u.tenant_id, "role": u.role}),
                vec![u.id],
            );
        }
        Command::User(UserCmd::Disable { email }) => {
            set_disabled(store, json, &email, true).await?
        }
        Command::User(UserCmd::Enable { email }) => {
            set_disabled(store, json, &email, false).await?
        }
        Command::User(UserCmd::List { tenant }) => {
            let users = store
                .list_users(tenant.as_deref())
                .await
                .map_err(store_err)?;
            let value = serde_json::json!(users
                .iter()
                .map(|u| serde_json::json!({"id": u.id, "email": u.email, "name": u.name, "tenantId": u.tenant_id, "role": u.role, "disabled": u.disabled}))
                .collect::<Vec<_>>());
            let lines = users
                .iter()
                .map(|u| {
                    format!(
                        "{}\t{}\t{}\t{}{}",
                        u.id,
                        u.email,
                        u.tenant_id,
                        u.name,
                        if u.disabled { "\t(disabled)" } else { "" }
                    )
                })
                .collect();
            print_rows(json, value, lines);
        }
        Command::Domain(DomainCmd::Add {
            tenant,
            pattern: raw,
        }) => {
            let p = pattern(&raw)?;
            let added = match store.add_allowed_domain(&tenant, &p).await {
                Err(StoreError::NotFound(_)) => {
                    return Err(format!("tenant {tenant} does not exist"))
                }
                other => other.map_err(store_err)?,
            };
            let msg = if added {
                format!("added {p}")
            } else {
                format!("{p} was already allowed")
            };
            print_rows(
                json,
                serde_json::json!({"pattern": p.as_str(), "added": added}),
                vec![msg],
            );
        }
        Command::Domain(DomainCmd::Remove {
            tenant,
            pattern: raw,
        }) => {
            let p = pattern(&raw)?;
            if !store
                .remove_allowed_domain(&tenant, &p)
                .await
                .map_err(store_err)?
            {
                return Err(format!("{p} is not an allowed domain of tenant {tenant}"));
            }
            print_rows(
                json,
                serde_json::json!({"pattern": p.as_str(), "removed": true}),
                vec![format!("removed {p}")],
            );
        }
        Command::Store(StoreCmd::Init) => init_store(&store_cfg, json).await?,
        Command::Mcp(cmd) => {
            let (value, lines) = mcp::run(store, cmd, now).await?;
            print_rows(json, value, lines);
        }
        Command::Recipe(cmd) => {
            let (value, lines) = recipe::run(store, cmd, now).await?;
            print_rows(json, value, lines);
        }
        Command::Workspace(cmd) => {
            let (value, lines) = workspace::run(store, cmd, cli.data_dir.clone(), now).await?;
            print_rows(json, value, lines);
        }
        Command::Domain(DomainCmd::List { tenant }) => {
            if store.tenant(&tenant).await.map_err(store_err)?.is_none() {
                return Err(format!("tenant {tenant} does not exist"));
            }
            let patterns = store.allowed_domains(&tenant).await.map_err(store_err)?;
            let value = serde_json::json!(patterns.iter().map(|p| p.as_str()).collect::<Vec<_>>());
            print_rows(
                json,
                value,
                patterns.iter().map(|p| p.to_string()).collect(),
            );
        }
    }
    Ok(())
}
