//! Lambda entry point of `agent-fs-delete`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-delete", agent_fs_delete::handle).await
}
