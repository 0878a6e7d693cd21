//! Lambda entry point of `agent-session`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-session", agent_session::handle).await
}
