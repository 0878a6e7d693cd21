//! Allowlisted commands through local-api's router, on both stores (the workspace a local
//! directory or an S3 prefix; the command runs in a scratch copy either way): the allowlist,
//! output in ordered chunks read after a sequence number, the time limit, the output limit,
//! cancellation, a writer's changes written back (and nobody else's), tenant isolation.

use std::time::Duration;

use api_tests::agent::{agent_setup, Agent, AgentSetup, PW};
use api_tests::{expect_error, on_both_stores, AppOptions};
use reqwest::Method;
use serde_json::{json, Value};
use shared::tools::commands::SAFE_PATH;

async fn commands(dynamodb: bool, output_bytes: Option<&str>) -> Agent {
    let mut opts = AppOptions::default().set("AGENT_EXEC_MAX_SECONDS", "30");
    if let Some(cap) = output_bytes {
        opts = opts.set("AGENT_EXEC_OUTPUT_BYTES", cap);
    }
    agent_setup(
        dynamodb,
        AgentSetup {
            allow: vec![
                "echo=.*".into(),
                "seq=[0-9]+".into(),
                "sleep=[0-9]+".into(),
                "yes".into(),
                format!("cp={SAFE_PATH}"),
                format!("cat={SAFE_PATH}"),
                "printenv".into(),
            ],
            writers: vec!["touch=[a-z0-9.]+".into()],
            opts,
            ..AgentSetup::default()
        },
    )
    .await
}

/// Approves a command; its run id.
async fn started(a: &Agent, program: &str, args: &[&str], timeout: Option<u64>) -> String {
    let mut body = json!({ "program": program, "args": args });
    if let Some(t) = timeout {
        body["timeoutSeconds"] = json!(t);
    }
    let (status, v) = a.tool("exec", body).await;
    assert_eq!(status, 202, "{v}");
    assert_eq!(v["data"]["tier"], "individual");
    assert_eq!(v["data"]["toolName"], "exec.run");
    let d = a.approve(v["data"]["approvalId"].as_str().unwrap()).await;
    assert_eq!(d["status"], "done", "{d}");
    assert_eq!(d["result"]["status"], "running");
    d["result"]["execId"].as_str().expect("exec id").to_owned()
}

async fn read_run(a: &Agent, id: &str, after: Option<u64>) -> Value {
    let q = after.map(|n| format!("?after={n}")).unwrap_or_default();
    a.ok(
        Method::GET,
        &format!("/api/v1/agent/exec/{id}{q}"),
        json!(null),
    )
    .await["data"]
        .clone()
}

/// Waits for the run to end; its state and all its output (read page by page).
async fn ended(a: &Agent, id: &str) -> (Value, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let v = read_run(a, id, None).await;
        if v["status"] != "running" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still running: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut out = String::new();
    let mut after = None;
    let mut last_seq = 0;
    loop {
        let v = read_run(a, id, after).await;
        for c in v["chunks"].as_array().unwrap() {
            let seq = c["seq"].as_u64().unwrap();
            assert_eq!(seq, last_seq + 1, "chunks come in order, none missing");
            last_seq = seq;
            let data = c["data"].as_str().unwrap();
            assert!(data.len() <= 8 * 1024, "a chunk fits a Pusher message");
            out.push_str(data);
        }
        if v["more"] != true {
            return (v, out);
        }
        after = v["nextAfter"].as_u64();
    }
}

async fn allowlist_and_output(dynamodb: bool) {
    let a = commands(dynamodb, None).await;
    let (status, v) = a
        .tool("exec", json!({ "program": "rm", "args": ["-rf", "/"] }))
        .await;
    assert_eq!(
        (status, v["code"].as_str()),
        (403, Some("COMMAND_NOT_ALLOWED")),
        "{v}"
    );
    assert!(v["message"].as_str().unwrap().contains("rm"));
    let (status, v) = a
        .tool(
            "exec",
            json!({ "program": "seq", "args": ["1", ";", "id"] }),
        )
        .await;
    assert_eq!(
        (status, v["code"].as_str()),
        (403, Some("COMMAND_NOT_ALLOWED")),
        "{v}"
    );
    let (status, v) = a
        .tool(
            "exec",
            json!({ "program": "/bin/sh", "args": ["-c", "id"] }),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["details"][0]["field"], "program");
    let (status, v) = a
        .tool("exec", json!({ "program": "echo", "timeoutSeconds": 31 }))
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["details"][0]["field"], "timeoutSeconds");

    // Output arrives in order, in chunks; the exit code and duration at the end.
    let id = started(&a, "seq", &["1", "30000"], None).await;
    let (v, out) = ended(&a, &id).await;
    assert_eq!(v["status"], "exited", "{v}");
    assert_eq!(v["exitCode"], 0);
    assert!(v["durationMs"].as_u64().is_some());
    let want: String = (1..=30000).map(|n| format!("{n}\n")).collect();
    assert_eq!(out.len(), want.len());
    assert!(out == want, "the output is whole and in order");
    // A failing command's exit code and stderr.
    let id = started(&a, "cat", &["no-such-file"], None).await;
    let (v, _) = ended(&a, &id).await;
    assert_eq!(v["status"], "exited");
    assert_eq!(v["exitCode"], 1);
    let chunks = read_run(&a, &id, None).await["chunks"].clone();
    assert!(
        chunks
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["stream"] == "stderr"),
        "{chunks}"
    );
    // No shell expands anything, and the environment is the fixed one, not the server's.
    let id = started(&a, "echo", &["$HOME", "${JWT_SECRET}"], None).await;
    let (_, out) = ended(&a, &id).await;
    assert_eq!(out, "$HOME ${JWT_SECRET}\n");
    let id = started(&a, "printenv", &[], None).await;
    let (_, out) = ended(&a, &id).await;
    let mut names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        vec!["HOME", "LANG", "NO_COLOR", "PATH", "TERM", "TMPDIR"],
        "{out}"
    );
    // Paths leaving the workspace copy are not allowed arguments.
    let (status, v) = a
        .tool(
            "exec",
            json!({ "program": "cat", "args": ["../../etc/passwd"] }),
        )
        .await;
    assert_eq!(
        (status, v["code"].as_str()),
        (403, Some("COMMAND_NOT_ALLOWED")),
        "{v}"
    );
    let view = a.view().await;
    let audit = view["audit"].as_array().unwrap();
    assert!(audit
        .iter()
        .any(|e| e["action"] == "exec.run" && e["outcome"] == "COMMAND_NOT_ALLOWED"));
    assert!(audit
        .iter()
        .any(|e| e["action"] == "exec.end" && e["outcome"] == "exited:0"));
    assert!(audit
        .iter()
        .any(|e| e["action"] == "exec.end" && e["outcome"] == "exited:1"));
}

async fn limits_and_cancellation(dynamodb: bool) {
    let a = commands(dynamodb, Some("4096")).await;
    let id = started(&a, "sleep", &["20"], Some(1)).await;
    let (v, _) = ended(&a, &id).await;
    assert_eq!(v["status"], "timed_out", "{v}");
    assert!(v["durationMs"].as_u64().unwrap() < 10_000);

    let id = started(&a, "yes", &[], None).await;
    let (v, out) = ended(&a, &id).await;
    assert_eq!(v["status"], "output_limit", "{v}");
    assert_eq!(v["outputBytes"], 4096);
    assert_eq!(out.len(), 4096);

    let id = started(&a, "sleep", &["20"], None).await;
    let r = a
        .send(Method::DELETE, &format!("/api/v1/agent/exec/{id}"), None)
        .await;
    assert_eq!(r.status(), 200);
    let (v, _) = ended(&a, &id).await;
    assert_eq!(v["status"], "cancelled", "{v}");
    assert!(v["durationMs"].as_u64().unwrap() < 10_000);
    let r = a
        .send(Method::DELETE, &format!("/api/v1/agent/exec/{id}"), None)
        .await;
    expect_error(r, 409, "EXEC_FINISHED").await;
}

async fn only_writers_change_the_workspace(dynamodb: bool) {
    let a = commands(dynamodb, None).await;
    a.write("README.md", "hello\n").await;
    let id = started(&a, "cp", &["README.md", "copy.md"], None).await;
    assert_eq!(ended(&a, &id).await.0["exitCode"], 0);
    expect_error(a.read("copy.md").await, 404, "FILE_NOT_FOUND").await;
    let id = started(&a, "touch", &["made.txt"], None).await;
    let (v, _) = ended(&a, &id).await;
    assert_eq!(v["exitCode"], 0, "{v}");
    assert_eq!(a.content("made.txt").await["content"], "");
    assert_eq!(a.content("README.md").await["content"], "hello\n");
    assert!(
        !api_tests::agent::scratch_left(&id),
        "the scratch copy is removed"
    );
}

async fn other_users_see_no_runs(dynamodb: bool) {
    let a = commands(dynamodb, None).await;
    // Long enough to outlast two users' set-up and logins on a loaded machine (with 5 s it had
    // ended before the owner's cancel once, on moto with two test binaries running).
    let id = started(&a, "sleep", &["20"], None).await;
    a.app.seed_user("other", "bob@other.com", PW).await;
    a.app.seed_user("acme", "carol@acme.com", PW).await;
    for email in ["bob@other.com", "carol@acme.com"] {
        let t = a.app.login(email, PW).await;
        let path = format!("/api/v1/agent/exec/{id}");
        expect_error(
            a.send_as(&t, Method::GET, &path, None).await,
            404,
            "EXEC_NOT_FOUND",
        )
        .await;
        expect_error(
            a.send_as(&t, Method::DELETE, &path, None).await,
            404,
            "EXEC_NOT_FOUND",
        )
        .await;
    }
    let r = a
        .send(Method::DELETE, &format!("/api/v1/agent/exec/{id}"), None)
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(ended(&a, &id).await.0["status"], "cancelled");
}

async fn a_run_is_taken_by_one_runner(dynamodb: bool) {
    let a = commands(dynamodb, None).await;
    let id = started(&a, "sleep", &["1"], None).await;
    // A second delivery of the same run (asynchronous invocations are at-least-once).
    recorded(&a.app.ctx, &id)
        .await
        .expect("a claimed run is skipped");
    let (v, _) = ended(&a, &id).await;
    assert_eq!(v["status"], "exited");
    let again = recorded(&a.app.ctx, &id).await;
    assert!(again.is_err(), "an ended run is not run again");
    let view = a.view().await;
    let ends = view["audit"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "exec.end" && e["target"] == id.as_str())
        .count();
    assert_eq!(ends, 1, "it ran once");
}

/// No argument of an allowlisted program may resolve outside the workspace copy, whatever the
/// pattern allows (`ls -la ..` listed the host's temporary directory, other runs' scratch
/// copies included); each run works in a private directory of its own (`HOME` and `TMPDIR`
/// too), gone when it ends.
async fn arguments_stay_in_the_copy_and_runs_are_private(dynamodb: bool) {
    let a = agent_setup(
        dynamodb,
        AgentSetup {
            allow: vec![
                "ls=-[la]+ [a-z0-9_.]+".into(),
                "echo=.*".into(),
                "printenv".into(),
            ],
            opts: AppOptions::default().set("AGENT_EXEC_MAX_SECONDS", "30"),
            ..AgentSetup::default()
        },
    )
    .await;
    a.write("notes.txt", "n\n").await;
    // Another run's scratch copy, where runs used to sit side by side.
    let decoy = std::env::temp_dir().join(format!("agent-exec-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&decoy).unwrap();
    std::fs::write(decoy.join("their-secret.txt"), "s").unwrap();
    for (program, args) in [
        ("ls", vec!["-la", ".."]),
        ("ls", vec![".."]),
        ("echo", vec!["../../etc/passwd"]),
        ("echo", vec!["/etc/passwd"]),
        ("echo", vec!["--file=/etc/passwd"]),
        ("echo", vec!["-f/etc/passwd"]),
        ("echo", vec!["a/../../b"]),
        ("echo", vec!["~/x"]),
    ] {
        let (status, v) = a
            .tool("exec", json!({ "program": program, "args": args }))
            .await;
        assert_eq!(
            (status, v["code"].as_str()),
            (403, Some("COMMAND_NOT_ALLOWED")),
            "{program} {args:?}: {v}"
        );
    }
    // Inside the copy is fine.
    let id = started(&a, "ls", &["-la", "."], None).await;
    let (v, out) = ended(&a, &id).await;
    assert_eq!(v["exitCode"], 0, "{v}");
    assert!(out.contains("notes.txt"), "{out}");
    assert!(!out.contains("agent-exec"), "{out}");
    let id = started(&a, "echo", &["a/../b", "x=y", "-n", "https://h/p"], None).await;
    assert_eq!(ended(&a, &id).await.0["exitCode"], 0);
    // Each run's HOME and TMPDIR sit in its own directory, gone when it ends.
    let mut homes = Vec::new();
    for _ in 0..2 {
        let id = started(&a, "printenv", &[], None).await;
        let (_, out) = ended(&a, &id).await;
        let var = |name: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| panic!("{name} in {out}"))
        };
        let run_dir = api_tests::agent::scratch_path(&id);
        assert!(var("HOME").starts_with(&run_dir), "{out}");
        assert!(var("TMPDIR").starts_with(&run_dir), "{out}");
        assert!(!api_tests::agent::scratch_left(&id));
        homes.push(var("HOME"));
    }
    assert_ne!(homes[0], homes[1]);
    std::fs::remove_dir_all(&decoy).unwrap();
}

on_both_stores!(
    a_run_is_taken_by_one_runner,
    allowlist_and_output,
    limits_and_cancellation,
    only_writers_change_the_workspace,
    other_users_see_no_runs,
    arguments_stay_in_the_copy_and_runs_are_private,
);

/// The command runner function's work for run `id` of `acme`, with the context's ports.
async fn recorded(ctx: &shared::AppContext, id: &str) -> Result<(), String> {
    shared::tools::recorded_run::run_recorded(
        ctx.store.as_ref(),
        ctx.workspaces.as_ref(),
        &ctx.jobs(),
        "acme",
        id,
    )
    .await
}
