//! Tests of the built binaries as a user runs them: local-api's first start, the admin CLI,
//! and a function binary under a Lambda Runtime API emulator.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use api_tests::process::{command, demo_credentials, login, start_local_api, start_local_api_with};
use api_tests::runtime_api::{Outcome, RuntimeApi};
use api_tests::{apigw_event, TEST_KEY};
use serde_json::{json, Value};
use shared::clock::{Clock, SystemClock};
use shared::ports::UserStore as _;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

async fn logout(base: &str, token: &str) -> reqwest::Response {
    shared::adapters::tls::client()
        .post(format!("{base}/api/v1/auth/logout"))
        .bearer_auth(token)
        .send()
        .await
        .expect("request")
}

async fn interrupt(child: &mut Child) -> std::process::ExitStatus {
    let pid = child.id().expect("pid").to_string();
    let status = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .await
        .expect("kill");
    assert!(status.success());
    tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("exits after Ctrl-C")
        .expect("wait")
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn local_api_first_start_prints_demo_credentials_that_log_in_and_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut api = start_local_api(dir.path()).await;
    assert!(
        api.output
            .iter()
            .any(|l| l.contains("Generated a development JWT key")),
        "{:?}",
        api.output
    );
    assert!(api.base.starts_with("http://127.0.0.1:"));
    let (email, password) = demo_credentials(&api.output);
    let r = login(&api.base, &email, &password).await;
    assert_eq!(r.status(), 200);
    let token = r.json::<Value>().await.expect("json")["accessToken"]
        .as_str()
        .expect("token")
        .to_owned();
    let status = interrupt(&mut api.child).await;
    assert!(status.success(), "graceful shutdown exits 0, got {status}");

    // Second start: same key (old tokens still valid), no new demo account, credentials repeated.
    let mut api = start_local_api(dir.path()).await;
    assert!(
        api.output
            .iter()
            .any(|l| l.contains("Using the development JWT key")),
        "{:?}",
        api.output
    );
    assert_eq!(demo_credentials(&api.output), (email, password));
    let r = shared::adapters::tls::client()
        .get(format!("{}/api/v1/auth/session", api.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    let status = interrupt(&mut api.child).await;
    assert!(status.success(), "graceful shutdown exits 0, got {status}");
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn logs_are_json_lines_without_passwords_tokens_or_keys() {
    let dir = tempfile::tempdir().expect("tmp");
    let log_path = dir.path().join("stderr.log");
    let log_file = std::fs::File::create(&log_path).expect("log file");
    let data = dir.path().join("data");
    let mut api = start_local_api_with(&data, Stdio::from(log_file), &[]).await;
    let (email, password) = demo_credentials(&api.output);
    let r = login(&api.base, &email, &password).await;
    let token = r.json::<Value>().await.expect("json")["accessToken"]
        .as_str()
        .expect("token")
        .to_owned();
    assert_eq!(
        login(&api.base, &email, "wrong-password-123")
            .await
            .status(),
        401
    );
    let numeric = shared::adapters::tls::client()
        .post(format!("{}/api/v1/auth/login", api.base))
        .json(&json!({ "email": email, "password": 987654321987u64 }))
        .send()
        .await
        .expect("request");
    assert_eq!(numeric.status(), 400);
    let r = logout(&api.base, &token).await;
    assert_eq!(r.status(), 204);
    interrupt(&mut api.child).await;

    let logs = std::fs::read_to_string(&log_path).expect("logs");
    let key = std::fs::read_to_string(data.join("dev-jwt-secret")).expect("key");
    let completed: Vec<Value> = logs
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))
        })
        .filter(|v| v["fields"]["message"] == "request completed")
        .collect();
    assert_eq!(completed.len(), 4, "one completion line per request");
    for line in &completed {
        assert!(
            line["span"]["request_id"]
                .as_str()
                .is_some_and(|id| id.len() == 36),
            "{line}"
        );
        assert!(
            line["fields"]["status"].is_u64() && line["fields"]["duration_ms"].is_f64(),
            "{line}"
        );
    }
    for secret in [
        password.as_str(),
        "wrong-password-123",
        "987654321987",
        token.as_str(),
        key.trim(),
    ] {
        assert!(!logs.contains(secret), "a secret reached the logs");
    }
    // The token's signature alone must not appear either.
    let signature = token.rsplit('.').next().expect("signature");
    assert!(!logs.contains(signature));
}

/// Runs `agent-admin` with the whitespace-separated arguments of `args`.
async fn admin(dir: &std::path::Path, args: &str, stdin: Option<&str>) -> (i32, String, String) {
    admin_with(dir, args, stdin, &[]).await
}

/// Runs `agent-admin`, which must exit 1 with `expected` in its error output.
async fn admin_fails(dir: &std::path::Path, args: &str, stdin: Option<&str>, expected: &str) {
    let (code, _, err) = admin(dir, args, stdin).await;
    assert_eq!(code, 1, "{args}: {err}");
    assert!(err.contains(expected), "{err}");
}

async fn admin_with(
    dir: &std::path::Path,
    args: &str,
    stdin: Option<&str>,
    envs: &[(String, String)],
) -> (i32, String, String) {
    let mut child = command("agent-admin")
        .envs(envs.iter().cloned())
        .arg("--data-dir")
        .arg(dir)
        .args(args.split_whitespace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agent-admin");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(s) = stdin {
        input.write_all(s.as_bytes()).await.expect("write");
    }
    drop(input);
    let out = child.wait_with_output().await.expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn admin_cli_provisions_what_local_api_then_serves() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    assert_eq!(
        admin(d, "tenant create --name Acme --id acme", None)
            .await
            .0,
        0
    );
    admin_fails(
        d,
        "tenant create --name Again --id acme",
        None,
        "already exists",
    )
    .await;

    let (code, out, _) = admin(
        d,
        "user create --tenant acme --email Bob@Acme.com --name Bob",
        Some("s3cret-password\n"),
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(out.trim().len(), 36, "prints the new user id");
    admin_fails(
        d,
        "user create --tenant acme --email x@acme.com --name X",
        None,
        "standard input",
    )
    .await;
    admin_fails(
        d,
        "user create --tenant acme --email y@acme.com --name Y",
        Some("short\n"),
        "password: must be at least 10 characters",
    )
    .await;
    admin_fails(
        d,
        "user create --tenant nope --email z@acme.com --name Z",
        Some("s3cret-password\n"),
        "tenant nope does not exist",
    )
    .await;
    let (code, _, _) = admin(
        d,
        "user create --tenant acme --email p@acme.com --name P --password x",
        None,
    )
    .await;
    assert_eq!(code, 2, "there is no way to pass a password as an argument");

    assert_eq!(
        admin(d, "domain add --tenant acme *.Acme.com", None)
            .await
            .0,
        0
    );
    admin_fails(d, "domain add --tenant acme a*.acme.com", None, "pattern").await;
    let (_, out, _) = admin(d, "--json domain list --tenant acme", None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json"),
        json!(["*.acme.com"])
    );
    admin_fails(
        d,
        "domain remove --tenant acme other.com",
        None,
        "not an allowed domain",
    )
    .await;

    let mut api = start_local_api(d).await;
    assert!(
        !api.output.iter().any(|l| l.starts_with("Demo login")),
        "no demo account in a provisioned store"
    );
    assert_eq!(
        login(&api.base, "bob@acme.com", "s3cret-password")
            .await
            .status(),
        200
    );
    // Disabling takes effect on the running server (both processes share the file).
    assert_eq!(
        admin(d, "user disable --email bob@acme.com", None).await.0,
        0
    );
    assert_eq!(
        login(&api.base, "bob@acme.com", "s3cret-password")
            .await
            .status(),
        403
    );
    let (_, out, _) = admin(d, "--json user list --tenant acme", None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json")[0]["disabled"],
        true
    );
    assert_eq!(
        admin(d, "user disable --email ghost@acme.com", None)
            .await
            .0,
        1
    );
    interrupt(&mut api.child).await;
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn function_binaries_refuse_to_start_without_a_proper_key() {
    for (key, expected) in [
        (None, "JWT_SECRET is not set"),
        (Some("short"), "at least 32 bytes"),
    ] {
        let mut c = command("auth-login");
        if let Some(k) = key {
            c.env("JWT_SECRET", k);
        }
        let out = c
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .await
            .expect("run");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{err}");
        if let Some(k) = key {
            assert!(
                !err.contains(&format!("\"{k}\"")),
                "the key itself is never printed"
            );
        }
    }
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn function_binaries_answer_api_gateway_events_through_the_runtime_api() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let store =
            shared::adapters::TableStore::embedded(dir.path(), clock.clone()).expect("store");
        api_tests::provision_ada(&store, clock.now()).await;
    }
    let spawn = |bin: &str, rt: &RuntimeApi| {
        command(bin)
            .envs(rt.env(bin))
            .env("JWT_SECRET", TEST_KEY)
            .env("DATA_DIR", dir.path())
            .env("ALLOWED_ORIGINS", "chrome-extension://abc")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn")
    };

    let mut rt = RuntimeApi::start().await;
    let _login_fn = spawn("auth-login", &rt);
    let body = json!({ "email": "ada@acme.com", "password": "s3cret-password" }).to_string();
    let ev = apigw_event(
        "POST",
        "/api/v1/auth/login",
        &[
            ("content-type", "application/json"),
            ("origin", "chrome-extension://abc"),
        ],
        &body,
    );
    let (outcome, _) = rt
        .invoke(&ev, Duration::from_secs(30))
        .await
        .expect("login answered");
    let Outcome::Response(resp) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    assert_eq!(resp["statusCode"], 200, "{resp}");
    assert_eq!(
        resp["headers"]["access-control-allow-origin"],
        "chrome-extension://abc"
    );
    assert_eq!(resp["headers"]["x-request-id"], "apigw-req-1");
    let login: Value = serde_json::from_str(resp["body"].as_str().expect("body")).expect("json");
    let token = login["accessToken"].as_str().expect("token").to_owned();
    assert_eq!(login["tenantName"], "Acme");

    let mut rt2 = RuntimeApi::start().await;
    let _session_fn = spawn("auth-session", &rt2);
    let ev = api_tests::session_event(&token);
    let (outcome, _) = rt2
        .invoke(&ev, Duration::from_secs(30))
        .await
        .expect("session answered");
    let Outcome::Response(resp) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    assert_eq!(resp["statusCode"], 200, "{resp}");
    let ev = apigw_event(
        "GET",
        "/api/v1/auth/session",
        &[("authorization", "Bearer nope")],
        "",
    );
    let (outcome, _) = rt2
        .invoke(&ev, Duration::from_secs(30))
        .await
        .expect("answered");
    let Outcome::Response(resp) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    assert_eq!(resp["statusCode"], 401);
    let err: Value = serde_json::from_str(resp["body"].as_str().expect("body")).expect("json");
    assert_eq!(err["code"], "UNAUTHORIZED");
}

#[tokio::test]
#[ignore = "needs the built binaries and moto (DynamoDB/S3): scripts/test provides both"]
async fn admin_cli_and_local_api_run_on_dynamodb_and_s3() {
    // A table and bucket nobody created yet: `store init` makes them, and a second run is a no-op.
    let id = uuid::Uuid::new_v4().simple().to_string();
    let cfg = shared::config::AwsStoreConfig {
        table: format!("agent-init-{}", &id[..12]),
        bucket: format!("agent-init-{}", &id[..12]),
        endpoint: Some(api_tests::aws::endpoint()),
        region: Some(api_tests::aws::REGION.into()),
    };
    let env = api_tests::aws::process_env(&cfg);
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let (code, out, err) = admin_with(d, "--json store init", None, &env).await;
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["tableCreated"].as_bool(), v["bucketCreated"].as_bool()),
        (Some(true), Some(true))
    );
    let (_, out, _) = admin_with(d, "--json store init", None, &env).await;
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["tableCreated"].as_bool(), v["bucketCreated"].as_bool()),
        (Some(false), Some(false))
    );
    let (code, _, err) = admin_with(d, "tenant create --name Acme --id acme", None, &env).await;
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = admin_with(
        d,
        "user create --tenant acme --email ada@acme.com --name Ada",
        Some("s3cret-password\n"),
        &env,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = admin_with(d, "--json tenant list", None, &env).await;
    assert_eq!(
        serde_json::from_str::<Value>(&out).expect("json"),
        json!([{ "id": "acme", "name": "Acme" }])
    );
    // Nothing went to the embedded store in the data directory.
    assert!(!d.join("agent.db").exists());

    let mut api = start_local_api_with(d, Stdio::null(), &env).await;
    assert!(
        !api.output.iter().any(|l| l.starts_with("Demo login")),
        "{:?}",
        api.output
    );
    let r = login(&api.base, "ada@acme.com", "s3cret-password").await;
    assert_eq!(r.status(), 200);
    let token = r.json::<Value>().await.expect("json")["accessToken"]
        .as_str()
        .expect("token")
        .to_owned();
    let logout = logout(&api.base, &token).await;
    assert_eq!(logout.status(), 204);
    // Users are in DynamoDB: a fresh store on the same table sees them.
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let (ddb, _) = api_tests::aws::clients();
    let store = shared::adapters::TableStore::new(
        Arc::new(shared::adapters::dynamo::DynamoTable::new(ddb, &cfg.table)),
        clock.clone(),
    );
    let session = shared::adapters::tls::client()
        .get(format!("{}/api/v1/auth/session", api.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("request");
    assert_eq!(session.status(), 401);
    assert_eq!(
        store.list_users(Some("acme")).await.expect("users").len(),
        1
    );
    interrupt(&mut api.child).await;
}

#[tokio::test]
#[ignore = "needs the built binaries and moto (DynamoDB/S3): scripts/test provides both"]
async fn cleanup_binary_deletes_expired_tasks_on_dynamodb() {
    use shared::domain::TaskStatus;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let (stores, cfg) = api_tests::aws::stores(clock.clone()).await;
    let now = clock.now();
    let mut expired =
        api_tests::conformance::task("acme", None, &shared::clock::ManualClock::new(now));
    expired.status = TaskStatus::Completed;
    expired.stored.expires_at = now.timestamp() - 60;
    let live = api_tests::conformance::task("acme", None, &shared::clock::ManualClock::new(now));
    for t in [&expired, &live] {
        stores.store.create_task(t).await.expect("task");
        stores
            .snapshots
            .put_snapshot("acme", &t.id, 0, b"<p>page</p>")
            .await
            .expect("snapshot");
    }

    let mut rt = RuntimeApi::start().await;
    let mut function = command("cleanup-expired")
        .envs(rt.env("cleanup-expired"))
        .envs(api_tests::aws::process_env(&cfg))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let lines = collect_lines(&mut function);
    let event: Value =
        serde_json::from_str(include_str!("../../events/cleanup-scheduled.json")).expect("event");
    let (outcome, _) = rt
        .invoke(&event, Duration::from_secs(60))
        .await
        .expect("answered");
    let Outcome::Response(report) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    assert_eq!(report["expiredTasks"], 1, "{report}");
    assert_eq!(report["deletedSnapshots"], 1, "{report}");
    assert_eq!(report["failures"], 0, "{report}");
    // The run's counts as a metrics line (on by default inside Lambda).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let docs = emf_documents(&lines.lock().expect("lock"));
    assert_eq!(docs.len(), 1, "{docs:?}");
    assert_eq!(
        (
            &docs[0]["Function"],
            &docs[0]["TasksExpired"],
            &docs[0]["SnapshotsDeleted"]
        ),
        (&json!("cleanup-expired"), &json!(1.0), &json!(1.0)),
        "{}",
        docs[0]
    );
    function.kill().await.expect("stop");
    assert!(stores
        .store
        .task("acme", &expired.id)
        .await
        .expect("get")
        .is_none());
    assert!(stores
        .store
        .task("acme", &live.id)
        .await
        .expect("get")
        .is_some());
    assert_eq!(
        stores
            .snapshots
            .snapshot_steps("acme", &live.id)
            .await
            .expect("snaps"),
        vec![0]
    );
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn cleanup_binary_refuses_to_start_with_an_incomplete_store_config() {
    let out = command("cleanup-expired")
        .env("STORE", "dynamodb")
        .env("TABLE_NAME", "t")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .await
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SNAPSHOT_BUCKET is not set"));
}

/// The function's standard output, line by line, as it comes.
fn collect_lines(child: &mut Child) -> Arc<std::sync::Mutex<Vec<String>>> {
    use tokio::io::AsyncBufReadExt;
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let stdout = child.stdout.take().expect("piped stdout");
    let sink = lines.clone();
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(stdout).lines();
        while let Ok(Some(l)) = reader.next_line().await {
            sink.lock().expect("lock").push(l);
        }
    });
    lines
}

/// The EMF documents among `lines` (the function's log lines are not JSON).
fn emf_documents(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("_aws").is_some())
        .collect()
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn a_function_writes_emf_lines_for_its_steps_and_answers_without_the_tenant() {
    let dir = tempfile::tempdir().expect("tmp");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let token = {
        let store =
            shared::adapters::TableStore::embedded(dir.path(), clock.clone()).expect("store");
        api_tests::provision_ada(&store, clock.now()).await;
        let email = shared::domain::Email::parse(api_tests::ADA.0).expect("email");
        let ada = store
            .user_by_email(&email)
            .await
            .expect("read")
            .expect("ada");
        let cfg = api_tests::test_config(&api_tests::AppOptions::default());
        shared::auth::TokenService::new(&cfg.jwt)
            .issue(&ada, clock.now())
            .expect("token")
            .token
    };
    let llm = api_tests::scripted::ScriptedLlm::start().await;
    llm.push([api_tests::scripted::Reply::action(
        "I will click the Press me button.",
        "click(10)",
    )]);
    let mut rt = RuntimeApi::start().await;
    let mut function = command("agent-interact")
        .envs(rt.env("agent-interact"))
        .env("JWT_SECRET", TEST_KEY)
        .env("DATA_DIR", dir.path())
        .env("LLM_API_KEY", "test-llm-key")
        .env("LLM_BASE_URL", &llm.base_url)
        .env("LLM_MODEL", "gpt-5-mini")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let lines = collect_lines(&mut function);

    let body = api_tests::flows::start(
        "Click the Press me button",
        "https://shop.example/",
        vec![api_tests::flows::node("10", "btn", "Press me")],
    )
    .to_string();
    let bearer = format!("Bearer {token}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];
    let ev = apigw_event("POST", "/api/agent/interact", &headers, &body);
    let Some((outcome, _)) = rt.invoke(&ev, Duration::from_secs(30)).await else {
        panic!("no answer: {:#?}", lines.lock().expect("lock"))
    };
    let Outcome::Response(resp) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    assert_eq!(resp["statusCode"], 200, "{resp}");
    let ev = apigw_event("POST", "/api/agent/interact", &headers, "{\"url\": 5}");
    let (outcome, _) = rt
        .invoke(&ev, Duration::from_secs(30))
        .await
        .expect("answered");
    let Outcome::Response(resp) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    assert_eq!(resp["statusCode"], 400, "{resp}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    function.kill().await.expect("stop");

    let lines = lines.lock().expect("lock").clone();
    let docs = emf_documents(&lines);
    let steps: Vec<&Value> = docs.iter().filter(|d| d.get("Steps").is_some()).collect();
    let answers: Vec<&Value> = docs
        .iter()
        .filter(|d| d.get("Requests").is_some())
        .collect();
    assert_eq!((steps.len(), answers.len()), (1, 2), "{lines:#?}");
    let step = steps[0];
    assert_eq!(
        (
            &step["Function"],
            &step["Model"],
            &step["TasksStarted"],
            &step["ModelCalls"]
        ),
        (
            &json!("agent-interact"),
            &json!("gpt-5-mini"),
            &json!(1.0),
            &json!(1.0)
        ),
        "{step}"
    );
    assert!(
        step["CachedTokens"].as_f64().is_some_and(|t| t > 0.0),
        "{step}"
    );
    assert!(step["CostUSD"].as_f64().is_some_and(|c| c > 0.0), "{step}");
    assert_eq!(
        step["_aws"]["CloudWatchMetrics"][0]["Namespace"],
        "BrowserAgent"
    );
    assert_eq!(answers[0]["Errors4xx"], 0.0);
    assert_eq!(
        (&answers[1]["Errors4xx"], &answers[1]["Code"]),
        (&json!(1.0), &json!("VALIDATION_ERROR")),
        "{}",
        answers[1]
    );
    for d in &docs {
        let text = d.to_string();
        assert!(
            !text.contains("acme") && !text.contains("ada@"),
            "no tenant or user: {text}"
        );
    }
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn admin_cli_lists_shows_promotes_demotes_and_deletes_a_tenants_recipes() {
    use shared::ports::{AgentToolStore, RecipeStore};
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let clock = shared::clock::ManualClock::new(chrono::Utc::now());
    let store = shared::adapters::table_store::TableStore::embedded(
        d,
        std::sync::Arc::new(shared::clock::SystemClock),
    )
    .expect("store");
    let shop = "https://shop.test:443";
    // A member's template carries terminal escapes: printed escaped, never run.
    let ours = api_tests::conformance::recipe("acme", shop, "buy {item}\u{1b}[2J\u{202e}", &clock);
    let theirs = api_tests::conformance::recipe("other", shop, "buy {item}", &clock);
    let limits = shared::ports::recipes::RecipeLimits {
        per_tenant: 10,
        per_member: 10,
    };
    for r in [&ours, &theirs] {
        store.put_recipe(r, limits).await.expect("put");
    }
    let (code, out, err) = admin(d, "recipe list --tenant acme", None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.contains(&ours.id) && out.contains("member ada\thttps://shop.test:443/\tbuy {item}"),
        "{out}"
    );
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}') && out.contains("\\u{1b}[2J"),
        "control characters escaped: {out:?}"
    );
    let (code, out, _) = admin(
        d,
        &format!("--json recipe show --tenant acme {}", ours.id),
        None,
    )
    .await;
    assert_eq!(code, 0);
    let shown: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(shown["owner"], "ada");
    // Promoted: the organisation's copy, audited; demoted: gone, audited; the member's stays.
    let (code, out, err) = admin(
        d,
        &format!("--json recipe promote --tenant acme --by root {}", ours.id),
        None,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let copy: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(copy["promoted"], true);
    let org = copy["id"].as_str().expect("id").to_owned();
    admin_fails(
        d,
        &format!("recipe promote --tenant acme {org}"),
        None,
        "the organisation's already",
    )
    .await;
    admin_fails(
        d,
        &format!("recipe demote --tenant acme {}", ours.id),
        None,
        "has no promoted recipe",
    )
    .await;
    let (code, _, err) = admin(
        d,
        &format!("recipe demote --tenant acme --by root {org}"),
        None,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (trail, _) = store
        .audit_trail("acme", shared::agent::promotion::AUDIT_SESSION, None, 10)
        .await
        .expect("audit");
    let actions: Vec<(&str, &str)> = trail
        .iter()
        .map(|e| (e.action.as_str(), e.user_id.as_str()))
        .collect();
    assert_eq!(
        actions,
        [("recipe.demote", "root"), ("recipe.promote", "root")]
    );
    assert!(store.recipe("acme", &org).await.expect("get").is_none());
    assert!(store.recipe("acme", &ours.id).await.expect("get").is_some());
    // Another tenant's recipe is not this tenant's to see, promote or delete.
    for verb in ["show", "promote", "delete"] {
        admin_fails(
            d,
            &format!("recipe {verb} --tenant acme {}", theirs.id),
            None,
            "tenant acme has no recipe",
        )
        .await;
    }
    let (code, out, err) =
        admin(d, &format!("recipe delete --tenant acme {}", ours.id), None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("removed"));
    let (_, out, _) = admin(d, "recipe list --tenant acme", None).await;
    assert!(out.trim().is_empty(), "{out}");
    assert!(
        store
            .recipe("other", &theirs.id)
            .await
            .expect("get")
            .is_some(),
        "the other tenant's stays"
    );
}
