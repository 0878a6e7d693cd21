//! Lambda entry point of `auth-login`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("auth-login", auth_login::handle).await
}
