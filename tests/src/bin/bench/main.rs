//! Benchmarks: process start to first request served (local-api, function binaries and the
//! cleanup under a Lambda Runtime API emulator), login latency, unknown-email vs
//! wrong-password timing, peak memory, the sequential store round trips of each route, the
//! reasoning step over a scripted task, the competent browser trajectories (tokens, calls and
//! prompt-prefix reuse per step), the cost of pre-search, and the agent tools' workspace
//! adapters on 2 000 files, and the cost of a step's metrics lines.
//! Prints numbers; asserts nothing.
//!
//! `scripts/bench` builds release binaries, starts a DynamoDB/S3-compatible server and runs
//! this; any profile works (DynamoDB numbers need `MOTO_ENDPOINT`).

mod coldstart;
mod cpu;
mod heap;
mod machine;
mod memory;
mod metrics;
mod pages;
mod reads;
mod reasoning;
mod search;
mod starts;
mod store;
mod timing;
mod tools;
mod trajectories;
mod work;
mod workspace;

use std::time::Instant;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// The `p` quantile (0..=1) of ascending, non-empty `sorted`.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

/// The median of non-empty `ms`.
pub fn p50(ms: &[f64]) -> f64 {
    let mut sorted = ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile(&sorted, 0.5)
}

pub fn stats(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| quantile(&ms, p);
    println!(
        "{name:<58} n={:<4} min={:>8.2}ms p50={:>8.2}ms p90={:>8.2}ms p99={:>8.2}ms",
        ms.len(),
        ms[0],
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
}

pub fn elapsed_ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// One interact request; the answer body.
pub async fn interact(
    app: &api_tests::TestApp,
    token: &str,
    body: &serde_json::Value,
) -> serde_json::Value {
    interact_bytes(app, token, body.to_string().into_bytes()).await
}

/// One interact request with a body written beforehand (so a timing holds the server's work,
/// not the writing of the client's JSON); the answer body.
pub async fn interact_bytes(
    app: &api_tests::TestApp,
    token: &str,
    body: Vec<u8>,
) -> serde_json::Value {
    app.post_raw("/api/agent/interact", token, body)
        .await
        .json()
        .await
        .expect("json")
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!("bench ({profile} build, {runs} runs per start measurement)");
    // BENCH_ONLY=<section,...> runs some sections: startup, coldstart, memory, cleanup, round-trips,
    // interact (BENCH_PAGES=tree|dom for one page), page-cpu (parse, page model, render
    // and compression alone), interact-binary,
    // reads, reasoning, search, prompt, login, machine, workspace, exec, agent-search, risk, metrics,
    // trajectories (needs Chromium).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let run = |name: &str| only.is_empty() || only.split(',').any(|s| s.trim() == name);
    if run("startup") {
        starts::startups(runs).await;
    }
    if run("coldstart") {
        coldstart::cold_starts(runs).await;
    }
    if run("memory") {
        memory::interact_memory(runs).await;
    }
    if run("cleanup") {
        starts::cleanup_starts(runs).await;
    }
    if run("round-trips") {
        store::round_trips().await;
    }
    if run("reads") {
        reads::read_path().await;
    }
    if run("interact") {
        work::interact_overhead(runs).await;
    }
    if run("page-cpu") {
        cpu::page_work(runs);
    }
    if run("interact-binary") {
        work::interact_binary(runs).await;
    }
    if run("reasoning") {
        reasoning::scripted_task().await;
    }
    if run("trajectories") {
        trajectories::local_suite().await;
    }
    if run("search") {
        search::pre_search(runs).await;
    }
    if run("prompt") {
        pages::prompt_tokens();
    }
    if run("machine") {
        machine::overhead(runs).await;
    }
    if run("workspace") {
        workspace::workspaces(runs).await;
    }
    if run("agent-search") {
        tools::search_memory().await;
    }
    if run("exec") {
        workspace::exec_first_output(runs).await;
    }
    if run("login") {
        starts::login_latency(runs).await;
    }
    if run("risk") {
        risk_gate();
    }
    if run("metrics") {
        metrics::emission(runs);
    }
}

/// The risk gate's confusion matrices on its labelled corpus (`tests/fixtures/risk/`): the
/// training set, the held-out set, the spent held-out sets and the next round's training cases
/// (not tuned on yet) apart, per act, language and action kind.
fn risk_gate() {
    use api_tests::risk_corpus::{corpus_dir, evaluate, heldout_dir, load, training_dir};
    for (set, dir) in [
        ("training", training_dir()),
        ("held-out", heldout_dir()),
        ("spent held-out", corpus_dir().join("spent")),
        ("next round's", corpus_dir().join("next")),
    ] {
        if !dir.exists() {
            println!("risk gate, {set} set: none");
            continue;
        }
        match load(&dir) {
            Ok(cases) => {
                let started = Instant::now();
                let report = evaluate(&cases, &shared::domain::risk::RiskPatterns::default());
                println!(
                    "risk gate, {set} set: {} cases in {:.1} ms ({:.3} ms a case)",
                    cases.len(),
                    elapsed_ms(started),
                    elapsed_ms(started) / cases.len().max(1) as f64
                );
                // The held-out set's cases are not printed one by one: nobody tunes to them.
                if set == "training" {
                    println!("{}", report.render());
                } else {
                    println!("{}", report.summary());
                }
            }
            Err(e) => println!("risk gate: the {set} set cannot be read: {e}"),
        }
    }
}
