//! Store round trips per route, from an injected per-call delay.

use std::sync::Arc;
use std::time::{Duration, Instant};

use api_tests::delayed::DelayedTable;
use api_tests::{AppOptions, TestApp};
use serde_json::json;
use shared::adapters::snapshots::MemorySnapshotStore;
use shared::adapters::table::TableBackend;
use shared::adapters::TableStore;
use shared::clock::{Clock, ManualClock, SystemClock};
use shared::context::Stores;

use super::{elapsed_ms, interact};

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
        s3: None,
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
pub async fn round_trips() {
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
