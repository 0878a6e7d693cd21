//! Realtime against a real Pusher-protocol server: Sockudo, started on 127.0.0.1 by
//! `scripts/test` (which exports `SOCKUDO_PORT`, `SOCKUDO_APP_ID`, `SOCKUDO_KEY`,
//! `SOCKUDO_SECRET`). A WebSocket client subscribes to a session channel with a signature from
//! `/api/pusher/auth` and receives what interact triggers.

use std::time::Duration;

use api_tests::scripted::{Reply, ScriptedLlm};
use api_tests::{AppOptions, TestApp};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message as Ws;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test, which starts Sockudo")
    })
}

/// A Pusher protocol message: event name and decoded data.
async fn next_event(ws: &mut Socket, timeout: Duration) -> Option<(String, Value)> {
    loop {
        let msg = tokio::time::timeout(timeout, ws.next()).await.ok()??.ok()?;
        let Ws::Text(text) = msg else { continue };
        let v: Value = serde_json::from_str(text.as_str()).ok()?;
        let event = v["event"].as_str().unwrap_or("").to_owned();
        let data = match &v["data"] {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
            other => other.clone(),
        };
        if event == "pusher:ping" {
            let _ = ws
                .send(Ws::Text(
                    json!({ "event": "pusher:pong", "data": {} })
                        .to_string()
                        .into(),
                ))
                .await;
            continue;
        }
        return Some((event, data));
    }
}

async fn connect() -> (Socket, String) {
    let url = format!(
        "ws://127.0.0.1:{}/app/{}?protocol=7&client=rust-test&version=1.0",
        env("SOCKUDO_PORT"),
        env("SOCKUDO_KEY")
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("connect to Sockudo");
    let (event, data) = next_event(&mut ws, Duration::from_secs(10))
        .await
        .expect("handshake");
    assert_eq!(event, "pusher:connection_established", "{data}");
    let socket_id = data["socket_id"].as_str().expect("socket id").to_owned();
    (ws, socket_id)
}

async fn subscribe(ws: &mut Socket, channel: &str, auth: &str) -> (String, Value) {
    let msg = json!({ "event": "pusher:subscribe", "data": { "channel": channel, "auth": auth } });
    ws.send(Ws::Text(msg.to_string().into()))
        .await
        .expect("send");
    next_event(ws, Duration::from_secs(10))
        .await
        .expect("subscription answer")
}

/// Options that publish to the test Sockudo.
fn with_sockudo(opts: AppOptions) -> AppOptions {
    opts.set("PUSHER_APP_ID", env("SOCKUDO_APP_ID"))
        .set("PUSHER_KEY", env("SOCKUDO_KEY"))
        .set("PUSHER_SECRET", env("SOCKUDO_SECRET"))
        .set("PUSHER_HOST", "127.0.0.1")
        .set("PUSHER_PORT", env("SOCKUDO_PORT"))
        .set("PUSHER_SCHEME", "http")
}

/// An app that publishes to the test Sockudo, with a scripted model.
async fn sockudo_app(dynamodb: bool) -> (TestApp, ScriptedLlm) {
    let llm = ScriptedLlm::start().await;
    let opts = with_sockudo(AppOptions {
        dynamodb,
        ..AppOptions::with_llm(&llm.base_url)
    });
    (TestApp::spawn_with(opts).await, llm)
}

async fn init_session(app: &TestApp, token: &str, session_id: &str) -> reqwest::Response {
    let init = json!({ "sessionId": session_id, "url": "https://www.example.com/", "domain": "" });
    app.client
        .post(app.url("/api/session/init"))
        .bearer_auth(token)
        .json(&init)
        .send()
        .await
        .expect("init")
}

async fn channel_auth(
    app: &TestApp,
    token: &str,
    socket_id: &str,
    channel: &str,
) -> reqwest::Response {
    app.client
        .post(app.url("/api/pusher/auth"))
        .bearer_auth(token)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("socket_id={socket_id}&channel_name={channel}"))
        .send()
        .await
        .expect("auth")
}

/// A socket subscribed to the session's channel with the caller's signature.
async fn subscribed(app: &TestApp, token: &str, session_id: &str) -> Socket {
    let channel = format!("private-session-{session_id}");
    let (mut ws, socket_id) = connect().await;
    join(app, token, &mut ws, &socket_id, &channel).await;
    ws
}

/// Signs `channel` for the caller and subscribes `ws` to it; the server must accept.
async fn join(app: &TestApp, token: &str, ws: &mut Socket, socket_id: &str, channel: &str) {
    let auth: Value = channel_auth(app, token, socket_id, channel)
        .await
        .json()
        .await
        .expect("json");
    let (event, data) = subscribe(ws, channel, auth["auth"].as_str().expect("auth")).await;
    assert_eq!(event, "pusher_internal:subscription_succeeded", "{data}");
}

async fn interact(app: &TestApp, token: &str, session_id: &str) -> reqwest::Response {
    let body = json!({ "sessionId": session_id, "url": "https://www.example.com/", "query": "Press it",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Press me" }] });
    app.client
        .post(app.url("/api/agent/interact"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("interact")
}

#[tokio::test]
#[ignore = "needs Sockudo: scripts/test starts it"]
async fn interact_events_reach_a_subscribed_side_panel_through_sockudo() {
    let (app, llm) = sockudo_app(false).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    let token = app.login("ada@acme.com", "s3cret-password").await;
    let session_id = uuid::Uuid::new_v4().to_string();
    assert_eq!(init_session(&app, &token, &session_id).await.status(), 200);
    let mut ws = subscribed(&app, &token, &session_id).await;

    llm.push([Reply::action("Clicking the button.", "click(10)")]);
    let response: Value = interact(&app, &token, &session_id)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(response["action"], "click(10)");

    let mut new_messages = Vec::new();
    let mut interact_response = None;
    while interact_response.is_none() {
        let (event, data) = next_event(&mut ws, Duration::from_secs(10))
            .await
            .expect("an event");
        match event.as_str() {
            "new_message" => new_messages.push(data),
            "interact_response" => interact_response = Some(data),
            _ => {}
        }
    }
    let roles: Vec<&str> = new_messages
        .iter()
        .filter_map(|m| m["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, vec!["user", "assistant"]);
    assert!(new_messages
        .iter()
        .all(|m| m["type"] == "new_message" && m["sessionId"] == session_id.as_str()));
    assert_eq!(new_messages[1]["message"]["actionString"], "click(10)");
    let ir = interact_response.expect("interact_response");
    assert_eq!(ir["type"], "interact_response");
    assert_eq!(ir["response"]["taskId"], response["taskId"]);
    assert_eq!(ir["response"]["action"], "click(10)");
}

#[tokio::test]
#[ignore = "needs Sockudo: scripts/test starts it"]
async fn sockudo_refuses_a_forged_channel_signature() {
    let (mut ws, _socket_id) = connect().await;
    let channel = format!("private-session-{}", uuid::Uuid::new_v4());
    let forged = format!("{}:{}", env("SOCKUDO_KEY"), "0".repeat(64));
    let (event, data) = subscribe(&mut ws, &channel, &forged).await;
    assert!(
        event == "pusher:subscription_error" || event == "pusher:error",
        "{event}: {data}"
    );
}

async fn session_ids_are_global(dynamodb: bool) {
    let (app, llm) = sockudo_app(dynamodb).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    app.seed_user("evil", "eve@evil.com", "s3cret-password")
        .await;
    let ada = app.login("ada@acme.com", "s3cret-password").await;
    let eve = app.login("eve@evil.com", "s3cret-password").await;
    let session_id = uuid::Uuid::new_v4().to_string();
    assert_eq!(init_session(&app, &ada, &session_id).await.status(), 200);
    let mut ada_ws = subscribed(&app, &ada, &session_id).await;

    // Eve names Ada's session id: refused everywhere, and nothing reaches Ada's channel.
    api_tests::expect_error(
        init_session(&app, &eve, &session_id).await,
        409,
        "SESSION_ID_TAKEN",
    )
    .await;
    api_tests::expect_error(
        interact(&app, &eve, &session_id).await,
        409,
        "SESSION_ID_TAKEN",
    )
    .await;
    assert!(llm.requests().is_empty(), "the model was not asked");
    let (_eve_ws, eve_socket) = connect().await;
    let channel = format!("private-session-{session_id}");
    api_tests::expect_error(
        channel_auth(&app, &eve, &eve_socket, &channel).await,
        403,
        "FORBIDDEN",
    )
    .await;
    // Eve's own session works, on her own channel only.
    llm.push([
        Reply::action("Clicking.", "click(10)"),
        Reply::action("Clicking.", "click(10)"),
    ]);
    let own = uuid::Uuid::new_v4().to_string();
    assert_eq!(interact(&app, &eve, &own).await.status(), 200);
    assert!(
        next_event(&mut ada_ws, Duration::from_millis(800))
            .await
            .is_none(),
        "nothing of Eve's reaches Ada's channel"
    );
    // Ada's own step still reaches her.
    assert_eq!(interact(&app, &ada, &session_id).await.status(), 200);
    let (event, data) = next_event(&mut ada_ws, Duration::from_secs(10))
        .await
        .expect("an event");
    assert_eq!(event, "new_message", "{data}");
    assert_eq!(data["sessionId"], session_id.as_str());
}

#[tokio::test]
#[ignore = "needs Sockudo: scripts/test starts it"]
async fn a_session_id_belongs_to_one_tenant_so_its_channel_never_crosses_tenants() {
    session_ids_are_global(false).await;
}

#[tokio::test]
#[ignore = "needs Sockudo and moto (DynamoDB/S3): scripts/test starts both"]
async fn on_dynamodb_a_session_id_belongs_to_one_tenant_so_its_channel_never_crosses_tenants() {
    session_ids_are_global(true).await;
}

/// An approved command's output reaches the agent session's channel as `exec_output` events,
/// then `exec_exit`; the channel is signed only for the session's owner.
#[tokio::test]
#[ignore = "needs Sockudo: scripts/test starts it"]
async fn command_output_reaches_the_agent_session_channel() {
    use api_tests::agent::{agent_setup, AgentSetup};
    let a = agent_setup(
        false,
        AgentSetup {
            allow: vec!["echo=.*".into()],
            opts: with_sockudo(AppOptions::default()),
            ..AgentSetup::default()
        },
    )
    .await;
    let channel = format!("private-agent-{}", a.session);
    let (mut ws, socket_id) = connect().await;
    // Someone else may not listen in.
    a.app
        .seed_user("other", "bob@other.com", api_tests::agent::PW)
        .await;
    let bob = a.app.login("bob@other.com", api_tests::agent::PW).await;
    assert_eq!(
        channel_auth(&a.app, &bob, &socket_id, &channel)
            .await
            .status(),
        403
    );
    join(&a.app, &a.token, &mut ws, &socket_id, &channel).await;

    let id = a
        .pending(
            "exec",
            json!({ "program": "echo", "args": ["hello", "sockudo"] }),
        )
        .await;
    let d = a.approve(&id).await;
    let exec_id = d["result"]["execId"].as_str().expect("exec id").to_owned();
    let mut output = String::new();
    loop {
        let (event, data) = next_event(&mut ws, Duration::from_secs(10))
            .await
            .expect("an event");
        match event.as_str() {
            "exec_output" => {
                assert_eq!(data["execId"], exec_id.as_str());
                output.push_str(data["data"].as_str().unwrap_or_default());
            }
            "exec_exit" => {
                assert_eq!(data["status"], "exited", "{data}");
                assert_eq!(data["exitCode"], 0);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(output, "hello sockudo\n");
}
