//! The body of every function's `main`: install the log subscriber, build the context
//! once (refusing to start, with a clear message, on bad configuration) and serve requests.

use std::convert::Infallible;
use std::future::Future;

use crate::context::{AppContext, Links};
use crate::http::reply::Reply;
use crate::http::{Request, Response};

/// Runs an HTTP function whose handler is `handle`, without the MCP client and the command
/// runners (every route that can neither start a command nor reach an MCP server).
pub async fn run_http<F, Fut>(name: &'static str, handle: F) -> Result<(), lambda_http::Error>
where
    F: Fn(&'static AppContext, Request) -> Fut,
    Fut: Future<Output = Response> + Send,
{
    serve(name, Links::OBJECTS, handle).await
}

/// Runs an HTTP function that reads and writes only the table: without the snapshot store and
/// the S3 client either (sessions, preferences, auth and the like).
pub async fn run_table_http<F, Fut>(name: &'static str, handle: F) -> Result<(), lambda_http::Error>
where
    F: Fn(&'static AppContext, Request) -> Fut,
    Fut: Future<Output = Response> + Send,
{
    serve(name, Links::TABLE, handle).await
}

/// Runs an HTTP function that can start commands or reach MCP servers (agent status, approvals,
/// exec start, MCP tools and calls): with the MCP client and the configured command runner.
pub async fn run_tools_http<F, Fut>(name: &'static str, handle: F) -> Result<(), lambda_http::Error>
where
    F: Fn(&'static AppContext, Request) -> Fut,
    Fut: Future<Output = Response> + Send,
{
    serve(name, Links::ALL, handle).await
}

/// Builds a function's context once per container (it lives as long as the process), or says
/// why it cannot start.
pub async fn context(name: &'static str, links: Links) -> Result<&'static AppContext, String> {
    match AppContext::for_function(links).await {
        Ok(mut ctx) => {
            ctx.name_metrics(name);
            tracing::info!(function = name, config = %ctx.config.summary(), "initialised");
            Ok(Box::leak(Box::new(ctx)))
        }
        Err(e) => {
            tracing::error!(function = name, error = %e, "refusing to start");
            eprintln!("{name}: refusing to start: {e}");
            Err(e.to_string())
        }
    }
}

async fn serve<F, Fut>(
    name: &'static str,
    links: Links,
    handle: F,
) -> Result<(), lambda_http::Error>
where
    F: Fn(&'static AppContext, Request) -> Fut,
    Fut: Future<Output = Response> + Send,
{
    crate::telemetry::init_lambda_logs();
    let ctx = context(name, links).await?;
    lambda_http::run(lambda_http::service_fn(|req: Request| {
        let fut = handle(ctx, req);
        async move { Ok::<_, Infallible>(Reply(fut.await)) }
    }))
    .await
}
