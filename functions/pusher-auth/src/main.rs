//! Lambda entry point of `pusher-auth`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("pusher-auth", pusher_auth::handle).await
}
