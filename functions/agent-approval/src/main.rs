//! Lambda entry point of `agent-approval`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_tools_http("agent-approval", agent_approval::handle).await
}
