//! Cold starts of every function against a Node.js function of the same shape, side by side
//! in one run, under the Runtime API emulator, on DynamoDB/S3 (moto). Point
//! `BENCH_FUNCTIONS_DIR` at a release build (`cargo build --release -p <functions>`): the
//! functions are timed as deployed, without the embedded store.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use serde_json::Value;
use shared::clock::{Clock, SystemClock};
use tokio::process::Command;

use super::p50;
use super::starts::{deployed_binary, deployed_command, process_start};

/// The Node.js function (`tests/node-coldstart`), installed from npm once into the tools
/// directory.
fn node_function() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("node-coldstart");
    let tools = std::env::var_os("AGENT_TOOLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/agent-backend")
        });
    let dir = tools.join("node-coldstart");
    std::fs::create_dir_all(&dir).expect("node function dir");
    let manifest = std::fs::read(src.join("package.json")).expect("package.json");
    let installed = std::fs::read(dir.join("package.json")).ok();
    if installed.as_deref() != Some(&manifest[..]) || !dir.join("node_modules").is_dir() {
        std::fs::write(dir.join("package.json"), &manifest).expect("write package.json");
        let ok = std::process::Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .status()
            .expect("npm");
        assert!(ok.success(), "npm install of the Node.js function failed");
    }
    std::fs::copy(src.join("index.js"), dir.join("index.js")).expect("index.js");
    dir
}

/// Each function's first event in `events/expected.tsv`, placeholders filled with values that
/// authenticate nobody (the answer is the function's own refusal or its answer to an unknown
/// run; for cleanup, a run over an empty table).
fn first_events() -> Vec<(String, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("root")
        .to_owned();
    let table = std::fs::read_to_string(root.join("events/expected.tsv")).expect("expected.tsv");
    let mut seen = std::collections::BTreeMap::new();
    for line in table
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let mut cols = line.split('\t');
        let (Some(function), Some(file)) = (cols.next(), cols.next()) else {
            continue;
        };
        if seen.contains_key(function) {
            continue;
        }
        let raw = std::fs::read_to_string(root.join("events").join(file)).expect("event");
        let filled = raw
            .replace("{{EMAIL}}", "nobody@example.com")
            .replace("{{PASSWORD}}", "not-a-password")
            .replace("{{ACCESS_TOKEN}}", "not-a-token");
        seen.insert(
            function.to_owned(),
            serde_json::from_str(&filled).expect("event json"),
        );
    }
    seen.into_iter().collect()
}

/// One row: median spawn → ready, median spawn → first answer, peak RSS.
struct Row {
    name: String,
    ready: f64,
    first: f64,
    rss_kib: u64,
}

fn print_row(r: &Row, node_ready: f64) {
    println!(
        "{:<24} ready p50={:>7.2}ms  first answer p50={:>7.2}ms  peak RSS={:>6} KiB  Node/Rust ready={:>5.1}x",
        r.name,
        r.ready,
        r.first,
        r.rss_kib,
        node_ready / r.ready
    );
}

pub async fn cold_starts(runs: usize) {
    if std::env::var("MOTO_ENDPOINT").is_err() {
        println!("coldstart: skipped (needs MOTO_ENDPOINT: functions run on DynamoDB/S3)");
        return;
    }
    let runs = runs.max(20);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let (_stores, cfg) = api_tests::aws::stores(clock).await;
    let env = api_tests::aws::process_env(&cfg);
    println!(
        "coldstart: functions from {}, {runs} starts each, DynamoDB/S3 on moto",
        deployed_binary("").display()
    );

    // Node.js first, then every function, so both see the same machine state.
    let node_dir = node_function();
    let node_version = std::process::Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut events = first_events();
    // BENCH_FUNCTIONS=<name,...> times some functions only (a release build of just those).
    if let Ok(only) = std::env::var("BENCH_FUNCTIONS") {
        let only: Vec<&str> = only.split(',').map(str::trim).collect();
        events.retain(|(f, _)| f == "auth-session" || only.contains(&f.as_str()));
    }
    let http_event = events
        .iter()
        .find(|(f, _)| f == "auth-session")
        .map(|(_, e)| e.clone())
        .expect("an auth-session event");
    let (mut ready, mut first, mut rss) = (Vec::new(), Vec::new(), 0);
    for _ in 0..runs {
        let mut cmd = Command::new("node");
        cmd.arg("index.js")
            .current_dir(&node_dir)
            .envs(env.iter().cloned())
            .stdin(Stdio::null());
        let s = process_start(cmd, "node-coldstart", &http_event).await;
        ready.push(s.ready_ms);
        first.push(s.first_ms);
        rss = rss.max(s.rss_kib.unwrap_or(0));
    }
    let node = Row {
        name: format!("Node.js {node_version}"),
        ready: p50(&ready),
        first: p50(&first),
        rss_kib: rss,
    };
    print_row(&node, node.ready);

    let mut ratios = Vec::new();
    for (function, event) in &events {
        let (mut ready, mut first, mut rss) = (Vec::new(), Vec::new(), 0);
        for _ in 0..runs {
            let s = process_start(deployed_command(function, &env), function, event).await;
            ready.push(s.ready_ms);
            first.push(s.first_ms);
            rss = rss.max(s.rss_kib.unwrap_or(0));
        }
        let row = Row {
            name: function.clone(),
            ready: p50(&ready),
            first: p50(&first),
            rss_kib: rss,
        };
        print_row(&row, node.ready);
        ratios.push(node.ready / row.ready);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "coldstart: Node.js / Rust spawn -> ready over {} functions: min {:.1}x, median {:.1}x, max {:.1}x",
        ratios.len(),
        ratios[0],
        ratios[ratios.len() / 2],
        ratios[ratios.len() - 1]
    );
    secrets_at_start(runs, &env, &events, node.ready).await;
}

/// The same functions with their secrets named by ARN, as the template deploys them: one
/// concurrent round of GetSecretValue at cold start (to moto on loopback, plain HTTP: a
/// deployed function adds TLS and the in-region round trip to Secrets Manager).
async fn secrets_at_start(
    runs: usize,
    env: &[(String, String)],
    events: &[(String, Value)],
    node_ready: f64,
) {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let jwt = api_tests::aws::put_secret(&format!("bench/jwt-{id}"), api_tests::TEST_KEY).await;
    let llm = api_tests::aws::put_secret(&format!("bench/llm-{id}"), "sk-bench").await;
    let fingerprint =
        api_tests::aws::put_secret(&format!("bench/fp-{id}"), api_tests::TEST_KEY).await;
    for (function, secrets) in [
        ("auth-session", vec![("JWT_SECRET_ARN", &jwt)]),
        (
            "agent-interact",
            vec![
                ("JWT_SECRET_ARN", &jwt),
                ("LLM_API_KEY_ARN", &llm),
                ("FINGERPRINT_KEY_ARN", &fingerprint),
            ],
        ),
    ] {
        let Some((_, event)) = events.iter().find(|(f, _)| f == function) else {
            continue;
        };
        let (mut ready, mut first, mut rss) = (Vec::new(), Vec::new(), 0);
        for _ in 0..runs {
            let mut cmd = deployed_command(function, env);
            cmd.env_remove("JWT_SECRET")
                .envs(secrets.iter().map(|(k, v)| (*k, v.as_str())));
            let s = process_start(cmd, function, event).await;
            ready.push(s.ready_ms);
            first.push(s.first_ms);
            rss = rss.max(s.rss_kib.unwrap_or(0));
        }
        let row = Row {
            name: format!("{function} +{} secrets", secrets.len()),
            ready: p50(&ready),
            first: p50(&first),
            rss_kib: rss,
        };
        print_row(&row, node_ready);
    }
}
