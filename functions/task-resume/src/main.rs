//! Lambda entry point of `task-resume`; the handler lives in the library.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::run_table_http("task-resume", task_resume::handle).await
}
