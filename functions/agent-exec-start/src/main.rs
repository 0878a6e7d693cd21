//! Lambda entry point of `agent-exec-start`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_tools_http("agent-exec-start", agent_exec_start::handle).await
}
