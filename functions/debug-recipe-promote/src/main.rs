//! Lambda entry point of `debug-recipe-promote`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("debug-recipe-promote", debug_recipe_promote::handle).await
}
