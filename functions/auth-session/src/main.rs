//! Lambda entry point of `auth-session`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("auth-session", auth_session::handle).await
}
