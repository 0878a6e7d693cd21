//! Building blocks of multi-step interact tests: pages as the extension sends them, follow-up
//! requests with the client's report, and model answers in the full answer format.

use serde_json::{json, Value};

use crate::harness::{harness_with, Harness};
use crate::scripted::Reply;
use crate::AppOptions;

/// An interactive-tree node.
pub fn node(i: &str, r: &str, n: &str) -> Value {
    json!({ "i": i, "r": r, "n": n })
}

/// A node with a value (`v`) and states (`s`).
pub fn field(i: &str, r: &str, n: &str, v: &str, s: &str) -> Value {
    let mut node = node(i, r, n);
    if !v.is_empty() {
        node["v"] = json!(v);
    }
    if !s.is_empty() {
        node["s"] = json!(s);
    }
    node
}

/// A new task's first request, in a new session.
pub fn start(query: &str, url: &str, nodes: Vec<Value>) -> Value {
    json!({
        "url": url,
        "query": query,
        "sessionId": uuid::Uuid::new_v4().to_string(),
        "interactiveTree": nodes,
    })
}

/// `body` from a client that says it runs every answer shape the server has (server rounds
/// as `toolAction`, `chainedActions`); the requests made from it with [`next`] say so too.
pub fn capable(mut body: Value) -> Value {
    body["clientCapabilities"] = json!(shared::agent::request::Capabilities::ALL);
    body
}

/// The next request of the task `previous` answered: the client executed the action (success)
/// and sends the page it sees now at `url`.
pub fn next(previous: &Value, answer: &Value, url: &str, nodes: Vec<Value>) -> Value {
    let mut b = previous.clone();
    b["taskId"] = answer["taskId"].clone();
    b["sessionId"] = answer["sessionId"].clone();
    b["url"] = json!(url);
    b["interactiveTree"] = Value::Array(nodes);
    b["lastActionStatus"] = json!("success");
    b["lastActionResult"] = json!({ "success": true });
    for k in ["lastActionError", "domChanges", "clientObservations"] {
        if let Some(o) = b.as_object_mut() {
            o.remove(k);
        }
    }
    b
}

/// The user's reply `text` to the task's question, sent (with its `taskId`) from `url`.
pub fn reply(previous: &Value, answer: &Value, url: &str, nodes: Vec<Value>, text: &str) -> Value {
    let mut b = next(previous, answer, url, nodes);
    b["query"] = json!(text);
    b
}

/// The user's reply `text`, sent from the page of `previous`.
pub fn reply_here(previous: &Value, answer: &Value, text: &str) -> Value {
    let url = previous["url"].as_str().unwrap_or_default();
    let nodes = previous["interactiveTree"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    reply(previous, answer, url, nodes, text)
}

/// `body` reporting that the last action failed with `code`.
pub fn failing(mut body: Value, code: &str, message: &str, action: &str) -> Value {
    body["lastActionStatus"] = json!("failure");
    body["lastActionResult"] = json!({ "success": false });
    body["lastActionError"] = json!({ "message": message, "code": code, "action": action });
    body
}

/// An answer with a plan: `<Plan>`, `<Thought>`, `<Step>` and `<Action>`.
pub fn planned(plan: &[&str], step: usize, thought: &str, action: &str) -> Reply {
    let lines: Vec<String> = plan
        .iter()
        .enumerate()
        .map(|(k, s)| format!("{}. {s}", k + 1))
        .collect();
    Reply::Content(format!(
        "<Plan>\n{}\n</Plan>\n<Thought>{thought}</Thought>\n<Step>{step}</Step>\n<Action>{action}</Action>",
        lines.join("\n")
    ))
}

/// An answer made of the given sections, in order (`("Action", "click(1)")`, ...).
pub fn sections(parts: &[(&str, &str)]) -> Reply {
    Reply::Content(
        parts
            .iter()
            .map(|(tag, text)| format!("<{tag}>{text}</{tag}>"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// A harness on the embedded store or on DynamoDB + S3, with further options from `opts`.
pub async fn on_store(dynamodb: bool, opts: impl FnOnce(AppOptions) -> AppOptions) -> Harness {
    harness_with(|o| opts(AppOptions { dynamodb, ..o })).await
}

/// A round a server tool ended: the client waits a second and the task goes on.
pub fn assert_server_wait(r: &Value) {
    assert_eq!(
        (r["action"].as_str(), r["status"].as_str()),
        (Some("wait(1)"), Some("executing"))
    );
}

/// A round a server tool ended, naming the tool as `tool_action`.
pub fn assert_server_round(r: &Value, tool_action: &Value) {
    assert_server_wait(r);
    assert_eq!(&r["toolAction"], tool_action);
}

/// One run of the extension's captured two-step task by `token`, in a new session, its
/// instruction worded `query` when given: both answers (each must be a 200). The second
/// request reports an added element: the button's new name and the page's new title show the
/// click worked.
pub async fn captured_run(h: &Harness, token: &str, query: Option<&str>) -> (Value, Value) {
    let (mut first, mut second) = crate::captured_steps();
    if let Some(q) = query {
        first["query"] = json!(q);
        second["query"] = json!(q);
    }
    let session = uuid::Uuid::new_v4().to_string();
    first["sessionId"] = json!(session);
    let a = ok_as(h, token, &first).await;
    second["sessionId"] = json!(session);
    second["taskId"] = a["taskId"].clone();
    second["domChanges"]["addedCount"] = json!(1);
    let b = ok_as(h, token, &second).await;
    (a, b)
}

/// `body` sent by `token`'s user: the answer, which must be a 200.
pub async fn ok_as(h: &Harness, token: &str, body: &Value) -> Value {
    let r = h.interact_with(body, token, None).await;
    let status = r.status();
    let v: Value = r.json().await.expect("json");
    assert_eq!(status, 200, "{v} (task {})", body["taskId"]);
    v
}
