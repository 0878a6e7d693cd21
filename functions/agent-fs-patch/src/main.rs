//! Lambda entry point of `agent-fs-patch`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-patch", agent_fs_patch::handle).await
}
