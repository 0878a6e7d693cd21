//! Lambda entry point of `session-list`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("session-list", session_list::handle).await
}
