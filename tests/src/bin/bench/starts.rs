//! Process starts: local-api, function binaries and the cleanup under a Lambda Runtime API
//! emulator; login latency.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_tests::process::peak_rss_kib;
use api_tests::runtime_api::{Outcome, RuntimeApi};
use api_tests::{apigw_event, workspace_binary, AppOptions, TestApp, TEST_KEY};
use serde_json::json;
use shared::clock::{Clock, ManualClock, SystemClock};
use shared::context::Stores;
use shared::domain::TaskStatus;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::{elapsed_ms, stats};

/// Spawn → first HTTP response from local-api (a 401 from the session route).
async fn local_api_start(data_dir: &std::path::Path) -> f64 {
    let started = Instant::now();
    let mut child = Command::new(workspace_binary("local-api"))
        .args(["--port", "0", "--data-dir"])
        .arg(data_dir)
        .env_remove("JWT_SECRET")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn local-api");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut base = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(addr) = line.split("listening on ").nth(1) {
            base = Some(addr.trim().to_owned());
            break;
        }
    }
    let base = base.expect("listening line");
    let client = shared::adapters::tls::client();
    let r = client
        .get(format!("{base}/api/v1/auth/session"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);
    let ms = elapsed_ms(started);
    let _ = child.kill().await;
    ms
}

/// Spawn → init done (first poll) → first response, for one function and one event.
pub async fn function_start(
    bin: &str,
    event: &serde_json::Value,
    data_dir: &std::path::Path,
    env: &[(String, String)],
) -> Started {
    let mut cmd = Command::new(workspace_binary(bin));
    cmd.env("JWT_SECRET", TEST_KEY)
        .env("DATA_DIR", data_dir)
        .env("AWS_LAMBDA_LOG_LEVEL", "warn")
        .envs(env.iter().cloned());
    process_start(cmd, bin, event).await
}

/// One start of a function process.
pub struct Started {
    /// Spawn → its first poll for an invocation (init done).
    pub ready_ms: f64,
    /// Spawn → its first answer posted.
    pub first_ms: f64,
    /// Peak RSS after the first answer.
    pub rss_kib: Option<u64>,
    /// The answer (or the error it reported).
    pub answer: serde_json::Value,
}

/// A function binary as deployed (built alone, without the embedded store): from
/// `BENCH_FUNCTIONS_DIR` when set, else next to this bench.
pub fn deployed_binary(bin: &str) -> std::path::PathBuf {
    match std::env::var_os("BENCH_FUNCTIONS_DIR") {
        Some(dir) => std::path::Path::new(&dir).join(bin),
        None => workspace_binary(bin),
    }
}

/// A deployed function's process, with the signing key, quiet logs and `env`.
pub fn deployed_command(bin: &str, env: &[(String, String)]) -> Command {
    let mut cmd = Command::new(deployed_binary(bin));
    cmd.env("JWT_SECRET", TEST_KEY)
        .env("AWS_LAMBDA_LOG_LEVEL", "warn")
        .envs(env.iter().cloned());
    cmd
}

/// Spawns `cmd` as the function `name` under a fresh Runtime API emulator and invokes it once.
pub async fn process_start(mut cmd: Command, name: &str, event: &serde_json::Value) -> Started {
    let mut rt = RuntimeApi::start().await;
    let started = Instant::now();
    let child = cmd
        .envs(rt.env(name))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn function");
    let polled = rt
        .first_poll(Duration::from_secs(30))
        .await
        .expect("function polled");
    let init_ms = (polled - started).as_secs_f64() * 1000.0;
    let (outcome, at) = rt
        .invoke(event, Duration::from_secs(30))
        .await
        .expect("answered");
    let answer = match outcome {
        Outcome::Response(v) | Outcome::Error(v) => v,
        Outcome::InitError(e) => panic!("{name} failed to start: {e}"),
    };
    let first_ms = (at - started).as_secs_f64() * 1000.0;
    let rss_kib = child.id().and_then(peak_rss_kib);
    drop(child);
    Started {
        ready_ms: init_ms,
        first_ms,
        rss_kib,
        answer,
    }
}

/// local-api and function binaries: start to first response, and peak memory.
pub async fn startups(runs: usize) {
    // local-api: cold first start (key + demo account with an argon2 hash) and warm restarts.
    let mut first = Vec::new();
    let mut warm = Vec::new();
    for _ in 0..runs {
        let dir = tempfile::tempdir().expect("tmp");
        first.push(local_api_start(dir.path()).await);
        warm.push(local_api_start(dir.path()).await);
    }
    stats(
        "local-api first start -> first response (creates demo)",
        first,
    );
    stats("local-api restart -> first response", warm);

    // Function binaries under the runtime emulator.
    let dir = tempfile::tempdir().expect("tmp");
    let app = TestApp::spawn_with(AppOptions {
        data_dir: Some(dir.path().to_owned()),
        ..AppOptions::default()
    })
    .await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    // The function binaries check the token against the system clock.
    app.clock.set(SystemClock.now());
    let token = app.login("ada@acme.com", "s3cret-password").await;
    app.stop().await;
    let bearer = format!("Bearer {token}");
    let session_ev = apigw_event(
        "GET",
        "/api/v1/auth/session",
        &[("authorization", &bearer)],
        "",
    );
    let login_body = json!({ "email": "ada@acme.com", "password": "s3cret-password" }).to_string();
    let login_ev = apigw_event(
        "POST",
        "/api/v1/auth/login",
        &[("content-type", "application/json")],
        &login_body,
    );
    for (bin, ev) in [("auth-session", &session_ev), ("auth-login", &login_ev)] {
        let mut init = Vec::new();
        let mut served = Vec::new();
        let mut rss = Vec::new();
        for _ in 0..runs {
            let s = function_start(bin, ev, dir.path(), &[]).await;
            assert_eq!(s.answer["statusCode"], 200, "{bin}: {}", s.answer);
            init.push(s.ready_ms);
            served.push(s.first_ms);
            rss.extend(s.rss_kib);
        }
        stats(&format!("{bin} spawn -> waiting for next invocation"), init);
        stats(&format!("{bin} spawn -> first response posted"), served);
        if let Some(max) = rss.iter().max() {
            println!(
                "{:<58} max={max} KiB",
                format!("{bin} peak RSS after first invocation")
            );
        }
    }
}

/// Login latency over HTTP (local-api router, in-memory store) and argon2 alone.
pub async fn login_latency(runs: usize) {
    let mut opts = AppOptions::default();
    opts.login_limits.max_failures_per_email = 1_000_000;
    opts.login_limits.max_failures_per_address = 1_000_000;
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    let mut ok = Vec::new();
    let mut wrong = Vec::new();
    let mut unknown = Vec::new();
    for _ in 0..(runs * 3) {
        for (email, pw, into) in [
            ("ada@acme.com", "s3cret-password", &mut ok),
            ("ada@acme.com", "wrong-password", &mut wrong),
            ("ghost@acme.com", "wrong-password", &mut unknown),
        ] {
            let t = Instant::now();
            app.login_raw(json!({ "email": email, "password": pw }))
                .await;
            into.push(elapsed_ms(t));
        }
    }
    stats("login 200 (HTTP round trip)", ok);
    stats("login 401 wrong password", wrong);
    stats("login 401 unknown email", unknown);
    let hasher = shared::auth::PasswordHasher::new();
    let phc = hasher.hash("s3cret-password").expect("hash");
    let mut verify = Vec::new();
    for _ in 0..(runs * 3) {
        let t = Instant::now();
        hasher.verify("s3cret-password", Some(&phc));
        verify.push(elapsed_ms(t));
    }
    stats("argon2id verify alone (m=19456 KiB, t=2, p=1)", verify);
    app.stop().await;
}

/// Seeds `n` expired tasks (each with a step and a snapshot) into stores.
async fn seed_expired(stores: &Stores, n: usize) {
    let clock = ManualClock::new(SystemClock.now());
    for _ in 0..n {
        // Created live (steps can only be added to live tasks), then expired.
        let t = api_tests::conformance::task("acme", None, &clock);
        stores.store.create_task(&t).await.expect("task");
        stores
            .store
            .append_step(&api_tests::conformance::step(&t, 0, &clock))
            .await
            .expect("step");
        let mut t = stores
            .store
            .task("acme", &t.id)
            .await
            .expect("get")
            .expect("task");
        t.status = TaskStatus::Completed;
        t.stored.expires_at = clock.now().timestamp() - 60;
        stores.store.save_task(&t).await.expect("expire");
        stores
            .snapshots
            .put_snapshot("acme", &t.id, 0, b"<p>page</p>")
            .await
            .expect("snapshot");
    }
}

/// cleanup-expired: spawn -> ready, spawn -> first report (20 expired tasks), peak RSS; on the
/// embedded store and, with MOTO_ENDPOINT, on DynamoDB + S3.
pub async fn cleanup_starts(runs: usize) {
    let event: serde_json::Value =
        serde_json::from_str(include_str!("../../../../events/cleanup-scheduled.json"))
            .expect("event");
    let mut backends: Vec<&str> = vec!["embedded"];
    if std::env::var("MOTO_ENDPOINT").is_ok() {
        backends.push("dynamodb");
    }
    for backend in backends {
        let (mut init, mut served, mut rss) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let dir = tempfile::tempdir().expect("tmp");
            let clock: Arc<dyn Clock> = Arc::new(SystemClock);
            let (stores, env) = if backend == "embedded" {
                let stores = shared::context::open_stores(
                    &shared::config::StoreConfig::Embedded {
                        data_dir: dir.path().to_owned(),
                    },
                    clock,
                )
                .await
                .expect("stores");
                (stores, Vec::new())
            } else {
                let (stores, cfg) = api_tests::aws::stores(clock).await;
                (stores, api_tests::aws::process_env(&cfg))
            };
            seed_expired(&stores, 20).await;
            let s = function_start("cleanup-expired", &event, dir.path(), &env).await;
            assert_eq!(s.answer["expiredTasks"], 20, "{}", s.answer);
            init.push(s.ready_ms);
            served.push(s.first_ms);
            rss.extend(s.rss_kib);
        }
        stats(
            &format!("cleanup-expired ({backend}) spawn -> waiting for next invocation"),
            init,
        );
        stats(
            &format!("cleanup-expired ({backend}) spawn -> report (20 expired tasks)"),
            served,
        );
        if let Some(max) = rss.iter().max() {
            println!(
                "{:<58} max={max} KiB",
                format!("cleanup-expired ({backend}) peak RSS")
            );
        }
    }
}
