//! Lambda entry point of `agent-status`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_tools_http("agent-status", agent_status::handle).await
}
