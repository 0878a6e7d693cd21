//! Lambda entry point of `preferences-get`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("preferences-get", preferences_get::handle).await
}
