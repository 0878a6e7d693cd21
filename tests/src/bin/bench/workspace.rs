//! The agent tools' workspace adapters on a 2 000-file workspace (20 directories of 100 small
//! source files): list a directory, read a file, grep every file, glob — through the same
//! tool runner the routes use, on a local directory and on an S3 prefix of the compatible
//! server (`MOTO_ENDPOINT`).

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use serde_json::json;
use shared::adapters::workspace::{DirWorkspace, S3Workspace};
use shared::domain::ws_path::WsPath;
use shared::ports::workspace::{Precondition, Workspace};
use shared::tools::calls::ToolCall;
use shared::tools::run::run;

use super::{elapsed_ms, stats};

const DIRS: usize = 20;
const FILES_PER_DIR: usize = 100;

fn source(d: usize, f: usize) -> String {
    let mut s = format!("// module {d}/{f}\n");
    for i in 0..40 {
        s.push_str(&format!("fn item_{i}(x: u32) -> u32 {{ x * {i} + {f} }}\n"));
    }
    if f % 50 == 7 {
        s.push_str("// TODO: needle in the haystack\n");
    }
    s
}

async fn fill(ws: &Arc<dyn Workspace>) {
    let paths: Vec<(WsPath, String)> = (0..DIRS)
        .flat_map(|d| (0..FILES_PER_DIR).map(move |f| (d, f)))
        .map(|(d, f)| {
            let p = WsPath::parse(&format!("src/m{d:02}/f{f:03}.rs")).expect("path");
            (p, source(d, f))
        })
        .collect();
    futures::stream::iter(paths)
        .map(|(p, text)| {
            let ws = ws.clone();
            async move {
                ws.write(&p, text.into_bytes(), Precondition::Any)
                    .await
                    .expect("seed")
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
}

async fn measure(label: &str, ws: Arc<dyn Workspace>, runs: usize) {
    let started = Instant::now();
    fill(&ws).await;
    println!(
        "{label}: seeded {} files in {:.0} ms",
        DIRS * FILES_PER_DIR,
        elapsed_ms(started)
    );
    let calls = [
        (
            "fs.list src/m07 (100 entries)",
            "fs.list",
            json!({ "path": "src/m07" }),
        ),
        (
            "fs.read one 1.6 KB file",
            "fs.read",
            json!({ "path": "src/m07/f042.rs" }),
        ),
        (
            "search.glob **/f00*.rs over 2000 files",
            "search.glob",
            json!({ "glob": "**/f00*.rs" }),
        ),
        (
            "search.grep TODO over 2000 files (3.3 MB)",
            "search.grep",
            json!({ "pattern": "TODO: needle" }),
        ),
    ];
    for (name, tool, args) in calls {
        let call = ToolCall::from_args(tool, args).expect("call");
        let n = if tool == "search.grep" {
            runs.min(10)
        } else {
            runs
        };
        let mut ms = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            run(ws.as_ref(), &call, 1024 * 1024).await.expect("tool");
            ms.push(elapsed_ms(t));
        }
        stats(&format!("{label} {name}"), ms);
    }
}

pub async fn workspaces(runs: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let local: Arc<dyn Workspace> = Arc::new(DirWorkspace::open(&dir.path().join("ws")));
    measure("local dir", local, runs).await;
    if std::env::var("MOTO_ENDPOINT").is_err() {
        println!("s3 prefix: skipped (MOTO_ENDPOINT unset)");
        return;
    }
    let cfg = api_tests::aws::fresh_resources().await;
    let (_, client) = api_tests::aws::clients();
    let s3: Arc<dyn Workspace> = Arc::new(S3Workspace::new(
        client,
        cfg.bucket,
        "workspaces/bench".into(),
    ));
    measure("s3 prefix (moto)", s3, runs).await;
}

/// Start of an approved command to its first output chunk being readable, locally: the
/// approval (run recorded, runner started) → the workspace copied → `echo` spawned → first
/// chunk stored, measured by polling the run's output like a client.
pub async fn exec_first_output(runs: usize) {
    use api_tests::agent::{agent_setup, AgentSetup};
    let a = agent_setup(
        false,
        AgentSetup {
            allow: vec!["echo=.*".into()],
            ..AgentSetup::default()
        },
    )
    .await;
    for files in [0usize, 200] {
        for i in 0..files {
            let path = WsPath::parse(&format!("src/f{i:04}.txt")).expect("path");
            a.app
                .ctx
                .workspaces
                .open("acme/project")
                .expect("open")
                .write(&path, source(0, i).into_bytes(), Precondition::Any)
                .await
                .expect("seed");
        }
        let mut to_first = Vec::new();
        let mut approve_ms = Vec::new();
        for _ in 0..runs.min(20) {
            let id = a
                .pending("exec", json!({ "program": "echo", "args": ["ready"] }))
                .await;
            let t = Instant::now();
            let d = a.approve(&id).await;
            approve_ms.push(elapsed_ms(t));
            let exec = d["result"]["execId"].as_str().expect("exec id").to_owned();
            loop {
                let v = a
                    .ok(
                        reqwest::Method::GET,
                        &format!("/api/v1/agent/exec/{exec}"),
                        json!(null),
                    )
                    .await;
                if !v["data"]["chunks"].as_array().is_none_or(Vec::is_empty) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            to_first.push(elapsed_ms(t));
        }
        stats(
            &format!("exec approve (record + start), {files} files"),
            approve_ms,
        );
        stats(
            &format!("exec approve -> first output readable, {files} files"),
            to_first,
        );
    }
}
