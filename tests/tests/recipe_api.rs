//! Recipes over HTTP with a scripted model: the extension's captured two-step task done once
//! by the model is replayed for the same member without a model call, for a colleague only
//! once promoted, never for another organisation, and thirty of its runs at once all replay.

use api_tests::flows::captured_run;
use api_tests::harness::{harness_with, Harness, PW};
use api_tests::scripted::Reply;
use serde_json::{json, Value};

/// One run of the task in a new session: both answers.
async fn run(h: &Harness, token: &str) -> (Value, Value) {
    captured_run(h, token, None).await
}

/// One run, its instruction worded `query` when given.
async fn run_worded(h: &Harness, token: &str, query: Option<&str>) -> (Value, Value) {
    captured_run(h, token, query).await
}

/// `nodes` with a cookie banner over them (the server closes it by itself: "Reject all").
fn with_cookie_banner(mut nodes: Vec<Value>) -> Vec<Value> {
    use api_tests::flows::node;
    nodes.extend([
        node("8", "btn", "Accept all cookies"),
        node("9", "btn", "Reject all"),
    ]);
    nodes
}

/// The task ended with `finish()`, completed.
fn assert_finished(r: &Value) {
    assert_eq!(
        (&r["action"], &r["status"]),
        (&json!("finish()"), &json!("completed")),
        "{r}"
    );
}

fn calls(v: &Value) -> u64 {
    v["metrics"]["llmCalls"].as_u64().unwrap_or(u64::MAX)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verified_run_replays_for_its_member_and_once_promoted_for_the_organisation_under_load() {
    // A burst of runs: the rate limits are not what this test is about.
    let h = harness_with(|o| {
        o.set("INTERACT_RATE_PER_USER", "100000")
            .set("INTERACT_RATE_PER_TENANT", "100000")
    })
    .await;
    h.llm.push([
        Reply::action("I will click the Press me button.", "click(10)"),
        Reply::action("The button is pressed.", "finish()"),
    ]);
    let (a, b) = run(&h, &h.token).await;
    assert_eq!(a["action"], "click(10)");
    assert_eq!(b["status"], "completed", "{b}");
    assert!(a["metrics"].get("recipe").is_none());
    let asked = h.llm.requests().len();

    // The same task again in the same organisation: no model call.
    let (a, b) = run(&h, &h.token).await;
    assert_eq!(a["action"], "click(10)");
    assert_eq!((calls(&a), calls(&b)), (0, 0), "{a}\n{b}");
    assert_eq!(a["metrics"]["recipe"]["mode"], "replayed");
    assert_eq!(a["metrics"]["recipe"]["step"], 0);
    assert_eq!(b["status"], "completed", "{b}");
    assert_eq!(b["action"], "finish()");
    assert_eq!(h.llm.requests().len(), asked, "the model was not asked");
    // The step records say so (the debug export and the inspector read them).
    let steps = h
        .app
        .ctx
        .store
        .steps("acme", a["taskId"].as_str().expect("id"))
        .await
        .expect("steps");
    assert_eq!(
        steps[0]
            .recipe
            .as_ref()
            .and_then(|r| r.used.as_ref())
            .map(|u| u.step),
        Some(0)
    );

    // A colleague's run of the same task is the model's: the recipe is ada's until promoted.
    h.app.seed_user("acme", "grace@acme.com", PW).await;
    let grace = h.app.login("grace@acme.com", PW).await;
    h.llm.push([
        Reply::action("I will click the Press me button.", "click(10)"),
        Reply::action("Done.", "finish()"),
    ]);
    let (a, _) = run(&h, &grace).await;
    assert!(calls(&a) >= 1, "{a}");
    assert!(a["metrics"].get("recipe").is_none(), "{a}");
    // Another organisation's run of the same task on the same page is the model's.
    h.app.seed_user("beta", "bob@beta.com", PW).await;
    let bob = h.app.login("bob@beta.com", PW).await;
    h.llm.push([
        Reply::action("I will click the Press me button.", "click(10)"),
        Reply::action("Done.", "finish()"),
    ]);
    let (a, _) = run(&h, &bob).await;
    assert!(calls(&a) >= 1, "{a}");
    assert!(a["metrics"].get("recipe").is_none(), "{a}");

    // Promoted: a member with no recipe of their own replays the organisation's.
    let ada = h.task(&b).await.user_id;
    let store = h.app.ctx.store.as_ref();
    let recipes = store.recipes("acme", 10).await.expect("recipes");
    let adas = recipes
        .iter()
        .find(|r| r.owner == ada)
        .expect("ada's recipe");
    let settings = h.app.ctx.config.agent.recipes;
    shared::agent::promotion::promote(store, adas, "admin", chrono::Utc::now(), settings)
        .await
        .expect("promoted");
    h.app.seed_user("acme", "carol@acme.com", PW).await;
    let carol = h.app.login("carol@acme.com", PW).await;

    // Thirty runs at once, three members of two organisations: each replays its own or the
    // organisation's recipe; no model call, no error, each its own task.
    let before = h.llm.requests().len();
    let runs: Vec<_> = (0..30)
        .map(|i| {
            let token = [&h.token, &carol, &bob][i % 3].clone();
            let h = &h;
            async move { run(h, &token).await }
        })
        .collect();
    let done = futures::future::join_all(runs).await;
    let mut tasks = std::collections::BTreeSet::new();
    for (a, b) in &done {
        assert_eq!((calls(a), calls(b)), (0, 0), "{a}\n{b}");
        assert_eq!(b["status"], "completed");
        tasks.insert(a["taskId"].as_str().expect("id").to_owned());
    }
    assert_eq!(tasks.len(), 30);
    assert_eq!(h.llm.requests().len(), before);
}

/// Issue 52: only a finish the judge confirmed is recorded. A finish that stood on the
/// model's word (the judge gave no usable verdict) completes the task, and the next run is the
/// model's again: a recipe would have replayed an unchecked finish with no model call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finish_nobody_confirmed_is_not_recorded() {
    let h = harness_with(|o| o).await;
    h.llm.push([
        Reply::action("I will click the Press me button.", "click(10)"),
        Reply::action("The button is pressed.", "finish()"),
    ]);
    h.llm
        .push_verdicts([Reply::Content("I cannot tell from here.".into())]);
    let (_, b) = run(&h, &h.token).await;
    assert_finished(&b);
    h.llm.push([
        Reply::action("I will click the Press me button.", "click(10)"),
        Reply::action("The button is pressed.", "finish()"),
    ]);
    let (a, b) = run(&h, &h.token).await;
    assert!(calls(&a) >= 1, "the model does the task again: {a}");
    assert!(a["metrics"].get("recipe").is_none(), "{a}");
    assert_finished(&b);
    // That run's finish was confirmed (an unscripted verdict says yes): now it replays.
    let (a, b) = run(&h, &h.token).await;
    assert_eq!((calls(&a), calls(&b)), (0, 0), "{a}\n{b}");
    assert_eq!(a["metrics"]["recipe"]["mode"], "replayed");
    assert_finished(&b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_recipes_off_every_run_is_the_models() {
    let h = harness_with(|o| o.set("RECIPES", "off")).await;
    for _ in 0..2 {
        h.llm.push([
            Reply::action("I will click the Press me button.", "click(10)"),
            Reply::action("Done.", "finish()"),
        ]);
        let (a, b) = run(&h, &h.token).await;
        assert!(calls(&a) >= 1 && calls(&b) >= 1, "{a}\n{b}");
        assert!(a["metrics"].get("recipe").is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instruction_worded_a_little_differently_replays_only_when_configured() {
    for (matching, replayed) in [("exact", false), ("approximate", true)] {
        let h = harness_with(|o| o.set("RECIPE_MATCH", matching)).await;
        h.llm.push([
            Reply::action("I will click the Press me button.", "click(10)"),
            Reply::action("Done.", "finish()"),
        ]);
        run(&h, &h.token).await;
        if !replayed {
            h.llm.push([
                Reply::action("Clicking it.", "click(10)"),
                Reply::action("Done.", "finish()"),
            ]);
        }
        let (a, b) = run_worded(&h, &h.token, Some("Please click the Press-me button now!")).await;
        assert_eq!(b["status"], "completed", "{matching}: {b}");
        assert_eq!(
            a["metrics"].get("recipe").is_some(),
            replayed,
            "{matching}: {a}"
        );
        assert_eq!(calls(&a) == 0, replayed, "{matching}: {a}");
        // Another task is never taken for this one, however loosely matched.
        h.llm.push([
            Reply::action("Opening it.", "click(11)"),
            Reply::action("Done.", "finish()"),
        ]);
        let (a, _) = run_worded(&h, &h.token, Some("Click the Other link")).await;
        assert!(a["metrics"].get("recipe").is_none(), "{matching}: {a}");
    }
}

const CART: &str = "https://shop.example.com/cart";
const DONE: &str = "https://shop.example.com/order/done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_confirmation_goes_on_only_after_the_users_yes() {
    use api_tests::flows::{next, node, reply_here, start};
    let h = harness_with(|o| o).await;
    let cart = || vec![node("10", "btn", "Pay now")];
    let paid = || vec![node("20", "link", "Back to the shop")];
    // The model's run: the payment asked about, confirmed, done.
    h.llm.push([
        Reply::action("I will pay.", "click(10)"),
        Reply::action("The order is paid.", "finish()"),
    ]);
    let b1 = start("Pay for my cart now", CART, cart());
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "ask_user()", "{r1}");
    let b2 = reply_here(&b1, &r1, "yes");
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["action"], "click(10)", "{r2}");
    let r3 = h.ok(&next(&b1, &r2, DONE, paid())).await;
    assert_eq!(r3["status"], "completed", "{r3}");

    // Replayed: the payment is asked about again; the user says no on a page that also
    // shows a cookie banner, which the server closes by itself.
    let b1 = start("Pay for my cart now", CART, cart());
    let r1 = h.ok(&b1).await;
    assert_eq!(
        (&r1["action"], &r1["metrics"]["recipe"]["mode"]),
        (&json!("ask_user()"), &json!("replayed")),
        "{r1}"
    );
    let bannered = with_cookie_banner(cart());
    let mut b2 = next(&b1, &r1, CART, bannered);
    b2["query"] = json!("no");
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["action"], "click(9)", "{r2}");
    // The rest is the model's: the recipe's finish is not replayed after a no.
    h.llm.push([Reply::action(
        "You did not want to pay, so I stop here.",
        "finish()",
    )]);
    let r3 = h.ok(&next(&b1, &r2, CART, cart())).await;
    assert_eq!(calls(&r3), 1, "{r3}");
    assert!(r3["metrics"].get("recipe").is_none(), "{r3}");

    // Replayed again: an unclear reply gets the question asked again, and the yes to it pays
    // and lets the recipe finish without the model.
    let b1 = start("Pay for my cart now", CART, cart());
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "ask_user()", "{r1}");
    let r2 = h.ok(&reply_here(&b1, &r1, "I'm not sure")).await;
    assert_eq!(r2["action"], "ask_user()", "{r2}");
    let r3 = h.ok(&reply_here(&b1, &r2, "yes")).await;
    assert_eq!(r3["action"], "click(10)", "{r3}");
    let asked = h.llm.requests().len();
    let r4 = h.ok(&next(&b1, &r3, DONE, paid())).await;
    assert_finished(&r4);
    assert_eq!(h.llm.requests().len(), asked, "{r4}");
}

const BILLS: &str = "https://billing.example.com/invoices";
const PAID: &str = "https://billing.example.com/invoices/paid";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_the_model_did_through_the_users_yes_is_not_handed_to_it_again() {
    use api_tests::flows::{next, node, reply_here, start};
    let h = harness_with(|o| o).await;
    let bills = |code: &str| {
        vec![
            node("10", "btn", &format!("Pay invoice {code}")),
            node("11", "link", "Invoice INV-1000"),
        ]
    };
    let paid = || vec![node("20", "link", "Back to invoices")];
    // The model's run: the open invoice paid once the user said yes.
    h.llm.push([
        Reply::action("I will pay the open invoice.", "click(10)"),
        Reply::action("The invoice is paid.", "finish()"),
    ]);
    let b1 = start("Pay my open invoice", BILLS, bills("INV-2041"));
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "ask_user()", "{r1}");
    let r2 = h.ok(&reply_here(&b1, &r1, "yes")).await;
    assert_eq!(r2["action"], "click(10)", "{r2}");
    let r3 = h.ok(&next(&b1, &r2, PAID, paid())).await;
    assert_eq!(r3["status"], "completed", "{r3}");

    // Next month's invoice: the button named by a record is the model's to pick; the payment
    // is asked about, and the yes sends the model's click.
    h.llm
        .push([Reply::action("I will pay the open invoice.", "click(10)")]);
    let b1 = start("Pay my open invoice", BILLS, bills("INV-2042"));
    let r1 = h.ok(&b1).await;
    assert_eq!(
        (&r1["action"], &r1["metrics"]["recipe"]["mode"]),
        (&json!("ask_user()"), &json!("healed")),
        "{r1}"
    );
    let r2 = h.ok(&reply_here(&b1, &r1, "yes")).await;
    assert_eq!(
        (&r2["action"], calls(&r2)),
        (&json!("click(10)"), 0),
        "{r2}"
    );
    // A cookie banner on the next page: the server closes it by itself.
    let asked = h.llm.requests().len();
    let bannered = with_cookie_banner(paid());
    let r3 = h.ok(&next(&b1, &r2, PAID, bannered)).await;
    assert_eq!(r3["action"], "click(9)", "{r3}");
    // The model's click was the step: nobody is asked to pay again. The button was the
    // model's pick, so the model says whether the task is done (one call, with the recipe's
    // finish as its hint).
    h.llm
        .push([Reply::action("The invoice is paid.", "finish()")]);
    let r4 = h.ok(&next(&b1, &r3, PAID, paid())).await;
    assert_finished(&r4);
    assert_eq!(h.llm.requests().len(), asked + 1, "{r4}");
    let prompt = h.llm.user_prompt(asked);
    assert!(prompt.contains("Step 2 of 2: finish"), "{prompt}");
}

const REMIND: &str = "https://app.example.com/reminders/new";
const REMINDERS: &str = "https://app.example.com/reminders";

/// The new-reminder form, its date field holding `date`.
fn reminder_form(date: &str) -> Vec<Value> {
    use api_tests::flows::{field, node};
    vec![
        field("1", "inp", "Date", date, ""),
        node("2", "btn", "Save reminder"),
    ]
}

/// The reminders list a saved reminder leads to.
fn reminders() -> Vec<Value> {
    vec![api_tests::flows::node("30", "link", "New reminder")]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_of_the_models_answer_counts_for_the_step_it_was_handed() {
    use api_tests::flows::{next, start};
    let h = harness_with(|o| o).await;
    let (form, saved) = (reminder_form, reminders);
    let fill = |date: &str| {
        Reply::Content(format!(
            "<Thought>I set the date and save.</Thought>\n<Action>setValue(1, \"{date}\")</Action>\n<Action>click(2)</Action>"
        ))
    };
    // The model's run: one answer fills the date and saves (the click sent on the next
    // request), then it finishes.
    h.llm
        .push([fill("2026-11-28"), Reply::action("Saved.", "finish()")]);
    let b1 = start("Set my reminder for tomorrow", REMIND, form(""));
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "setValue(1, \"2026-11-28\")", "{r1}");
    let r2 = h.ok(&next(&b1, &r1, REMIND, form("2026-11-28"))).await;
    assert_eq!(r2["action"], "click(2)", "{r2}");
    let r3 = h.ok(&next(&b1, &r2, REMINDERS, saved())).await;
    assert_eq!(r3["status"], "completed", "{r3}");

    // Another day: the date is the model's (not one the instruction gives); its answer
    // saves too, and the recipe's finish follows without asking it again.
    h.llm.push([fill("2026-11-29")]);
    let b1 = start("Set my reminder for tomorrow", REMIND, form(""));
    let r1 = h.ok(&b1).await;
    assert_eq!(
        (&r1["action"], &r1["metrics"]["recipe"]["mode"]),
        (&json!("setValue(1, \"2026-11-29\")"), &json!("healed")),
        "{r1}"
    );
    let asked = h.llm.requests().len();
    let r2 = h.ok(&next(&b1, &r1, REMIND, form("2026-11-29"))).await;
    assert_eq!(r2["action"], "click(2)", "{r2}");
    let r3 = h.ok(&next(&b1, &r2, REMINDERS, saved())).await;
    assert_finished(&r3);
    assert_eq!(h.llm.requests().len(), asked, "{r3}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_failed_step_is_not_taken_as_done_behind_a_cookie_banner() {
    use api_tests::flows::{next, start};
    let h = harness_with(|o| o).await;
    let (form, saved) = (reminder_form, reminders);
    h.llm.push([
        Reply::action("I set the date.", "setValue(1, \"2026-11-28\")"),
        Reply::action("I save it.", "click(2)"),
        Reply::action("Saved.", "finish()"),
    ]);
    let b1 = start("Set my reminder for tomorrow", REMIND, form(""));
    let r1 = h.ok(&b1).await;
    let r2 = h.ok(&next(&b1, &r1, REMIND, form("2026-11-28"))).await;
    assert_eq!(r2["action"], "click(2)", "{r2}");
    let r3 = h.ok(&next(&b1, &r2, REMINDERS, saved())).await;
    assert_eq!(r3["status"], "completed", "{r3}");

    // Another day: the model's date does not take (the field stays empty), and a cookie
    // banner shows up, which the server closes.
    h.llm.push([Reply::action(
        "I set the date.",
        "setValue(1, \"2026-11-29\")",
    )]);
    let b1 = start("Set my reminder for tomorrow", REMIND, form(""));
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["metrics"]["recipe"]["mode"], "healed", "{r1}");
    let bannered = with_cookie_banner(form(""));
    let r2 = h.ok(&next(&b1, &r1, REMIND, bannered)).await;
    assert_eq!(r2["action"], "click(9)", "{r2}");
    // The banner closing verified; the date still did not: Save is not replayed on an empty
    // date, the model is asked for the date again.
    h.llm.push([Reply::action(
        "The date did not take; again.",
        "setValue(1, \"2026-11-29\")",
    )]);
    let r3 = h.ok(&next(&b1, &r2, REMIND, form(""))).await;
    assert_eq!(
        (&r3["action"], calls(&r3)),
        (&json!("setValue(1, \"2026-11-29\")"), 1),
        "{r3}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agreeing_runs_of_two_members_promote_only_when_the_tenant_lets_them() {
    for (after, promoted) in [("0", false), ("3", true)] {
        let h = harness_with(|o| o.set("RECIPE_PROMOTE_AFTER_RUNS", after)).await;
        h.app.seed_user("acme", "grace@acme.com", PW).await;
        h.app.seed_user("acme", "carol@acme.com", PW).await;
        let grace = h.app.login("grace@acme.com", PW).await;
        let carol = h.app.login("carol@acme.com", PW).await;
        let model = || {
            [
                Reply::action("I will click the Press me button.", "click(10)"),
                Reply::action("The button is pressed.", "finish()"),
            ]
        };
        // Ada's run and her replay (two runs of the same steps), then Grace's own run.
        h.llm.push(model());
        run(&h, &h.token).await;
        let (a, _) = run(&h, &h.token).await;
        assert_eq!(calls(&a), 0, "{a}");
        h.llm.push(model());
        let (a, _) = run(&h, &grace).await;
        assert!(calls(&a) >= 1, "{a}");
        // Carol, with no recipe of her own, replays only an organisation's.
        if !promoted {
            h.llm.push(model());
        }
        let (a, b) = run(&h, &carol).await;
        assert_eq!(calls(&a) == 0, promoted, "after {after}: {a}");
        assert_eq!(b["status"], "completed", "{b}");
        let (trail, _) = h
            .app
            .ctx
            .store
            .audit_trail("acme", shared::agent::promotion::AUDIT_SESSION, None, 10)
            .await
            .expect("audit");
        let by: Vec<&str> = trail.iter().map(|e| e.user_id.as_str()).collect();
        assert_eq!(by, if promoted { vec!["automatic"] } else { vec![] });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_answering_a_healed_step_sends_that_step_alone_so_none_goes_out_twice() {
    use api_tests::flows::{capable, field, next, node, start};
    let h = harness_with(|o| o.set("CHAINED_ACTIONS", "on")).await;
    let form = |date: &str, note: &str| {
        vec![
            field("1", "inp", "Date", date, ""),
            field("3", "inp", "Note", note, ""),
            node("2", "btn", "Save reminder"),
        ]
    };
    let query = "Set my reminder for tomorrow with the note dentist";
    // Recorded from a client that takes one action at a time: the date (the model's every
    // run), the note (the instruction's), Save.
    h.llm.push([
        Reply::action("I set the date.", "setValue(1, \"2026-11-28\")"),
        Reply::action("I add the note.", "setValue(3, \"dentist\")"),
        Reply::action("I save.", "click(2)"),
        Reply::action("Saved.", "finish()"),
    ]);
    let b1 = start(query, REMIND, form("", ""));
    let r1 = h.ok(&b1).await;
    let r2 = h.ok(&next(&b1, &r1, REMIND, form("2026-11-28", ""))).await;
    let r3 = h
        .ok(&next(&b1, &r2, REMIND, form("2026-11-28", "dentist")))
        .await;
    let r4 = h.ok(&next(&b1, &r3, REMINDERS, reminders())).await;
    assert_eq!(r4["status"], "completed", "{r4}");
    // A client that runs chains: the model's answer for the date is a chain of both fills;
    // only the date goes out with it, and the note is the recipe's, once.
    h.llm.push([Reply::Content(
        "<Thought>Date and note.</Thought>\n<Action>setValue(1, \"2026-11-29\")</Action>\n<Action>setValue(3, \"dentist\")</Action>".into(),
    )]);
    let b1 = capable(start(query, REMIND, form("", "")));
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "setValue(1, \"2026-11-29\")", "{r1}");
    assert!(r1.get("chainedActions").is_none(), "{r1}");
    let r2 = h.ok(&next(&b1, &r1, REMIND, form("2026-11-29", ""))).await;
    assert_eq!(
        (calls(&r2), &r2["action"]),
        (0, &json!("setValue(3, \"dentist\")")),
        "{r2}"
    );
    let r3 = h
        .ok(&next(&b1, &r2, REMIND, form("2026-11-29", "dentist")))
        .await;
    assert_eq!((calls(&r3), &r3["action"]), (0, &json!("click(2)")), "{r3}");
}
