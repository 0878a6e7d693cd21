//! MCP tools against a real MCP server: the Python SDK's FastMCP over Streamable HTTP on
//! 127.0.0.1, started by `scripts/test` (which exports `MCP_TEST_URL` and its bearer token as
//! `AGENT_MCP_SECRET_TEST`). Listing with tiers, an auto-tier call, approved calls, a failing
//! tool, unreachable and unauthorised servers, tenant isolation, status, no credential leaks.

use api_tests::agent::{agent, Agent, PW};
use api_tests::{expect_error, on_both_stores};
use reqwest::Method;
use serde_json::{json, Value};
use shared::clock::Clock;
use shared::provisioning::{create_mcp_server, NewMcpServer};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test, which starts the MCP server")
    })
}

async fn add_server(a: &Agent, tenant: &str, name: &str, url: &str, secret: Option<&str>) {
    create_mcp_server(
        a.app.ctx.store.as_ref(),
        NewMcpServer {
            tenant_id: tenant,
            name,
            url,
            auth_secret: secret,
            auth_header: None,
            tiers: &["add=auto".to_owned()],
        },
        a.app.clock.now(),
    )
    .await
    .expect("mcp server");
}

async fn with_servers(dynamodb: bool) -> Agent {
    let a = agent(dynamodb).await;
    let url = env("MCP_TEST_URL");
    add_server(&a, "acme", "test", &url, Some("env:AGENT_MCP_SECRET_TEST")).await;
    add_server(&a, "acme", "nokey", &url, None).await;
    add_server(&a, "acme", "down", "http://127.0.0.1:9/mcp", None).await;
    a
}

async fn call(a: &Agent, tool: &str, arguments: Value) -> (u16, Value) {
    a.tool(
        "mcp/call",
        json!({ "server": "test", "tool": tool, "arguments": arguments }),
    )
    .await
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

async fn tools_calls_and_approvals(dynamodb: bool) {
    let a = with_servers(dynamodb).await;
    let secret = env("AGENT_MCP_SECRET_TEST");

    let listed = a
        .ok(Method::GET, "/api/v1/agent/mcp/tools", json!(null))
        .await;
    let body = listed.to_string();
    assert!(
        !body.contains(&secret),
        "the credential never leaves the server"
    );
    let tools = listed["data"]["tools"].as_array().expect("tools");
    let tier = |name: &str| {
        tools
            .iter()
            .find(|t| t["server"] == "test" && t["name"] == name)
            .map(|t| t["tier"].clone())
    };
    assert_eq!(tier("add"), Some(json!("auto")), "{listed}");
    assert_eq!(tier("shout"), Some(json!("individual")));
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["description"], "Adds two whole numbers.");
    assert!(add["inputSchema"]["properties"]["a"].is_object(), "{add}");
    let state = |name: &str| {
        listed["data"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["status"].clone())
    };
    assert_eq!(state("test"), Some(json!("online")));
    assert_eq!(
        state("nokey"),
        Some(json!("offline")),
        "401 without the credential"
    );
    assert_eq!(state("down"), Some(json!("offline")));

    // An auto-tier tool runs at once.
    let (status, v) = call(&a, "add", json!({ "a": 2, "b": 3 })).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(text_of(&v["data"]), "5");
    assert_eq!(v["data"]["isError"], false);

    // An individual-tier tool waits for its approval, then runs once.
    let (status, v) = call(&a, "shout", json!({ "text": "hello" })).await;
    assert_eq!(status, 202, "{v}");
    assert_eq!(v["data"]["toolName"], "mcp.call");
    assert_eq!(v["data"]["tier"], "individual");
    assert_eq!(v["data"]["args"]["tool"], "shout");
    let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "done", "{d}");
    assert_eq!(text_of(&d["result"]), "HELLO");

    // A failing tool is an answer with isError, not a server fault.
    let (_, v) = call(&a, "broken", json!({})).await;
    let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "done", "{d}");
    assert_eq!(d["result"]["isError"], true);
    assert!(text_of(&d["result"]).contains("always fails"), "{d}");

    // Unknown servers and malformed names.
    let (status, v) = a
        .tool("mcp/call", json!({ "server": "nope", "tool": "add" }))
        .await;
    assert_eq!(
        (status, v["code"].as_str()),
        (404, Some("MCP_SERVER_NOT_FOUND")),
        "{v}"
    );
    let (status, v) = a
        .tool("mcp/call", json!({ "server": "test", "tool": "../x" }))
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["details"][0]["field"], "tool");
    // An unreachable server fails the call with a clear upstream error (`add` is auto there too).
    let (status, v) = a
        .tool(
            "mcp/call",
            json!({ "server": "down", "tool": "add", "arguments": { "a": 1, "b": 1 } }),
        )
        .await;
    assert_eq!(
        (status, v["code"].as_str()),
        (502, Some("MCP_ERROR")),
        "{v}"
    );
    // So does an approved call to a server that refuses the credential-less request.
    let (_, v) = a
        .tool(
            "mcp/call",
            json!({ "server": "nokey", "tool": "shout", "arguments": { "text": "x" } }),
        )
        .await;
    let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(d["error"]["code"], "MCP_ERROR");

    let view = a.view().await;
    assert!(!view.to_string().contains(&secret));
    let audit = view["audit"].as_array().unwrap();
    assert!(audit
        .iter()
        .any(|e| e["action"] == "mcp.call" && e["target"] == "test/add" && e["outcome"] == "ok"));
    assert!(audit
        .iter()
        .any(|e| e["action"] == "mcp.call" && e["target"] == "test/shout"));
}

async fn servers_belong_to_their_tenant(dynamodb: bool) {
    let a = with_servers(dynamodb).await;
    // A credential never crosses a network in the clear: plain http only to this host.
    for (url, ok) in [
        ("http://mcp.example.com/mcp", false),
        ("ftp://127.0.0.1/mcp", false),
        ("https://mcp.example.com/mcp", true),
    ] {
        let made = create_mcp_server(
            a.app.ctx.store.as_ref(),
            NewMcpServer {
                tenant_id: "acme",
                name: &format!("u{}", url.len()),
                url,
                auth_secret: None,
                auth_header: None,
                tiers: &[],
            },
            a.app.clock.now(),
        )
        .await;
        assert_eq!(made.is_ok(), ok, "{url}");
    }
    a.app.seed_user("other", "bob@other.com", PW).await;
    let bob = a.app.login("bob@other.com", PW).await;
    let r = a
        .send_as(&bob, Method::GET, "/api/v1/agent/mcp/tools", None)
        .await;
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["data"]["tools"], json!([]), "{v}");
    let r = a
        .send_as(
            &bob,
            Method::POST,
            "/api/v1/agent/mcp/call",
            Some(json!({ "sessionId": a.session, "server": "test", "tool": "add" })),
        )
        .await;
    expect_error(r, 404, "AGENT_SESSION_NOT_FOUND").await;

    // Status: one part per server; an offline one makes the whole degraded, not offline.
    let v = a.ok(Method::GET, "/api/v1/agent/status", json!(null)).await;
    let part = |name: &str| {
        v["data"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["status"].clone())
    };
    assert_eq!(part("mcp:test"), Some(json!("online")), "{v}");
    assert_eq!(part("mcp:down"), Some(json!("offline")));
    assert_eq!(v["data"]["status"], "degraded");
    assert!(!v.to_string().contains(&env("AGENT_MCP_SECRET_TEST")));
}

on_both_stores!(
    needs = "needs the MCP test server (and moto for the DynamoDB run): scripts/test starts them";
    tools_calls_and_approvals,
    servers_belong_to_their_tenant
);
