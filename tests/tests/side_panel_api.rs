//! Everything the side panel reads: sessions, messages, preferences, task resume, debug
//! routes and Pusher channel auth, through local-api's router.

use api_tests::scripted::{Reply, ScriptedLlm};
use api_tests::{expect_error, AppOptions, TestApp};
use chrono::Duration;
use serde_json::{json, Value};

const PW: &str = "s3cret-password";

struct Panel {
    app: TestApp,
    token: String,
}

async fn panel_with(opts: AppOptions) -> Panel {
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    let token = app.login("ada@acme.com", PW).await;
    Panel { app, token }
}

async fn panel() -> Panel {
    panel_with(AppOptions::default()).await
}

/// The JSON body of a response that must be 200 (`what` names the call in a failure).
async fn ok_json(r: reqwest::Response, what: &str) -> Value {
    let status = r.status();
    let v: Value = r.json().await.expect("json");
    assert_eq!(status, 200, "{what}: {v}");
    v
}

impl Panel {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> reqwest::Response {
        self.app
            .request(method, path, &self.token, body.as_ref())
            .await
    }

    async fn ok(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        ok_json(self.call(method, path, body).await, path).await
    }

    /// `POST /api/session/{session}/task/{task}/resume` with a resolution method.
    async fn resume(&self, session: &str, task: &str, method: &str) -> reqwest::Response {
        self.call(
            reqwest::Method::POST,
            &format!("/api/session/{session}/task/{task}/resume"),
            Some(json!({ "resolutionMethod": method })),
        )
        .await
    }

    async fn init(&self, url: &str, domain: &str, query: Option<&str>) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        let mut body = json!({ "sessionId": id, "url": url, "domain": domain });
        if let Some(q) = query {
            body["initialQuery"] = json!(q);
        }
        let v = self
            .ok(reqwest::Method::POST, "/api/session/init", Some(body))
            .await;
        assert_eq!(
            v,
            json!({ "success": true, "data": { "sessionId": id, "created": true } })
        );
        id
    }
}

use reqwest::Method;

#[tokio::test]
async fn session_init_is_idempotent_and_accepts_the_side_panel_url() {
    let p = panel().await;
    // The capture: the side panel itself was the active tab.
    let id = p
        .init(
            "chrome-extension://okgejcdoafbdgghppenbjkpbodbfflil/popup.html",
            "",
            None,
        )
        .await;
    let again = p
        .ok(
            Method::POST,
            "/api/session/init",
            Some(
                json!({ "sessionId": id, "url": "chrome-extension://x/popup.html", "domain": "" }),
            ),
        )
        .await;
    assert_eq!(again["data"]["created"], false);
    let s = p.ok(Method::GET, &format!("/api/session/{id}"), None).await["session"].clone();
    assert_eq!(s["title"], "New session");
    assert_eq!(s["domain"], "");
    assert_eq!(s["status"], "active");
    assert_eq!(s["isRenamed"], false);
    assert_eq!(s["messageCount"], 0);
    for k in ["createdAt", "updatedAt"] {
        let t = s[k].as_str().expect("ISO string");
        assert!(
            t.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(t).is_ok(),
            "{k}: {t}"
        );
    }
    let bad = p
        .call(
            Method::POST,
            "/api/session/init",
            Some(json!({ "sessionId": "nope", "url": "x".repeat(4097) })),
        )
        .await;
    let v = expect_error(bad, 400, "VALIDATION_ERROR").await;
    assert_eq!(v["details"][0]["field"], "sessionId");
    assert_eq!(v["details"][1]["field"], "url");
}

/// The shipping client inits a session without `url` while its session list is not loaded
/// yet: the session is made without a page, and its first task's web page names its domain
/// (and its title), so the by-domain lookup finds it from then on.
#[tokio::test]
async fn a_session_made_without_a_page_takes_its_first_tasks_domain() {
    let llm = ScriptedLlm::start().await;
    let p = panel_with(AppOptions::with_llm(&llm.base_url)).await;
    let id = uuid::Uuid::new_v4().to_string();
    for body in [
        json!({ "sessionId": id }),
        json!({ "sessionId": id, "url": null, "domain": null }),
        json!({ "sessionId": id, "url": "", "domain": "" }),
    ] {
        let v = p
            .ok(Method::POST, "/api/session/init", Some(body.clone()))
            .await;
        assert_eq!(v["success"], true, "{body}");
    }
    let s = p.ok(Method::GET, &format!("/api/session/{id}"), None).await["session"].clone();
    assert_eq!(
        (&s["domain"], &s["url"], &s["title"]),
        (&json!(""), &json!(""), &json!("New session"))
    );
    llm.push([Reply::action("Opening it.", "click(1)")]);
    let r = p
        .ok(
            Method::POST,
            "/api/agent/interact",
            Some(json!({ "sessionId": id, "url": "https://www.shop.example.co.uk/lamps?page=2",
                "query": "Open the lamp", "interactiveTree": [{ "i": "1", "r": "link", "n": "Lamp" }] })),
        )
        .await;
    assert_eq!(r["sessionId"], json!(id));
    let s = p.ok(Method::GET, &format!("/api/session/{id}"), None).await["session"].clone();
    assert_eq!(
        (&s["domain"], &s["url"], &s["title"]),
        (
            &json!("example.co.uk"),
            &json!("https://www.shop.example.co.uk/lamps?page=2"),
            &json!("example.co.uk: Open the lamp")
        )
    );
    let found = p
        .ok(
            Method::GET,
            "/api/session/by-domain/shop.example.co.uk",
            None,
        )
        .await;
    assert_eq!(found["session"]["sessionId"], json!(id));
    // A session with a page keeps it: a later task elsewhere does not rename it.
    llm.push([Reply::action("Opening it.", "click(1)")]);
    p.ok(
        Method::POST,
        "/api/agent/interact",
        Some(json!({ "sessionId": id, "url": "https://other.example.org/",
            "query": "Open the lamp", "interactiveTree": [{ "i": "1", "r": "link", "n": "Lamp" }] })),
    )
    .await;
    let s = p.ok(Method::GET, &format!("/api/session/{id}"), None).await["session"].clone();
    assert_eq!(s["domain"], "example.co.uk");
}

#[tokio::test]
async fn session_lists_paginate_newest_first_with_filters() {
    let p = panel().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            p.init(&format!("https://www{i}.example.com/"), "", Some("q"))
                .await,
        );
        p.app.clock.advance(Duration::seconds(1));
    }
    let v = p
        .ok(
            Method::GET,
            "/api/session?status=active&includeArchived=false&limit=2&offset=0",
            None,
        )
        .await;
    assert_eq!(v["success"], true);
    let got: Vec<&str> = v["data"]["sessions"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|s| s["sessionId"].as_str())
        .collect();
    assert_eq!(got, vec![ids[4].as_str(), ids[3].as_str()], "newest first");
    assert_eq!(
        v["data"]["pagination"],
        json!({ "total": 5, "limit": 2, "offset": 0, "hasMore": true })
    );
    let last = p
        .ok(Method::GET, "/api/session?limit=2&offset=4", None)
        .await;
    assert_eq!(
        last["data"]["pagination"],
        json!({ "total": 5, "limit": 2, "offset": 4, "hasMore": false })
    );
    assert_eq!(last["data"]["sessions"].as_array().expect("list").len(), 1);
    let beyond = p.ok(Method::GET, "/api/session?offset=10", None).await;
    assert_eq!(beyond["data"]["sessions"], json!([]));

    let archived = p
        .ok(
            Method::POST,
            "/api/session",
            Some(json!({ "sessionId": ids[0] })),
        )
        .await;
    assert_eq!(
        archived,
        json!({ "success": true, "data": { "sessionId": ids[0], "status": "archived", "message": "Session archived" } })
    );
    let active = p.ok(Method::GET, "/api/session", None).await;
    assert_eq!(
        active["data"]["pagination"]["total"], 4,
        "archived sessions are hidden by default"
    );
    let all = p
        .ok(Method::GET, "/api/session?includeArchived=true", None)
        .await;
    assert_eq!(all["data"]["pagination"]["total"], 5);
    let only = p
        .ok(Method::GET, "/api/session?status=archived", None)
        .await;
    assert_eq!(only["data"]["sessions"][0]["sessionId"], ids[0]);

    for bad in [
        "/api/session?limit=0",
        "/api/session?limit=101",
        "/api/session?status=nope",
        "/api/session?includeArchived=maybe",
        "/api/session?offset=-1",
    ] {
        expect_error(
            p.call(Method::GET, bad, None).await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
    }
}

#[tokio::test]
async fn latest_and_by_domain_follow_the_public_suffix_list() {
    let p = panel().await;
    let empty = p.ok(Method::GET, "/api/session/latest", None).await;
    assert_eq!(empty, json!({ "session": null }));
    let uk = p
        .init(
            "https://www.example.co.uk/basket",
            "www.example.co.uk",
            Some("Buy tea"),
        )
        .await;
    p.app.clock.advance(Duration::seconds(1));
    let local = p.init("http://localhost:3000/", "localhost", None).await;
    p.app.clock.advance(Duration::seconds(1));
    let ip = p.init("http://192.168.1.1/admin", "", None).await;
    let latest = p.ok(Method::GET, "/api/session/latest", None).await;
    assert_eq!(latest["session"]["sessionId"], ip);
    assert_eq!(latest["session"]["domain"], "192.168.1.1");

    let s = p
        .ok(
            Method::GET,
            "/api/session/by-domain/shop.example.co.uk?status=active",
            None,
        )
        .await;
    assert_eq!(s["session"]["sessionId"], uk);
    assert_eq!(s["session"]["title"], "example.co.uk: Buy tea");
    let s = p
        .ok(Method::GET, "/api/session/by-domain/localhost", None)
        .await;
    assert_eq!(s["session"]["sessionId"], local);
    let none = p
        .ok(Method::GET, "/api/session/by-domain/example.com", None)
        .await;
    assert_eq!(
        none,
        json!({ "session": null }),
        "example.co.uk is not example.com"
    );
    let done = p
        .ok(
            Method::GET,
            "/api/session/by-domain/example.co.uk?status=completed",
            None,
        )
        .await;
    assert_eq!(done, json!({ "session": null }));
}

#[tokio::test]
async fn rename_keeps_the_domain_prefix_and_sticks() {
    let p = panel().await;
    let id = p
        .init("https://www.example.com/", "", Some("Find shoes"))
        .await;
    let r = p
        .ok(
            Method::PATCH,
            &format!("/api/session/{id}"),
            Some(json!({ "title": "Running shoes" })),
        )
        .await;
    assert_eq!(r["session"]["title"], "example.com: Running shoes");
    assert_eq!(r["session"]["isRenamed"], true);
    let r = p
        .ok(
            Method::PATCH,
            &format!("/api/session/{id}"),
            Some(json!({ "title": "example.com: Trail shoes" })),
        )
        .await;
    assert_eq!(
        r["session"]["title"], "example.com: Trail shoes",
        "no doubled prefix"
    );
    for bad in [
        json!({ "title": "" }),
        json!({ "title": "x".repeat(201) }),
        json!({}),
    ] {
        expect_error(
            p.call(Method::PATCH, &format!("/api/session/{id}"), Some(bad))
                .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
    }
    expect_error(
        p.call(
            Method::PATCH,
            "/api/session/not-a-uuid",
            Some(json!({ "title": "x" })),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
}

#[tokio::test]
async fn an_automatic_title_never_overwrites_a_renamed_one() {
    let llm = ScriptedLlm::start().await;
    let p = panel_with(AppOptions::with_llm(&llm.base_url)).await;
    let id = p.init("https://www.example.com/", "", None).await;
    p.ok(
        Method::PATCH,
        &format!("/api/session/{id}"),
        Some(json!({ "title": "Shopping" })),
    )
    .await;
    llm.push([Reply::action("Click it.", "click(10)")]);
    let body = json!({ "sessionId": id, "url": "https://www.example.com/", "query": "Buy the shirt",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Shirts" }] });
    p.ok(Method::POST, "/api/agent/interact", Some(body)).await;
    let s = p.ok(Method::GET, &format!("/api/session/{id}"), None).await;
    assert_eq!(s["session"]["title"], "example.com: Shopping");
    assert_eq!(s["session"]["isRenamed"], true);
}

#[tokio::test]
async fn other_users_and_tenants_sessions_are_not_found() {
    let p = panel().await;
    let id = p.init("https://www.example.com/", "", None).await;
    p.app.seed_user("other", "eve@other.com", PW).await;
    p.app.seed_user("acme", "bob@acme.com", PW).await;
    for email in ["eve@other.com", "bob@acme.com"] {
        let token = p.app.login(email, PW).await;
        let q = Panel {
            app: TestApp::spawn_on(
                p.app.ctx.config.clone(),
                stores_of(&p.app),
                p.app.clock.clone(),
            )
            .await,
            token,
        };
        let a = expect_error(
            q.call(Method::GET, &format!("/api/session/{id}"), None)
                .await,
            404,
            "SESSION_NOT_FOUND",
        )
        .await;
        let b = expect_error(
            q.call(
                Method::GET,
                &format!("/api/session/{}", uuid::Uuid::new_v4()),
                None,
            )
            .await,
            404,
            "SESSION_NOT_FOUND",
        )
        .await;
        assert_eq!(a, b, "indistinguishable from a missing session");
        expect_error(
            q.call(
                Method::PATCH,
                &format!("/api/session/{id}"),
                Some(json!({ "title": "mine" })),
            )
            .await,
            404,
            "SESSION_NOT_FOUND",
        )
        .await;
        expect_error(
            q.call(
                Method::POST,
                "/api/session",
                Some(json!({ "sessionId": id })),
            )
            .await,
            404,
            "SESSION_NOT_FOUND",
        )
        .await;
        let m = q
            .ok(Method::GET, &format!("/api/session/{id}/messages"), None)
            .await;
        assert_eq!(m["sessionExists"], false);
        let listed = q.ok(Method::GET, "/api/session", None).await;
        assert_eq!(listed["data"]["pagination"]["total"], 0);
        let init = q
            .call(
                Method::POST,
                "/api/session/init",
                Some(json!({ "sessionId": id, "url": "https://x.com/" })),
            )
            .await;
        if email == "bob@acme.com" {
            expect_error(init, 404, "SESSION_NOT_FOUND").await;
        } else {
            // Session ids name global realtime channels: one id, one account.
            expect_error(init, 409, "SESSION_ID_TAKEN").await;
        }
    }
}

fn stores_of(app: &TestApp) -> shared::context::Stores {
    shared::context::Stores {
        store: app.ctx.store.clone(),
        snapshots: app.ctx.snapshots.clone(),
        s3: None,
    }
}

async fn with_messages() -> (Panel, ScriptedLlm, String, Value) {
    let llm = ScriptedLlm::start().await;
    let p = panel_with(AppOptions::with_llm(&llm.base_url)).await;
    let id = p
        .init("https://www.example.com/", "www.example.com", None)
        .await;
    llm.push([
        Reply::action("Click it.", "click(10)"),
        Reply::action("Which one?", "ask_user(\"Which colour?\")"),
    ]);
    let body = json!({ "sessionId": id, "url": "https://www.example.com/", "query": "Buy the shirt",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Shirts" }] });
    let r1 = p
        .ok(Method::POST, "/api/agent/interact", Some(body.clone()))
        .await;
    p.app.clock.advance(Duration::seconds(5));
    let mut next = body;
    next["taskId"] = r1["taskId"].clone();
    next["lastActionStatus"] = json!("success");
    let r2 = p.ok(Method::POST, "/api/agent/interact", Some(next)).await;
    assert_eq!(r2["status"], "needs_user_input");
    (p, llm, id, r1)
}

#[tokio::test]
async fn messages_come_in_sequence_with_roles_and_no_dom() {
    let (p, _llm, id, first) = with_messages().await;
    let v = p
        .ok(
            Method::GET,
            &format!("/api/session/{id}/messages?limit=50"),
            None,
        )
        .await;
    assert_eq!(v["sessionId"], id);
    assert_eq!(v["sessionExists"], true);
    assert_eq!(v["total"], 3);
    let msgs = v["messages"].as_array().expect("messages");
    let seqs: Vec<u64> = msgs
        .iter()
        .filter_map(|m| m["sequenceNumber"].as_u64())
        .collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    let roles: Vec<&str> = msgs.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, vec!["user", "assistant", "assistant"]);
    assert_eq!(msgs[0]["content"], "Buy the shirt");
    assert_eq!(msgs[1]["actionString"], "click(10)");
    assert!(msgs[1]["domSummary"]
        .as_str()
        .is_some_and(|s| s.len() <= 200));
    assert!(msgs[1]["snapshotId"]
        .as_str()
        .is_some_and(|s| s.starts_with("snapshots/acme/")));
    assert!(
        !v.to_string().contains("interactiveTree") && !v.to_string().contains("\"Buy\""),
        "no page in messages"
    );
    // The auto title of an init-made session picks up the first task.
    let s = p.ok(Method::GET, &format!("/api/session/{id}"), None).await;
    assert_eq!(s["session"]["title"], "example.com: Buy the shirt");
    let _ = first;

    let seqs_of = |v: &Value| -> (Vec<u64>, bool) {
        let seqs = v["messages"]
            .as_array()
            .expect("m")
            .iter()
            .filter_map(|m| m["sequenceNumber"].as_u64())
            .collect();
        (seqs, v["hasMore"].as_bool().expect("hasMore"))
    };
    let page = |query: &'static str| {
        let p = &p;
        let id = id.clone();
        async move {
            p.ok(
                Method::GET,
                &format!("/api/session/{id}/messages?{query}"),
                None,
            )
            .await
        }
    };
    assert_eq!(seqs_of(&v), (vec![1, 2, 3], false));
    // One step's messages share a timestamp: `since` is inclusive, so none is skipped.
    let shared_stamp = msgs[0]["timestamp"].as_str().expect("ts").to_owned();
    assert_eq!(msgs[1]["timestamp"], shared_stamp);
    let at = p
        .ok(
            Method::GET,
            &format!(
                "/api/session/{id}/messages?since={}",
                urlencode(&shared_stamp)
            ),
            None,
        )
        .await;
    assert_eq!(seqs_of(&at), (vec![1, 2, 3], false));
    let newest = msgs[2]["timestamp"].as_str().expect("ts").to_owned();
    let later = p
        .ok(
            Method::GET,
            &format!("/api/session/{id}/messages?since={}", urlencode(&newest)),
            None,
        )
        .await;
    assert_eq!(
        seqs_of(&later),
        (vec![3], false),
        "only messages from `since` on"
    );
    // Without a cursor the newest page; `after` pages forward, `before` back.
    assert_eq!(seqs_of(&page("limit=1").await), (vec![3], true));
    assert_eq!(seqs_of(&page("limit=2").await), (vec![2, 3], true));
    assert_eq!(seqs_of(&page("after=1&limit=1").await), (vec![2], true));
    assert_eq!(seqs_of(&page("after=2").await), (vec![3], false));
    assert_eq!(seqs_of(&page("after=3").await), (vec![], false));
    assert_eq!(seqs_of(&page("before=3").await), (vec![1, 2], false));
    for (query, field) in [
        ("after=1&before=3", "before"),
        ("since=2026-01-01T00:00:00Z&after=1", "after"),
        ("after=-1", "after"),
        ("after=x", "after"),
        ("before=0", "before"),
    ] {
        let r = p
            .call(
                Method::GET,
                &format!("/api/session/{id}/messages?{query}"),
                None,
            )
            .await;
        let body = expect_error(r, 400, "VALIDATION_ERROR").await;
        assert!(
            body.to_string().contains(field),
            "{query} names {field}: {body}"
        );
    }
    expect_error(
        p.call(
            Method::GET,
            &format!("/api/session/{id}/messages?since=yesterday"),
            None,
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    expect_error(
        p.call(
            Method::GET,
            &format!("/api/session/{id}/messages?limit=500"),
            None,
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    let unknown = p
        .ok(
            Method::GET,
            &format!("/api/session/{}/messages", uuid::Uuid::new_v4()),
            None,
        )
        .await;
    assert_eq!(unknown["sessionExists"], false);
    assert_eq!(unknown["messages"], json!([]));
}

fn urlencode(s: &str) -> String {
    s.replace(':', "%3A").replace('+', "%2B")
}

#[tokio::test]
async fn a_waiting_task_resumes_and_finished_ones_do_not() {
    let (p, llm, id, first) = with_messages().await;
    let task = first["taskId"].as_str().expect("task").to_owned();
    let r = ok_json(p.resume(&id, &task, "user_action_on_web").await, "resume").await;
    assert_eq!(r["taskId"], task);
    assert_eq!(r["status"], "executing");
    assert!(r["message"]
        .as_str()
        .expect("m")
        .contains("acted on the page"));
    assert!(chrono::DateTime::parse_from_rfc3339(r["resumedAt"].as_str().expect("t")).is_ok());
    let msgs = p
        .ok(Method::GET, &format!("/api/session/{id}/messages"), None)
        .await;
    assert_eq!(
        msgs["messages"]
            .as_array()
            .expect("m")
            .last()
            .expect("last")["role"],
        "system"
    );

    let bad = p.resume(&id, &task, "magic").await;
    expect_error(bad, 400, "VALIDATION_ERROR").await;
    let other = uuid::Uuid::new_v4();
    let missing = p.resume(&other.to_string(), &task, "provide_in_chat").await;
    expect_error(missing, 404, "TASK_NOT_FOUND").await;

    llm.push([Reply::action("Done.", "finish()")]);
    let body = json!({ "sessionId": id, "taskId": task, "url": "https://www.example.com/", "query": "blue",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Shirts" }] });
    assert_eq!(
        p.ok(Method::POST, "/api/agent/interact", Some(body)).await["status"],
        "completed"
    );
    let done = p.resume(&id, &task, "provide_in_chat").await;
    expect_error(done, 409, "TASK_COMPLETED").await;
}

#[tokio::test]
async fn preferences_default_merge_validate_and_keep_unknown_keys() {
    let p = panel().await;
    let v = p.ok(Method::GET, "/api/v1/user/preferences", None).await;
    assert_eq!(v, json!({ "preferences": { "theme": "system" } }));
    let v = p
        .ok(
            Method::POST,
            "/api/v1/user/preferences",
            Some(json!({ "theme": "dark" })),
        )
        .await;
    assert_eq!(v["preferences"]["theme"], "dark");
    assert!(
        chrono::DateTime::parse_from_rfc3339(v["syncedAt"].as_str().expect("syncedAt")).is_ok()
    );
    let v = p
        .ok(
            Method::POST,
            "/api/v1/user/preferences",
            Some(json!({ "preferences": { "fontSize": 14, "panel": { "wide": true } } })),
        )
        .await;
    assert_eq!(
        v["preferences"],
        json!({ "theme": "dark", "fontSize": 14, "panel": { "wide": true } })
    );
    assert_eq!(
        p.ok(Method::GET, "/api/v1/user/preferences", None).await["preferences"],
        v["preferences"]
    );
    let bad = p
        .call(
            Method::POST,
            "/api/v1/user/preferences",
            Some(json!({ "theme": "neon" })),
        )
        .await;
    assert_eq!(
        expect_error(bad, 400, "VALIDATION_ERROR").await["details"][0]["field"],
        "theme"
    );
    let big = p
        .call(
            Method::POST,
            "/api/v1/user/preferences",
            Some(json!({ "blob": "x".repeat(20_000) })),
        )
        .await;
    assert_eq!(
        expect_error(big, 400, "VALIDATION_ERROR").await["details"][0]["field"],
        "preferences"
    );
    // Another user of the same tenant has their own.
    p.app.seed_user("acme", "bob@acme.com", PW).await;
    let bob = p.app.login("bob@acme.com", PW).await;
    let r = p
        .app
        .client
        .get(p.app.url("/api/v1/user/preferences"))
        .bearer_auth(&bob)
        .send()
        .await
        .expect("send");
    assert_eq!(
        r.json::<Value>().await.expect("json"),
        json!({ "preferences": { "theme": "system" } })
    );
}

#[tokio::test]
async fn debug_routes_answer_403_when_off_and_export_a_task_when_on() {
    let (p, _llm, _id, first) = with_messages().await;
    let task = first["taskId"].as_str().expect("task").to_owned();
    let off = p.call(Method::GET, "/api/debug/logs", None).await;
    expect_error(off, 403, "FORBIDDEN").await;
    expect_error(
        p.call(
            Method::GET,
            &format!("/api/debug/session/{task}/export"),
            None,
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;

    let mut cfg = p.app.ctx.config.clone();
    cfg.debug_routes = true;
    let on = Panel {
        app: TestApp::spawn_on(cfg, stores_of(&p.app), p.app.clock.clone()).await,
        token: p.token.clone(),
    };
    let logs = on
        .ok(
            Method::GET,
            &format!("/api/debug/logs?taskId={task}&logType=step&limit=10"),
            None,
        )
        .await;
    let logs = logs["logs"].as_array().expect("logs").clone();
    assert_eq!(logs.len(), 2);
    assert_eq!(logs[0]["taskId"], task);
    assert_eq!(logs[0]["logType"], "step");
    assert!(
        logs[0]["message"]
            .as_str()
            .expect("m")
            .starts_with("step 1 decided"),
        "newest first"
    );
    let since = logs[1]["timestamp"].as_str().expect("t").to_owned();
    let newer = on
        .ok(
            Method::GET,
            &format!("/api/debug/logs?since={}", urlencode(&since)),
            None,
        )
        .await;
    assert_eq!(newer["logs"].as_array().expect("l").len(), 1);

    let ex = on
        .ok(
            Method::GET,
            &format!("/api/debug/session/{task}/export"),
            None,
        )
        .await;
    assert_eq!(ex["task"]["id"], task);
    assert_eq!(ex["actions"].as_array().expect("a").len(), 2);
    assert_eq!(ex["messages"].as_array().expect("m").len(), 3);
    // The click of step 0 showed no visible change: the verification model judged it when
    // step 1 was decided.
    let verifications = ex["verifications"].as_array().expect("v");
    assert_eq!(verifications.len(), 1);
    assert_eq!(
        (
            &verifications[0]["stepIndex"],
            &verifications[0]["recordedAt"],
            &verifications[0]["byModel"],
            &verifications[0]["success"]
        ),
        (&json!(0), &json!(1), &json!(true), &json!(true))
    );
    assert_eq!(ex["corrections"], json!([]));
    let snaps = ex["snapshots"].as_array().expect("s");
    assert_eq!(snaps.len(), 2);
    assert!(snaps[0]["url"]
        .as_str()
        .expect("url")
        .contains("snapshots/acme/"));
    assert!(snaps[0]["bytes"].as_u64().is_some_and(|b| b > 0));
    assert_eq!(ex["logs"].as_array().expect("l").len(), 2);
    expect_error(
        on.call(
            Method::GET,
            &format!("/api/debug/session/{}/export", uuid::Uuid::new_v4()),
            None,
        )
        .await,
        404,
        "TASK_NOT_FOUND",
    )
    .await;
}

/// The client's form-encoded Pusher auth request for `channel`.
async fn pusher_form(p: &Panel, channel: &str) -> reqwest::Response {
    p.app
        .client
        .post(p.app.url("/api/pusher/auth"))
        .bearer_auth(&p.token)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("socket_id=123.456&channel_name={channel}"))
        .send()
        .await
        .expect("send")
}

#[tokio::test]
async fn pusher_auth_signs_only_the_callers_own_session_channels() {
    use hmac::{Hmac, Mac};
    let opts = AppOptions::default()
        .set("PUSHER_APP_ID", "app-1")
        .set("PUSHER_KEY", "key-1")
        .set("PUSHER_SECRET", "secret-1")
        .set("PUSHER_HOST", "127.0.0.1")
        .set("PUSHER_PORT", "9")
        .set("PUSHER_SCHEME", "http");
    let p = panel_with(opts).await;
    let id = p.init("https://www.example.com/", "", None).await;
    let channel = format!("private-session-{id}");
    let r = pusher_form(&p, &channel).await;
    assert_eq!(r.status(), 200);
    let auth = r.json::<Value>().await.expect("json")["auth"]
        .as_str()
        .expect("auth")
        .to_owned();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(b"secret-1").expect("key");
    mac.update(format!("123.456:{channel}").as_bytes());
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(auth, format!("key-1:{expected}"));
    // JSON is accepted too.
    let r = p
        .call(
            Method::POST,
            "/api/pusher/auth",
            Some(json!({ "socket_id": "123.456", "channel_name": channel })),
        )
        .await;
    assert_eq!(r.json::<Value>().await.expect("json")["auth"], auth);

    let foreign = format!("private-session-{}", uuid::Uuid::new_v4());
    let r = p
        .call(
            Method::POST,
            "/api/pusher/auth",
            Some(json!({ "socket_id": "1.2", "channel_name": foreign })),
        )
        .await;
    expect_error(r, 403, "FORBIDDEN").await;
    let r = p
        .call(
            Method::POST,
            "/api/pusher/auth",
            Some(json!({ "socket_id": "1.2", "channel_name": "presence-lobby" })),
        )
        .await;
    expect_error(r, 403, "FORBIDDEN").await;
    let r = p
        .call(
            Method::POST,
            "/api/pusher/auth",
            Some(json!({ "socket_id": "abc", "channel_name": channel })),
        )
        .await;
    expect_error(r, 400, "VALIDATION_ERROR").await;
    p.app.seed_user("acme", "bob@acme.com", PW).await;
    let bob = p.app.login("bob@acme.com", PW).await;
    let r = p
        .app
        .client
        .post(p.app.url("/api/pusher/auth"))
        .bearer_auth(&bob)
        .json(&json!({ "socket_id": "1.2", "channel_name": channel }))
        .send()
        .await
        .expect("send");
    expect_error(r, 403, "FORBIDDEN").await;
}

#[tokio::test]
async fn pusher_auth_without_pusher_settings_tells_the_client_to_poll() {
    // Not a 401/403 (the client would take it for a sign-in or access problem): a 404 naming
    // the reason, for the caller's own session and any other alike, and polling works.
    let p = panel().await;
    let id = p.init("https://www.example.com/", "", None).await;
    for channel in [
        format!("private-session-{id}"),
        format!("private-session-{}", uuid::Uuid::new_v4()),
    ] {
        let r = pusher_form(&p, &channel).await;
        let body = expect_error(r, 404, "REALTIME_NOT_CONFIGURED").await;
        assert!(body["message"].as_str().is_some_and(|m| m.contains("poll")));
    }
    let polled = p
        .ok(Method::GET, &format!("/api/session/{id}/messages"), None)
        .await;
    assert_eq!(polled["sessionExists"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn the_whole_read_path_works_on_dynamodb_and_s3() {
    use shared::clock::{Clock, ManualClock};
    let llm = ScriptedLlm::start().await;
    let clock = std::sync::Arc::new(ManualClock::new(chrono::Utc::now()));
    let dyn_clock: std::sync::Arc<dyn Clock> = clock.clone();
    let (stores, _) = api_tests::aws::stores(dyn_clock).await;
    let mut cfg = api_tests::test_config(&AppOptions::with_llm(&llm.base_url));
    cfg.debug_routes = true;
    let app = TestApp::spawn_on(cfg, stores, clock).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    let token = app.login("ada@acme.com", PW).await;
    let p = Panel { app, token };

    // Startup: session check, list, preferences, init, messages polling.
    assert_eq!(p.app.get_session(&p.token).await.status(), 200);
    assert_eq!(
        p.ok(
            Method::GET,
            "/api/session?status=active&includeArchived=false&limit=50",
            None
        )
        .await["data"]["pagination"]["total"],
        0
    );
    assert_eq!(
        p.ok(Method::GET, "/api/v1/user/preferences", None).await["preferences"]["theme"],
        "system"
    );
    let id = p
        .init(
            "https://www.example.co.uk/basket",
            "www.example.co.uk",
            None,
        )
        .await;
    assert_eq!(
        p.ok(
            Method::GET,
            &format!("/api/session/{id}/messages?limit=50"),
            None
        )
        .await["total"],
        0
    );

    llm.push([Reply::action("Add it to the basket.", "click(10)")]);
    let body = json!({ "sessionId": id, "url": "https://www.example.co.uk/basket", "query": "Buy tea",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Add" }] });
    let step = p.ok(Method::POST, "/api/agent/interact", Some(body)).await;
    assert_eq!(step["action"], "click(10)");
    let msgs = p
        .ok(Method::GET, &format!("/api/session/{id}/messages"), None)
        .await;
    let roles: Vec<&str> = msgs["messages"]
        .as_array()
        .expect("m")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, vec!["user", "assistant"]);
    let listed = p.ok(Method::GET, "/api/session", None).await;
    assert_eq!(
        listed["data"]["sessions"][0]["title"],
        "example.co.uk: Buy tea"
    );
    assert_eq!(listed["data"]["sessions"][0]["messageCount"], 2);
    assert_eq!(
        p.ok(Method::GET, "/api/session/latest", None).await["session"]["sessionId"],
        id
    );
    assert_eq!(
        p.ok(
            Method::GET,
            "/api/session/by-domain/shop.example.co.uk",
            None
        )
        .await["session"]["sessionId"],
        id
    );
    let renamed = p
        .ok(
            Method::PATCH,
            &format!("/api/session/{id}"),
            Some(json!({ "title": "Tea" })),
        )
        .await;
    assert_eq!(renamed["session"]["title"], "example.co.uk: Tea");
    assert_eq!(
        p.ok(
            Method::POST,
            "/api/v1/user/preferences",
            Some(json!({ "theme": "light" }))
        )
        .await["preferences"]["theme"],
        "light"
    );
    let task = step["taskId"].as_str().expect("task");
    let resumed = ok_json(p.resume(&id, task, "provide_in_chat").await, "resume").await;
    assert_eq!(resumed["status"], "executing");
    let ex = p
        .ok(
            Method::GET,
            &format!("/api/debug/session/{task}/export"),
            None,
        )
        .await;
    assert!(
        ex["snapshots"][0]["url"]
            .as_str()
            .expect("url")
            .contains("X-Amz-Signature"),
        "a presigned S3 URL"
    );
    let archived = p
        .ok(
            Method::POST,
            "/api/session",
            Some(json!({ "sessionId": id })),
        )
        .await;
    assert_eq!(archived["data"]["status"], "archived");
    assert_eq!(
        p.ok(Method::GET, "/api/session/latest", None).await["session"],
        Value::Null
    );
}

/// local-api serves the OpenAPI document as it is kept in the repository, without a token (it
/// holds nothing secret), to GET and HEAD only.
#[tokio::test]
async fn the_openapi_document_is_served() {
    let app = TestApp::spawn().await;
    let r = app
        .client
        .get(app.url("/openapi.json"))
        .send()
        .await
        .expect("GET");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    assert_eq!(r.text().await.expect("body"), local_api::OPENAPI);
    let r = app
        .client
        .post(app.url("/openapi.json"))
        .send()
        .await
        .expect("POST");
    expect_error(r, 405, "METHOD_NOT_ALLOWED").await;
    app.stop().await;
}
