//! AWS Step Functions Express behind the executions port. The SDK client is made on the first
//! execution (a function that never runs one never loads the SDK's configuration).

use async_trait::async_trait;
use tokio::sync::OnceCell;

use crate::ports::executions::{Execution, Executions};

/// Step Functions in the function's region (credentials and endpoint from the environment).
#[derive(Debug, Default)]
pub struct StepFunctions {
    client: OnceCell<aws_sdk_sfn::Client>,
}

impl StepFunctions {
    async fn client(&self) -> &aws_sdk_sfn::Client {
        self.client
            .get_or_init(|| async { aws_sdk_sfn::Client::new(&super::aws::sdk_config(None).await) })
            .await
    }
}

#[async_trait]
impl Executions for StepFunctions {
    async fn run_sync(
        &self,
        state_machine_arn: &str,
        name: &str,
        input: String,
    ) -> Result<Execution, String> {
        let out = self
            .client()
            .await
            .start_sync_execution()
            .state_machine_arn(state_machine_arn)
            .name(name)
            .input(input)
            .send()
            .await
            .map_err(|e| {
                format!(
                    "StartSyncExecution: {}",
                    aws_sdk_sfn::error::DisplayErrorContext(e)
                )
            })?;
        Ok(Execution {
            succeeded: out.status == aws_sdk_sfn::types::SyncExecutionStatus::Succeeded,
            status: format!("{:?}", out.status),
            output: out.output,
            error: out.error,
        })
    }
}
