//! The extension's loop over a real page: read the page, ask the server, execute the action
//! (the idealised client also runs a safe chain; the extension stops at one), report how it
//! went, until the task ends. A question (`ask_user`) is
//! answered from the scenario's replies and sent as the shipping client does: a new send
//! without `taskId`, with the reply as `query`.

use serde_json::{json, Value};

use std::collections::BTreeMap;

use super::actions::{execute, parse, Client, Failure};
use super::cdp::Tab;
use super::page::{before, changes, dom_snapshot, settle, snapshot, Snapshot, OBSERVER};
use super::scenario::{Check, Scenario};
use super::site::Site;

/// The server as the extension calls it.
pub struct Agent {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Agent {
    async fn interact(&self, body: &Value, key: Option<&str>) -> Result<Value, String> {
        let mut request = self
            .http
            .post(format!("{}/api/agent/interact", self.base))
            .bearer_auth(&self.token)
            .json(body);
        if let Some(k) = key {
            request = request.header("Idempotency-Key", k);
        }
        let r = request.send().await.map_err(|e| format!("interact: {e}"))?;
        let status = r.status().as_u16();
        let v: Value = r
            .json()
            .await
            .map_err(|e| format!("interact answer: {e}"))?;
        if status != 200 {
            return Err(format!("interact answered {status}: {v}"));
        }
        Ok(v)
    }
}

/// How a run went.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The task's last status (`completed`, `failed`, ...), or `stuck` (out of steps or
    /// replies), `ended` (the page ended the episode), `client_stopped` (the extension cannot
    /// run the answer and stops sending) or `error`.
    pub status: String,
    /// Interact calls.
    pub steps: usize,
    pub llm_calls: u64,
    /// Tokens and estimated cost, as the server's answers report them.
    pub usage: shared::domain::TokenUsage,
    /// The last thought (a `finish()` answer's text).
    pub thought: String,
    /// Every answer's thought, as the side panel shows them.
    pub thoughts: Vec<String>,
    pub actions: Vec<String>,
    /// What the client ran each round (several actions: a chain).
    pub executed: Vec<Vec<String>>,
    pub questions: Vec<String>,
    /// The server's interventions by kind, as its answers report them (`metrics.interventions`).
    pub interventions: BTreeMap<String, u64>,
    /// Steps that came from the task's recipe, by mode (`replayed`, `healed`), as the answers
    /// report them (`metrics.recipe`).
    pub recipe: BTreeMap<String, u64>,
    /// Each action the client ran (the first of a chain) with the server's verdict on it in
    /// the next answer (`verification`), when there was a next answer with one.
    pub judged: Vec<(String, Value)>,
    /// Orders the shop recorded during the run.
    pub orders: usize,
    pub error: Option<String>,
}

/// How the client reads pages and runs actions.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub client: Client,
    /// Send the page as `dom` (simplified HTML) instead of the `interactiveTree`.
    pub dom: bool,
    pub max_steps: usize,
    /// When the page ended the task (`ended`), run this script on it (to show the end as the
    /// page's own confirmation would) and send it once more so the model can finish (a
    /// finished task is what a recipe is recorded from).
    pub finish_after_end: Option<&'static str>,
    /// The answer to this interact call (1 the first) is lost on the way: every call carries
    /// an `Idempotency-Key`, and this one is sent again with the same key, as a client that
    /// retries does; the run goes on with the second answer (the server's kept copy).
    pub lost_answer: Option<usize>,
}

impl Options {
    pub fn new(max_steps: usize) -> Self {
        Self {
            client: Client::from_env(),
            dom: false,
            max_steps,
            finish_after_end: None,
            lost_answer: None,
        }
    }
}

/// Puts the page into a request: the tree, or the HTML (a non-empty tree or dom is required).
fn put_page(body: &mut Value, page: &Snapshot) {
    body["url"] = json!(page.url);
    body["pageTitle"] = json!(page.title);
    body["viewport"] = json!({ "width": page.viewport.0, "height": page.viewport.1 });
    body["interactiveTree"] = json!(page.nodes);
    match &page.dom {
        Some(dom) => {
            body["dom"] = json!(dom);
            body["domMode"] = json!(if page.dom_ids { "hybrid" } else { "full" });
        }
        None => {
            if let Some(o) = body.as_object_mut() {
                o.remove("dom");
            }
            body["domMode"] = json!("semantic");
        }
    }
}

/// The first request of a task (or a reply, which the client sends the same way). The
/// idealised client says it runs every answer shape; the extension sends no such field.
fn first_body(query: &str, session: &str, page: &Snapshot, client: Client) -> Value {
    let mut body = json!({
        "query": query,
        "sessionId": session,
        "tabId": 1,
        "screenshot": null,
    });
    if client == Client::Ideal {
        body["clientCapabilities"] = json!(shared::agent::request::Capabilities::ALL);
    }
    put_page(&mut body, page);
    body
}

/// Opens `url` in the tab and waits for it to settle.
pub async fn open(tab: &Tab, url: &str, javascript: bool) -> Result<(), String> {
    tab.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": OBSERVER }),
    )
    .await?;
    tab.call(
        "Emulation.setScriptExecutionDisabled",
        json!({ "value": !javascript }),
    )
    .await?;
    tab.call("Page.navigate", json!({ "url": url })).await?;
    settle(tab).await;
    Ok(())
}

/// The chain an answer asks the client to run (empty: none).
fn chain_of(answer: &Value) -> Vec<String> {
    if answer["chainMetadata"]["safeToChain"] != true {
        return Vec::new();
    }
    answer["chainedActions"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["action"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs the scenario in `tab` against the server.
pub async fn run(
    agent: &Agent,
    tab: &Tab,
    site: &Site,
    scenario: &Scenario,
    opts: Options,
) -> Outcome {
    let mut out = Outcome::default();
    let orders = site.orders().len();
    let result = async {
        open(tab, &scenario.start, scenario.javascript).await?;
        let mut replies = scenario.replies.iter().map(|r| r.to_string());
        drive(
            agent,
            tab,
            scenario.task,
            &mut replies,
            None,
            opts,
            &mut out,
        )
        .await
    }
    .await;
    if let Err(e) = result {
        out.status = "error".into();
        out.error = Some(e);
    }
    out.orders = site.orders().len().saturating_sub(orders);
    out
}

/// Reads the page as the client does in `opts`' mode.
async fn read(tab: &Tab, opts: Options) -> Result<Snapshot, String> {
    if opts.dom {
        dom_snapshot(tab).await
    } else {
        snapshot(tab).await
    }
}

/// The extension's loop on the page open in `tab`: the task, the user's `replies` to its
/// questions, until the task ends, the client stops, or `ended` (a JavaScript expression)
/// is true after an action.
pub async fn drive(
    agent: &Agent,
    tab: &Tab,
    task: &str,
    replies: &mut dyn Iterator<Item = String>,
    ended: Option<&str>,
    opts: Options,
    out: &mut Outcome,
) -> Result<(), String> {
    let session = uuid::Uuid::new_v4().to_string();
    let mut page = read(tab, opts).await?;
    let mut body = first_body(task, &session, &page, opts.client);
    let mut ending = false;
    // The action the client ran last, for the verdict on it in the next answer.
    let mut ran: Option<String> = None;
    while out.steps < opts.max_steps {
        out.steps += 1;
        let key = opts.lost_answer.map(|_| uuid::Uuid::new_v4().to_string());
        let mut answer = agent.interact(&body, key.as_deref()).await?;
        if opts.lost_answer == Some(out.steps) {
            answer = agent.interact(&body, key.as_deref()).await?;
        }
        if let Some(a) = ran.take() {
            if answer["verification"].is_object() {
                out.judged.push((a, answer["verification"].clone()));
            }
        }
        out.llm_calls += answer["metrics"]["llmCalls"].as_u64().unwrap_or(0);
        if let Some(mode) = answer["metrics"]["recipe"]["mode"].as_str() {
            *out.recipe.entry(mode.to_owned()).or_default() += 1;
        }
        if let Ok(usage) = serde_json::from_value(answer["usage"].clone()) {
            out.usage.add(usage);
        }
        for kind in answer["metrics"]["interventions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            *out.interventions.entry(kind.to_owned()).or_default() += 1;
        }
        out.thought = answer["thought"].as_str().unwrap_or("").to_owned();
        out.thoughts.push(out.thought.clone());
        out.status = answer["status"].as_str().unwrap_or("").to_owned();
        let action = answer["action"].as_str().unwrap_or("").to_owned();
        out.actions.push(action.clone());
        if opts.client == Client::Extension {
            if let Some(why) = super::extension::cannot_run(&answer) {
                // The shipping extension touches nothing and sends no further request.
                out.executed.push(Vec::new());
                out.status = "client_stopped".into();
                out.error = Some(why);
                return Ok(());
            }
        }
        if ending {
            // The page ended the task: this answer is the last (a finish, or nothing more).
            if out.status != "completed" {
                out.status = "ended".into();
            }
            return Ok(());
        }
        match out.status.as_str() {
            "completed" | "failed" => return Ok(()),
            "needs_user_input" | "awaiting_user" => {
                out.questions
                    .push(answer["userQuestion"].as_str().unwrap_or("").to_owned());
                let Some(reply) = replies.next() else {
                    out.status = "stuck".into();
                    return Ok(());
                };
                page = read(tab, opts).await?;
                let session = answer["sessionId"].as_str().unwrap_or(&session);
                body = first_body(&reply, session, &page, opts.client);
                continue;
            }
            _ => {}
        }
        let chain = chain_of(&answer);
        let run_now = if answer["toolAction"]["toolType"] == "SERVER" {
            Vec::new()
        } else if chain.is_empty() {
            vec![action]
        } else {
            chain
        };
        let mark = before(tab).await;
        let mut failure: Option<(Failure, String)> = None;
        for a in &run_now {
            let result = match parse(a) {
                Some(p) => execute(tab, opts.client, &p, &page).await,
                None => Err(Failure {
                    code: "ACTION_FAILED",
                    message: format!("cannot read the action {a:?}"),
                }),
            };
            if let Err(f) = result {
                failure = Some((f, a.clone()));
                break;
            }
        }
        ran = run_now.first().cloned();
        out.executed.push(run_now);
        settle(tab).await;
        if let Some(js) = ended {
            if tab.eval(js).await == Ok(Value::Bool(true)) {
                out.status = "ended".into();
                let Some(script) = opts.finish_after_end else {
                    return Ok(());
                };
                tab.eval(script).await?;
                ending = true;
            }
        }
        let new = read(tab, opts).await?;
        let (dom, observations) = changes(tab, &mark, &page, &new).await;
        body["taskId"] = answer["taskId"].clone();
        body["sessionId"] = answer["sessionId"].clone();
        put_page(&mut body, &new);
        body["domChanges"] = dom;
        body["clientObservations"] = observations;
        match failure {
            None => {
                body["lastActionStatus"] = json!("success");
                body["lastActionResult"] = json!({ "success": true });
                if let Some(o) = body.as_object_mut() {
                    o.remove("lastActionError");
                }
            }
            Some((f, a)) => {
                body["lastActionStatus"] = json!("failure");
                body["lastActionResult"] = json!({ "success": false });
                body["lastActionError"] =
                    json!({ "message": f.message, "code": f.code, "action": a });
            }
        }
        page = new;
    }
    out.status = "stuck".into();
    Ok(())
}

/// The checks the scenario's outcome fails (none: success).
pub async fn failed_checks(tab: &Tab, scenario: &Scenario, out: &Outcome) -> Vec<String> {
    let mut failed = Vec::new();
    let here = tab.eval("location.href").await.unwrap_or(Value::Null);
    let text = tab
        .eval("document.body ? document.body.innerText : ''")
        .await
        .unwrap_or(Value::Null);
    for check in &scenario.checks {
        let ok = match check {
            Check::Status(s) => out.status == *s,
            Check::Url(u) => here.as_str() == Some(u.as_str()),
            Check::PageText(t) => text.as_str().is_some_and(|x| x.contains(t)),
            Check::Answer(a) => out.thought.to_lowercase().contains(&a.to_lowercase()),
            Check::Orders(n) => out.orders == *n,
            Check::Js(js) => tab.eval(js).await == Ok(Value::Bool(true)),
        };
        if !ok {
            failed.push(format!(
                "{check:?} (status {}, at {here}, answer {:?})",
                out.status, out.thought
            ));
        }
    }
    failed
}
