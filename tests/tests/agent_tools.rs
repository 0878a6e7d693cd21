//! The server-hosted agent tools through local-api's router, on both stores: on the embedded
//! store the workspace is a local directory, on DynamoDB it is an S3 prefix of the
//! S3-compatible server. Files, search, patches, approvals (run once, never when rejected or
//! expired), stale versions, traversal attempts, tenant isolation and the audit trail.

use api_tests::agent::{agent, agent_setup, agent_with, AgentSetup, PW};
use api_tests::AppOptions;
use api_tests::{expect_error, on_both_stores};
use chrono::Duration;
use reqwest::Method;
use serde_json::{json, Value};
use shared::clock::Clock;
use shared::domain::Role;
use shared::provisioning::{create_workspace, NewWorkspace};

async fn agent_with_options(dynamodb: bool, opts: AppOptions) -> api_tests::agent::Agent {
    agent_setup(
        dynamodb,
        AgentSetup {
            opts,
            ..AgentSetup::default()
        },
    )
    .await
}

async fn files_search_and_patches(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let listing = a.ok(Method::GET, &a.q("fs/list", ""), json!(null)).await;
    assert_eq!(listing["data"]["entries"], json!([]));

    // A write waits for approval and shows what it will do.
    let (status, v) = a
        .tool(
            "fs/write",
            json!({ "path": "src/app.py", "content": "def main():\n    return 1\n" }),
        )
        .await;
    assert_eq!(status, 202, "{v}");
    let p = &v["data"];
    assert_eq!(p["toolName"], "fs.write");
    assert_eq!(p["tier"], "batch");
    assert_eq!(p["args"]["path"], "src/app.py");
    assert_eq!(p["workspace"], json!({ "id": "proj", "name": "Project" }));
    expect_error(a.read("src/app.py").await, 404, "FILE_NOT_FOUND").await;
    let d = a.approve(p["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "done", "{d}");
    let file = a.content("src/app.py").await;
    assert_eq!(file["content"], "def main():\n    return 1\n");
    assert_eq!(file["version"], d["result"]["version"]);

    // A patch applies whole; one that does not apply changes nothing and names the hunk.
    let patch = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n";
    let id = a
        .pending("fs/patch", json!({ "path": "src/app.py", "patch": patch }))
        .await;
    let d = a.approve(&id).await;
    assert_eq!(d["status"], "done", "{d}");
    assert_eq!(d["result"]["hunks"], 1);
    assert_eq!(
        a.content("src/app.py").await["content"],
        "def main():\n    return 2\n"
    );
    let id = a
        .pending("fs/patch", json!({ "path": "src/app.py", "patch": patch }))
        .await;
    let d = a.approve(&id).await;
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(d["error"]["code"], "PATCH_FAILED");
    assert!(
        d["error"]["message"].as_str().unwrap().contains("hunk"),
        "{d}"
    );
    assert_eq!(
        a.content("src/app.py").await["content"],
        "def main():\n    return 2\n"
    );

    // A large write is parked with its arguments kept aside; the 202 shows them whole, the
    // stored approval a cut version; approving writes every byte.
    let big = "0123456789abcdef\n".repeat(3_000);
    let (status, v) = a
        .tool(
            "fs/write",
            json!({ "path": "data/big.txt", "content": big }),
        )
        .await;
    assert_eq!(status, 202);
    assert_eq!(
        v["data"]["args"]["content"].as_str().map(str::len),
        Some(big.len())
    );
    let big_id = v["data"]["approvalId"].clone();
    let d = a.approve(big_id.as_str().unwrap()).await;
    assert_eq!(d["status"], "done", "{d}");
    assert_eq!(a.content("data/big.txt").await["content"], big.as_str());
    let a_view = a.view().await;
    let stored = a_view["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["approvalId"] == big_id)
        .cloned()
        .expect("listed");
    let shown = stored["args"]["content"].as_str().unwrap().to_owned();
    assert!(
        shown.len() < 2_000 && shown.ends_with("bytes in all)"),
        "{shown}"
    );
    let id = a
        .pending("fs/delete", json!({ "path": "data", "recursive": true }))
        .await;
    assert_eq!(a.approve(&id).await["status"], "done");

    // Search: grep lines, glob files; both run at once (auto tier).
    a.write("docs/notes.md", "return of the notes\n").await;
    let (status, v) = a
        .tool("fs/search", json!({ "pattern": "return \\d" }))
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["data"]["matches"],
        json!([{ "path": "src/app.py", "line": 2, "text": "    return 2" }])
    );
    let (_, v) = a.tool("fs/search", json!({ "glob": "**/*.md" })).await;
    assert_eq!(v["data"]["files"], json!(["docs/notes.md"]));
    let (status, v) = a.tool("fs/search", json!({ "pattern": "(" })).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["details"][0]["field"], "pattern");

    // mkdir (batch) and delete (individual).
    let id = a.pending("fs/mkdir", json!({ "path": "build/out" })).await;
    assert_eq!(a.approve(&id).await["result"]["created"], true);
    let (status, v) = a.tool("fs/delete", json!({ "path": "docs" })).await;
    assert_eq!(status, 202);
    assert_eq!(v["data"]["tier"], "individual");
    let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "failed");
    assert_eq!(d["error"]["code"], "DIRECTORY_NOT_EMPTY");
    let id = a
        .pending("fs/delete", json!({ "path": "docs", "recursive": true }))
        .await;
    assert_eq!(a.approve(&id).await["result"]["deletedFiles"], 1);
    let root = a.ok(Method::GET, &a.q("fs/list", ""), json!(null)).await;
    let names: Vec<&str> = root["data"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["build", "src"]);

    // The session shows every call, approval and outcome.
    let view = a.view().await;
    assert_eq!(view["session"]["workspace"]["name"], "Project");
    let audit = view["audit"].as_array().unwrap();
    let ran = |action: &str, outcome: &str| {
        audit
            .iter()
            .filter(|e| e["action"] == action && e["outcome"] == outcome && e["approved"] == true)
            .count()
    };
    assert_eq!(ran("fs.write", "ok"), 3);
    assert_eq!(ran("fs.apply_patch", "ok"), 1);
    assert_eq!(ran("fs.apply_patch", "PATCH_FAILED"), 1);
    assert_eq!(ran("search.grep", "ok"), 1);
    assert_eq!(ran("approval.approve", "ok"), 9);
    for e in audit {
        for field in [
            "userId",
            "action",
            "target",
            "approved",
            "timestamp",
            "outcome",
            "durationMs",
        ] {
            assert!(e.get(field).is_some(), "{field} missing in {e}");
        }
    }
    assert_eq!(view["approvals"].as_array().unwrap().len(), 9);
    assert!(view["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| !e["action"].as_str().unwrap().starts_with("approval.")));
}

async fn traversal_is_refused_and_touches_nothing(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let outside = a.dir.path().join("secret.txt");
    std::fs::write(&outside, "secret").unwrap();
    if let Some(root) = &a.local_root {
        std::fs::create_dir_all(root).unwrap();
        std::os::unix::fs::symlink(a.dir.path(), root.join("escape")).unwrap();
    }
    let long = "a/".repeat(600);
    let mut attempts = vec![
        "../secret.txt".to_owned(),
        "../../secret.txt".to_owned(),
        "a/../../secret.txt".to_owned(),
        "/etc/passwd".to_owned(),
        outside.display().to_string(),
        "%2e%2e/secret.txt".to_owned(),
        "%252e%252e%252fsecret.txt".to_owned(),
        "..%2fsecret.txt".to_owned(),
        "a\\..\\..\\secret.txt".to_owned(),
        "secret.txt\0.md".to_owned(),
        "C:/windows".to_owned(),
        long,
    ];
    if !dynamodb {
        attempts.push("escape/secret.txt".into());
    }
    for raw in &attempts {
        let r = a.read(raw).await;
        let v = expect_error(r, 400, "VALIDATION_ERROR").await;
        assert_eq!(v["details"][0]["field"], "path", "{raw:?}: {v}");
        // Writes are refused at once: no approval is ever parked for a bad path.
        let (status, v) = a
            .tool("fs/write", json!({ "path": raw, "content": "pwned" }))
            .await;
        if dynamodb || raw != "escape/secret.txt" {
            assert_eq!(status, 400, "{raw:?}: {v}");
        } else {
            // A symbolic link is found when the call runs: it fails and writes nothing.
            assert_eq!(status, 202, "{raw:?}: {v}");
            let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
            assert_eq!(d["status"], "failed", "{d}");
            assert_eq!(d["error"]["code"], "VALIDATION_ERROR");
        }
    }
    // The query string itself carrying an encoded escape.
    let r = a
        .send(
            Method::GET,
            &format!(
                "/api/v1/agent/fs/read?sessionId={}&path=..%2F..%2Fsecret.txt",
                a.session
            ),
            None,
        )
        .await;
    expect_error(r, 400, "VALIDATION_ERROR").await;
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    assert!(!a.dir.path().join("pwned").exists());
    let view = a.view().await;
    let parked = view["approvals"].as_array().unwrap().len();
    assert_eq!(parked, usize::from(!dynamodb), "{view}");
    assert!(view["audit"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["outcome"] == "VALIDATION_ERROR"));
}

async fn approvals_run_once_and_never_when_rejected_or_expired(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let id = a
        .pending("fs/write", json!({ "path": "once.txt", "content": "ran" }))
        .await;
    let answers = futures::future::join_all((0..8).map(|_| async {
        let r = a.decide(&id, json!({ "decision": "approve" })).await;
        let status = r.status().as_u16();
        (status, r.json::<Value>().await.expect("json"))
    }))
    .await;
    let ran = answers.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(ran, 1, "{answers:?}");
    assert!(answers
        .iter()
        .filter(|(s, _)| *s != 200)
        .all(|(s, v)| *s == 409 && v["code"] == "APPROVAL_ALREADY_DECIDED"));
    let view = a.view().await;
    let writes = view["audit"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "fs.write" && e["outcome"] == "ok")
        .count();
    assert_eq!(writes, 1);

    // Rejected: never runs, and cannot be approved afterwards.
    let id = a
        .pending(
            "fs/write",
            json!({ "path": "rejected.txt", "content": "no" }),
        )
        .await;
    let r = a.decide(&id, json!({ "decision": "reject" })).await;
    assert_eq!(r.status(), 200);
    expect_error(
        a.decide(&id, json!({ "decision": "approve" })).await,
        409,
        "APPROVAL_ALREADY_DECIDED",
    )
    .await;
    expect_error(a.read("rejected.txt").await, 404, "FILE_NOT_FOUND").await;

    // Expired: never runs.
    let id = a
        .pending("fs/write", json!({ "path": "late.txt", "content": "no" }))
        .await;
    a.app.clock.advance(Duration::seconds(901));
    expect_error(
        a.decide(&id, json!({ "decision": "approve" })).await,
        409,
        "APPROVAL_EXPIRED",
    )
    .await;
    expect_error(a.read("late.txt").await, 404, "FILE_NOT_FOUND").await;
    let view = a.view().await;
    let late = view["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["approvalId"] == id.as_str())
        .cloned()
        .expect("listed");
    assert_eq!(late["status"], "expired");
    assert!(
        view["audit"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "approval.approve" && e["outcome"] == "APPROVAL_EXPIRED"),
        "refused decisions are audited too"
    );

    // Bad decisions name the field.
    let v = expect_error(
        a.decide(&id, json!({ "decision": "maybe" })).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(v["details"][0]["field"], "decision");
}

async fn stale_versions_are_refused_not_lost(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let v1 = a.write("shared.txt", "base\n").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            a.pending(
                "fs/write",
                json!({ "path": "shared.txt", "content": format!("edit {i}\n"), "expectedVersion": v1 }),
            )
            .await,
        );
    }
    let decisions = futures::future::join_all(ids.iter().map(|id| a.approve(id))).await;
    let done: Vec<&Value> = decisions.iter().filter(|d| d["status"] == "done").collect();
    assert_eq!(done.len(), 1, "{decisions:?}");
    assert!(decisions
        .iter()
        .filter(|d| d["status"] != "done")
        .all(|d| d["status"] == "failed" && d["error"]["code"] == "VERSION_CONFLICT"));
    let file = a.content("shared.txt").await;
    assert_eq!(file["version"], done[0]["result"]["version"]);
    // A patch against the old version is refused too.
    let id = a
        .pending(
            "fs/patch",
            json!({ "path": "shared.txt", "expectedVersion": v1,
                "patch": "--- a/shared.txt\n+++ b/shared.txt\n@@ -1 +1 @@\n-base\n+x\n" }),
        )
        .await;
    assert_eq!(a.approve(&id).await["error"]["code"], "VERSION_CONFLICT");
}

async fn batches_are_decided_together_individual_ones_alone(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let one = a
        .pending("fs/write", json!({ "path": "one.txt", "content": "1" }))
        .await;
    let two = a
        .pending("fs/write", json!({ "path": "two.txt", "content": "2" }))
        .await;
    let del = a.pending("fs/delete", json!({ "path": "one.txt" })).await;
    let v = expect_error(
        a.decide(
            &one,
            json!({ "decision": "approve", "approvalIds": [two, del] }),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(v["details"][0]["field"], "approvalIds");
    // The refusal is audited, and decided nothing.
    let view = a.view().await;
    let refused: Vec<&Value> = view["audit"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "approval.approve" && e["outcome"] == "VALIDATION_ERROR")
        .collect();
    assert_eq!(refused.len(), 1, "{view}");
    assert_eq!(refused[0]["approved"], false);
    assert!(refused[0]["target"].as_str().unwrap().contains(&del));
    assert!(view["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["status"] == "pending"));
    let r = a
        .decide(&one, json!({ "decision": "approve", "approvalIds": [two] }))
        .await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    let statuses: Vec<&Value> = v["data"]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["status"])
        .collect();
    assert_eq!(statuses, vec!["done", "done"]);
    assert_eq!(a.content("two.txt").await["content"], "2");
}

async fn other_tenants_and_users_see_nothing(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let id = a
        .pending("fs/write", json!({ "path": "mine.txt", "content": "x" }))
        .await;
    a.app.seed_user("other", "bob@other.com", PW).await;
    // A tenant's workspace root cannot reach into another tenant's area.
    for root in [
        "acme/project",
        "s3://bkt/workspaces/acme",
        "s3://bkt/workspaces",
    ] {
        let taken = create_workspace(
            a.app.ctx.store.as_ref(),
            NewWorkspace {
                tenant_id: "other",
                id: None,
                name: "Grab",
                root,
                allow: &[],
                writers: &[],
            },
            a.app.clock.now(),
        )
        .await;
        assert!(taken.is_err(), "{root}");
    }
    a.app.seed_user("acme", "carol@acme.com", PW).await;
    a.app
        .seed_user_as("acme", "root@acme.com", PW, Role::Admin)
        .await;
    for email in ["bob@other.com", "carol@acme.com"] {
        let t = a.app.login(email, PW).await;
        let session = format!("/api/v1/agent/sessions/{}", a.session);
        expect_error(
            a.send_as(&t, Method::GET, &session, None).await,
            404,
            "AGENT_SESSION_NOT_FOUND",
        )
        .await;
        expect_error(
            a.send_as(&t, Method::GET, &a.q("fs/list", ""), None).await,
            404,
            "AGENT_SESSION_NOT_FOUND",
        )
        .await;
        let decide = format!("/api/v1/agent/approvals/{id}");
        expect_error(
            a.send_as(
                &t,
                Method::POST,
                &decide,
                Some(json!({ "decision": "approve" })),
            )
            .await,
            404,
            "APPROVAL_NOT_FOUND",
        )
        .await;
        let move_in = json!({ "workspaceId": "proj", "sessionId": a.session });
        let r = a
            .send_as(
                &t,
                Method::POST,
                "/api/v1/agent/workspace/select",
                Some(move_in),
            )
            .await;
        assert_eq!(r.status(), 404, "{email}");
    }
    let bob = a.app.login("bob@other.com", PW).await;
    let r = a
        .send_as(
            &bob,
            Method::POST,
            "/api/v1/agent/workspace/select",
            Some(json!({ "workspaceId": "proj" })),
        )
        .await;
    expect_error(r, 404, "WORKSPACE_NOT_FOUND").await;
    let r = a
        .send_as(&bob, Method::GET, "/api/v1/agent/workspaces", None)
        .await;
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["data"]["workspaces"], json!([]));
    // A tenant admin may read the session (troubleshooting), not act in it.
    let admin = a.app.login("root@acme.com", PW).await;
    let r = a
        .send_as(
            &admin,
            Method::GET,
            &format!("/api/v1/agent/sessions/{}", a.session),
            None,
        )
        .await;
    assert_eq!(r.status(), 200);
    expect_error(
        a.send_as(&admin, Method::GET, &a.q("fs/list", ""), None)
            .await,
        404,
        "AGENT_SESSION_NOT_FOUND",
    )
    .await;
    expect_error(a.read("mine.txt").await, 404, "FILE_NOT_FOUND").await;
}

async fn status_and_the_switch(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let v = a.ok(Method::GET, "/api/v1/agent/status", json!(null)).await;
    assert_eq!(v["data"]["status"], "online", "{v}");
    assert_eq!(v["data"]["runsOn"], "server");
    let parts: Vec<&str> = v["data"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(parts, vec!["store", "workspaceStorage", "commandRunner"]);
    let ws = a
        .ok(Method::GET, "/api/v1/agent/workspaces", json!(null))
        .await;
    assert_eq!(ws["data"]["workspaces"][0]["id"], "proj");
    assert!(
        ws["data"]["workspaces"][0].get("root").is_none(),
        "roots stay server-side"
    );
    // An organisation without a workspace is degraded, with the reason.
    a.app.seed_user("bare", "eve@bare.com", PW).await;
    let t = a.app.login("eve@bare.com", PW).await;
    let r = a
        .send_as(&t, Method::GET, "/api/v1/agent/status", None)
        .await;
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["data"]["status"], "degraded", "{v}");
    assert!(v["data"]["parts"][1]["reason"]
        .as_str()
        .unwrap()
        .contains("agent-admin workspace add"));
    let r = a
        .app
        .client
        .get(a.app.url("/api/v1/agent/status"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    let off = agent_with(dynamodb, false).await;
    let v = off
        .ok(Method::GET, "/api/v1/agent/status", json!(null))
        .await;
    assert_eq!(v["data"]["status"], "offline");
    assert_eq!(v["data"]["enabled"], false);
    expect_error(
        off.send(Method::GET, "/api/v1/agent/workspaces", None)
            .await,
        403,
        "AGENT_TOOLS_DISABLED",
    )
    .await;
    let r = off
        .send(
            Method::POST,
            "/api/v1/agent/workspace/select",
            Some(json!({ "workspaceId": "proj" })),
        )
        .await;
    expect_error(r, 403, "AGENT_TOOLS_DISABLED").await;
}

/// The contract everywhere: unknown request fields are ignored, never a 400 — and never kept
/// with a parked call.
async fn unknown_fields_are_ignored(dynamodb: bool) {
    let a = agent(dynamodb).await;
    let extra = json!({ "clientVersion": "1.2.3", "trace": { "id": 7 } });
    let with = |mut v: Value| {
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let (status, v) = a
        .tool(
            "fs/write",
            with(json!({ "path": "u.txt", "content": "u\n" })),
        )
        .await;
    assert_eq!(status, 202, "{v}");
    assert_eq!(v["data"]["args"]["path"], "u.txt");
    assert!(v["data"]["args"].get("clientVersion").is_none(), "{v}");
    let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "done", "{d}");
    for (route, args, want) in [
        ("fs/search", json!({ "pattern": "u" }), 200),
        ("fs/search", json!({ "glob": "*.txt" }), 200),
        ("fs/mkdir", json!({ "path": "d" }), 202),
        ("fs/delete", json!({ "path": "u.txt" }), 202),
        (
            "fs/patch",
            json!({ "path": "u.txt", "patch": "--- a/u.txt\n+++ b/u.txt\n@@ -1 +1 @@\n-u\n+v\n" }),
            202,
        ),
        ("exec", json!({ "program": "ls", "args": ["-l"] }), 202),
    ] {
        let (status, v) = a.tool(route, with(args)).await;
        assert_eq!(status, want, "{route}: {v}");
    }
    let r = a
        .decide(
            &a.pending("fs/mkdir", json!({ "path": "e" })).await,
            with(json!({ "decision": "reject" })),
        )
        .await;
    assert_eq!(r.status(), 200);
    let r = a
        .send(
            Method::POST,
            "/api/v1/agent/workspace/select",
            Some(with(json!({ "workspaceId": "proj" }))),
        )
        .await;
    assert_eq!(r.status(), 200);
}

/// `/api/v1/agent/*` is rate-limited per user and per tenant like interact: under parallel
/// requests exactly the limit is served, the rest get 429 with `Retry-After` and an ISO
/// `resetAt`; refused requests are not counted, another tenant is untouched, and the window's
/// end lets the user in again.
async fn agent_routes_are_rate_limited_per_user_and_tenant(dynamodb: bool) {
    let a = agent_with_options(
        dynamodb,
        AppOptions::default()
            .set("AGENT_RATE_PER_USER", "5")
            .set("AGENT_RATE_PER_TENANT", "8"),
    )
    .await;
    // Malformed requests are refused (after the token, before the count): they cost nothing.
    for _ in 0..10 {
        let r = a
            .send(Method::GET, "/api/v1/agent/fs/list?sessionId=nope", None)
            .await;
        expect_error(r, 400, "VALIDATION_ERROR").await;
    }
    // workspace/select (in the set-up) was the first of ada's five.
    let list = a.q("fs/list", "");
    let answers =
        futures::future::join_all((0..30).map(|_| a.send(Method::GET, &list, None))).await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [vec![200; 4], vec![429; 26]].concat());
    for r in answers.into_iter().filter(|r| r.status() == 429) {
        let retry: i64 = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
        let v = expect_error(r, 429, "RATE_LIMIT").await;
        let reset = chrono::DateTime::parse_from_rfc3339(v["resetAt"].as_str().unwrap())
            .expect("an ISO resetAt");
        assert_eq!(reset.timestamp() - a.app.clock.now().timestamp(), retry);
    }
    // The tenant has 3 of its 8 left (ada's refusals did not count): carol gets 3.
    a.app.seed_user("acme", "carol@acme.com", PW).await;
    let carol = a.app.login("carol@acme.com", PW).await;
    let answers = futures::future::join_all(
        (0..6).map(|_| a.send_as(&carol, Method::GET, "/api/v1/agent/workspaces", None)),
    )
    .await;
    let ok = answers.iter().filter(|r| r.status() == 200).count();
    let limited = answers.iter().filter(|r| r.status() == 429).count();
    assert_eq!((ok, limited), (3, 3));
    // Another tenant is not affected.
    a.app.seed_user("other", "bob@other.com", PW).await;
    let bob = a.app.login("bob@other.com", PW).await;
    let r = a
        .send_as(&bob, Method::GET, "/api/v1/agent/workspaces", None)
        .await;
    assert_eq!(r.status(), 200);
    a.app.clock.advance(Duration::seconds(60));
    let r = a.send(Method::GET, &a.q("fs/list", ""), None).await;
    assert_eq!(r.status(), 200);
}

/// Pending approvals are capped per user, in number and in bytes of their arguments: of
/// parallel calls exactly the cap is parked, the rest get 429 `TOO_MANY_PENDING_APPROVALS`
/// with `Retry-After` and `resetAt`, and leave nothing behind; deciding frees room, and
/// approvals nobody decided stop counting once they have expired.
async fn pending_approvals_are_capped_per_user(dynamodb: bool) {
    let a = agent_with_options(
        dynamodb,
        AppOptions::default()
            .set("AGENT_MAX_PENDING_APPROVALS", "5")
            .set("AGENT_MAX_PENDING_BYTES", "200000"),
    )
    .await;
    let park = |path: String, content: String| {
        let a = &a;
        async move {
            a.tool("fs/write", json!({ "path": path, "content": content }))
                .await
        }
    };
    let answers =
        futures::future::join_all((0..30).map(|i| park(format!("f{i}.txt"), "x".into()))).await;
    let parked: Vec<String> = answers
        .iter()
        .filter(|(s, _)| *s == 202)
        .map(|(_, v)| v["data"]["approvalId"].as_str().unwrap().to_owned())
        .collect();
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!(parked.len(), 5, "{statuses:?}");
    for (status, v) in answers.iter().filter(|(s, _)| *s != 202) {
        assert_eq!(*status, 429, "{v}");
        assert_eq!(v["code"], "TOO_MANY_PENDING_APPROVALS", "{v}");
        assert!(v["resetAt"].is_string(), "{v}");
    }
    let r = a
        .send(
            Method::POST,
            "/api/v1/agent/fs/mkdir",
            Some(json!({ "sessionId": a.session, "path": "d" })),
        )
        .await;
    assert!(r.headers().contains_key("retry-after"));
    expect_error(r, 429, "TOO_MANY_PENDING_APPROVALS").await;
    // Nothing of the refused calls stays: five approvals, and reads still run.
    let view = a.view().await;
    assert_eq!(view["approvals"].as_array().unwrap().len(), 5);
    assert_eq!(
        a.ok(Method::GET, &a.q("fs/list", ""), json!(null)).await["data"]["entries"],
        json!([])
    );
    // Deciding frees room.
    for id in &parked {
        let r = a.decide(id, json!({ "decision": "reject" })).await;
        assert_eq!(r.status(), 200);
    }
    // Bytes: 60 kB writes against 200 kB, in parallel: three fit.
    let big = "y".repeat(60_000);
    let answers =
        futures::future::join_all((0..6).map(|i| park(format!("b{i}.txt"), big.clone()))).await;
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 202).count(),
        3,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        3,
        "{statuses:?}"
    );
    // Undecided approvals expire; once their lifetime has passed they no longer count.
    a.app.clock.advance(Duration::seconds(2 * 900));
    let (status, v) = park("late.txt".into(), big.clone()).await;
    assert_eq!(status, 202, "{v}");
}

/// The session view pages its audit trail and approvals with cursors, filters the trail by
/// action and outcome, and keeps every answer under 1 MB: a delete behind 205 listings is
/// found (by paging, and at once by filter), and 40 approvals of 31 kB each come in pages.
async fn the_audit_view_pages_filters_and_stays_under_a_megabyte(dynamodb: bool) {
    let a = agent(dynamodb).await;
    a.write("gone.txt", "x").await;
    let id = a.pending("fs/delete", json!({ "path": "gone.txt" })).await;
    assert_eq!(a.approve(&id).await["status"], "done");
    let list = a.q("fs/list", "");
    for _ in 0..(205 / 41) {
        let batch =
            futures::future::join_all((0..41).map(|_| a.send(Method::GET, &list, None))).await;
        assert!(batch.iter().all(|r| r.status() == 200));
    }
    let base = format!("/api/v1/agent/sessions/{}", a.session);
    let page = |query: String| {
        let a = &a;
        let url = format!("{base}{query}");
        async move {
            let r = a.send(Method::GET, &url, None).await;
            let status = r.status().as_u16();
            let bytes = r.bytes().await.expect("body");
            assert!(bytes.len() < 1_000_000, "{} bytes", bytes.len());
            let v: Value = serde_json::from_slice(&bytes).expect("json");
            (status, v)
        }
    };
    // Page through everything: every item once, newest first, the delete among them.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let q = match &cursor {
            Some(c) => format!("?limit=50&cursor={c}"),
            None => "?limit=50".into(),
        };
        let (status, v) = page(q).await;
        assert_eq!(status, 200, "{v}");
        pages += 1;
        let items = v["data"]["audit"].as_array().unwrap();
        assert!(items.len() <= 50);
        seen.extend(items.iter().cloned());
        match v["data"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        assert!(pages < 20, "paging never ends");
    }
    let ids: std::collections::HashSet<&str> =
        seen.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), seen.len(), "an item came twice");
    assert!(seen.len() >= 205 + 4, "{}", seen.len());
    let stamps: Vec<&str> = seen
        .iter()
        .map(|e| e["timestamp"].as_str().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "newest first");
    assert!(seen
        .iter()
        .any(|e| e["action"] == "fs.delete" && e["outcome"] == "ok"));
    // A filter finds it at once.
    let (_, v) = page("?action=fs.delete&outcome=ok".into()).await;
    let found = v["data"]["audit"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{v}");
    assert_eq!(found[0]["target"], "gone.txt");
    let (_, v) = page("?action=fs.delete,approval.approve".into()).await;
    assert!(v["data"]["audit"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["action"] == "fs.delete" || e["action"] == "approval.approve"));
    // Bad paging input names the field.
    for (q, field) in [
        ("?cursor=%%%", "cursor"),
        ("?cursor=bm90IGEgY3Vyc29y", "cursor"),
        ("?limit=0", "limit"),
        ("?limit=abc", "limit"),
        ("?approvalsCursor=!!", "approvalsCursor"),
    ] {
        let (status, v) = page(q.into()).await;
        assert_eq!(
            (status, v["details"][0]["field"].as_str()),
            (400, Some(field)),
            "{q}: {v}"
        );
    }
    // Forty approvals of 31 kB: more than one answer can hold; paged, each under 1 MB.
    let content = "z".repeat(31_000);
    for i in 0..40 {
        a.pending(
            "fs/write",
            json!({ "path": format!("w{i}.txt"), "content": content }),
        )
        .await;
    }
    let mut approvals = 0;
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let q = match &cursor {
            Some(c) => format!("?approvalsCursor={c}"),
            None => String::new(),
        };
        let (status, v) = page(q).await;
        assert_eq!(status, 200);
        pages += 1;
        approvals += v["data"]["approvals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["toolName"] == "fs.write" && x["status"] == "pending")
            .count();
        match v["data"]["approvalsNextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        assert!(pages < 20, "paging never ends");
    }
    assert_eq!(approvals, 40);
    assert!(pages > 1);
}

on_both_stores!(
    files_search_and_patches,
    traversal_is_refused_and_touches_nothing,
    approvals_run_once_and_never_when_rejected_or_expired,
    stale_versions_are_refused_not_lost,
    batches_are_decided_together_individual_ones_alone,
    other_tenants_and_users_see_nothing,
    status_and_the_switch,
    unknown_fields_are_ignored,
    agent_routes_are_rate_limited_per_user_and_tenant,
    pending_approvals_are_capped_per_user,
    the_audit_view_pages_filters_and_stays_under_a_megabyte,
);

/// Searches take turns: with every turn of the process held, a search waits and is answered
/// `503` with `Retry-After` when none comes free; once one is free, searches run again — a
/// parallel burst of them all answered, one turn at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_wait_for_a_turn_and_never_run_without_one() {
    let a = agent_with_options(
        false,
        AppOptions::default().set("AGENT_SEARCH_CONCURRENCY", "1"),
    )
    .await;
    a.write("a.txt", "needle\n").await;
    let held = a
        .app
        .ctx
        .search_turns
        .clone()
        .acquire_owned()
        .await
        .unwrap();
    let (status, v) = a.tool("fs/search", json!({ "pattern": "needle" })).await;
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["code"], "SERVICE_UNAVAILABLE");
    // A glob reads no file: it needs no turn.
    let (status, _) = a.tool("fs/search", json!({ "glob": "*.txt" })).await;
    assert_eq!(status, 200);
    drop(held);
    let answers = futures::future::join_all(
        (0..8).map(|_| a.tool("fs/search", json!({ "pattern": "needle" }))),
    )
    .await;
    for (status, v) in answers {
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["data"]["matches"][0]["path"], "a.txt");
    }
}
