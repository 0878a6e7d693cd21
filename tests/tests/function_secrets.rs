//! The functions as deployed read their secrets from Secrets Manager (a local compatible
//! server) at cold start: the token key by ARN, nothing in their environment but the ARN. A
//! rotated key is picked up by a running function on the first token it cannot verify; a
//! secret that cannot be read stops start-up naming its variable and id.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use api_tests::apigw_event;
use api_tests::aws::{process_env, put_secret, stores};
use api_tests::process::command;
use api_tests::runtime_api::{Outcome, RuntimeApi};
use serde_json::{json, Value};
use shared::clock::{Clock, SystemClock};
use tokio::process::Child;

const KEY_A: &str = "a-key-0123456789abcdef0123456789abcdef";
const KEY_B: &str = "b-key-0123456789abcdef0123456789abcdef";

struct Deployment {
    env: Vec<(String, String)>,
    /// Every function's output (stdout and stderr, one file each).
    logs: tempfile::TempDir,
}

impl Deployment {
    fn new(env: Vec<(String, String)>) -> Self {
        Self {
            env,
            logs: tempfile::tempdir().expect("logs"),
        }
    }

    /// `bin` under its own Runtime API, with the deployment's environment and `extra`.
    fn spawn(&self, bin: &str, rt: &RuntimeApi, extra: &[(&str, &str)]) -> Child {
        let log = |stream: &str| {
            let name = format!("{bin}-{}-{stream}", uuid::Uuid::new_v4().simple());
            Stdio::from(std::fs::File::create(self.logs.path().join(name)).expect("log file"))
        };
        command(bin)
            .envs(rt.env(bin))
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(extra.iter().copied())
            .env("AWS_LAMBDA_LOG_LEVEL", "debug")
            .stdout(log("out"))
            .stderr(log("err"))
            .spawn()
            .expect("spawn")
    }

    /// Asserts that no function wrote any of `values` (as they are, or in base64).
    fn assert_logs_never_show(&self, values: &[&str]) {
        use base64::Engine as _;
        let mut read = 0;
        for entry in std::fs::read_dir(self.logs.path()).expect("logs") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("log");
            read += text.len();
            for value in values {
                let encoded = base64::engine::general_purpose::STANDARD.encode(value);
                assert!(
                    !text.contains(value) && !text.contains(&encoded),
                    "a secret in a log"
                );
            }
        }
        assert!(read > 0, "the functions logged something");
    }
}

async fn answer(rt: &mut RuntimeApi, event: &Value) -> Value {
    let (outcome, _) = rt
        .invoke(event, Duration::from_secs(30))
        .await
        .expect("answered");
    let Outcome::Response(resp) = outcome else {
        panic!("unexpected {outcome:?}")
    };
    resp
}

async fn log_in(rt: &mut RuntimeApi) -> String {
    let (email, password) = api_tests::ADA;
    let body = json!({ "email": email, "password": password }).to_string();
    let ev = apigw_event(
        "POST",
        "/api/v1/auth/login",
        &[("content-type", "application/json")],
        &body,
    );
    let resp = answer(rt, &ev).await;
    assert_eq!(resp["statusCode"], 200, "{resp}");
    let login: Value = serde_json::from_str(resp["body"].as_str().expect("body")).expect("json");
    login["accessToken"].as_str().expect("token").to_owned()
}

async fn session_status(rt: &mut RuntimeApi, token: &str) -> Value {
    answer(rt, &api_tests::session_event(token)).await["statusCode"].clone()
}

#[tokio::test]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn functions_read_the_token_key_from_secrets_manager_and_follow_its_rotation() {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let (stores, cfg) = stores(clock.clone()).await;
    api_tests::provision_ada(stores.store.as_ref(), clock.now()).await;
    let name = format!("browser-agent/jwt-{}", uuid::Uuid::new_v4().simple());
    let arn = put_secret(&name, KEY_A).await;
    let mut env = process_env(&cfg);
    env.push(("JWT_SECRET_ARN".into(), arn));
    let deployment = Deployment::new(env);

    // Login reads its key again once it is a second old (the default is five minutes); the
    // session function keeps its key until a signature does not match it.
    let mut login_rt = RuntimeApi::start().await;
    let _login = deployment.spawn("auth-login", &login_rt, &[("SECRET_REFRESH_SECONDS", "1")]);
    let old_token = log_in(&mut login_rt).await;
    let mut session_rt = RuntimeApi::start().await;
    let _session = deployment.spawn("auth-session", &session_rt, &[]);
    assert_eq!(session_status(&mut session_rt, &old_token).await, 200);

    // The key is rotated: the warm login function signs with the new one once its key is stale.
    put_secret(&name, KEY_B).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let new_token = log_in(&mut login_rt).await;
    assert_ne!(new_token, old_token);
    // The running session function reads the key again on the signature it cannot verify.
    assert_eq!(session_status(&mut session_rt, &new_token).await, 200);
    // From then on the old key's tokens are refused (their users sign in again).
    assert_eq!(session_status(&mut session_rt, &old_token).await, 401);
    assert_eq!(session_status(&mut session_rt, &new_token).await, 200);
    deployment.assert_logs_never_show(&[KEY_A, KEY_B]);
}

/// What a function printed when it refused to start.
async fn refusal(bin: &str, env: &[(String, String)]) -> String {
    let out = command(bin)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .await
        .expect("run");
    assert!(!out.status.success(), "{bin} started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn a_secret_that_cannot_be_read_stops_start_up_naming_it() {
    let cfg = api_tests::aws::fresh_resources().await;
    let mut env = process_env(&cfg);
    env.push((
        "JWT_SECRET_ARN".into(),
        "browser-agent/no-such-secret".into(),
    ));
    let err = refusal("auth-login", &env).await;
    assert!(err.contains("JWT_SECRET_ARN is invalid"), "{err}");
    assert!(err.contains("`browser-agent/no-such-secret`"), "{err}");
    assert!(err.contains("no such secret"), "{err}");

    // Both ways at once is a mistake, said before anything is read.
    let mut env = process_env(&cfg);
    env.push(("JWT_SECRET_ARN".into(), "x".into()));
    env.push(("JWT_SECRET".into(), KEY_A.into()));
    let err = refusal("auth-login", &env).await;
    assert!(
        err.contains("set JWT_SECRET or JWT_SECRET_ARN, not both"),
        "{err}"
    );
    assert!(!err.contains(KEY_A), "a value is never printed");
}

#[tokio::test]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn the_phase_function_starts_without_reading_the_token_key_and_an_http_function_does_not() {
    let cfg = api_tests::aws::fresh_resources().await;
    let fingerprint = put_secret(
        &format!(
            "browser-agent/fingerprint-{}",
            uuid::Uuid::new_v4().simple()
        ),
        KEY_B,
    )
    .await;
    let mut env = process_env(&cfg);
    env.push(("FINGERPRINT_KEY_ARN".into(), fingerprint));
    env.push(("LLM_API_KEY".into(), "sk-unused".into()));
    // Named (as the template names it for every function) but not granted: never read.
    env.push(("JWT_SECRET_ARN".into(), "browser-agent/not-granted".into()));
    let deployment = Deployment::new(env.clone());
    let mut rt = RuntimeApi::start().await;
    let mut phase = deployment.spawn("agent-phase", &rt, &[]);
    assert!(
        rt.first_poll(Duration::from_secs(30)).await.is_some(),
        "the phase function started and asks for work"
    );
    phase.kill().await.expect("stop");
    deployment.assert_logs_never_show(&[KEY_B]);

    let err = refusal("agent-interact", &env).await;
    assert!(err.contains("JWT_SECRET_ARN is invalid"), "{err}");
    assert!(err.contains("`browser-agent/not-granted`"), "{err}");
}
