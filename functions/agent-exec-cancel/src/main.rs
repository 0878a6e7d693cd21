//! Lambda entry point of `agent-exec-cancel`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("agent-exec-cancel", agent_exec_cancel::handle).await
}
