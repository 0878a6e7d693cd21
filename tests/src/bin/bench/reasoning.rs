//! The reasoning step over a scripted 19-request shopping task with failures (a re-rendered
//! element, a timeout, two actions with no visible effect, one of which did not work), with a
//! zero-latency scripted model and verifier: model calls per step, verdicts made without a
//! model, prompt tokens per step, the share of each prompt that repeats the previous one as a
//! prefix (what provider prompt caching can reuse), and the server's time per phase.

use api_tests::flows::{field, node, planned, sections};
use api_tests::scripted::{Reply, ScriptedLlm};
use api_tests::{AppOptions, TestApp};
use serde_json::{json, Value};

use super::stats;

/// What the client reports about the previous action.
enum Report {
    Success,
    Error(&'static str, &'static str),
}

/// One request of the task: the page the client sees, its report, the model's answer (when
/// the model is asked) and the verifier's (when one is asked).
struct Row {
    path: &'static str,
    page: Vec<Value>,
    report: Report,
    reply: Option<Reply>,
    /// The model's answer after a server tool of `reply` ran.
    more: Option<Reply>,
    verdict: Option<Reply>,
}

fn row(path: &'static str, page: Vec<Value>, reply: Option<Reply>) -> Row {
    Row {
        path,
        page,
        report: Report::Success,
        reply,
        more: None,
        verdict: None,
    }
}

fn act(thought: &str, step: usize, action: &str) -> Option<Reply> {
    Some(sections(&[
        ("Thought", thought),
        ("Step", &step.to_string()),
        ("Action", action),
    ]))
}

fn home(query: &str) -> Vec<Value> {
    vec![
        field("1", "inp", "Search", query, ""),
        node("2", "btn", "Search"),
        node("3", "link", "Deals"),
    ]
}

fn results(filter: &str, first: &str) -> Vec<Value> {
    let mut p = vec![field("20", "chk", "Under 50 EUR", "", filter)];
    p.push(node(first, "link", "Lamp A"));
    p.extend((11..15).map(|i| node(&i.to_string(), "link", &format!("Lamp {i}"))));
    p
}

fn product(colour: &str, cart: &str) -> Vec<Value> {
    vec![
        node("40", "btn", "Add to cart"),
        field("41", "sel", "Colour", colour, ""),
        node("50", "link", cart),
    ]
}

fn cart(coupon: &str) -> Vec<Value> {
    vec![
        node("60", "btn", "Go to delivery details"),
        field("61", "inp", "Coupon", coupon, ""),
        node("62", "btn", "Apply"),
    ]
}

fn delivery(name: &str, street: &str, city: &str) -> Vec<Value> {
    vec![
        field("70", "inp", "Full name", name, ""),
        field("71", "inp", "Street", street, ""),
        field("72", "inp", "City", city, ""),
        node("73", "btn", "Continue"),
    ]
}

fn options(chosen: &str) -> Vec<Value> {
    vec![
        field("80", "radio", "Standard", "", chosen),
        node("81", "radio", "Express"),
        node("82", "btn", "Next"),
    ]
}

/// The task, request by request.
fn script() -> Vec<Row> {
    let plan = [
        "Search for a desk lamp",
        "Pick a cheap lamp",
        "Add it to the cart",
        "Enter the delivery details",
        "Choose standard delivery",
    ];
    let chain = "<Thought>I fill in the address.</Thought>\n<Step>4</Step>\n<Action>setValue(70, \"Ada Lovelace\")</Action>\n<Action>setValue(71, \"1 Main St\")</Action>\n<Action>setValue(72, \"London\")</Action>";
    vec![
        row(
            "/",
            home(""),
            Some(planned(
                &plan,
                1,
                "I search for desk lamps.",
                "setValue(1, \"desk lamp\")",
            )),
        ),
        row("/", home("desk lamp"), act("Search.", 1, "click(2)")),
        row(
            "/search?q=desk+lamp",
            results("", "10"),
            act("Only cheap ones.", 2, "check(20)"),
        ),
        row(
            "/search?q=desk+lamp",
            results("checked", "10"),
            act("Open Lamp A.", 2, "click(10)"),
        ),
        // The list re-rendered: Lamp A has a new id (corrected without the model).
        Row {
            report: Report::Error("ELEMENT_NOT_FOUND", "no element 10"),
            ..row("/search?q=desk+lamp", results("checked", "30"), None)
        },
        row(
            "/p/lamp-a",
            product("", "Cart (0)"),
            act("Black please.", 3, "selectOption(41, \"Black\")"),
        ),
        row(
            "/p/lamp-a",
            product("Black", "Cart (0)"),
            act("Add it.", 3, "click(40)"),
        ),
        // The click timed out (a wait, without the model).
        Row {
            report: Report::Error("TIMEOUT", "timed out"),
            ..row("/p/lamp-a", product("Black", "Cart (0)"), None)
        },
        row(
            "/p/lamp-a",
            product("Black", "Cart (0)"),
            act("Add it again.", 3, "click(40)"),
        ),
        row(
            "/p/lamp-a",
            product("Black", "Cart (1)"),
            act("To the cart.", 3, "click(50)"),
        ),
        row(
            "/cart",
            cart(""),
            act("A coupon.", 3, "setValue(61, \"SAVE10\")"),
        ),
        row("/cart", cart("SAVE10"), act("Apply it.", 3, "click(62)")),
        // No visible change: the verifier confirms.
        Row {
            verdict: Some(Reply::verdict(true, 0.9, "the coupon was applied")),
            ..row(
                "/cart",
                cart("SAVE10"),
                act("Now the address.", 4, "click(60)"),
            )
        },
        row(
            "/delivery",
            delivery("", "", ""),
            Some(Reply::Content(chain.into())),
        ),
        row(
            "/delivery",
            delivery("Ada Lovelace", "1 Main St", "London"),
            act("Continue.", 4, "click(73)"),
        ),
        // No visible change and it did not work: Enter instead (no model call).
        Row {
            verdict: Some(Reply::verdict(false, 0.9, "the form was not sent")),
            ..row(
                "/delivery",
                delivery("Ada Lovelace", "1 Main St", "London"),
                None,
            )
        },
        row(
            "/delivery/options",
            options(""),
            act("Standard.", 5, "click(80)"),
        ),
        // A server tool: it runs inside the request and the model is asked again.
        Row {
            more: act("Next.", 5, "click(82)"),
            ..row(
                "/delivery/options",
                options("checked"),
                act("Note it.", 5, "remember(\"delivery\", \"Standard\")"),
            )
        },
        row(
            "/review",
            vec![node("90", "link", "Edit order")],
            act("The lamp is ready to order.", 5, "finish()"),
        ),
    ]
}

/// Characters two strings share at their start.
pub fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

fn prompt_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|x| x["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Runs the task with small pages and with pages of 300 more links each.
pub async fn scripted_task() {
    run(0).await;
    run(300).await;
}

/// Runs the task, each page with `extra` more links, and prints its numbers.
async fn run(extra: usize) {
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir().expect("tmp");
    let opts = AppOptions {
        data_dir: Some(dir.path().to_owned()),
        ..AppOptions::with_llm(&llm.base_url)
    }
    .set("INTERACT_RATE_PER_USER", "100000");
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    let token = app.login("ada@acme.com", "s3cret-password").await;
    let rows = script();
    let steps = rows.len();
    let mut body = json!({ "query": "Order a desk lamp under 50 EUR, delivered to Ada Lovelace, 1 Main St, London",
        "sessionId": uuid::Uuid::new_v4().to_string() });
    let (mut calls, mut overhead, mut task_id) = (0u64, Vec::<f64>::new(), Value::Null);
    let mut verdicts = (0usize, 0usize);
    for (k, r) in rows.into_iter().enumerate() {
        llm.push(r.reply.into_iter().chain(r.more));
        llm.push_verdicts(r.verdict);
        body["url"] = json!(format!("https://shop.example.com{}", r.path));
        let mut page = r.page;
        page.extend((0..extra).map(|i| {
            node(
                &format!("{}", 1000 + i),
                "link",
                &format!("Related product {i} in {}", r.path),
            )
        }));
        body["interactiveTree"] = Value::Array(page);
        if k > 0 {
            body["taskId"] = task_id.clone();
            match r.report {
                Report::Success => {
                    body["lastActionStatus"] = json!("success");
                    body.as_object_mut().map(|o| o.remove("lastActionError"));
                }
                Report::Error(code, message) => {
                    body["lastActionStatus"] = json!("failure");
                    body["lastActionError"] = json!({ "code": code, "message": message });
                }
            }
        }
        let t = std::time::Instant::now();
        let answer = super::interact(&app, &token, &body).await;
        let total = super::elapsed_ms(t);
        assert!(answer["success"] == true, "step {k}: {answer}");
        task_id = answer["taskId"].clone();
        calls += answer["metrics"]["llmCalls"].as_u64().unwrap_or(0);
        overhead.push(total - answer["metrics"]["llmMs"].as_f64().unwrap_or(0.0));
        if let Some(v) = answer.get("verification") {
            verdicts.0 += 1;
            if v.get("byModel").is_none() {
                verdicts.1 += 1;
            }
        }
        if k + 1 == steps {
            assert_eq!(answer["status"], "completed", "{answer}");
        }
    }
    println!(
        "reasoning step over a scripted {steps}-request task with failures, {extra} more links per page (zero-latency model):"
    );
    println!(
        "  model calls per step: {:.2} ({calls} calls: decisions {} + verdicts {})",
        calls as f64 / steps as f64,
        llm.requests().len(),
        llm.verdict_requests().len()
    );
    println!(
        "  verdicts without a model: {}/{} ({:.0}%)",
        verdicts.1,
        verdicts.0,
        100.0 * verdicts.1 as f64 / verdicts.0.max(1) as f64
    );
    let bpe = tiktoken_rs::o200k_base().expect("tokenizer");
    let tokens = |s: &str| bpe.encode_with_special_tokens(s).len();
    let prompts: Vec<String> = llm.requests().iter().map(prompt_text).collect();
    let sizes: Vec<f64> = prompts.iter().map(|p| tokens(p) as f64).collect();
    println!(
        "  prompt tokens per decision (o200k): mean {:.0}, max {:.0}",
        sizes.iter().sum::<f64>() / sizes.len() as f64,
        sizes.iter().cloned().fold(0.0, f64::max)
    );
    let mut shares = Vec::new();
    for pair in prompts.windows(2) {
        let prefix: String = pair[1]
            .chars()
            .take(common_prefix(&pair[0], &pair[1]))
            .collect();
        shares.push(tokens(&prefix) as f64 / tokens(&pair[1]).max(1) as f64);
    }
    shares.sort_by(f64::total_cmp);
    println!(
        "  prompt repeating the previous prompt as a prefix: mean {:.0}%, median {:.0}%, min {:.0}%",
        100.0 * shares.iter().sum::<f64>() / shares.len() as f64,
        100.0 * shares[shares.len() / 2],
        100.0 * shares[0]
    );
    stats(
        "  server time per step (request minus model time)",
        overhead.clone(),
    );
    let records = app
        .ctx
        .store
        .steps("acme", task_id.as_str().unwrap_or(""))
        .await
        .expect("steps")
        .into_iter()
        // One decision per request (server tool runs have no timings of their own).
        .filter(|r| r.timings.is_some())
        .collect::<Vec<_>>();
    let phase = |r: &shared::domain::Step, k: &str| {
        r.timings
            .as_ref()
            .and_then(|t| t["phases"][k].as_f64())
            .unwrap_or(0.0)
            / 1000.0
    };
    let llm_ms = |r: &shared::domain::Step| {
        r.timings
            .as_ref()
            .and_then(|t| t["llmMs"].as_f64())
            .unwrap_or(0.0)
    };
    stats(
        "  phase load (auth, claims, page build)",
        records.iter().map(|r| phase(r, "loadedUs")).collect(),
    );
    stats(
        "  phases verify + decide, model time excluded",
        records
            .iter()
            .map(|r| (phase(r, "decidedUs") - phase(r, "loadedUs") - llm_ms(r)).max(0.0))
            .collect(),
    );
    stats(
        "  phase persist and the HTTP exchange",
        records
            .iter()
            .zip(&overhead)
            .map(|(r, o)| o - phase(r, "decidedUs") + llm_ms(r))
            .collect(),
    );
    app.stop().await;
}
