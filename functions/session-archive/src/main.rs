//! Lambda entry point of `session-archive`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-archive", session_archive::handle).await
}
