//! Lambda entry point of `debug-export`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_http("debug-export", debug_export::handle).await
}
