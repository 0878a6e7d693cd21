//! The agent tools' workspace search (`POST /api/v1/agent/fs/search`) under parallel load, as
//! the local-api binary runs it: a workspace of 64 text files of 512 KiB (the 32 MiB one search
//! may read), N searches at once that match nothing (so each reads everything). Prints
//! local-api's resident memory before, at its peak and after, the answers' statuses, and how
//! long another request (`GET /api/v1/auth/session`) takes meanwhile.
//! `BENCH_SEARCHES=60,100` sets the parallel counts; `BENCH_SEARCH_TURNS=<n>` runs local-api
//! with `AGENT_SEARCH_CONCURRENCY=<n>` (its default otherwise), to see one search's memory.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use api_tests::process::{
    access_token, demo_credentials, peak_rss_kib, rss_kib, start_local_api_with,
};
use serde_json::{json, Value};

use super::{elapsed_ms, p50};

const FILES: usize = 64;
const FILE_BYTES: usize = 512 * 1024;

fn seed(root: &std::path::Path) {
    let dir = root.join("big");
    std::fs::create_dir_all(&dir).expect("workspace dir");
    let line = "the quick brown fox jumps over the lazy dog while searching every line again\n";
    let text = line.repeat(FILE_BYTES / line.len());
    for i in 0..FILES {
        std::fs::write(dir.join(format!("f{i:02}.txt")), &text).expect("file");
    }
}

pub async fn search_memory() {
    let counts: Vec<usize> = std::env::var("BENCH_SEARCHES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![60, 100]);
    for n in counts {
        parallel_searches(n).await;
    }
}

async fn parallel_searches(n: usize) {
    let data = tempfile::tempdir().expect("tmp");
    // The agent routes' per-user rate limit out of the way: this measures memory.
    let envs = vec![
        ("AGENT_RATE_PER_USER".to_owned(), "100000".to_owned()),
        ("AGENT_RATE_PER_TENANT".to_owned(), "100000".to_owned()),
        ("RUST_LOG".to_owned(), "warn".to_owned()),
    ];
    let mut envs = envs;
    if let Ok(turns) = std::env::var("BENCH_SEARCH_TURNS") {
        envs.push(("AGENT_SEARCH_CONCURRENCY".to_owned(), turns));
    }
    let mut api = start_local_api_with(data.path(), Stdio::null(), &envs).await;
    let pid = api.child.id().expect("pid");
    let (email, password) = demo_credentials(&api.output);
    let token = access_token(&api.base, &email, &password).await;
    let client = shared::adapters::tls::client_builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let v: Value = client
        .post(format!("{}/api/v1/agent/workspace/select", api.base))
        .bearer_auth(&token)
        .json(&json!({ "workspaceId": "demo" }))
        .send()
        .await
        .expect("select")
        .json()
        .await
        .expect("json");
    let session = v["data"]["sessionId"].as_str().expect("session").to_owned();
    seed(&data.path().join("workspaces/demo"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(pid).unwrap_or(0);

    let started = Instant::now();
    let searches = futures::future::join_all((0..n).map(|_| {
        let client = client.clone();
        let url = format!("{}/api/v1/agent/fs/search", api.base);
        let body = json!({ "sessionId": session, "pattern": "needle-[0-9]{9}", "path": "big" });
        let token = token.clone();
        async move {
            match client.post(url).bearer_auth(token).json(&body).send().await {
                Ok(r) => r.status().as_u16(),
                Err(_) => 0,
            }
        }
    }));
    let finished = std::sync::atomic::AtomicBool::new(false);
    // Another request meanwhile, again and again until the searches are done.
    let other = async {
        let mut ms = Vec::new();
        tokio::time::sleep(Duration::from_millis(50)).await;
        while ms.len() < 2_000 {
            let t = Instant::now();
            let _ = client
                .get(format!("{}/api/v1/auth/session", api.base))
                .bearer_auth(&token)
                .send()
                .await;
            ms.push(elapsed_ms(t));
            if started.elapsed() > Duration::from_secs(300) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            if ms.len() > 1 && finished.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
        }
        ms
    };
    let searches = async {
        let s = searches.await;
        finished.store(true, std::sync::atomic::Ordering::Relaxed);
        (s, elapsed_ms(started))
    };
    let ((statuses, total), other_ms) = tokio::join!(searches, other);
    let peak = peak_rss_kib(pid).unwrap_or(0);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib(pid).unwrap_or(0);
    let mut by_status = BTreeMap::new();
    for s in statuses {
        *by_status.entry(s).or_insert(0) += 1;
    }
    let max_other = other_ms.iter().copied().fold(0.0, f64::max);
    println!(
        "fs/search x{n:<4} 64 files x 512 KiB: rss before {:>5.0} MB, peak {:>5.0} MB, \
         after {:>5.0} MB; all answered in {:>6.0} ms; statuses {by_status:?}; \
         another request meanwhile p50 {:>6.1} ms, max {:>6.1} ms (n={})",
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        after as f64 / 1024.0,
        total,
        if other_ms.is_empty() {
            0.0
        } else {
            p50(&other_ms)
        },
        max_other,
        other_ms.len(),
    );
    let _ = api.child.kill().await;
}
