//! Lambda entry point of `session-by-domain`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-by-domain", session_by_domain::handle).await
}
