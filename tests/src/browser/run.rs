//! The extension's loop over a real page: read the page, ask the server, execute the action
//! (or the safe chain), report how it went, until the task ends. A question (`ask_user`) is
//! answered from the scenario's replies and sent as the shipping client does: a new send
//! without `taskId`, with the reply as `query`.

use serde_json::{json, Value};

use super::actions::{execute, parse, Failure};
use super::cdp::Tab;
use super::page::{before, changes, settle, snapshot, Snapshot, OBSERVER};
use super::scenario::{Check, Scenario};
use super::site::Site;

/// The server as the extension calls it.
pub struct Agent {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Agent {
    async fn interact(&self, body: &Value) -> Result<Value, String> {
        let r = self
            .http
            .post(format!("{}/api/agent/interact", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .map_err(|e| format!("interact: {e}"))?;
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

/// How a scenario went.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The task's last status (`completed`, `failed`, ...), or `stuck` / `error`.
    pub status: String,
    /// Interact calls.
    pub steps: usize,
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The last thought (a `finish()` answer's text).
    pub thought: String,
    pub actions: Vec<String>,
    /// What the client ran each round (several actions: a chain).
    pub executed: Vec<Vec<String>>,
    pub questions: Vec<String>,
    /// Orders the shop recorded during the run.
    pub orders: usize,
    pub error: Option<String>,
}

/// Puts the page into a request: the tree, or the HTML when the page has no interactive
/// element (a non-empty tree or dom is required).
fn put_page(body: &mut Value, page: &Snapshot) {
    body["url"] = json!(page.url);
    body["pageTitle"] = json!(page.title);
    body["viewport"] = json!({ "width": page.viewport.0, "height": page.viewport.1 });
    body["interactiveTree"] = json!(page.nodes);
    match &page.dom {
        Some(dom) => {
            body["dom"] = json!(dom);
            body["domMode"] = json!("full");
        }
        None => {
            if let Some(o) = body.as_object_mut() {
                o.remove("dom");
            }
            body["domMode"] = json!("semantic");
        }
    }
}

/// The first request of a task (or a reply, which the client sends the same way).
fn first_body(query: &str, session: &str, page: &Snapshot) -> Value {
    let mut body = json!({
        "query": query,
        "sessionId": session,
        "tabId": 1,
        "screenshot": null,
    });
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

/// The actions an answer asks the client to run: the chain when it is safe, else `action`.
fn to_run(answer: &Value) -> Vec<String> {
    let chain = answer["chainMetadata"]["safeToChain"] == true;
    match answer["chainedActions"].as_array() {
        Some(items) if chain && !items.is_empty() => items
            .iter()
            .filter_map(|i| i["action"].as_str().map(str::to_owned))
            .collect(),
        _ => answer["action"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect(),
    }
}

/// Runs the scenario in `tab` against the server, for at most `max_steps` interact calls.
pub async fn run(
    agent: &Agent,
    tab: &Tab,
    site: &Site,
    scenario: &Scenario,
    max_steps: usize,
) -> Outcome {
    let mut out = Outcome::default();
    let orders = site.orders().len();
    if let Err(e) = drive(agent, tab, scenario, max_steps, &mut out).await {
        out.status = "error".into();
        out.error = Some(e);
    }
    out.orders = site.orders().len().saturating_sub(orders);
    out
}

async fn drive(
    agent: &Agent,
    tab: &Tab,
    scenario: &Scenario,
    max_steps: usize,
    out: &mut Outcome,
) -> Result<(), String> {
    open(tab, &scenario.start, scenario.javascript).await?;
    let session = uuid::Uuid::new_v4().to_string();
    let mut page = snapshot(tab).await?;
    let mut body = first_body(scenario.task, &session, &page);
    let mut replies = scenario.replies.iter();
    while out.steps < max_steps {
        out.steps += 1;
        let answer = agent.interact(&body).await?;
        out.llm_calls += answer["metrics"]["llmCalls"].as_u64().unwrap_or(0);
        out.prompt_tokens += answer["usage"]["promptTokens"].as_u64().unwrap_or(0);
        out.completion_tokens += answer["usage"]["completionTokens"].as_u64().unwrap_or(0);
        out.thought = answer["thought"].as_str().unwrap_or("").to_owned();
        out.status = answer["status"].as_str().unwrap_or("").to_owned();
        let action = answer["action"].as_str().unwrap_or("").to_owned();
        out.actions.push(action.clone());
        match out.status.as_str() {
            "completed" | "failed" => return Ok(()),
            "needs_user_input" | "awaiting_user" => {
                out.questions
                    .push(answer["userQuestion"].as_str().unwrap_or("").to_owned());
                let Some(reply) = replies.next() else {
                    out.status = "stuck".into();
                    return Ok(());
                };
                page = snapshot(tab).await?;
                let session = answer["sessionId"].as_str().unwrap_or(&session);
                body = first_body(reply, session, &page);
                continue;
            }
            _ => {}
        }
        let server_did_it = answer["toolAction"]["toolType"] == "SERVER";
        let run_now = if server_did_it {
            Vec::new()
        } else {
            to_run(&answer)
        };
        let mark = before(tab).await;
        let mut failure: Option<(Failure, String)> = None;
        {
            let ids: Vec<&str> = page.nodes.iter().filter_map(|n| n["i"].as_str()).collect();
            for a in &run_now {
                let result = match parse(a) {
                    Some(p) => execute(tab, &p, &ids).await,
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
        }
        out.executed.push(run_now);
        settle(tab).await;
        let new = snapshot(tab).await?;
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
