//! Lambda entry point of `agent-exec-get`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("agent-exec-get", agent_exec_get::handle).await
}
