//! A signed-in user with an agent session, for the agent-tool tests: on the embedded store the
//! workspace is a local directory, on DynamoDB an S3 prefix of the compatible server.

use reqwest::Method;
use serde_json::{json, Value};
use shared::clock::Clock;
use shared::provisioning::{create_workspace, NewWorkspace};

use crate::{aws, AppOptions, TestApp};

pub const PW: &str = "s3cret-password";

/// A user of tenant `acme` with an agent session in workspace `proj`.
pub struct Agent {
    pub app: TestApp,
    pub token: String,
    pub session: String,
    /// The workspace directory (embedded store) — `None` for S3.
    pub local_root: Option<std::path::PathBuf>,
    pub dir: tempfile::TempDir,
}

pub async fn workspace_root(dynamodb: bool) -> String {
    if dynamodb {
        let cfg = aws::fresh_resources().await;
        format!("s3://{}/workspaces/acme", cfg.bucket)
    } else {
        "acme/project".into()
    }
}

/// How to set up an [`Agent`].
#[derive(Default)]
pub struct AgentSetup {
    pub disabled: bool,
    /// Allowed commands (`PROGRAM=PATTERN ...`) and writers of the workspace.
    pub allow: Vec<String>,
    pub writers: Vec<String>,
    pub opts: AppOptions,
}

pub async fn agent_with(dynamodb: bool, enabled: bool) -> Agent {
    agent_setup(
        dynamodb,
        AgentSetup {
            disabled: !enabled,
            ..AgentSetup::default()
        },
    )
    .await
}

/// Limits the tests of other things should not run into; a test of a limit sets its own.
const ROOMY_LIMITS: &[(&str, &str)] = &[
    ("AGENT_RATE_PER_USER", "100000"),
    ("AGENT_RATE_PER_TENANT", "100000"),
    ("AGENT_MAX_PENDING_APPROVALS", "1000"),
    ("AGENT_MAX_PENDING_BYTES", "1073741824"),
];

pub async fn agent_setup(dynamodb: bool, setup: AgentSetup) -> Agent {
    let enabled = !setup.disabled;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = setup.opts;
    for (name, value) in ROOMY_LIMITS {
        if !opts.agent_env.iter().any(|(k, _)| k == name) {
            opts = opts.set(name, *value);
        }
    }
    let opts = AppOptions { dynamodb, ..opts }
        .set("AGENT_TOOLS_ENABLED", enabled.to_string())
        .set(
            "AGENT_WORKSPACES_DIR",
            dir.path().join("workspaces").display().to_string(),
        );
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    let root = workspace_root(dynamodb).await;
    create_workspace(
        app.ctx.store.as_ref(),
        NewWorkspace {
            tenant_id: "acme",
            id: Some("proj"),
            name: "Project",
            root: &root,
            allow: &setup.allow,
            writers: &setup.writers,
        },
        app.clock.now(),
    )
    .await
    .expect("workspace");
    let token = app.login("ada@acme.com", PW).await;
    let mut a = Agent {
        app,
        token,
        session: String::new(),
        local_root: (!dynamodb).then(|| dir.path().join("workspaces/acme/project")),
        dir,
    };
    if enabled {
        let v = a
            .ok(
                Method::POST,
                "/api/v1/agent/workspace/select",
                json!({ "workspaceId": "proj" }),
            )
            .await;
        a.session = v["data"]["sessionId"]
            .as_str()
            .expect("session id")
            .to_owned();
    }
    a
}

pub async fn agent(dynamodb: bool) -> Agent {
    agent_with(dynamodb, true).await
}

impl Agent {
    pub async fn send_as(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> reqwest::Response {
        self.app.request(method, path, token, body.as_ref()).await
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Value>) -> reqwest::Response {
        self.send_as(&self.token, method, path, body).await
    }

    pub async fn ok(&self, method: Method, path: &str, body: Value) -> Value {
        let body = (method != Method::GET).then_some(body);
        let r = self.send(method, path, body).await;
        let status = r.status();
        let v: Value = r.json().await.expect("json");
        assert_eq!(status, 200, "{path}: {v}");
        v
    }

    pub fn q(&self, route: &str, path: &str) -> String {
        format!(
            "/api/v1/agent/{route}?sessionId={}&path={}",
            self.session,
            urlencode(path)
        )
    }

    /// A `POST` tool call; the answer's status and body.
    pub async fn tool(&self, route: &str, mut args: Value) -> (u16, Value) {
        args["sessionId"] = json!(self.session);
        let r = self
            .send(Method::POST, &format!("/api/v1/agent/{route}"), Some(args))
            .await;
        (r.status().as_u16(), r.json().await.expect("json"))
    }

    /// A call that must wait for approval; its approval id.
    pub async fn pending(&self, route: &str, args: Value) -> String {
        let (status, v) = self.tool(route, args).await;
        assert_eq!(status, 202, "{route}: {v}");
        assert_eq!(v["data"]["status"], "pending");
        v["data"]["approvalId"].as_str().expect("id").to_owned()
    }

    pub async fn decide(&self, id: &str, body: Value) -> reqwest::Response {
        self.send(
            Method::POST,
            &format!("/api/v1/agent/approvals/{id}"),
            Some(body),
        )
        .await
    }

    /// Approves one call; its decision.
    pub async fn approve(&self, id: &str) -> Value {
        let r = self.decide(id, json!({ "decision": "approve" })).await;
        assert_eq!(r.status(), 200);
        let v: Value = r.json().await.expect("json");
        v["data"]["decisions"][0].clone()
    }

    /// Writes through an approval; the new version.
    pub async fn write(&self, path: &str, content: &str) -> String {
        let id = self
            .pending("fs/write", json!({ "path": path, "content": content }))
            .await;
        let d = self.approve(&id).await;
        assert_eq!(d["status"], "done", "{d}");
        d["result"]["version"].as_str().expect("version").to_owned()
    }

    pub async fn read(&self, path: &str) -> reqwest::Response {
        self.send(Method::GET, &self.q("fs/read", path), None).await
    }

    pub async fn content(&self, path: &str) -> Value {
        let r = self.read(path).await;
        assert_eq!(r.status(), 200, "{path}");
        let v: Value = r.json().await.expect("json");
        v["data"].clone()
    }

    pub async fn view(&self) -> Value {
        self.ok(
            Method::GET,
            &format!("/api/v1/agent/sessions/{}", self.session),
            json!(null),
        )
        .await["data"]
            .clone()
    }
}

pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A command run's scratch directory.
pub fn scratch_path(exec_id: &str) -> std::path::PathBuf {
    shared::adapters::runner::scratch_dir(exec_id)
}

/// Whether a command run's scratch directory is still there.
pub fn scratch_left(exec_id: &str) -> bool {
    scratch_path(exec_id).exists()
}
