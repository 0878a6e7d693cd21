//! Interact with a zero-latency scripted model: request time, server overhead, cold start
//! and peak memory of the interact binary.

use std::collections::BTreeMap;
use std::time::Instant;

use api_tests::{apigw_event, AppOptions, TestApp};
use serde_json::json;

use super::pages::{big_dom, big_tree};
use super::starts::function_start;
use super::{elapsed_ms, interact_bytes, stats};

/// Interact with a zero-latency scripted model on the embedded store: request time and server
/// overhead (request time minus model time) for a new task and a next step; the interact
/// binary's cold start and peak RSS on the 200k-character dom.
pub async fn interact_overhead(runs: usize) {
    super::timing::install();
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
    // The function binaries below check the token against the system clock.
    app.clock
        .set(shared::clock::Clock::now(&shared::clock::SystemClock));
    let token = app.login("ada@acme.com", "s3cret-password").await;
    let dom = big_dom();
    // An element the model can see (ids inside noscript and the like are not on the page).
    let dom_target = shared::agent::page::Page::from_dom(&dom)
        .map(|p| p.skeleton().iter().find_map(|e| e.id.clone()))
        .ok()
        .flatten()
        .unwrap_or_default();
    let pages = [
        (
            "tree",
            "2000-node interactiveTree",
            json!({ "interactiveTree": big_tree(2000) }),
            "5".to_owned(),
        ),
        (
            "dom",
            "200000-char dom",
            json!({ "dom": dom }),
            dom_target.clone(),
        ),
    ];
    // BENCH_PAGES=tree or dom: one of the two pages (both by default).
    let only = std::env::var("BENCH_PAGES").unwrap_or_default();
    let chosen = |key: &str| only.is_empty() || only.split(',').any(|p| p.trim() == key);
    for (_, name, page, target) in pages.iter().filter(|p| chosen(p.0)) {
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
        let mut task_id = String::new();
        let mut spans: [BTreeMap<String, Vec<f64>>; 2] = Default::default();
        // Both bodies written once (the next step's gets its task id put in): the client's
        // work between requests stays small, as the extension's is.
        const TASK: &str = "00000000-0000-4000-8000-0000000000aa";
        let new_body = body.to_string();
        let mut next = body.clone();
        next["taskId"] = json!(TASK);
        next["lastActionStatus"] = json!("success");
        let next_body = next.to_string();
        drop((body, next));
        super::timing::take();
        for k in 0..(runs * 2) {
            llm.push([Reply::action("Open it.", &action)]);
            let continuing = k % 2 == 1;
            let bytes = if continuing {
                next_body.replacen(TASK, &task_id, 1).into_bytes()
            } else {
                new_body.clone().into_bytes()
            };
            let t = Instant::now();
            let r = interact_bytes(&app, &token, bytes).await;
            let total = elapsed_ms(t);
            assert_eq!(r["action"], action.as_str(), "{r}");
            let timed = super::timing::take();
            // The model calls as the server timed them, to the microsecond (`metrics.llmMs`
            // is whole milliseconds: it would leave most of a fast model's time in).
            let llm_ms: f64 = timed
                .get("interact.model_call")
                .map_or(0.0, |calls| calls.iter().sum());
            for (span, ms) in timed {
                spans[usize::from(continuing)]
                    .entry(span)
                    .or_default()
                    .extend(ms);
            }
            if continuing {
                next_total.push(total);
                next_overhead.push(total - llm_ms);
            } else {
                task_id = r["taskId"].as_str().unwrap_or_default().to_owned();
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
        print_spans(&spans);
    }
    app.stop().await;
}

/// The interact function binary under the runtime emulator: cold start and peak memory on the
/// largest requests it accepts.
pub async fn interact_binary(runs: usize) {
    use api_tests::scripted::{Reply, ScriptedLlm};
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir().expect("tmp");
    let app = TestApp::spawn_with(
        AppOptions {
            data_dir: Some(dir.path().to_owned()),
            ..AppOptions::with_llm(&llm.base_url)
        }
        .set("INTERACT_RATE_PER_USER", "100000")
        .set("INTERACT_RATE_PER_TENANT", "100000"),
    )
    .await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    // The function binary checks the token against the system clock.
    app.clock
        .set(shared::clock::Clock::now(&shared::clock::SystemClock));
    let token = app.login("ada@acme.com", "s3cret-password").await;
    app.stop().await;
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
        // No node-count cap: the most nodes a 5 MB body holds, each as small as a node can be
        // (the memory of a tree grows with its node count more than with its bytes).
        (
            "5 MB of the smallest nodes (500 000)",
            json!({ "interactiveTree": (0..500_000).map(|i| json!({ "i": (i % 10).to_string() })).collect::<Vec<_>>() }),
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
                // The requests above counted against the same store's limits.
                ("INTERACT_RATE_PER_USER".to_owned(), "100000".to_owned()),
                ("INTERACT_RATE_PER_TENANT".to_owned(), "100000".to_owned()),
            ];
            let s = function_start("agent-interact", &event, dir.path(), &env).await;
            assert_eq!(s.answer["statusCode"], 200, "{}", s.answer);
            init.push(s.ready_ms);
            served.push(s.first_ms);
            rss.extend(s.rss_kib);
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

/// p50 of each timed span per request, new task and next step side by side (a span that
/// runs more than once in a request, like `snapshot.compress`, counts each run).
fn print_spans(spans: &[BTreeMap<String, Vec<f64>>; 2]) {
    let p50 = |v: Option<&Vec<f64>>| v.filter(|v| !v.is_empty()).map(|v| super::p50(v));
    let names: std::collections::BTreeSet<&String> =
        spans[0].keys().chain(spans[1].keys()).collect();
    for name in names {
        let show = |x: Option<f64>| x.map_or("-".to_owned(), |ms| format!("{ms:.3}ms"));
        println!(
            "    {name:<40} p50 new={:>10}  next={:>10}",
            show(p50(spans[0].get(name))),
            show(p50(spans[1].get(name)))
        );
    }
}
