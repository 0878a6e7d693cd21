//! Lambda entry point of `debug-inspect`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("debug-inspect", debug_inspect::handle).await
}
