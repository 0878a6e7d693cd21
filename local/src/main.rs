//! `local-api`: serves every function on 127.0.0.1 with the embedded store. On first start it
//! generates a development signing key and a demo account and prints how to log in.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use local_api::bootstrap::{self, KeySource};
use local_api::LocalApi;
use shared::config::{Config, StoreConfig};
use shared::AppContext;

/// Run the whole API locally on 127.0.0.1 (no cloud account needed).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Port to listen on (0 picks a free one).
    #[arg(long, env = "PORT", default_value_t = 3000)]
    port: u16,
    /// Data directory of the embedded store (overrides DATA_DIR).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    shared::telemetry::init_json_logs();
    if let Err(e) = run(args).await {
        eprintln!("local-api: {e}");
        std::process::exit(1);
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed before this returns,
/// so a signal that arrives right after start-up is never lost.
#[cfg(unix)]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        println!("local-api: shutting down");
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
        println!("local-api: shutting down");
    })
}

async fn run(args: Args) -> Result<(), String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let data_dir = args
        .data_dir
        .or_else(|| env("DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(|| ".data".into());
    let memory = env("STORE").as_deref() == Some("memory");
    let key = match env("JWT_SECRET") {
        Some(k) => (k, KeySource::Environment),
        None => bootstrap::dev_jwt_key((!memory).then_some(data_dir.as_path())).map_err(|e| {
            format!(
                "cannot keep a development key in {}: {e}",
                data_dir.display()
            )
        })?,
    };
    let config = Config::from_lookup(|k| match k {
        "JWT_SECRET" => Some(key.0.clone()),
        "DATA_DIR" => Some(data_dir.display().to_string()),
        "ALLOWED_ORIGINS" => env(k).or_else(|| Some("chrome-extension://*".into())),
        // Local development wants the debug routes; deployments keep them off by default.
        "DEBUG_ROUTES" => env(k).or_else(|| Some("true".into())),
        // The agent tools run on this machine, in workspaces under DATA_DIR; on by default here.
        "AGENT_TOOLS_ENABLED" => env(k).or_else(|| Some("true".into())),
        other => env(other),
    })
    .map_err(|e| e.to_string())?;
    let store_dir = match &config.store {
        StoreConfig::Embedded { data_dir } => Some(data_dir.clone()),
        StoreConfig::Memory | StoreConfig::DynamoDb(_) => None,
    };
    let ctx = Arc::new(
        AppContext::from_config(config)
            .await
            .map_err(|e| e.to_string())?,
    );

    match &key.1 {
        KeySource::Generated(p) => println!(
            "Generated a development JWT key in {} (set JWT_SECRET to use your own).",
            p.display()
        ),
        KeySource::Existing(p) => println!("Using the development JWT key in {}.", p.display()),
        KeySource::Ephemeral => println!("Using a throw-away JWT key (memory store)."),
        KeySource::Environment => println!("Using JWT_SECRET from the environment."),
    }
    let demo = bootstrap::demo_account(&ctx, store_dir.as_deref())
        .await
        .map_err(|e| e.to_string())?;

    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port)))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", args.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("local-api listening on http://{addr}");
    if let Some(d) = &demo {
        println!("Demo login: email {}  password {}", d.email, d.password);
        println!(
            "  curl -s -X POST http://{addr}/api/v1/auth/login -H 'content-type: application/json' -d '{{\"email\":\"{}\",\"password\":\"{}\"}}'",
            d.email, d.password
        );
    }
    let api = Arc::new(LocalApi::new(ctx));
    let shutdown = shutdown_signal().map_err(|e| format!("cannot listen for signals: {e}"))?;
    local_api::serve(listener, api, shutdown)
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}
