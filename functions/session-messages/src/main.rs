//! Lambda entry point of `session-messages`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-messages", session_messages::handle).await
}
