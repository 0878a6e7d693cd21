//! Black-box test harness: starts local-api's router on a random loopback port with a chosen
//! store and clock, seeds tenants and users, and finds the workspace's built binaries.

/// Runs each named `async fn name(dynamodb: bool)` of the calling test file as two tests: on
/// the embedded store and on DynamoDB + S3 (the compatible server, so that one is ignored by a
/// plain `cargo test`: `scripts/test` runs it). `needs = "..."` first ignores both, saying why
/// (another server the test needs).
#[macro_export]
macro_rules! on_both_stores {
    (needs = $why:literal; $($name:ident),* $(,)?) => {
        $crate::on_both_stores!(@store embedded_store, false, ignore = $why, $($name),*);
        $crate::on_both_stores!(@store dynamodb_store, true, ignore = $why, $($name),*);
    };
    // `$attr` is `ignore = "why"`, or the no-op `cfg_attr(any(), ignore)` for a test that runs.
    (@store $store:ident, $dynamodb:expr, $attr:meta, $($name:ident),*) => {
        mod $store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[$attr]
                async fn $name() {
                    super::$name($dynamodb).await
                }
            )*
        }
    };
    ($($name:ident),* $(,)?) => {
        $crate::on_both_stores!(@store embedded_store, false, cfg_attr(any(), ignore), $($name),*);
        $crate::on_both_stores!(
            @store dynamodb_store, true, ignore = "needs moto (DynamoDB/S3): scripts/test starts it", $($name),*
        );
    };
}

pub mod agent;
pub mod aws;
pub mod browser;
pub mod conformance;
pub mod delayed;
pub mod flows;
pub mod harness;
pub mod process;
pub mod risk_corpus;
pub mod runtime_api;
pub mod scripted;
pub mod workspace_suite;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use local_api::LocalApi;
use shared::clock::{Clock, ManualClock};
use shared::config::{Config, LoginLimits, StoreConfig};
use shared::context::Stores;
use shared::AppContext;
use tokio::sync::oneshot;

/// The read-only brief beside the repository (`shared/`: corpus pages, client captures), or
/// where `BRIEF_DIR` says (`scripts/lib.sh` sets it for a clone made elsewhere).
pub fn brief_dir() -> PathBuf {
    std::env::var_os("BRIEF_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// The Rust files under `dir`, recursively, in no particular order (symbolic links are not
/// followed, so a link back up the tree cannot loop). A tree that cannot be read fails the
/// test that asked.
pub fn rust_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let (mut out, mut dirs) = (Vec::new(), vec![dir.to_path_buf()]);
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a source directory") {
            let entry = entry.expect("a source directory's entry");
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// The first two interact requests the shipping extension sent for a captured two-step task
/// (`client-captures/startup-and-two-step-task.jsonl`): its start, and the page after the click.
pub fn captured_steps() -> (serde_json::Value, serde_json::Value) {
    let path = brief_dir().join("client-captures/startup-and-two-step-task.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (shared/ must sit beside the repository, or BRIEF_DIR name it)",
            path.display()
        )
    });
    let bodies: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["path"] == "/api/agent/interact")
        .map(|r| r["body"].clone())
        .collect();
    (bodies[0].clone(), bodies[1].clone())
}

/// The signing key every test app uses.
pub const TEST_KEY: &str = "test-signing-key-0123456789abcdef0123456789";
/// The one extension origin test apps allow.
pub const ALLOWED_ORIGIN: &str = "chrome-extension://okgejcdoafbdgghppenbjkpbodbfflil";

/// How to build a test app.
#[derive(Clone)]
pub struct AppOptions {
    pub max_body_bytes: usize,
    pub login_limits: LoginLimits,
    /// `None`: a fresh in-memory store.
    pub data_dir: Option<PathBuf>,
    /// Agent variables (`LLM_BASE_URL`, `MAX_TASK_STEPS`, ...), as the environment would set them.
    pub agent_env: Vec<(&'static str, String)>,
    /// Run on a fresh table and bucket of the DynamoDB/S3-compatible server instead.
    pub dynamodb: bool,
}

impl Default for AppOptions {
    fn default() -> Self {
        Self {
            max_body_bytes: 64 * 1024,
            login_limits: LoginLimits {
                max_failures_per_email: 3,
                max_failures_per_address: 10,
                window_seconds: 600,
            },
            data_dir: None,
            agent_env: Vec::new(),
            dynamodb: false,
        }
    }
}

impl AppOptions {
    /// Options for an app whose model is the scripted server at `llm_base_url`.
    pub fn with_llm(llm_base_url: &str) -> Self {
        Self {
            agent_env: vec![
                ("LLM_BASE_URL", llm_base_url.to_owned()),
                ("LLM_API_KEY", "test-llm-key".to_owned()),
                ("LLM_MODEL", "scripted-model".to_owned()),
                ("LLM_VERIFY_MODEL", scripted::VERIFY_MODEL.to_owned()),
                ("LLM_TIMEOUT_MS", "3000".to_owned()),
                ("LLM_MAX_RETRIES", "2".to_owned()),
            ],
            ..Self::default()
        }
    }

    /// Options for an app whose model is the scripted server spoken to as Amazon Bedrock
    /// (Converse), with the verifier as its own model id.
    pub fn with_bedrock(converse_url: &str) -> Self {
        Self {
            agent_env: vec![
                ("LLM_PROVIDER", "bedrock".to_owned()),
                (
                    "BEDROCK_MODEL_ID",
                    "us.anthropic.claude-haiku-4-5-20251001-v1:0".to_owned(),
                ),
                ("BEDROCK_VERIFY_MODEL_ID", scripted::VERIFY_MODEL.to_owned()),
                ("BEDROCK_ENDPOINT_URL", converse_url.to_owned()),
                ("AWS_REGION", "us-east-1".to_owned()),
                ("LLM_TIMEOUT_MS", "3000".to_owned()),
                ("LLM_MAX_RETRIES", "2".to_owned()),
            ],
            ..Self::default()
        }
    }

    /// Sets (or replaces) one agent variable.
    pub fn set(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.agent_env.retain(|(k, _)| *k != name);
        self.agent_env.push((name, value.into()));
        self
    }
    /// Room for thirty requests at once, where bounds are under test and not latency: the
    /// rate limits lifted, and a model call may wait its turn at the scripted server as long as
    /// a loaded 2-core machine makes it (20 s, not the tests' usual 3; the step deadline is
    /// already the tests' own, [`TEST_STEP_DEADLINE`]).
    pub fn thirty_at_once(self) -> Self {
        self.set("INTERACT_RATE_PER_USER", "100000")
            .set("INTERACT_RATE_PER_TENANT", "100000")
            .set("LLM_TIMEOUT_MS", "20000")
    }
}

/// A running local-api on a random port with a manual clock.
pub struct TestApp {
    pub addr: SocketAddr,
    pub base: String,
    pub ctx: Arc<AppContext>,
    pub clock: Arc<ManualClock>,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// The step deadline of a test app, unless the test sets one (the tests of the deadline do).
/// Tests hold behaviour, not latency: the cloud's 25 s is for API Gateway's 29, and on a
/// 2-core machine running moto, Chromium and other tests at once, a step that waits on the
/// store behind thirty others takes 20–30 s (two CI runs answered 503 so, one of them to a
/// test sending a single request beside a parallel one).
pub const TEST_STEP_DEADLINE: &str = "120000";

/// The configuration test apps run with.
pub fn test_config(opts: &AppOptions) -> Config {
    let store = match &opts.data_dir {
        Some(d) => StoreConfig::Embedded {
            data_dir: d.clone(),
        },
        None => StoreConfig::Memory,
    };
    let mut cfg = Config::from_lookup(|k| match k {
        "JWT_SECRET" => Some(TEST_KEY.into()),
        "ALLOWED_ORIGINS" => Some(ALLOWED_ORIGIN.into()),
        other => {
            let set = opts.agent_env.iter().find(|(n, _)| *n == other);
            let set = set.map(|(_, v)| v.clone());
            set.or_else(|| (other == "STEP_DEADLINE_MS").then(|| TEST_STEP_DEADLINE.into()))
        }
    })
    .expect("test config");
    cfg.store = store;
    cfg.max_body_bytes = opts.max_body_bytes;
    cfg.login_limits = opts.login_limits;
    cfg
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(AppOptions::default()).await
    }

    pub async fn spawn_with(opts: AppOptions) -> Self {
        let clock = Arc::new(ManualClock::new(
            Utc.with_ymd_and_hms(2026, 11, 22, 6, 0, 0)
                .single()
                .expect("time"),
        ));
        let dyn_clock: Arc<dyn Clock> = clock.clone();
        let cfg = test_config(&opts);
        let stores = if opts.dynamodb {
            aws::stores(dyn_clock).await.0
        } else {
            shared::context::open_stores(&cfg.store, dyn_clock.clone())
                .await
                .expect("store")
        };
        Self::spawn_on(cfg, stores, clock).await
    }

    /// Starts an app over existing stores and clock.
    pub async fn spawn_on(cfg: Config, stores: Stores, clock: Arc<ManualClock>) -> Self {
        let ctx = Arc::new(AppContext::with_parts(cfg, stores, clock.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = oneshot::channel();
        let api = Arc::new(LocalApi::new(ctx.clone()));
        let server = tokio::spawn(local_api::serve(listener, api, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            base: format!("http://{addr}"),
            ctx,
            clock,
            client: local_client(),
            shutdown: Some(tx),
            server: Some(server),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Stops the server and waits for it to finish.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.server.take() {
            let _ = h.await;
        }
    }

    /// Creates a tenant and a user in it; returns the user id.
    pub async fn seed_user(&self, tenant: &str, email: &str, password: &str) -> String {
        self.seed_user_as(tenant, email, password, shared::domain::Role::Member)
            .await
    }

    /// Creates a tenant (if needed) and a user with `role` in it; returns the user id.
    pub async fn seed_user_as(
        &self,
        tenant: &str,
        email: &str,
        password: &str,
        role: shared::domain::Role,
    ) -> String {
        let store = self.ctx.store.as_ref();
        let now = self.clock.now();
        if store.tenant(tenant).await.expect("tenant lookup").is_none() {
            shared::provisioning::create_tenant(
                store,
                Some(tenant),
                &format!("Tenant {tenant}"),
                now,
            )
            .await
            .expect("tenant");
        }
        shared::provisioning::create_user(
            store,
            &self.ctx.passwords,
            shared::provisioning::NewUser {
                tenant_id: tenant,
                email,
                name: "Test User",
                password,
                role,
            },
            now,
        )
        .await
        .expect("user")
        .id
    }

    /// `POST /api/v1/auth/login` with a JSON body.
    pub async fn login_raw(&self, body: serde_json::Value) -> reqwest::Response {
        self.client
            .post(self.url("/api/v1/auth/login"))
            .json(&body)
            .send()
            .await
            .expect("request")
    }

    /// The status of a login attempt.
    pub async fn login_status(&self, email: &str, password: &str) -> u16 {
        self.login_raw(serde_json::json!({ "email": email, "password": password }))
            .await
            .status()
            .as_u16()
    }

    /// Logs in and returns the access token (panics unless 200).
    pub async fn login(&self, email: &str, password: &str) -> String {
        let r = self
            .login_raw(serde_json::json!({ "email": email, "password": password }))
            .await;
        assert_eq!(r.status(), 200, "login failed");
        let v: serde_json::Value = r.json().await.expect("json");
        v["accessToken"].as_str().expect("token").to_owned()
    }

    pub async fn get_session(&self, token: &str) -> reqwest::Response {
        self.send(reqwest::Method::GET, "/api/v1/auth/session", Some(token))
            .await
    }

    /// `POST /api/v1/auth/logout` with a bearer token (or none).
    pub async fn logout(&self, token: Option<&str>) -> reqwest::Response {
        self.send(reqwest::Method::POST, "/api/v1/auth/logout", token)
            .await
    }

    /// Sends a request with a bearer token and, when given, a JSON body.
    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<&serde_json::Value>,
    ) -> reqwest::Response {
        let mut req = self
            .client
            .request(method, self.url(path))
            .bearer_auth(token);
        if let Some(b) = body {
            req = req.json(b);
        }
        req.send().await.expect("request")
    }

    /// Sends a JSON request with a bearer token.
    pub async fn send_json(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: &serde_json::Value,
    ) -> reqwest::Response {
        self.request(method, path, token, Some(body)).await
    }

    /// POSTs `body` as it is (any bytes, labelled JSON) with a bearer token.
    pub async fn post_raw(
        &self,
        path: &str,
        token: &str,
        body: impl Into<reqwest::Body>,
    ) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("an answer, not a dropped connection")
    }

    /// Sends a body-less request, with a bearer token when given.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
    ) -> reqwest::Response {
        let mut req = self.client.request(method, self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send().await.expect("request")
    }
}

/// The API Gateway v2 event for a request, as API Gateway would send it to a function.
/// An API Gateway event of `GET /api/v1/auth/session` with `token` as the bearer.
pub fn session_event(token: &str) -> serde_json::Value {
    let bearer = format!("Bearer {token}");
    apigw_event(
        "GET",
        "/api/v1/auth/session",
        &[("authorization", &bearer)],
        "",
    )
}

/// Ada's sign-in, of tenant Acme (see [`provision_ada`]).
pub const ADA: (&str, &str) = ("ada@acme.com", "s3cret-password");

/// Creates tenant `acme` ("Acme") and its member Ada ([`ADA`]) in `store`.
pub async fn provision_ada(store: &dyn shared::ports::Store, now: chrono::DateTime<chrono::Utc>) {
    shared::provisioning::create_tenant(store, Some("acme"), "Acme", now)
        .await
        .expect("tenant");
    shared::provisioning::create_user(
        store,
        &shared::auth::PasswordHasher::new(),
        shared::provisioning::NewUser {
            tenant_id: "acme",
            email: ADA.0,
            name: "Ada",
            password: ADA.1,
            role: shared::domain::Role::Member,
        },
        now,
    )
    .await
    .expect("user");
}

pub fn apigw_event(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> serde_json::Value {
    shared::http::apigw::event(&shared::http::apigw::EventParts {
        method,
        path,
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.as_bytes(),
        route_key: &format!("{method} {path}"),
        source_ip: "203.0.113.9",
        request_id: "apigw-req-1",
        domain_name: "api.example.com",
        ..Default::default()
    })
}

/// A workspace binary next to the test executable (`target/<profile>/<name>`). The test
/// script builds all binaries before running tests.
pub fn workspace_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // Test executables live in target/<profile>/deps, binaries in target/<profile>.
    let dir = exe.parent().expect("exe dir");
    let dir = if dir.ends_with("deps") {
        dir.parent().expect("target dir")
    } else {
        dir
    };
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built; run `cargo build --workspace --bins` first (scripts/test does)",
        path.display()
    );
    path
}

/// Asserts the flat error envelope and returns it.
pub async fn expect_error(r: reqwest::Response, status: u16, code: &str) -> serde_json::Value {
    assert_eq!(r.status().as_u16(), status, "status");
    let v: serde_json::Value = r.json().await.expect("error body is JSON");
    assert_eq!(v["success"], false, "{v}");
    assert_eq!(v["code"], code, "{v}");
    assert!(v["message"].is_string(), "{v}");
    v
}

/// A client for local-api. The server closes a connection left idle for its header read
/// timeout (hyper starts that timer once a response is sent); a pooled connection reused at
/// that moment ends without an answer (`IncompleteMessage`), so the client lets idle
/// connections go well before the server does, as a client behind any keep-alive limit must.
pub fn local_client() -> reqwest::Client {
    shared::adapters::tls::client_builder()
        .pool_idle_timeout(local_api::HEADER_READ_TIMEOUT / 2)
        .build()
        .expect("a client with the compiled-in TLS roots")
}
