//! Lambda entry point of `agent-fs-list`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("agent-fs-list", agent_fs_list::handle).await
}
