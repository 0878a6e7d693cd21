//! Lambda entry point of `debug-logs`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("debug-logs", debug_logs::handle).await
}
