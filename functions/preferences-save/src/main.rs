//! Lambda entry point of `preferences-save`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("preferences-save", preferences_save::handle).await
}
