//! Lambda entry point of `agent-mcp-tools`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_tools_http("agent-mcp-tools", agent_mcp_tools::handle).await
}
