//! Benchmarks: process start to first request served (local-api, function binaries and the
//! cleanup under a Lambda Runtime API emulator), login latency, unknown-email vs
//! wrong-password timing, peak memory, and the sequential store round trips of each route.
//! Prints numbers; asserts nothing.
//!
//! `scripts/bench` builds release binaries, starts a DynamoDB/S3-compatible server and runs
//! this; any profile works (DynamoDB numbers need `MOTO_ENDPOINT`).

use std::process::Stdio;
use std::time::{Duration, Instant};

use std::sync::Arc;

use api_tests::delayed::DelayedTable;
use api_tests::process::peak_rss_kib;
use api_tests::runtime_api::{Outcome, RuntimeApi};
use api_tests::{apigw_event, workspace_binary, AppOptions, TestApp, TEST_KEY};
use serde_json::json;
use shared::adapters::snapshots::MemorySnapshotStore;
use shared::adapters::table::TableBackend;
use shared::adapters::TableStore;
use shared::clock::{Clock, ManualClock, SystemClock};
use shared::context::Stores;
use shared::domain::TaskStatus;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn stats(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[(((ms.len() - 1) as f64) * p).round() as usize];
    println!(
        "{name:<58} n={:<4} min={:>8.2}ms p50={:>8.2}ms p90={:>8.2}ms p99={:>8.2}ms",
        ms.len(),
        ms[0],
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
}

fn elapsed_ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

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
    let client = reqwest::Client::new();
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
async fn function_start(
    bin: &str,
    event: &serde_json::Value,
    data_dir: &std::path::Path,
    env: &[(String, String)],
) -> (f64, f64, Option<u64>) {
    let mut rt = RuntimeApi::start().await;
    let started = Instant::now();
    let child = Command::new(workspace_binary(bin))
        .envs(rt.env(bin))
        .env("JWT_SECRET", TEST_KEY)
        .env("DATA_DIR", data_dir)
        .env("AWS_LAMBDA_LOG_LEVEL", "warn")
        .envs(env.iter().cloned())
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
    assert!(matches!(outcome, Outcome::Response(_)), "{outcome:?}");
    let first_ms = (at - started).as_secs_f64() * 1000.0;
    let rss = child.id().and_then(peak_rss_kib);
    drop(child);
    (init_ms, first_ms, rss)
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
    // BENCH_ONLY=<section,...> runs some sections: startup, cleanup, round-trips, interact,
    // prompt, login.
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let run = |name: &str| only.is_empty() || only.split(',').any(|s| s.trim() == name);
    if run("startup") {
        startups(runs).await;
    }
    if run("cleanup") {
        cleanup_starts(runs).await;
    }
    if run("round-trips") {
        round_trips().await;
    }
    if run("interact") {
        interact_overhead(runs).await;
    }
    if run("prompt") {
        prompt_tokens();
    }
    if run("login") {
        login_latency(runs).await;
    }
}

/// local-api and function binaries: start to first response, and peak memory.
async fn startups(runs: usize) {
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
            let (i, f, r) = function_start(bin, ev, dir.path(), &[]).await;
            init.push(i);
            served.push(f);
            rss.extend(r);
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
async fn login_latency(runs: usize) {
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
        t.expires_at = clock.now().timestamp() - 60;
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
async fn cleanup_starts(runs: usize) {
    let event: serde_json::Value =
        serde_json::from_str(include_str!("../../../events/cleanup-scheduled.json"))
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
            let (i, f, r) = function_start("cleanup-expired", &event, dir.path(), &env).await;
            init.push(i);
            served.push(f);
            rss.extend(r);
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

/// An app whose table answers every call after `delay`.
async fn delayed_app(delay: Duration, llm_base_url: &str) -> (TestApp, Arc<DelayedTable>) {
    let clock = Arc::new(ManualClock::new(SystemClock.now()));
    let inner: Arc<dyn TableBackend> =
        Arc::new(shared::adapters::sqlite::SqliteTable::in_memory().expect("table"));
    let table = Arc::new(DelayedTable::new(inner, delay));
    let dyn_clock: Arc<dyn Clock> = clock.clone();
    let stores = Stores {
        store: Arc::new(TableStore::new(table.clone(), dyn_clock)),
        snapshots: Arc::new(MemorySnapshotStore::default()),
    };
    let opts = AppOptions::with_llm(llm_base_url).set("INTERACT_RATE_PER_USER", "100000");
    let app = TestApp::spawn_on(api_tests::test_config(&opts), stores, clock).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    (app, table)
}

/// One measured operation: store calls made and elapsed milliseconds.
async fn measure<F, Fut>(table: &DelayedTable, op: F) -> (usize, f64)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let before = table.calls();
    let t = Instant::now();
    op().await;
    (table.calls() - before, elapsed_ms(t))
}

/// Store round trips per route: total calls, and sequential ones measured as extra latency
/// over an injected per-call delay.
async fn round_trips() {
    const DELAY_MS: u64 = 40;
    const REPS: usize = 5;
    println!(
        "store round trips per request (calls total / sequential, from +{DELAY_MS} ms per call):"
    );
    let names = [
        "POST /api/v1/auth/login 200",
        "POST /api/v1/auth/login 401",
        "GET /api/v1/auth/session 200",
        "POST /api/v1/auth/logout 204",
        "POST /api/agent/interact, new task",
        "POST /api/agent/interact, next step",
        "POST /api/session/init (new session)",
        "GET /api/session (list)",
        "GET /api/session/{id}/messages",
        "GET /api/v1/user/preferences",
        "GET /api/session/{id}",
    ];
    let llm = api_tests::scripted::ScriptedLlm::start().await;
    let sid = uuid::Uuid::new_v4().to_string();
    let body = json!({ "sessionId": sid, "url": "https://www.example.com/", "query": "Press the button",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Press me" }] });
    for (k, name) in names.iter().enumerate() {
        let mut medians = Vec::new();
        let mut calls = 0;
        for delay in [0, DELAY_MS] {
            let (app, table) = delayed_app(Duration::from_millis(delay), &llm.base_url).await;
            let mut times = Vec::new();
            for _ in 0..REPS {
                let token = app.login("ada@acme.com", "s3cret-password").await;
                llm.push([api_tests::scripted::Reply::action("Press it.", "click(10)")]);
                let mut next = body.clone();
                if k >= 8 {
                    let init = json!({ "sessionId": sid, "url": "https://www.example.com/", "domain": "" });
                    app.send_json(reqwest::Method::POST, "/api/session/init", &token, &init)
                        .await;
                }
                if k == 5 {
                    llm.push([api_tests::scripted::Reply::action("Press it.", "click(10)")]);
                    let first = interact(&app, &token, &body).await;
                    next["taskId"] = first["taskId"].clone();
                    next["lastActionStatus"] = json!("success");
                }
                let (c, ms) = measure(&table, || async {
                    match k {
                        0 => assert_eq!(
                            app.login_status("ada@acme.com", "s3cret-password").await,
                            200
                        ),
                        1 => assert_eq!(
                            app.login_status("ada@acme.com", "wrong-password").await,
                            401
                        ),
                        2 => assert_eq!(app.get_session(&token).await.status(), 200),
                        3 => assert_eq!(app.logout(Some(&token)).await.status(), 204),
                        4 => assert_eq!(interact(&app, &token, &body).await["action"], "click(10)"),
                        5 => assert_eq!(interact(&app, &token, &next).await["action"], "click(10)"),
                        6 => {
                            let init = json!({ "sessionId": uuid::Uuid::new_v4().to_string(), "url": "https://www.example.com/", "domain": "" });
                            assert_eq!(app.send_json(reqwest::Method::POST, "/api/session/init", &token, &init).await.status(), 200);
                        }
                        7 => assert_eq!(app.send(reqwest::Method::GET, "/api/session", Some(&token)).await.status(), 200),
                        8 => assert_eq!(app.send(reqwest::Method::GET, &format!("/api/session/{sid}/messages"), Some(&token)).await.status(), 200),
                        9 => assert_eq!(app.send(reqwest::Method::GET, "/api/v1/user/preferences", Some(&token)).await.status(), 200),
                        _ => assert_eq!(app.send(reqwest::Method::GET, &format!("/api/session/{sid}"), Some(&token)).await.status(), 200),
                    }
                })
                .await;
                // Keep the failure counter from reaching the limit.
                if k == 1 {
                    app.login("ada@acme.com", "s3cret-password").await;
                }
                calls = c;
                times.push(ms);
            }
            times.sort_by(f64::total_cmp);
            medians.push(times[REPS / 2]);
            app.stop().await;
        }
        let sequential = ((medians[1] - medians[0]) / DELAY_MS as f64).round();
        println!("  {name:<58} calls={calls:<3} sequential={sequential}");
    }
}

/// One interact request; the answer body.
async fn interact(app: &TestApp, token: &str, body: &serde_json::Value) -> serde_json::Value {
    app.client
        .post(app.url("/api/agent/interact"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

/// The corpus directory (beside the repository).
fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// Annotates a page the way the extension's fallback mode does: every link, button, input,
/// select, textarea and element with an interactive ARIA role gets `data-element-id` 0..N in
/// document order, and the page's own `id`/`data-id`/`data-element-id` attributes are dropped.
/// Returns the annotated HTML and N.
fn annotate(html: &str) -> (String, usize) {
    use std::cell::Cell;
    use std::rc::Rc;
    const ROLES: &[&str] = &[
        "button",
        "link",
        "checkbox",
        "radio",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tab",
        "switch",
        "slider",
        "option",
        "combobox",
        "textbox",
        "searchbox",
        "treeitem",
        "spinbutton",
    ];
    let n = Rc::new(Cell::new(0usize));
    let counter = n.clone();
    let out = lol_html::rewrite_str(
        html,
        lol_html::RewriteStrSettings {
            element_content_handlers: vec![lol_html::element!("*", move |el| {
                // Only the extension's ids are element ids (pages use these attributes too).
                el.remove_attribute("id");
                el.remove_attribute("data-id");
                el.remove_attribute("data-element-id");
                let tag = el.tag_name().to_ascii_lowercase();
                let role = el
                    .get_attribute("role")
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                if matches!(
                    tag.as_str(),
                    "a" | "button" | "input" | "select" | "textarea"
                ) || ROLES.contains(&role.as_str())
                {
                    let id = counter.get();
                    el.set_attribute("data-element-id", &id.to_string())?;
                    counter.set(id + 1);
                }
                Ok(())
            })],
            ..lol_html::RewriteStrSettings::new()
        },
    )
    .unwrap_or_else(|_| html.to_owned());
    (out, n.get())
}

/// Prompt tokens of raw vs rendered pages, and the share of element ids kept.
fn prompt_tokens() {
    use shared::agent::page::Page;
    use shared::agent::render::{ids_in, render, Budget};
    let Ok(bpe) = tiktoken_rs::o200k_base() else {
        println!("prompt tokens: tokenizer unavailable");
        return;
    };
    let budget = Budget {
        max_tokens: 6_000,
        chars_per_token: shared::agent::render::DEFAULT_CHARS_PER_TOKEN,
    };
    let count = |s: &str| bpe.encode_with_special_tokens(s).len();
    println!(
        "prompt tokens per page (o200k; page budget {} tokens at {} chars/token):",
        budget.max_tokens, budget.chars_per_token
    );
    println!(
        "  {:<34} {:>9} {:>9} {:>7} {:>9} {:<20}",
        "page", "raw", "rendered", "ids", "ids kept", "form"
    );
    let mut names: Vec<_> = std::fs::read_dir(corpus_dir().join("pages"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    let (mut raw_total, mut rendered_total, mut chars_total, mut ids_total, mut kept_total) =
        (0, 0, 0, 0, 0);
    let mut overhead = Vec::new();
    let mut largest = (0, String::new());
    for path in &names {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let html = String::from_utf8_lossy(&bytes);
        let (annotated, n) = annotate(&html);
        let t = Instant::now();
        let Ok(page) = Page::from_dom(&annotated) else {
            println!("  {:<34} refused", path.display());
            continue;
        };
        let rendered = render(&page, budget);
        overhead.push(elapsed_ms(t));
        let shown = ids_in(&rendered);
        let kept = (0..n).filter(|i| shown.contains(&i.to_string())).count();
        let (raw, r) = (count(&annotated), count(&rendered.text));
        if r > largest.0 {
            let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
            largest = (r, format!("{name} ({})", rendered.form));
        }
        raw_total += raw;
        rendered_total += r;
        chars_total += rendered.text.chars().count();
        ids_total += n;
        kept_total += kept;
        let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
        println!(
            "  {name:<34} {raw:>9} {r:>9} {n:>7} {:>8.1}% {:<20}",
            100.0 * kept as f64 / n.max(1) as f64,
            rendered.form
        );
    }
    println!(
        "  {:<34} {raw_total:>9} {rendered_total:>9} {ids_total:>7} {:>8.1}%   ({:.1}x fewer tokens; {:.2} rendered chars/token)",
        "all pages",
        100.0 * kept_total as f64 / ids_total.max(1) as f64,
        raw_total as f64 / rendered_total.max(1) as f64,
        chars_total as f64 / rendered_total.max(1) as f64
    );
    println!(
        "  largest rendered page: {} tokens (o200k) for a budget of {}: {}",
        largest.0, budget.max_tokens, largest.1
    );
    stats("parse + render one annotated corpus page", overhead);
    tree_retention(budget);

    let mut names: Vec<_> = std::fs::read_dir(corpus_dir().join("templatized"))
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".templatized.txt"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let (mut raw_total, mut rendered_total, mut ids_total, mut kept_total) = (0, 0, 0, 0);
    for path in &names {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(page) = Page::from_dom(&text) else {
            println!("  {:<34} refused", path.display());
            continue;
        };
        let rendered = render(&page, budget);
        let shown = ids_in(&rendered);
        let kept = page.ids.iter().filter(|id| shown.contains(*id)).count();
        if kept < page.ids.len() {
            let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
            println!(
                "    templatized: {name:<40} {:>5} ids {:>6.1}% kept ({})",
                page.ids.len(),
                100.0 * kept as f64 / page.ids.len() as f64,
                rendered.form
            );
        }
        raw_total += count(&text);
        rendered_total += count(&rendered.text);
        ids_total += page.ids.len();
        kept_total += kept;
    }
    println!(
        "  {:<34} {raw_total:>9} {rendered_total:>9} {ids_total:>7} {:>8.1}%   ({} templatized strings)",
        "templatized strings",
        100.0 * kept_total as f64 / ids_total.max(1) as f64,
        names.len()
    );
}

/// Element ids kept when the corpus pages arrive as the extension's `interactiveTree` (its
/// default mode): one node per annotated element, named by its text or label, the first 30 in
/// the viewport and the rest below it, rendered at the default budget.
fn tree_retention(budget: shared::agent::render::Budget) {
    use shared::agent::page::{Page, PageContent, TreeNode};
    use shared::agent::render::{ids_in, render};
    let role = |tag: &str| match tag {
        "a" => "link",
        "button" => "btn",
        "input" | "textarea" => "inp",
        "select" => "sel",
        _ => "el",
    };
    let mut names: Vec<_> = std::fs::read_dir(corpus_dir().join("pages"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    let (mut ids_total, mut kept_total, mut worst) = (0, 0, (100.0, String::new()));
    for path in &names {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let (annotated, _) = annotate(&String::from_utf8_lossy(&bytes));
        let Ok(page) = Page::from_dom(&annotated) else {
            continue;
        };
        let PageContent::Dom { tree, .. } = &page.content else {
            continue;
        };
        let nodes: Vec<TreeNode> = tree
            .elements()
            .enumerate()
            .map(|(order, (k, tag, id))| TreeNode {
                i: id.to_owned(),
                r: role(tag).into(),
                n: tree.label_of(k, 100),
                v: None,
                s: None,
                xy: Some([
                    20.0,
                    if order < 30 {
                        100.0
                    } else {
                        2000.0 + order as f64
                    },
                ]),
                r#box: None,
            })
            .collect();
        let n = nodes.len();
        let tree_page = Page::from_tree(nodes, Some((1280.0, 800.0)));
        let rendered = render(&tree_page, budget);
        let kept = ids_in(&rendered).intersection(&tree_page.ids).count();
        ids_total += n;
        kept_total += kept;
        let share = 100.0 * kept as f64 / n.max(1) as f64;
        if share < 100.0 {
            let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
            println!(
                "    as a tree: {name:<34} {n:>5} nodes {share:>6.1}% kept ({})",
                rendered.form
            );
        }
        if share < worst.0 {
            let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
            worst = (share, format!("{name} ({n} nodes, {})", rendered.form));
        }
    }
    println!(
        "  {:<34} {:>29} {ids_total:>7} {:>8.1}%   (lowest: {:.1}% on {})",
        "corpus pages as interactive trees",
        "",
        100.0 * kept_total as f64 / ids_total.max(1) as f64,
        worst.0,
        worst.1
    );
}

/// A synthetic tree of `n` nodes, a few in the viewport.
fn big_tree(n: usize) -> serde_json::Value {
    let roles = ["link", "btn", "inp", "chk", "sel", "tab", "menu"];
    serde_json::Value::Array(
        (0..n)
            .map(|i| {
                json!({ "i": i.to_string(), "r": roles[i % roles.len()], "n": format!("Product {i} - a fairly long accessible name"),
                        "xy": [100, if i < 40 { 50 + i * 10 } else { 5000 + i }], "box": [80, 40, 120, 20] })
            })
            .collect(),
    )
}

/// A 200 000-character dom: the largest corpus page, annotated, without scripts, styles and
/// comments (as the extension's simplifier sends it), cut.
fn big_dom() -> String {
    let path = corpus_dir().join("pages/peb__amazon-com-stress.html");
    let html = std::fs::read_to_string(path).unwrap_or_default();
    let (annotated, _) = annotate(&html);
    let stripped = lol_html::rewrite_str(
        &annotated,
        lol_html::RewriteStrSettings {
            element_content_handlers: vec![lol_html::element!(
                "script, style, noscript, svg",
                |el| {
                    el.remove();
                    Ok(())
                }
            )],
            document_content_handlers: vec![lol_html::doc_comments!(|c| {
                c.remove();
                Ok(())
            })],
            ..lol_html::RewriteStrSettings::new()
        },
    )
    .unwrap_or(annotated);
    stripped.chars().take(200_000).collect()
}

/// Interact with a zero-latency scripted model on the embedded store: request time and server
/// overhead (request time minus model time) for a new task and a next step; the interact
/// binary's cold start and peak RSS on the 200k-character dom.
async fn interact_overhead(runs: usize) {
    use api_tests::scripted::{Reply, ScriptedLlm};
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir().expect("tmp");
    let opts = AppOptions {
        data_dir: Some(dir.path().to_owned()),
        max_body_bytes: 5 * 1024 * 1024,
        ..AppOptions::with_llm(&llm.base_url)
    }
    .set("INTERACT_RATE_PER_USER", "100000")
    .set("INTERACT_RATE_PER_TENANT", "100000")
    .set("MAX_TASK_STEPS", "1000");
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    let token = app.login("ada@acme.com", "s3cret-password").await;
    let dom = big_dom();
    // An element the model can see (ids inside noscript and the like are not on the page).
    let dom_target = shared::agent::page::Page::from_dom(&dom)
        .map(|p| p.skeleton.iter().find_map(|e| e.id.clone()))
        .ok()
        .flatten()
        .unwrap_or_default();
    let pages = [
        (
            "2000-node interactiveTree",
            json!({ "interactiveTree": big_tree(2000) }),
            "5".to_owned(),
        ),
        ("200000-char dom", json!({ "dom": dom }), dom_target.clone()),
    ];
    for (name, page, target) in &pages {
        let action = format!("click({target})");
        let mut body = page.clone();
        body["url"] = json!("https://www.example.com/");
        body["query"] = json!("Open the first product");
        // The extension always sends its session id.
        body["sessionId"] = json!(uuid::Uuid::new_v4().to_string());
        let mut new_total = Vec::new();
        let mut new_overhead = Vec::new();
        let mut next_total = Vec::new();
        let mut next_overhead = Vec::new();
        let mut task_id = serde_json::Value::Null;
        for k in 0..(runs * 2) {
            llm.push([Reply::action("Open it.", &action)]);
            let mut b = body.clone();
            let continuing = k % 2 == 1;
            if continuing {
                b["taskId"] = task_id.clone();
                b["lastActionStatus"] = json!("success");
            }
            let t = Instant::now();
            let r: serde_json::Value = app
                .client
                .post(app.url("/api/agent/interact"))
                .bearer_auth(&token)
                .json(&b)
                .send()
                .await
                .expect("send")
                .json()
                .await
                .expect("json");
            let total = elapsed_ms(t);
            let llm_ms = r["metrics"]["llmMs"].as_f64().unwrap_or(0.0);
            assert_eq!(r["action"], action.as_str(), "{r}");
            if continuing {
                next_total.push(total);
                next_overhead.push(total - llm_ms);
            } else {
                task_id = r["taskId"].clone();
                new_total.push(total);
                new_overhead.push(total - llm_ms);
            }
        }
        stats(&format!("interact {name}, new task: request"), new_total);
        stats(
            &format!("interact {name}, new task: server overhead"),
            new_overhead,
        );
        stats(&format!("interact {name}, next step: request"), next_total);
        stats(
            &format!("interact {name}, next step: server overhead"),
            next_overhead,
        );
    }
    app.stop().await;

    // The function binary under the runtime emulator: cold start and peak memory on the
    // largest requests it accepts.
    let deep = format!(
        "{}<a id=\"1\">go</a>",
        "<b><i data-id=\"x\">".repeat(499_000 / 20)
    );
    let wide = format!(
        "T1: <li><a id=$1>{}$2</a></li>\n\n<ul>{}</ul>",
        "w".repeat(60),
        (0..20_000)
            .map(|i| format!("{{T1({i},\"item {i}\")}}"))
            .collect::<String>()
            .chars()
            .take(490_000)
            .collect::<String>()
    );
    let cases = [
        ("200k dom", json!({ "dom": big_dom() }), runs.min(10)),
        // ~5 MB of tree, all of it "visible".
        (
            "5 MB tree (45 000 nodes)",
            json!({ "interactiveTree": (0..45_000).map(|i| json!({ "i": i.to_string(), "r": "link",
                "n": format!("Visible link {i} with a long accessible name for the budget"), "v": "value" })).collect::<Vec<_>>() }),
            3,
        ),
        ("500k nested dom", json!({ "dom": deep }), 3),
        ("490k templatized dom", json!({ "dom": wide }), 3),
    ];
    for (name, page, n) in cases {
        let (mut init, mut served, mut rss) = (Vec::new(), Vec::new(), Vec::new());
        let mut body = page;
        body["url"] = json!("https://www.example.com/");
        body["query"] = json!("Open the first product");
        let bytes = body.to_string().len();
        for _ in 0..n {
            body["sessionId"] = json!(uuid::Uuid::new_v4().to_string());
            llm.push([Reply::action("Wait.", "wait(1)")]);
            let bearer = format!("Bearer {token}");
            let event = apigw_event(
                "POST",
                "/api/agent/interact",
                &[
                    ("authorization", &bearer),
                    ("content-type", "application/json"),
                ],
                &body.to_string(),
            );
            let env = vec![
                ("LLM_BASE_URL".to_owned(), llm.base_url.clone()),
                ("LLM_API_KEY".to_owned(), "test-llm-key".to_owned()),
                ("MAX_BODY_BYTES".to_owned(), (6 * 1024 * 1024).to_string()),
            ];
            let (i, f, r) = function_start("agent-interact", &event, dir.path(), &env).await;
            init.push(i);
            served.push(f);
            rss.extend(r);
        }
        if name == "200k dom" {
            stats("agent-interact spawn -> waiting for next invocation", init);
        }
        stats(
            &format!(
                "agent-interact spawn -> first answer ({name}, {} KB body)",
                bytes / 1024
            ),
            served,
        );
        if let Some(max) = rss.iter().max() {
            println!(
                "{:<58} max={max} KiB",
                format!("agent-interact peak RSS ({name})")
            );
        }
    }
}
