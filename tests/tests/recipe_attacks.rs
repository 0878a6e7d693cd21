//! Recipes attacked as a careless colleague and a hostile page would (issue 49): a step in
//! another dialog, a pick the recording member made, a colleague's run of a member's recipe,
//! and the recorded words in the prompt. Each is the model's, or asks the user, never a
//! model-free action.

use api_tests::flows::{field, next, node, reply_here, start};
use api_tests::harness::{harness_with, Harness, PW};
use api_tests::scripted::Reply;
use serde_json::Value;

const PAGE: &str = "https://app.example.com/settings";
const AFTER: &str = "https://app.example.com/settings/done";

fn calls(v: &Value) -> u64 {
    v["metrics"]["llmCalls"].as_u64().unwrap_or(u64::MAX)
}

async fn harness() -> Harness {
    harness_with(|o| {
        o.set("INTERACT_RATE_PER_USER", "100000")
            .set("INTERACT_RATE_PER_TENANT", "100000")
    })
    .await
}

fn dialog(title: &str) -> Vec<Value> {
    vec![
        node("30", "dialog", title),
        node("31", "btn", "Confirm"),
        node("32", "btn", "Cancel"),
    ]
}

fn done_page() -> Vec<Value> {
    vec![node("40", "link", "Back to settings")]
}

/// The model's run of `query`: a click on `id` of `page`, then the finish.
async fn models_run(h: &Harness, token: &str, query: &str, page: Vec<Value>, id: &str) {
    h.llm.push([
        Reply::action("I will click it.", &format!("click({id})")),
        Reply::action("It is done.", "finish()"),
    ]);
    let b1 = start(query, PAGE, page);
    let r1 = ok(h, token, &b1).await;
    assert_eq!(r1["action"], format!("click({id})"), "{r1}");
    let r2 = ok(h, token, &next(&b1, &r1, AFTER, done_page())).await;
    assert_eq!(r2["status"], "completed", "{r2}");
}

async fn ok(h: &Harness, token: &str, body: &Value) -> Value {
    let r = h.interact_with(body, token, None).await;
    let status = r.status();
    let v: Value = r.json().await.expect("json");
    assert_eq!(status, 200, "{v}");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirm_recorded_in_one_dialog_is_the_models_in_another_and_the_gate_asks() {
    let h = harness().await;
    models_run(
        &h,
        &h.token,
        "Clear my notifications",
        dialog("Clear all 12 notifications?"),
        "31",
    )
    .await;
    // The same dialog (another count): replayed without the model.
    let b1 = start(
        "Clear my notifications",
        PAGE,
        dialog("Clear all 7 notifications?"),
    );
    let r1 = ok(&h, &h.token, &b1).await;
    assert_eq!(
        (calls(&r1), &r1["action"]),
        (0, &Value::from("click(31)")),
        "{r1}"
    );
    // "Confirm" at the same place in another dialog: the model is asked for the step, with
    // the recorded step inside its data block only; its click is the deletion the gate asks
    // about.
    let asked = h.llm.requests().len();
    h.llm.push([Reply::action("I will confirm.", "click(31)")]);
    let b1 = start(
        "Clear my notifications",
        PAGE,
        dialog("Delete your workspace and all its data?"),
    );
    let r1 = ok(&h, &h.token, &b1).await;
    assert_eq!(calls(&r1), 1, "{r1}");
    assert_eq!(r1["action"], "ask_user()", "{r1}");
    assert_eq!(r1["metrics"]["recipe"]["mode"], "healed", "{r1}");
    let prompt = h.llm.user_prompt(asked);
    let block = prompt
        .split("<recipe-step")
        .nth(1)
        .and_then(|b| b.split("</recipe-step>").next())
        .expect("a recipe-step block");
    assert!(
        block.contains("confirm") && block.contains("clear all # notifications"),
        "{block}"
    );
    for line in prompt.lines().filter(|l| l.starts_with("Server note:")) {
        assert!(!line.to_lowercase().contains("clear all"), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recording_members_pick_is_the_models_on_every_run() {
    let h = harness().await;
    // The page with radio `picked` ticked.
    let sheet = |picked: &str| {
        let radio =
            |i: &str, n: &str| field(i, "radio", n, "", if i == picked { "checked" } else { "" });
        vec![
            radio("5", "Dana Lee (my manager)"),
            radio("6", "Sam Ortiz"),
            node("7", "btn", "Save timesheet"),
        ]
    };
    let query = "Send my timesheet for this week";
    h.llm.push([
        Reply::action("Dana approves my time.", "click(5)"),
        Reply::action("Saving.", "click(7)"),
        Reply::action("Saved.", "finish()"),
    ]);
    let b1 = start(query, PAGE, sheet(""));
    let r1 = ok(&h, &h.token, &b1).await;
    let r2 = ok(&h, &h.token, &next(&b1, &r1, PAGE, sheet("5"))).await;
    assert_eq!(r2["action"], "click(7)", "{r2}");
    let r3 = ok(&h, &h.token, &next(&b1, &r2, AFTER, done_page())).await;
    assert_eq!(r3["status"], "completed", "{r3}");
    // Again: the pick is asked of the model (who picks another), the rest replayed.
    h.llm
        .push([Reply::action("This week Sam approves.", "click(6)")]);
    let b1 = start(query, PAGE, sheet(""));
    let r1 = ok(&h, &h.token, &b1).await;
    assert_eq!(
        (calls(&r1), &r1["action"]),
        (1, &Value::from("click(6)")),
        "{r1}"
    );
    let r2 = ok(&h, &h.token, &next(&b1, &r1, PAGE, sheet("6"))).await;
    assert_eq!(
        (calls(&r2), &r2["action"]),
        (0, &Value::from("click(7)")),
        "{r2}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_colleague_never_replays_a_members_recipe_that_is_not_promoted() {
    let h = harness().await;
    let share = || {
        vec![
            node("4", "chk", "Anyone with the link can view"),
            node("5", "btn", "Done"),
        ]
    };
    // The page talked the model into the tick: the gate asks, the member says yes.
    h.llm.push([
        Reply::action("The page says to allow link access.", "check(4)"),
        Reply::action("Done.", "finish()"),
    ]);
    let query = "Share the Q3 report with finance";
    let b1 = start(query, PAGE, share());
    let r1 = ok(&h, &h.token, &b1).await;
    assert_eq!(r1["action"], "ask_user()", "{r1}");
    let r2 = ok(&h, &h.token, &reply_here(&b1, &r1, "yes")).await;
    assert_eq!(r2["action"], "check(4)", "{r2}");
    let r3 = ok(&h, &h.token, &next(&b1, &r2, AFTER, done_page())).await;
    assert_eq!(r3["status"], "completed", "{r3}");
    // A colleague's same instruction: the model's, no recipe.
    h.app.seed_user("acme", "grace@acme.com", PW).await;
    let grace = h.app.login("grace@acme.com", PW).await;
    h.llm.push([Reply::action(
        "I will look at the sharing options.",
        "click(5)",
    )]);
    let r1 = ok(&h, &grace, &start(query, PAGE, share())).await;
    assert_eq!(calls(&r1), 1, "{r1}");
    assert!(r1["metrics"].get("recipe").is_none(), "{r1}");
    // The member's own replay asks again before the tick.
    let r1 = ok(&h, &h.token, &start(query, PAGE, share())).await;
    assert_eq!(
        (calls(&r1), &r1["action"]),
        (0, &Value::from("ask_user()")),
        "{r1}"
    );
}

/// The new-note form, its title field holding `title`, a tip in the way when `tip`.
fn note_form(title: &str, tip: bool) -> Vec<Value> {
    let mut nodes = vec![
        field("1", "inp", "Title", title, ""),
        node("2", "btn", "Save note"),
    ];
    if tip {
        nodes.push(node("3", "btn", "Dismiss tip"));
    }
    nodes
}

/// A run of "Add a note titled `title`" by `token` with the model's answers `script`.
async fn note_run(h: &Harness, token: &str, title: &str, first_fails: bool) -> Vec<Value> {
    let query = format!("Add a note titled {title}");
    let b1 = start(&query, PAGE, note_form("", first_fails));
    let r1 = ok(h, token, &b1).await;
    let mut out = vec![r1.clone()];
    let mut last = r1;
    if first_fails {
        // The client reports the fill failed (a tip was in the way).
        let failed = api_tests::flows::failing(
            next(&b1, &last, PAGE, note_form("", true)),
            "ELEMENT_NOT_INTERACTABLE",
            "another element would receive the input",
            "setValue",
        );
        last = ok(h, token, &failed).await;
        out.push(last.clone());
        last = ok(h, token, &next(&b1, &last, PAGE, note_form("", false))).await;
        out.push(last.clone());
    }
    let r = ok(h, token, &next(&b1, &last, PAGE, note_form(title, false))).await;
    out.push(r.clone());
    let r = ok(h, token, &next(&b1, &r, AFTER, done_page())).await;
    assert_eq!(r["status"], "completed", "{r}");
    out.push(r);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_colleagues_healed_run_never_changes_the_organisations_recipe() {
    let h = harness().await;
    h.llm.push([
        Reply::action("I type the title.", "setValue(1, \"Groceries\")"),
        Reply::action("I save.", "click(2)"),
        Reply::action("Saved.", "finish()"),
    ]);
    note_run(&h, &h.token, "Groceries", false).await;
    let store = h.app.ctx.store.as_ref();
    let adas = store.recipes("acme", 10).await.expect("list").remove(0);
    let settings = h.app.ctx.config.agent.recipes;
    let org =
        shared::agent::promotion::promote(store, &adas, "admin", chrono::Utc::now(), settings)
            .await
            .expect("promoted");
    assert_eq!(org.steps.len(), 3);
    // A colleague's client reports the first replayed fill failed: the replay ends there, and
    // the model carries on alone (a tip dismissed first, then the fill and Save).
    h.app.seed_user("acme", "grace@acme.com", PW).await;
    let grace = h.app.login("grace@acme.com", PW).await;
    h.llm.push([
        Reply::action("A tip is in the way.", "click(3)"),
        Reply::action("I type the title.", "setValue(1, \"Laundry\")"),
        Reply::action("I save.", "click(2)"),
        Reply::action("Saved.", "finish()"),
    ]);
    let answers = note_run(&h, &grace, "Laundry", true).await;
    assert_eq!(
        calls(&answers[0]),
        0,
        "the organisation's recipe replayed: {}",
        answers[0]
    );
    assert!(
        answers[1..].iter().all(|a| calls(a) >= 1),
        "the model carries on: {answers:?}"
    );
    // The organisation's recipe is as promoted; the colleague's run is her own version.
    let now = store
        .recipe("acme", &org.id)
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(now.steps, org.steps);
    let all = store.recipes("acme", 10).await.expect("list");
    let graces = all
        .iter()
        .find(|r| !r.promoted && r.owner != adas.owner)
        .expect("hers");
    assert_eq!(graces.steps.len(), 4, "the tip, the fill, Save, the finish");
    // Another colleague replays the organisation's three steps, without the model.
    h.app.seed_user("acme", "carol@acme.com", PW).await;
    let carol = h.app.login("carol@acme.com", PW).await;
    let answers = note_run(&h, &carol, "Taxes", false).await;
    assert!(answers.iter().all(|a| calls(a) == 0), "{answers:?}");
    assert_eq!(answers[0]["action"], "setValue(1, \"Taxes\")");
}
