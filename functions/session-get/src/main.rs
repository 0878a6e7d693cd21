//! Lambda entry point of `session-get`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-get", session_get::handle).await
}
