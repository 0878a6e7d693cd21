//! Lambda entry point of `agent-workspaces`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-workspaces", agent_workspaces::handle).await
}
