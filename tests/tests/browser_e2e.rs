//! End to end in a real browser: headless Chromium runs the extension's loop (accessibility
//! tree → interact → action over the DevTools protocol → report) against the loopback shop,
//! with local-api as the server and a model that picks elements by accessible name. Each
//! scenario asserts the page's final state (and the shop's orders).

use api_tests::browser::actions::Client;
use api_tests::browser::corpus::corpus_scenarios;
use api_tests::browser::model::{BrowserModel, Intent};
use api_tests::browser::rig::Rig;
use api_tests::browser::run::{Options, Outcome};
use api_tests::browser::scenario::{
    chained_checkout, checkout_in_own_words, lab_scenarios, on_lab, one_answer_checkout,
    shop_scenarios, Check, Scenario,
};
use api_tests::AppOptions;

/// One browser at a time: the scenarios' timing must not depend on how many Chromiums the
/// test runner started side by side on a small machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Most interact calls one scenario may take.
const MAX_STEPS: usize = 15;

/// The scripted model and the rig it answers for.
struct Env {
    model: BrowserModel,
    rig: Rig,
}

impl Env {
    async fn start() -> Self {
        Self::start_with(|o| o).await
    }

    async fn start_with(opts: impl FnOnce(AppOptions) -> AppOptions) -> Self {
        let model = BrowserModel::start().await;
        let rig = Rig::start(opts(AppOptions::with_llm(&model.base_url)))
            .await
            .expect("start the rig");
        Self { model, rig }
    }

    /// Runs one scenario in a new tab with the extension's behaviour and asserts its checks.
    async fn run(&self, scenario: &Scenario) -> Outcome {
        self.run_as(scenario, Client::Extension).await
    }

    async fn run_as(&self, scenario: &Scenario, client: Client) -> Outcome {
        self.run_with(
            scenario,
            Options {
                client,
                ..Options::new(MAX_STEPS)
            },
        )
        .await
    }

    async fn run_with(&self, scenario: &Scenario, opts: Options) -> Outcome {
        let (out, failed) = self
            .rig
            .attempt(scenario, Some(&self.model), opts)
            .await
            .expect("tab");
        assert!(
            failed.is_empty() && self.model.errors().is_empty(),
            "{}: failed {failed:?}; model: {:?}; run: {out:#?}",
            scenario.name,
            self.model.errors()
        );
        out
    }
}

async fn scenario(name: &str) -> Outcome {
    let scenario = shop_scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .expect("scenario");
    let _one = ONE_AT_A_TIME.lock().await;
    Env::start().await.run(&scenario).await
}

/// The competent trajectories, on the harness that behaves as the shipping extension: the lab's
/// widgets (a "Next" that keeps its id ×4, a quantity "+" ×3, "Show more", search then an
/// answer in `finish("…")`, values the page reformats, three fields and the button from one
/// answer, an autocomplete, a three-page wizard, `findText` ×3, a hover menu, a slow page,
/// scrolling to find an element), the shop's checkouts (one confirmed "Yes, place the order"),
/// and the real corpus pages (`scripts/agent-eval` runs the same with a real model). Each
/// completes with its checks, and the server's rules never step in — the one confirmation
/// before "Place order" aside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn competent_trajectories_complete_with_no_intervention() {
    let _one = ONE_AT_A_TIME.lock().await;
    // Each trajectory is the model's own (the two checkouts are one task: with recipes on,
    // the second would replay the first; tests/recipes.rs measures that).
    let env = Env::start_with(|o| o.set("RECIPES", "off")).await;
    let mut all = lab_scenarios();
    all.push(checkout_in_own_words());
    all.push(one_answer_checkout());
    all.extend(
        shop_scenarios().into_iter().filter(|s| {
            ["search-and-open", "scroll-to-load", "navigate-and-back"].contains(&s.name)
        }),
    );
    all.extend(corpus_scenarios());
    assert!(all.len() >= 25, "{}", all.len());
    let mut stepped_in = Vec::new();
    for scenario in &all {
        let out = env.run(scenario).await;
        let confirmations = out.interventions.get("confirmation").copied().unwrap_or(0);
        let others: Vec<&String> = out
            .interventions
            .keys()
            .filter(|k| *k != "confirmation")
            .collect();
        let expected = u64::from(scenario.name.starts_with("checkout"));
        println!(
            "{:32} steps {:2}  model calls {:2}  interventions {:?}",
            scenario.name, out.steps, out.llm_calls, out.interventions
        );
        if !others.is_empty() || confirmations != expected {
            stepped_in.push((scenario.name, out.interventions.clone()));
        }
    }
    assert!(
        stepped_in.is_empty(),
        "the rules stepped in: {stepped_in:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn search_form_then_result() {
    let out = scenario("search-and-open").await;
    // Submitted with the form's button (the extension's Enter submits nothing).
    assert!(
        out.executed
            .get(1)
            .is_some_and(|r| r.len() == 1 && r[0].starts_with("click(")),
        "{out:#?}"
    );
}

/// The extension's measured behaviour, in the harness every browser test runs on: a key
/// press submits nothing yet reports success, a second window scroll does nothing, a
/// `findText` of a missing text reports success, and boxes stay in document coordinates
/// when the window scrolls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn the_harness_behaves_as_the_shipping_extension() {
    use api_tests::browser::page::{settle, snapshot};
    use api_tests::browser::run::open;
    let _one = ONE_AT_A_TIME.lock().await;
    let env = Env::start().await;
    let tab = env.rig.browser.new_page().await.expect("tab");
    open(&tab, "http://shop.test/", true).await.expect("open");
    let page = snapshot(&tab).await.expect("page");
    // Interactive elements only: the heading "Outdoor Shop" is not in the tree.
    assert!(
        page.ids_named("Outdoor Shop").is_empty(),
        "{:?}",
        page.nodes
    );
    assert!(
        page.nodes
            .iter()
            .all(|n| n["r"] != "heading" && n["r"] != "text"),
        "{:?}",
        page.nodes
    );
    let field = page.ids_named("Search products")[0].clone();
    act(&tab, &format!("setValue({field}, \"stove\")"), &page).await;
    act(&tab, "press(\"Enter\")", &page).await;
    settle(&tab).await;
    assert_eq!(
        tab.eval("location.pathname").await,
        Ok("/".into()),
        "Enter submitted the form"
    );
    assert_eq!(
        tab.eval("document.activeElement === document.body").await,
        Ok(true.into()),
        "setValue leaves the field blurred"
    );
    act(&tab, "findText(\"no such text anywhere\")", &page).await;
    // A tall page: the first scroll moves, the second does not; boxes do not move.
    open(&tab, "http://shop.test/journal", true)
        .await
        .expect("open");
    tab.eval("document.body.style.height = '5000px'")
        .await
        .expect("tall");
    let before = snapshot(&tab).await.expect("page");
    act(&tab, "scroll(true, 1)", &before).await;
    let y1 = tab.eval("scrollY").await.expect("y");
    assert_ne!(y1, serde_json::json!(0), "the first scroll scrolls");
    act(&tab, "scroll(true, 1)", &before).await;
    assert_eq!(
        tab.eval("scrollY").await.expect("y"),
        y1,
        "a second scroll does nothing"
    );
    let link = tab
        .eval("(() => { const a = document.createElement('a'); a.href = '/x'; a.textContent = 'Top link'; document.body.prepend(a); return true; })()")
        .await;
    assert_eq!(link, Ok(true.into()));
    let scrolled = snapshot(&tab).await.expect("page");
    tab.eval("scrollTo(0, 0)").await.expect("top");
    let top = snapshot(&tab).await.expect("page");
    let box_of = |p: &api_tests::browser::page::Snapshot| {
        p.nodes
            .iter()
            .find(|n| n["n"] == "Top link")
            .map(|n| n["box"].clone())
    };
    assert!(box_of(&top).is_some(), "{:?}", top.nodes);
    assert_eq!(
        box_of(&scrolled),
        box_of(&top),
        "boxes are document coordinates"
    );
    tab.close().await;
}

/// Runs `action` as the extension does; it must report success.
async fn act(
    tab: &api_tests::browser::cdp::Tab,
    action: &str,
    page: &api_tests::browser::page::Snapshot,
) {
    use api_tests::browser::actions::{execute, parse};
    let r = execute(
        tab,
        Client::Extension,
        &parse(action).expect("parsed"),
        page,
    )
    .await;
    assert!(r.is_ok(), "{action}: {r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_chain_runs_on_a_client_that_runs_chains() {
    let _one = ONE_AT_A_TIME.lock().await;
    let out = Env::start_with(|o| o.set("CHAINED_ACTIONS", "on"))
        .await
        .run_as(&chained_checkout(), Client::Ideal)
        .await;
    assert!(
        out.executed.iter().any(|round| round.len() == 4),
        "{out:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn one_answer_fills_the_shipping_form_and_continues_on_the_extension() {
    let _one = ONE_AT_A_TIME.lock().await;
    let env = Env::start().await;
    let out = env.run(&one_answer_checkout()).await;
    // Five actions from one answer went out one per request, with no model call between.
    assert!(
        out.executed.iter().all(|round| round.len() == 1),
        "{out:#?}"
    );
    assert_eq!(
        ran(&out, "setValue") + ran(&out, "selectOption") + ran(&out, "check"),
        4
    );
    // Every model call but finish's ran one action; the filling answer ran four more.
    assert_eq!(env.model.calls() - 1 + 4, out.executed.len(), "{out:#?}");
    assert!(
        out.interventions.keys().all(|k| k == "confirmation"),
        "{out:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn two_page_checkout_confirmed_through_ask_user() {
    let out = scenario("checkout-confirmed").await;
    // "Continue to review" on the shipping form (no card, no price) went through untouched,
    // and only "Place order" was asked first.
    assert_eq!(out.questions.len(), 1, "{out:#?}");
    assert!(out.questions[0].contains("Place order"), "{out:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn declined_order_is_never_placed() {
    let out = scenario("checkout-declined").await;
    assert_eq!(out.questions.len(), 1, "{out:#?}");
    assert!(
        out.executed
            .iter()
            .flatten()
            .all(|a| !a.starts_with("click")),
        "{out:#?}"
    );
}

/// How many of the actions the client ran start with `prefix`.
fn ran(out: &Outcome, prefix: &str) -> usize {
    out.executed
        .iter()
        .flatten()
        .filter(|a| a.starts_with(prefix))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn scrolling_loads_the_target() {
    let out = scenario("scroll-to-load").await;
    // The link only exists after the second load: the loader's text found twice (each
    // search scrolls to it; the extension scrolls the window only once per page).
    assert!(ran(&out, "findText(") >= 2, "{out:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn navigate_then_go_back() {
    scenario("navigate-and-back").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_failed_action_is_reported_and_the_task_goes_on_another_way() {
    let out = scenario("failed-fill-then-another-way").await;
    // The fill ran once and failed (the client said so in `lastActionError`); the server did
    // not send it again, and the model, told of the failure, took the other way.
    assert_eq!(ran(&out, "setValue("), 1, "{out:#?}");
    assert!(ran(&out, "click(") >= 1, "{out:#?}");
}

// The server's own rounds — a refused answer, the step's deadline, the token budget, the tool
// limit, a tool that does not fit in time, a secret withheld from a retried answer — each
// through the client that behaves as the shipping extension, which stops on an answer it
// cannot run (a SERVER `toolAction` among them): the task goes on, or ends where the user sees
// it.

/// Runs `scenario` on a server started with `opts`, on the extension-like client, and checks
/// that some round went out as the `wait(1)` the extension runs.
async fn through_the_extension(
    opts: impl FnOnce(AppOptions) -> AppOptions,
    scenario: &Scenario,
    run: impl FnOnce(Options) -> Options,
) -> (Outcome, BrowserModel) {
    let _one = ONE_AT_A_TIME.lock().await;
    let env = Env::start_with(opts).await;
    let out = env
        .run_with(
            scenario,
            run(Options {
                client: Client::Extension,
                ..Options::new(MAX_STEPS)
            }),
        )
        .await;
    assert!(
        out.error.is_none() && out.actions.iter().any(|a| a == "wait(1)"),
        "{out:#?}"
    );
    (out, env.model)
}

/// "Show more lamps." on the lab's list, the model doing `first` (its server tools, its slow
/// answers) before it clicks "Show more" and finishes.
fn show_more(name: &'static str, first: Vec<Intent>) -> Scenario {
    let mut script = first;
    script.extend([
        Intent::Click("Show more"),
        Intent::Finish("Six lamps are shown."),
    ]);
    on_lab(
        name,
        "/more",
        "Show more lamps.",
        script,
        vec![
            Check::Status("completed"),
            Check::Js("document.querySelectorAll('#list li').length === 6"),
        ],
    )
}

/// A server whose step has 8 s (5.5 s for the model's answers) and whose model calls may take
/// them all (a slow answer is not cut off and asked again).
fn eight_second_steps(o: AppOptions) -> AppOptions {
    o.set("STEP_DEADLINE_MS", "8000")
        .set("LLM_TIMEOUT_MS", "20000")
}

/// The thought the round's `wait(1)` went out with.
fn round_thought(out: &Outcome) -> &str {
    out.actions
        .iter()
        .position(|a| a == "wait(1)")
        .map_or("", |k| out.thoughts[k].as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_button_that_does_nothing_ends_visibly_after_the_loop_guards_rounds() {
    use api_tests::browser::model::Intent::Click;
    let scenario = on_lab(
        "no-op-button",
        "/noop",
        "Refresh the sales figures until they show today's numbers.",
        vec![Click("Refresh figures"); 20],
        vec![Check::Status("failed")],
    );
    let (out, _) = through_the_extension(|o| o, &scenario, |o| o).await;
    assert!(out.interventions.contains_key("loop"), "{out:#?}");
    assert_eq!(out.actions.last().map(String::as_str), Some("fail()"));
    assert!(round_thought(&out).contains("rethinking"), "{out:#?}");
    assert!(out.thought.contains("stopping"), "{out:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_step_out_of_time_after_a_note_goes_on_and_says_the_note() {
    use api_tests::browser::model::Intent::{Raw, Slow, Wait};
    let scenario = show_more(
        "step-deadline",
        vec![
            Raw("remember(\"shelf\", \"lamps\")"),
            // Answered after the step's model time: never read.
            Slow(7_000),
            Wait(1),
        ],
    );
    let (out, _) = through_the_extension(eight_second_steps, &scenario, |o| o).await;
    // The note the model kept reaches the user in the round's thought.
    assert!(
        round_thought(&out).contains("Noted \"shelf\". It reads: lamps"),
        "{out:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_round_the_token_budget_ends_goes_on_with_the_next_call() {
    use api_tests::browser::model::Intent::Raw;
    // One model call's largest use is reserved per call (PROMPT_PAGE_TOKENS + 4 000 + the
    // answer's limit): a step has room for its first call, not for a second.
    let one_call: u64 = 6_000 + 4_000 + 800;
    let scenario = show_more("token-budget", vec![Raw("remember(\"shelf\", \"lamps\")")]);
    let budget = (one_call * 2 - 1).to_string();
    let (out, _) = through_the_extension(
        |o| {
            o.set("PROMPT_PAGE_TOKENS", "6000")
                .set("LLM_MAX_TOKENS", "800")
                .set("TENANT_DAILY_TOKEN_BUDGET", budget)
        },
        &scenario,
        |o| o,
    )
    .await;
    let thought = round_thought(&out);
    assert!(
        thought.contains("token budget") && thought.contains("Noted \"shelf\""),
        "{out:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_fourth_tool_in_one_request_runs_with_the_next_call() {
    use api_tests::browser::model::Intent::Raw;
    let scenario = show_more(
        "tool-limit",
        vec![
            Raw("remember(\"a\", \"1\")"),
            Raw("remember(\"b\", \"2\")"),
            Raw("remember(\"c\", \"3\")"),
            Raw("remember(\"d\", \"4\")"),
        ],
    );
    let (out, model) = through_the_extension(|o| o, &scenario, |o| o).await;
    assert_eq!(out.actions[0], "wait(1)", "{out:#?}");
    // The fourth ran first in the next request: the model was not asked for it again.
    assert_eq!(model.calls(), 6, "{out:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_search_that_does_not_fit_in_time_runs_with_the_next_call() {
    use api_tests::browser::model::Intent::{Raw, Slow};
    let scenario = show_more(
        "deferred-search",
        vec![
            // Answered with too little of the step left for a search and an answer after it.
            Slow(3_800),
            Raw("googleSearch(\"harbor lamp\")"),
        ],
    );
    let (out, model) = through_the_extension(eight_second_steps, &scenario, |o| o).await;
    // The round is the search's (not the step out of time): the model's own thought.
    assert_eq!(out.actions[0], "wait(1)", "{out:#?}");
    assert!(round_thought(&out).contains("googleSearch"), "{out:#?}");
    assert_eq!(
        model.calls(),
        3,
        "the search ran without asking again: {out:#?}"
    );
}

/// A retried answer that typed a password comes back as a `wait(1)` (the copy kept for a retry
/// never holds the secret): the client waits, the field is still empty, and the task goes on.
/// The server keeps the password only as a fingerprint from then on, so it can type it again
/// for nobody — not even after the user's yes to a model that still knew it: it tells the model
/// instead, which ends the task where the user sees why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_retried_answer_that_typed_a_password_comes_back_as_a_wait() {
    use api_tests::browser::model::Intent::{Raw, SetValue};
    const PASSWORD: &str = "correct-horse-42";
    let scenario = Scenario {
        replies: vec!["yes"],
        ..on_lab(
            "withheld-secret",
            "/signin",
            "Sign in as ada with the password correct-horse-42.",
            vec![
                SetValue("Username", "ada"),
                SetValue("Password", PASSWORD),
                // The retried answer did not type it: the field is still empty. The instruction
                // that gave it is kept with it hidden, so typing it again is asked first.
                SetValue("Password", PASSWORD),
                Raw("fail(\"I cannot type the password again; please sign in yourself.\")"),
            ],
            vec![
                Check::Status("failed"),
                Check::Js("document.getElementById('pw').value === ''"),
            ],
        )
    };
    let (out, _) = through_the_extension(
        |o| o,
        &scenario,
        |o| Options {
            // The answer that types the password is lost and asked for again.
            lost_answer: Some(2),
            ..o
        },
    )
    .await;
    assert_eq!(out.actions[1], "wait(1)", "{out:#?}");
    assert_eq!(out.questions.len(), 1, "{out:#?}");
    assert!(
        out.actions.iter().all(|a| !a.contains("[secret]")),
        "the hidden value is never typed: {out:#?}"
    );
}
