//! The workspace's binaries as processes: local-api started on a free port with a clean
//! environment, its printed demo credentials, and its peak memory.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::workspace_binary;

/// Environment variables the binaries read; cleared so the host's settings cannot leak in.
const CONFIG_VARS: &[&str] = &[
    "LLM_API_KEY",
    "OPENAI_API_KEY",
    "LLM_BASE_URL",
    "EXTRACTION_SERVICE_URL",
    "JWT_SECRET",
    "JWT_SECRET_ARN",
    "FINGERPRINT_KEY",
    "FINGERPRINT_KEY_ARN",
    "LLM_API_KEY_ARN",
    "STORE",
    "DATA_DIR",
    "PORT",
    "ALLOWED_ORIGINS",
    "MAX_BODY_BYTES",
];

/// A binary of the workspace with the configuration variables cleared.
pub fn command(bin: &str) -> Command {
    let mut c = Command::new(workspace_binary(bin));
    for v in CONFIG_VARS {
        c.env_remove(v);
    }
    c.kill_on_drop(true);
    c
}

/// Reads stdout lines until one contains `marker`; returns every line read.
pub async fn read_until(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    marker: &str,
) -> Vec<String> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while let Ok(Ok(Some(line))) = tokio::time::timeout_at(deadline, lines.next_line()).await {
        let done = line.contains(marker);
        seen.push(line);
        if done {
            return seen;
        }
    }
    panic!("no line containing {marker:?}; got {seen:?}");
}

/// A running local-api and what it printed up to its listening line.
pub struct LocalApiProcess {
    pub child: Child,
    pub base: String,
    pub output: Vec<String>,
}

/// local-api on a free port with its data in `data_dir`.
pub async fn start_local_api(data_dir: &std::path::Path) -> LocalApiProcess {
    start_local_api_with(data_dir, Stdio::null(), &[]).await
}

pub async fn start_local_api_with(
    data_dir: &std::path::Path,
    stderr: Stdio,
    envs: &[(String, String)],
) -> LocalApiProcess {
    let mut child = command("local-api")
        .args(["--port", "0", "--data-dir"])
        .arg(data_dir)
        .envs(envs.iter().cloned())
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn local-api");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut output = read_until(&mut lines, "listening on http://").await;
    // The demo credentials follow the listening line when known.
    if let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await
    {
        output.push(line);
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let base = output
        .iter()
        .find_map(|l| l.split("listening on ").nth(1))
        .expect("address")
        .trim()
        .to_owned();
    LocalApiProcess {
        child,
        base,
        output,
    }
}

/// The demo account local-api printed on its first start.
pub fn demo_credentials(output: &[String]) -> (String, String) {
    let line = output
        .iter()
        .find(|l| l.starts_with("Demo login:"))
        .expect("demo line printed");
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = |k: &str| words[words.iter().position(|w| *w == k).expect(k) + 1].to_owned();
    (at("email"), at("password"))
}

/// A memory figure of a running process (`VmHWM:`, `VmRSS:`), in KiB.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The peak resident memory of a running process (`VmHWM`), in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// The resident memory of a running process now (`VmRSS`), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

/// The access token of a login against a running server (panics unless it succeeds).
pub async fn access_token(base: &str, email: &str, password: &str) -> String {
    let v: serde_json::Value = login(base, email, password)
        .await
        .json()
        .await
        .expect("json");
    v["accessToken"].as_str().expect("token").to_owned()
}

/// `POST /api/v1/auth/login` against a running server.
pub async fn login(base: &str, email: &str, password: &str) -> reqwest::Response {
    shared::adapters::tls::client()
        .post(format!("{base}/api/v1/auth/login"))
        .json(&serde_json::json!({ "email": email, "password": password }))
        .send()
        .await
        .expect("login request")
}
