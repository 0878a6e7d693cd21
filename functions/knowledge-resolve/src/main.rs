//! Lambda entry point of `knowledge-resolve`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("knowledge-resolve", knowledge_resolve::handle).await
}
