//! Lambda entry point of `auth-logout`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("auth-logout", auth_logout::handle).await
}
