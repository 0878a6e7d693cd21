//! The executions port: a state machine run synchronously by name (AWS Step Functions
//! Express's `StartSyncExecution`), for the step's cloud executor.

use async_trait::async_trait;

/// How a synchronous execution ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// It ended `SUCCEEDED`; `output` is then the machine's output.
    pub succeeded: bool,
    /// The status as the service names it (for the log when it did not succeed).
    pub status: String,
    pub output: Option<String>,
    pub error: Option<String>,
}

/// Runs state machine executions.
#[async_trait]
pub trait Executions: Send + Sync {
    /// Runs `state_machine_arn` with `input` as the execution `name` and waits for its end;
    /// `Err` when it could not be started (the text is for the log).
    async fn run_sync(
        &self,
        state_machine_arn: &str,
        name: &str,
        input: String,
    ) -> Result<Execution, String>;
}
