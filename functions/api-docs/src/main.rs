//! Lambda entry point of `api-docs`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("api-docs", api_docs::handle).await
}
