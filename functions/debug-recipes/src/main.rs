//! Lambda entry point of `debug-recipes`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("debug-recipes", debug_recipes::handle).await
}
