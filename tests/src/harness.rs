//! An app with a scripted model and a logged-in user, for the interact tests.

use serde_json::Value;

use crate::scripted::ScriptedLlm;
use crate::{AppOptions, TestApp};

/// The password of every harness user.
pub const PW: &str = "s3cret-password";

/// A running app whose model is scripted, with `ada@acme.com` logged in.
pub struct Harness {
    pub app: TestApp,
    pub llm: ScriptedLlm,
    pub token: String,
}

/// A harness with options adjusted by `opts`.
pub async fn harness_with(opts: impl FnOnce(AppOptions) -> AppOptions) -> Harness {
    let llm = ScriptedLlm::start().await;
    let base = AppOptions::with_llm(&llm.base_url);
    logged_in(llm, opts(base)).await
}

/// A harness whose scripted model is spoken to as Amazon Bedrock (the Converse API, the SDK
/// signing with the environment's credentials: `scripts/test` gives static test ones).
pub async fn bedrock_harness_with(opts: impl FnOnce(AppOptions) -> AppOptions) -> Harness {
    let llm = ScriptedLlm::start().await;
    let base = AppOptions::with_bedrock(&llm.converse_url);
    logged_in(llm, opts(base)).await
}

/// An app with `opts` whose model is `llm`, with `ada@acme.com` logged in.
async fn logged_in(llm: ScriptedLlm, opts: AppOptions) -> Harness {
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    let token = app.login("ada@acme.com", PW).await;
    Harness { app, llm, token }
}

pub async fn harness() -> Harness {
    harness_with(|o| o).await
}

impl Harness {
    pub async fn interact(&self, body: &Value) -> reqwest::Response {
        self.interact_with(body, &self.token, None).await
    }

    pub async fn interact_with(
        &self,
        body: &Value,
        token: &str,
        idempotency_key: Option<&str>,
    ) -> reqwest::Response {
        let mut req = self
            .app
            .client
            .post(self.app.url("/api/agent/interact"))
            .bearer_auth(token)
            .json(body);
        if let Some(k) = idempotency_key {
            req = req.header("Idempotency-Key", k);
        }
        req.send().await.expect("request")
    }

    /// The stored task named by an answer's `taskId` (of tenant `acme`).
    pub async fn task(&self, answer: &Value) -> shared::domain::Task {
        self.app
            .ctx
            .store
            .task("acme", answer["taskId"].as_str().expect("taskId"))
            .await
            .expect("read")
            .expect("task")
    }

    /// The stored session named by an answer's `sessionId` (of tenant `acme`).
    pub async fn session(&self, answer: &Value) -> shared::domain::Session {
        self.app
            .ctx
            .store
            .session("acme", answer["sessionId"].as_str().expect("sessionId"))
            .await
            .expect("read")
            .expect("session")
    }

    /// Resumes task `task` of session `session` with `body`.
    pub async fn resume(&self, session: &str, task: &str, body: &Value) -> reqwest::Response {
        self.app
            .client
            .post(
                self.app
                    .url(&format!("/api/session/{session}/task/{task}/resume")),
            )
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .expect("resume")
    }

    /// Interacts and expects 200; returns the answer.
    pub async fn ok(&self, body: &Value) -> Value {
        let r = self.interact(body).await;
        let status = r.status();
        let v: Value = r.json().await.expect("json");
        assert_eq!(status, 200, "{v}");
        v
    }
}

impl Harness {
    /// Allows `*.example.com` for tenant `acme` (so its pages get organisation knowledge).
    pub async fn allow_example_com(&self) {
        self.app
            .ctx
            .store
            .add_allowed_domain(
                "acme",
                &shared::domain::DomainPattern::parse("*.example.com").expect("pattern"),
            )
            .await
            .expect("add");
    }

    /// `GET /api/knowledge/resolve?url=` as the harness user.
    pub async fn resolve(&self, url: &str) -> reqwest::Response {
        self.app
            .client
            .get(self.app.url("/api/knowledge/resolve"))
            .query(&[("url", url)])
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("send")
    }
}
