//! Pre-search with a zero-latency scripted model and a scripted search engine that answers
//! after 200 ms: the time a new task's first request takes without a search, with a search
//! the site answers, and with one the site cannot answer (then the open web); and the prompt
//! tokens the results add.

use std::time::Duration;

use api_tests::flows::{node, planned, sections};
use api_tests::scripted::{Reply, ScriptedLlm, ScriptedSearch};
use api_tests::{AppOptions, TestApp};
use serde_json::{json, Value};

use super::{elapsed_ms, stats};

/// Five results of realistic length (engines return extracts of a few hundred characters).
fn hits(site: &str) -> Vec<(String, String, String)> {
    (1..=5)
        .map(|k| {
            (
                format!("How to return an item — help article {k}"),
                format!("https://{site}/help/returns/{k}"),
                "Open Orders, choose the order and the item, then Return or replace items. \
                 Pick a reason, choose how to send it back and print the label. Refunds are \
                 issued to the original payment method within 5 to 7 days of receipt. "
                    .repeat(2),
            )
        })
        .collect()
}

fn as_refs(h: &[(String, String, String)]) -> Vec<(&str, &str, &str)> {
    h.iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect()
}

/// The `<search-results>` block of a prompt, if any.
fn block(prompt: &str) -> Option<&str> {
    let start = prompt.find("<search-results")?;
    let end = prompt[start..].find("</search-results>")? + start + "</search-results>".len();
    Some(&prompt[start..end])
}

pub async fn pre_search(runs: usize) {
    let llm = ScriptedLlm::start().await;
    let search = ScriptedSearch::start().await;
    search.delay(Duration::from_millis(200));
    let dir = tempfile::tempdir().expect("tmp");
    let opts = AppOptions {
        data_dir: Some(dir.path().to_owned()),
        ..AppOptions::with_llm(&llm.base_url)
    }
    .set("INTERACT_RATE_PER_USER", "100000")
    .set("INTERACT_RATE_PER_TENANT", "100000")
    .set("TAVILY_API_KEY", "bench-key")
    .set("TAVILY_BASE_URL", search.base_url.clone());
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    let token = app.login("ada@acme.com", "s3cret-password").await;
    let page = vec![node("1", "link", "Orders"), node("2", "btn", "Return")];
    let plan = planned(
        &["Open the orders", "Return the item"],
        1,
        "Open.",
        "click(1)",
    );
    let ask = sections(&[
        ("Thought", "How do returns work?"),
        ("Search", "return an item"),
    ]);
    println!("pre-search (200 ms search engine, zero-latency model, {runs} new tasks each):");
    let mut added = Vec::new();
    for (name, site_has_results, searches) in [
        ("  new task, no search", false, false),
        ("  new task, pre-search answered by the site", true, true),
        (
            "  new task, pre-search: site empty, then the web",
            false,
            true,
        ),
    ] {
        let results = hits("shop.example.com");
        if site_has_results {
            search.site(&as_refs(&results));
        } else {
            search.site(&[]);
        }
        search.web(&as_refs(&hits("help.example.org")));
        let mut times = Vec::new();
        for _ in 0..runs {
            let replies: Vec<Reply> = if searches {
                vec![ask.clone(), plan.clone()]
            } else {
                vec![plan.clone()]
            };
            llm.push(replies);
            let body = json!({ "url": "https://shop.example.com/orders", "query": "Return the lamp I bought",
                "sessionId": uuid::Uuid::new_v4().to_string(), "interactiveTree": page });
            let t = std::time::Instant::now();
            let answer = super::interact(&app, &token, &body).await;
            times.push(elapsed_ms(t));
            assert_eq!(answer["action"], "click(1)", "{answer}");
        }
        stats(name, times);
        if searches {
            let bpe = tiktoken_rs::o200k_base().expect("tokenizer");
            let requests = llm.requests();
            let prompt = requests
                .last()
                .and_then(|r: &Value| r["messages"][1]["content"].as_str())
                .unwrap_or("");
            added.push((
                name.trim().to_owned(),
                block(prompt).map_or(0, |b| bpe.encode_with_special_tokens(b).len()),
            ));
        }
    }
    for (name, tokens) in added {
        println!("  prompt tokens added by the results ({name}): {tokens} (o200k)");
    }
    app.stop().await;
}
