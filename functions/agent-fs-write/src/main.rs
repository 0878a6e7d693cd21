//! Lambda entry point of `agent-fs-write`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-write", agent_fs_write::handle).await
}
