//! local-api as a process under abuse: a seeded fuzz over interact's body (random nesting,
//! sizes, unicode, templates, trees, client reports), parallel logins, and the connection
//! limits. No request may abort the process, every answer is the contract's flat JSON, and
//! memory stays bounded.

use std::collections::BTreeMap;
use std::time::Duration;

use api_tests::process::{
    access_token, demo_credentials, login, peak_rss_kib, start_local_api_with, LocalApiProcess,
};
use api_tests::scripted::{Reply, ScriptedLlm};
use api_tests::TestApp;
use futures::future::join_all;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Cases the fuzz sends (fixed, with a fixed seed: the same bodies on every run).
const FUZZ_CASES: usize = 240;
/// Peak memory local-api may reach while the fuzz and the parallel logins run (debug build).
const RSS_LIMIT_KIB: u64 = 400 * 1024;

async fn local_api(
    llm: &ScriptedLlm,
    extra: &[(&str, &str)],
) -> (LocalApiProcess, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tmp");
    let mut env: Vec<(String, String)> = [
        ("STORE", "memory"),
        ("LLM_API_KEY", "fuzz-key"),
        ("LLM_MODEL", "scripted-model"),
        ("INTERACT_RATE_PER_USER", "100000"),
        ("INTERACT_RATE_PER_TENANT", "100000"),
        ("MAX_TASK_STEPS", "1000"),
        ("RUST_LOG", "warn"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    env.push(("LLM_BASE_URL".into(), llm.base_url.clone()));
    let api = start_local_api_with(dir.path(), std::process::Stdio::null(), &env).await;
    (api, dir)
}

// ---------------------------------------------------------------- generators

const WORDS: &[&str] = &[
    "Buy",
    "now",
    "Ünïcödé",
    "日本語",
    "🙂",
    "</page>",
    "<page>",
    "\n\nTask: pay",
    "\"",
    "'",
    "`",
    "{T1(",
    ")}",
    "$1",
    "id=",
    "\u{0}",
    "\u{202e}",
    "a\tb",
    "&amp;",
    "<script>",
];

fn text(rng: &mut StdRng, max_words: usize) -> String {
    let n = rng.gen_range(0..=max_words);
    (0..n)
        .map(|_| WORDS[rng.gen_range(0..WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Random JSON of bounded depth and size (sometimes deeper than the parser accepts).
fn json_value(rng: &mut StdRng, depth: usize) -> Value {
    match rng.gen_range(0..8) {
        0 => Value::Null,
        1 => json!(rng.gen::<bool>()),
        2 => json!(rng.gen_range(-1e12..1e12)),
        3 | 4 => json!(text(rng, 8)),
        5 if depth < 6 => Value::Array(
            (0..rng.gen_range(0..5))
                .map(|_| json_value(rng, depth + 1))
                .collect(),
        ),
        6 if depth < 6 => Value::Object(
            (0..rng.gen_range(0..5))
                .map(|i| (format!("k{i}"), json_value(rng, depth + 1)))
                .collect(),
        ),
        _ => json!(rng.gen_range(0..100)),
    }
}

fn nested_json(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

const TAGS: &[&str] = &[
    "div", "a", "button", "b", "input", "select", "svg", "iframe", "script", "li", "h1", "page",
];

/// Random (often broken) HTML of roughly `size` characters.
fn html(rng: &mut StdRng, size: usize) -> String {
    let mut out = String::new();
    let mut id = 0;
    if rng.gen_ratio(1, 4) {
        // Deep nesting, closed or not.
        let depth = rng.gen_range(1..=size / 8 + 1);
        let tag = TAGS[rng.gen_range(0..TAGS.len())];
        out.push_str(&format!("<{tag} id=\"{id}\">").repeat(depth.min(60_000)));
        if rng.gen() {
            out.push_str(&format!("</{tag}>").repeat(depth.min(60_000)));
        }
        return out;
    }
    while out.len() < size {
        let tag = TAGS[rng.gen_range(0..TAGS.len())];
        match rng.gen_range(0..6) {
            0 => out.push_str(&text(rng, 6)),
            1 => out.push_str(&format!("</{tag}>")),
            2 => out.push_str(&format!("<{tag}/>")),
            _ => {
                id += 1;
                let attr = ["id", "data-id", "data-element-id", "aria-label", "title"]
                    [rng.gen_range(0..5)];
                out.push_str(&format!("<{tag} {attr}=\"{id}\">{}", text(rng, 3)));
            }
        }
    }
    out
}

/// A templatized string: random templates, calls with random (sometimes huge) arity.
fn templatized(rng: &mut StdRng, size: usize) -> String {
    let templates = rng.gen_range(0..4);
    let mut out = String::new();
    for t in 1..=templates {
        let body = match rng.gen_range(0..3) {
            0 => "<a id=$1>$2</a>".to_owned(),
            1 => format!(
                "<li id=$1>{}$3$12</li>",
                "x".repeat(rng.gen_range(0..20_000))
            ),
            _ => text(rng, 10),
        };
        out.push_str(&format!("T{t}: {body}\n"));
    }
    out.push('\n');
    // Some pages call with a huge arity (refused above 128 arguments).
    let wide = if rng.gen_ratio(1, 4) { 10 } else { 1_000_000 };
    while out.len() < size {
        let t = rng.gen_range(1..=templates.max(1) + 1);
        let args = match rng.gen_range(0..wide) {
            0 => rng.gen_range(100..300),
            _ => rng.gen_range(0..4),
        };
        let list: Vec<String> = (0..args)
            .map(|i| {
                if rng.gen() {
                    i.to_string()
                } else {
                    json!(text(rng, 2)).to_string()
                }
            })
            .collect();
        let close = if rng.gen_ratio(1, 6) { "" } else { ")}" };
        out.push_str(&format!("{{T{t}({}{close}", list.join(",")));
    }
    out
}

const ROLES: [&str; 4] = ["btn", "link", "inp", ""];

fn tree(rng: &mut StdRng, count: usize) -> Value {
    // Most trees are well-formed; some carry broken nodes.
    let broken = if rng.gen_ratio(1, 4) { 12 } else { 1_000_000 };
    Value::Array(
        (0..count)
            .map(|i| match rng.gen_range(0..broken) {
                0 => json_value(rng, 3),
                1 => json!({ "i": text(rng, 2), "r": 5, "n": null }),
                _ => json!({ "i": i.to_string(), "r": ROLES[i % 4],
                    "n": text(rng, 12), "v": text(rng, 4), "s": "checked,disabled",
                    "xy": [rng.gen_range(-10.0..2000.0), rng.gen_range(-10.0..9000.0)] }),
            })
            .collect(),
    )
}

const STATUSES: [&str; 3] = ["success", "failure", "pending"];
const MODES: [&str; 2] = ["semantic", "hybrid"];

/// One fuzz case: a body (JSON or raw) and an optional idempotency key.
fn case(rng: &mut StdRng, tasks: &[String]) -> (Vec<u8>, Option<String>) {
    if rng.gen_ratio(1, 15) {
        let raw = match rng.gen_range(0..4) {
            0 => nested_json(rng.gen_range(100..5_000)).into_bytes(),
            1 => (0..rng.gen_range(0..2_000))
                .map(|_| rng.gen::<u8>())
                .collect(),
            2 => Vec::new(),
            _ => json_value(rng, 0).to_string().into_bytes(),
        };
        return (raw, None);
    }
    let mut body = serde_json::Map::new();
    // Mostly valid fields, so that most cases reach the page and the model; each field is
    // sometimes wrong.
    let url = match rng.gen_range(0..16) {
        0 => json!(text(rng, 3)),
        1 => json!(format!(
            "https://x.example/{}",
            "p".repeat(rng.gen_range(0..5_000))
        )),
        2 => json_value(rng, 4),
        _ => json!("https://shop.example.com/item?q=1"),
    };
    body.insert("url".into(), url);
    let query = match rng.gen_range(0..16) {
        0 => json!(""),
        1 => json!("q".repeat(rng.gen_range(9_990..10_010))),
        2 => json_value(rng, 3),
        _ => json!(text(rng, 10) + " find it"),
    };
    body.insert("query".into(), query);
    let size = [100, 2_000, 50_000, 300_000, 499_000][rng.gen_range(0..5)];
    match rng.gen_range(0..10) {
        0..=2 => {
            let count = [1, 20, 2_000, 20_000][rng.gen_range(0..4)];
            body.insert("interactiveTree".into(), tree(rng, count));
        }
        3..=4 => {
            body.insert("dom".into(), json!(templatized(rng, size)));
        }
        5 => {
            body.insert("dom".into(), json_value(rng, 2));
        }
        _ => {
            body.insert("dom".into(), json!(html(rng, size)));
        }
    }
    let wrong = |rng: &mut StdRng| rng.gen_ratio(1, 12);
    for field in [
        "pageTitle",
        "lastActionStatus",
        "lastActionError",
        "lastActionResult",
        "domChanges",
        "clientObservations",
        "viewport",
        "domMode",
    ] {
        if !rng.gen_ratio(1, 3) {
            continue;
        }
        let v = if wrong(rng) {
            json_value(rng, 0)
        } else {
            match field {
                "pageTitle" => json!(text(rng, 20)),
                "lastActionStatus" => json!(STATUSES[rng.gen_range(0..3)]),
                "lastActionError" => {
                    json!({ "message": "m".repeat(rng.gen_range(0..200_000)), "code": text(rng, 2), "elementId": json_value(rng, 2) })
                }
                "lastActionResult" => {
                    json!({ "success": rng.gen::<bool>(), "actualState": json_value(rng, 1) })
                }
                "domChanges" => {
                    json!({ "addedCount": json_value(rng, 2), "dropdownOptions": vec![text(rng, 3); rng.gen_range(0..500)] })
                }
                "clientObservations" => {
                    json!({ "didUrlChange": rng.gen::<bool>(), "x": json_value(rng, 2) })
                }
                "viewport" => json!({ "width": rng.gen_range(1..3000), "height": 800 }),
                _ => json!(MODES[rng.gen_range(0..2)]),
            }
        };
        body.insert(field.into(), v);
    }
    if !tasks.is_empty() && rng.gen_ratio(1, 3) {
        body.insert("taskId".into(), json!(tasks[rng.gen_range(0..tasks.len())]));
    } else if rng.gen_ratio(1, 30) {
        body.insert("taskId".into(), json!(text(rng, 1)));
    }
    if rng.gen_ratio(1, 3) {
        body.insert("sessionId".into(), json!(uuid::Uuid::new_v4().to_string()));
    }
    let key = rng
        .gen_ratio(1, 5)
        .then(|| format!("k{}", rng.gen_range(0..20)));
    (Value::Object(body).to_string().into_bytes(), key)
}

/// Checks one answer: a flat success or a flat 4xx error. Returns its task id when it has one.
async fn check_answer(r: reqwest::Response, n: usize) -> Option<String> {
    let status = r.status().as_u16();
    let bytes = r.bytes().await.expect("body");
    let v: Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
        panic!(
            "case {n}: {status} answered non-JSON {:?}",
            String::from_utf8_lossy(&bytes)
        )
    });
    assert!(
        matches!(status, 200 | 400 | 404 | 409 | 413 | 422),
        "case {n}: status {status}: {v}"
    );
    if status == 200 {
        assert_eq!(v["success"], true, "case {n}: {v}");
        assert!(
            v["action"].is_string() && v["thought"].is_string(),
            "case {n}: {v}"
        );
        v["taskId"].as_str().map(str::to_owned)
    } else {
        assert_eq!(v["success"], false, "case {n}: {v}");
        assert!(
            v["code"].is_string() && v["message"].is_string(),
            "case {n}: {v}"
        );
        assert!(v.get("data").is_none(), "flat: {v}");
        if std::env::var("FUZZ_DEBUG").is_ok() {
            println!(
                "{status} {}",
                v["message"]
                    .as_str()
                    .unwrap_or("")
                    .chars()
                    .take(100)
                    .collect::<String>()
            );
        }
        None
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn fuzzed_interact_bodies_never_abort_the_server_and_get_flat_answers() {
    let llm = ScriptedLlm::start().await;
    llm.fallback(Reply::action("Waiting for the page.", "wait(1)"));
    let (mut api, _dir) = local_api(&llm, &[]).await;
    let (email, password) = demo_credentials(&api.output);
    let token = access_token(&api.base, &email, &password).await;
    let client = shared::adapters::tls::client();
    let mut rng = StdRng::seed_from_u64(0x5eed_1d0c);
    let mut tasks: Vec<String> = Vec::new();
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut n = 0;
    while n < FUZZ_CASES {
        // Four at a time: the server is also attacked in parallel.
        let batch: Vec<_> = (0..4).map(|_| case(&mut rng, &tasks)).collect();
        let sends = batch.into_iter().map(|(body, key)| {
            let mut req = client
                .post(format!("{}/api/agent/interact", api.base))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(body);
            if let Some(k) = key {
                req = req.header("Idempotency-Key", k);
            }
            req.send()
        });
        for r in join_all(sends).await {
            n += 1;
            let r = r.unwrap_or_else(|e| panic!("case {n}: no answer ({e}): the server died?"));
            *statuses.entry(r.status().as_u16()).or_default() += 1;
            if let Some(task) = check_answer(r, n).await {
                tasks.push(task);
            }
        }
    }
    assert!(
        api.child.try_wait().expect("status").is_none(),
        "local-api is still running"
    );
    let session = client
        .get(format!("{}/api/v1/auth/session", api.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("session");
    assert_eq!(session.status(), 200);
    let rss = peak_rss_kib(api.child.id().expect("pid")).expect("rss");
    println!(
        "fuzz: {n} cases, statuses {statuses:?}, peak RSS {} MiB",
        rss / 1024
    );
    assert!(statuses.get(&200).is_some_and(|&c| c > 20), "{statuses:?}");
    assert!(statuses.get(&400).is_some_and(|&c| c > 20), "{statuses:?}");
    assert!(rss < RSS_LIMIT_KIB, "peak RSS {} MiB", rss / 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn parallel_logins_hash_a_bounded_number_at_a_time() {
    let llm = ScriptedLlm::start().await;
    let (mut api, _dir) = local_api(
        &llm,
        &[
            ("LOGIN_MAX_FAILURES_PER_EMAIL", "10000"),
            ("LOGIN_MAX_FAILURES_PER_ADDRESS", "100000"),
        ],
    )
    .await;
    let (email, password) = demo_credentials(&api.output);
    let before = peak_rss_kib(api.child.id().expect("pid")).expect("rss");
    // 150 logins at once, right and wrong passwords: each one runs argon2 (19 MiB).
    let logins = (0..150).map(|i| {
        let pw = if i % 2 == 0 {
            password.clone()
        } else {
            format!("wrong-{i}")
        };
        let (base, email) = (api.base.clone(), email.clone());
        async move { login(&base, &email, &pw).await.status().as_u16() }
    });
    let results = join_all(logins).await;
    assert_eq!(results.iter().filter(|&&s| s == 200).count(), 75);
    assert_eq!(results.iter().filter(|&&s| s == 401).count(), 75);
    let after = peak_rss_kib(api.child.id().expect("pid")).expect("rss");
    println!(
        "150 parallel logins: peak RSS {} MiB → {} MiB",
        before / 1024,
        after / 1024
    );
    // One working buffer per core, not one per login.
    assert!(
        after < before + 8 * 20 * 1024,
        "peak RSS grew from {} MiB to {} MiB",
        before / 1024,
        after / 1024
    );
    assert!(api.child.try_wait().expect("status").is_none());
}

#[tokio::test]
async fn a_client_that_trickles_its_headers_is_cut_off() {
    let app = TestApp::spawn().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let api = std::sync::Arc::new(local_api::LocalApi::new(app.ctx.clone()));
    tokio::spawn(local_api::serve_with(
        listener,
        api,
        std::future::pending(),
        local_api::ServeOptions {
            header_read_timeout: Duration::from_millis(300),
        },
    ));
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /api/session HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .expect("write");
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the connection was closed by the server");
}

#[tokio::test]
async fn oversized_uris_and_headers_get_the_flat_error_body() {
    let app = TestApp::spawn().await;
    let long = format!("/api/session?x={}", "a".repeat(9_000));
    let r = app
        .client
        .get(app.url(&long))
        .send()
        .await
        .expect("request");
    let v = api_tests::expect_error(r, 414, "URI_TOO_LONG").await;
    assert!(v["message"].as_str().is_some_and(|m| m.contains("8192")));
    let r = app
        .client
        .get(app.url("/api/session"))
        .header("x-filler", "b".repeat(11_000))
        .send()
        .await
        .expect("request");
    api_tests::expect_error(r, 431, "HEADERS_TOO_LARGE").await;
}
