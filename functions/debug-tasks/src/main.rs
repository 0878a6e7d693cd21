//! Lambda entry point of `debug-tasks`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("debug-tasks", debug_tasks::handle).await
}
