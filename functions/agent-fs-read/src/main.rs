//! Lambda entry point of `agent-fs-read`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-read", agent_fs_read::handle).await
}
