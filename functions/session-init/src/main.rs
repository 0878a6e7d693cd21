//! Lambda entry point of `session-init`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-init", session_init::handle).await
}
