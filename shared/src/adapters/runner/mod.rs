//! Command runners: in this process (a spawned task driving a child process; local-api), or
//! the `agent-exec` function invoked asynchronously (the cloud: a request's Lambda must not
//! wait for a command). A run itself ([`job`]) copies the workspace into a scratch directory,
//! runs the program as a child process ([`process`]) and records its output and end
//! ([`record`]).

mod dirs;
mod job;
mod process;
mod record;

pub use dirs::scratch_dir;
use job::run_job;
pub use record::RunEnv;

use std::sync::Arc;

use async_trait::async_trait;

use super::workspace::WorkspaceOpener;
use crate::domain::agent_tools::ExecRecord;
use crate::ports::runner::{CommandRunner, Jobs};
use crate::ports::workspace::{Workspace, Workspaces};

/// Most commands running at once in one process (more wait for a slot).
pub const LOCAL_SLOTS: usize = 4;

/// Runs commands as child processes of this process.
pub struct LocalRunner {
    pub env: RunEnv,
    pub opener: WorkspaceOpener,
    pub slots: Arc<tokio::sync::Semaphore>,
}

/// Runs recorded commands here, recording with `self`.
#[async_trait]
impl Jobs for RunEnv {
    async fn run(&self, ws: Arc<dyn Workspace>, exec: ExecRecord, writes: bool) {
        run_job(self, ws, exec, writes).await;
    }

    async fn refuse(&self, exec: &ExecRecord, why: String) {
        let end = record::failed(self, std::time::Instant::now(), why);
        record::finish(self, exec, end).await;
    }
}

/// Makes this process's memory and `/proc/<pid>/environ` unreadable to the commands it
/// starts (they run as the same user; the environment holds the server's secrets).
pub fn shield_process() {
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

#[async_trait]
impl CommandRunner for LocalRunner {
    async fn start(&self, exec: &ExecRecord, root: &str, writes: bool) -> Result<(), String> {
        if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some() {
            // A Lambda is frozen once it answers: a command must run in agent-exec there.
            return Err("AGENT_EXEC_RUNNER=local does not work inside Lambda; use lambda".into());
        }
        let ws = self.opener.open(root).map_err(|e| e.to_string())?;
        shield_process();
        let env = self.env.clone();
        let exec = exec.clone();
        let slots = self.slots.clone();
        tokio::spawn(async move {
            let Ok(_slot) = slots.acquire_owned().await else {
                return;
            };
            run_job(&env, ws, exec, writes).await
        });
        Ok(())
    }

    async fn check(&self) -> Result<(), String> {
        let dir = std::env::temp_dir();
        match tokio::fs::metadata(&dir).await {
            Ok(m) if m.is_dir() => Ok(()),
            _ => Err("the scratch directory is unavailable".into()),
        }
    }
}

/// The event `agent-exec` is invoked with: which run (everything else is read from the store,
/// never taken from the event).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecEvent {
    pub tenant_id: String,
    pub exec_id: String,
}

/// Starts commands in the `agent-exec` function (asynchronous invocation).
pub struct LambdaRunner {
    function: String,
    client: tokio::sync::OnceCell<aws_sdk_lambda::Client>,
}

impl LambdaRunner {
    pub fn new(function: String) -> Self {
        Self {
            function,
            client: tokio::sync::OnceCell::new(),
        }
    }

    async fn client(&self) -> &aws_sdk_lambda::Client {
        self.client
            .get_or_init(|| async {
                aws_sdk_lambda::Client::new(&super::aws::sdk_config(None).await)
            })
            .await
    }
}

#[async_trait]
impl CommandRunner for LambdaRunner {
    async fn start(&self, exec: &ExecRecord, _root: &str, _writes: bool) -> Result<(), String> {
        let event = ExecEvent {
            tenant_id: exec.tenant_id.clone(),
            exec_id: exec.id.clone(),
        };
        let payload = serde_json::to_vec(&event).map_err(|e| e.to_string())?;
        self.client()
            .await
            .invoke()
            .function_name(&self.function)
            .invocation_type(aws_sdk_lambda::types::InvocationType::Event)
            .payload(aws_sdk_lambda::primitives::Blob::new(payload))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| {
                format!(
                    "agent-exec could not be invoked: {}",
                    aws_sdk_lambda::error::DisplayErrorContext(e)
                )
            })
    }

    async fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The runner a configuration names.
pub fn runner_for(
    cfg: &crate::config::ExecRunner,
    env: RunEnv,
    opener: WorkspaceOpener,
) -> Arc<dyn CommandRunner> {
    match cfg {
        crate::config::ExecRunner::Local => Arc::new(LocalRunner {
            env,
            opener,
            slots: Arc::new(tokio::sync::Semaphore::new(LOCAL_SLOTS)),
        }),
        crate::config::ExecRunner::Lambda { function } => {
            Arc::new(LambdaRunner::new(function.clone()))
        }
    }
}
