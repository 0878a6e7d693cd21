//! The server tool loop: tools run inside the request and the model is asked again, at most
//! three per request; what does not fit ends the round as a `SERVER` toolAction; a model that
//! only ever calls tools is stopped; `verifySuccess` feeds the finish check. And the Tavily
//! adapter itself against the scripted engine: the request it sends, retries, timeouts and
//! answers it cannot use.

use std::time::{Duration, Instant};

use api_tests::expect_error;
use api_tests::flows::{field, next, node, on_store, planned, start};
use api_tests::harness::harness_with;
use api_tests::scripted::{search_results, Reply, ScriptedSearch};
use secrecy::SecretString;
use serde_json::json;
use shared::adapters::tavily::TavilySearch;
use shared::config::{SearchConfig, SearchDepth};
use shared::ports::web_search::{SearchError, SearchQuery, WebSearch};

const SHOP: &str = "https://shop.example.com/cart";

async fn a_model_that_only_calls_tools_is_stopped(dynamodb: bool) {
    let search = ScriptedSearch::start().await;
    search.site(&[("Lamps", "https://shop.example.com/lamps", "All lamps.")]);
    let base = search.base_url.clone();
    let h = on_store(dynamodb, |o| {
        o.set("TAVILY_API_KEY", "k").set("TAVILY_BASE_URL", base)
    })
    .await;
    h.llm
        .fallback(Reply::action("Searching.", "googleSearch(\"lamp\")"));
    let page = || vec![node("1", "link", "Lamp")];
    let b1 = api_tests::flows::capable(start("Find a lamp", SHOP, page()));
    let r1 = h.ok(&b1).await;
    // Three tools, then the fourth does not fit: a SERVER round naming it.
    api_tests::flows::assert_server_round(
        &r1,
        &json!({ "toolName": "googleSearch", "toolType": "SERVER", "parameters": { "query": "lamp" } }),
    );
    assert_eq!(r1["metrics"]["llmCalls"], 4);
    // The deferred search runs first, then one more: six in a row (the deferral counts), and
    // the task is stopped.
    let r2 = h.ok(&next(&b1, &r1, SHOP, page())).await;
    assert_eq!(
        (r2["action"].as_str(), r2["status"].as_str()),
        (Some("fail()"), Some("failed"))
    );
    assert!(r2["thought"]
        .as_str()
        .expect("thought")
        .contains("without acting on the page"));
    assert_eq!(
        search.requests().len(),
        1,
        "a search made once is not sent again"
    );
    assert_eq!(h.task(&r1).await.stored.step_count, 7);
    let again = h.interact(&next(&b1, &r2, SHOP, page())).await;
    expect_error(again, 409, "TASK_COMPLETED").await;
}

async fn verify_success_feeds_the_finish_check(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o).await;
    let form = |v: &str| {
        vec![
            field("1", "textbox", "Search", v, ""),
            node("2", "btn", "Go"),
        ]
    };
    h.llm.push([
        planned(
            &["Type the product", "Open the result"],
            1,
            "Type it.",
            "setValue(1, \"lamp\")",
        ),
        Reply::action(
            "Check first.",
            "verifySuccess(\"the search box holds lamp\")",
        ),
        Reply::action("All done.", "finish()"),
    ]);
    h.llm
        .push_verdicts([Reply::verdict(true, 0.9, "the box shows lamp")]);
    let b1 = start("Search for a lamp", SHOP, form(""));
    let r1 = h.ok(&b1).await;
    let r2 = h.ok(&next(&b1, &r1, SHOP, form("lamp"))).await;
    assert_eq!(r2["verification"]["success"], true, "decided by the rules");
    assert_eq!(r2["status"], "completed");
    let asked = h.llm.verdict_requests();
    assert_eq!(
        asked.len(),
        1,
        "the finish check used the verifySuccess verdict"
    );
    let q = asked[0]["messages"][1]["content"].as_str().expect("q");
    assert!(
        q.contains("The agent says the task is complete because: the search box holds lamp"),
        "{q}"
    );
    assert!(h.llm.user_prompt(2).contains(
        "[server] verifySuccess(\"the search box holds lamp\") -> verified: the box shows lamp"
    ));

    // A verdict against it sends the model back to work.
    h.llm.push([
        planned(&["Type", "Open"], 1, "Type it.", "setValue(1, \"desk\")"),
        Reply::action("Check.", "verifySuccess(\"a desk result is open\")"),
        Reply::action("Done.", "finish()"),
        Reply::action("Open it.", "click(2)"),
    ]);
    h.llm
        .push_verdicts([Reply::verdict(false, 0.9, "no result is open")]);
    let b3 = start("Open a desk", SHOP, form(""));
    let r3 = h.ok(&b3).await;
    let r4 = h.ok(&next(&b3, &r3, SHOP, form("desk"))).await;
    assert_eq!(r4["action"], "click(2)");
    assert_eq!(h.llm.verdict_requests().len(), 2);
    let last = h.llm.requests().len() - 1;
    let retry = h.llm.requests()[last]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned();
    assert!(retry.contains("no result is open"), "{retry}");
}

async fn a_verdict_survives_a_server_round_and_is_stored_once(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o).await;
    h.llm.push([
        planned(&["Open the lamp", "Add it"], 1, "Open it.", "click(1)"),
        Reply::action("a", "remember(\"a\", \"1\")"),
        Reply::action("b", "remember(\"b\", \"2\")"),
        Reply::action("Keep a.", "exportToSession(\"a\")"),
        Reply::action("Keep b.", "exportToSession(\"b\")"),
        Reply::action("Add it.", "click(2)"),
    ]);
    let b1 = api_tests::flows::capable(start(
        "Add the lamp to the cart",
        SHOP,
        vec![node("1", "link", "Lamp")],
    ));
    let r1 = h.ok(&b1).await;
    let product = || vec![node("2", "btn", "Add to cart")];
    let lamp = "https://shop.example.com/lamp";
    let r2 = h.ok(&next(&b1, &r1, lamp, product())).await;
    assert_eq!(r2["verification"]["success"], true);
    assert_eq!(r2["toolAction"]["toolName"], "exportToSession", "deferred");
    // The client executed nothing: the verdict on the click stands (and is shown again).
    let r3 = h.ok(&next(&b1, &r2, lamp, product())).await;
    assert_eq!(r3["action"], "click(2)");
    assert_eq!(
        (
            &r3["verification"]["success"],
            &r3["verification"]["stepIndex"]
        ),
        (&json!(true), &json!(0))
    );
    let steps = h
        .app
        .ctx
        .store
        .steps("acme", r1["taskId"].as_str().expect("task"))
        .await
        .expect("steps");
    let verdicts = steps.iter().filter(|s| s.verification.is_some()).count();
    assert_eq!(verdicts, 1, "the reused verdict is not stored again");
    // Two exports in one request both reach the session.
    let mut b4 = start("Compare", SHOP, vec![node("1", "link", "Lamp")]);
    b4["sessionId"] = r1["sessionId"].clone();
    h.llm.push([Reply::action("Look.", "click(1)")]);
    h.ok(&b4).await;
    let last = h.llm.requests().len() - 1;
    assert!(h
        .llm
        .user_prompt(last)
        .contains("Notes from earlier tasks in this session: a = 1; b = 2"));
}

async fn tools_never_take_a_task_past_its_step_limit(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o.set("MAX_TASK_STEPS", "3")).await;
    h.llm
        .fallback(Reply::action("Note.", "remember(\"k\", \"v\")"));
    let page = || vec![node("1", "link", "Lamp")];
    let b1 = api_tests::flows::capable(start("Note things", SHOP, page()));
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["toolAction"]["toolName"], "remember");
    assert_eq!(
        r1["metrics"]["llmCalls"], 3,
        "two tools fit, the third waits"
    );
    assert_eq!(h.task(&r1).await.stored.step_count, 3);
    let r = h.interact(&next(&b1, &r1, SHOP, page())).await;
    expect_error(r, 400, "MAX_STEPS_EXCEEDED").await;
}

async fn parallel_requests_running_tools_keep_every_limit(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o.thirty_at_once()).await;
    h.llm
        .fallback(Reply::action("Note.", "remember(\"k\", \"v\")"));
    let page = || vec![node("1", "link", "Lamp")];
    // 30 new tasks at once: each runs its three tools and defers the fourth.
    let bodies: Vec<_> = (0..30)
        .map(|_| api_tests::flows::capable(start("Note", SHOP, page())))
        .collect();
    let answers = futures::future::join_all(bodies.iter().map(|b| h.ok(b))).await;
    for a in &answers {
        assert_eq!(a["toolAction"]["toolName"], "remember");
        assert_eq!(h.task(a).await.stored.step_count, 4);
    }
    // 30 next calls of one task at once: one runs, the others are refused, and its records
    // stay consecutive under the step count.
    let (b1, r1) = (&bodies[0], &answers[0]);
    let calls: Vec<_> = (0..30).map(|_| next(b1, r1, SHOP, page())).collect();
    let results = futures::future::join_all(calls.iter().map(|b| h.interact(b))).await;
    let ok = results.iter().filter(|r| r.status() == 200).count();
    assert_eq!(ok, 1, "one request holds the task");
    assert!(results
        .iter()
        .all(|r| r.status() == 200 || r.status() == 409));
    let task = h.task(r1).await;
    let steps = h
        .app
        .ctx
        .store
        .steps("acme", &task.id)
        .await
        .expect("steps");
    let indexes: Vec<u32> = steps.iter().map(|s| s.index).collect();
    assert_eq!(indexes, (0..task.stored.step_count).collect::<Vec<_>>());
    assert!(task.stored.step_count <= 8, "{}", task.stored.step_count);
}

api_tests::on_both_stores!(
    parallel_requests_running_tools_keep_every_limit,
    a_model_that_only_calls_tools_is_stopped,
    verify_success_feeds_the_finish_check,
    a_verdict_survives_a_server_round_and_is_stored_once,
    tools_never_take_a_task_past_its_step_limit,
);

/// A round out of time after a memory tool: a client that understands server rounds gets the
/// tool's `memoryResult`; every other (the shipping extension) the round's `wait(1)` with what
/// the tool did in the thought, and no `toolAction`.
#[tokio::test]
async fn a_tool_that_leaves_no_time_for_the_model_ends_the_round_with_its_result() {
    let h = harness_with(|o| o.set("STEP_DEADLINE_MS", "5000")).await;
    let page = || vec![node("1", "link", "Lamp")];
    for capable in [true, false] {
        h.llm.push([
            Reply::action("Note it.", "remember(\"price\", \"42 EUR\")"),
            Reply::Slow(Duration::from_secs(4), "<Action>click(1)</Action>".into()),
            Reply::action("Open.", "click(1)"),
        ]);
        let b1 = start("Note the price", SHOP, page());
        let b1 = if capable {
            api_tests::flows::capable(b1)
        } else {
            b1
        };
        let r1 = h.ok(&b1).await;
        api_tests::flows::assert_server_wait(&r1);
        if capable {
            assert_eq!(
                r1["toolAction"],
                json!({ "toolName": "remember", "toolType": "SERVER", "parameters": { "key": "price", "value": "42 EUR" },
                    "memoryResult": { "success": true, "action": "remember", "key": "price", "scope": "task", "value": "42 EUR", "message": "Noted \"price\"." } })
            );
        } else {
            assert!(r1.get("toolAction").is_none(), "{r1}");
        }
        assert_eq!(r1["thought"], "Noted \"price\". It reads: 42 EUR");
        let r2 = h.ok(&next(&b1, &r1, SHOP, page())).await;
        assert_eq!(r2["action"], "click(1)");
        let prompts = h.llm.requests().len();
        assert!(h
            .llm
            .user_prompt(prompts - 1)
            .contains("Your notes for this task: price = 42 EUR"));
    }
}

#[tokio::test]
async fn a_replayed_request_that_ran_tools_writes_nothing_more() {
    let h = harness_with(|o| o).await;
    h.llm.push([
        Reply::action("Note.", "remember(\"k\", \"v\")"),
        Reply::action("Open.", "click(1)"),
    ]);
    let b1 = start("Open the lamp", SHOP, vec![node("1", "link", "Lamp")]);
    let answer = |r: reqwest::Response| async move {
        assert_eq!(r.status(), 200);
        r.json::<serde_json::Value>().await.expect("json")
    };
    let first = answer(h.interact_with(&b1, &h.token, Some("key-1")).await).await;
    let again = answer(h.interact_with(&b1, &h.token, Some("key-1")).await).await;
    assert_eq!(first, again, "the stored answer is replayed");
    assert_eq!(first["action"], "click(1)");
    assert_eq!(
        h.task(&first).await.stored.step_count,
        2,
        "the tool run and the click"
    );
    assert_eq!(h.llm.requests().len(), 2, "the model is not asked again");
}

fn adapter(search: &ScriptedSearch, timeout_ms: u64) -> TavilySearch {
    TavilySearch::new(SearchConfig {
        base_url: search.base_url.clone(),
        api_key: SecretString::from("tvly-secret-key"),
        depth: SearchDepth::Advanced,
        max_results: 3,
        attempt_timeout: Duration::from_millis(timeout_ms),
        max_retries: 2,
    })
}

#[tokio::test]
async fn the_tavily_adapter_sends_the_query_and_retries_only_what_may_pass() {
    let search = ScriptedSearch::start().await;
    let t = adapter(&search, 2_000);
    let domains = vec!["shop.example.com".to_owned()];
    let q = SearchQuery {
        query: "lamp warranty",
        include_domains: &domains,
    };
    let soon = || Instant::now() + Duration::from_secs(5);
    search.site(&[
        ("A", "https://shop.example.com/a", "first"),
        ("B", "ftp://shop.example.com/b", "not a web page"),
    ]);
    let hits = t.search(&q, soon()).await.expect("results");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].url, "https://shop.example.com/a");
    let r = &search.requests()[0];
    assert_eq!(
        (&r["query"], &r["search_depth"], &r["max_results"]),
        (&json!("lamp warranty"), &json!("advanced"), &json!(3))
    );
    assert_eq!(r["include_domains"], json!(["shop.example.com"]));
    assert_eq!(search.authorization()[0], "Bearer tvly-secret-key");

    // 5xx and 429 are retried; then the answer counts.
    search.then([
        (503, json!({}), Duration::ZERO),
        (429, json!({}), Duration::ZERO),
        (
            200,
            search_results(&[("C", "https://c.example/", "c")]),
            Duration::ZERO,
        ),
    ]);
    assert_eq!(t.search(&q, soon()).await.expect("after retries").len(), 1);
    assert_eq!(search.requests().len(), 4);

    // Failing on every attempt: a failure naming the status, never the key.
    search.then((0..3).map(|_| (500, json!({}), Duration::ZERO)));
    let e = t.search(&q, soon()).await.expect_err("fails");
    assert!(
        matches!(&e, SearchError::Failed(m) if m.contains("500")),
        "{e}"
    );
    assert!(!e.to_string().contains("tvly-secret"));
    assert_eq!(search.requests().len(), 7);

    // A refusal or an unusable answer is not retried.
    for (status, body, why) in [
        (401, json!({ "detail": "bad key" }), "401"),
        (200, json!("garbage"), "malformed"),
        (200, json!({ "results": "nope" }), "malformed"),
        (
            200,
            search_results(&[("big", "https://big.example/", &"x".repeat(600_000))]),
            "oversized",
        ),
    ] {
        let before = search.requests().len();
        search.then([(status, body, Duration::ZERO)]);
        let e = t.search(&q, soon()).await.expect_err("refused");
        assert!(e.to_string().contains(why), "{e}");
        assert_eq!(search.requests().len(), before + 1, "{why}: no retry");
    }
}

#[tokio::test]
async fn a_slow_engine_is_cut_off_at_the_deadline() {
    let search = ScriptedSearch::start().await;
    search.delay(Duration::from_secs(10));
    let t = adapter(&search, 400);
    let q = SearchQuery {
        query: "lamp",
        include_domains: &[],
    };
    let started = Instant::now();
    let e = t
        .search(&q, Instant::now() + Duration::from_millis(1_500))
        .await
        .expect_err("too slow");
    assert_eq!(e, SearchError::Timeout);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
