//! Lambda entry point of `session-latest`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-latest", session_latest::handle).await
}
