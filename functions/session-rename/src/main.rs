//! Lambda entry point of `session-rename`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-rename", session_rename::handle).await
}
