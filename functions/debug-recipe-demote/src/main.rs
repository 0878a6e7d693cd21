//! Lambda entry point of `debug-recipe-demote`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("debug-recipe-demote", debug_recipe_demote::handle).await
}
