//! Lambda entry point of `agent-interact`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-interact", agent_interact::handle).await
}
