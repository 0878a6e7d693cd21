//! Lambda entry point of `agent-fs-mkdir`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-mkdir", agent_fs_mkdir::handle).await
}
