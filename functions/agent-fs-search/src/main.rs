//! Lambda entry point of `agent-fs-search`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-search", agent_fs_search::handle).await
}
