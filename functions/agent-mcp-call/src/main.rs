//! Lambda entry point of `agent-mcp-call`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_tools_http("agent-mcp-call", agent_mcp_call::handle).await
}
