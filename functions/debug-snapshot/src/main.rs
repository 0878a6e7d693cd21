//! Lambda entry point of `debug-snapshot`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("debug-snapshot", debug_snapshot::handle).await
}
