//! Lambda entry point of `agent-workspace-select`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-workspace-select", agent_workspace_select::handle).await
}
