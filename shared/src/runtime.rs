//! The body of every function's `main`: install Lambda's log subscriber, build the context
//! once (refusing to start, with a clear message, on bad configuration) and serve requests.

use std::convert::Infallible;
use std::future::Future;

use crate::context::AppContext;
use crate::http::{Request, Response};

/// Runs an HTTP function whose handler is `handle`.
pub async fn run_http<F, Fut>(name: &'static str, handle: F) -> Result<(), lambda_http::Error>
where
    F: Fn(&'static AppContext, Request) -> Fut,
    Fut: Future<Output = Response> + Send,
{
    lambda_http::tracing::init_default_subscriber();
    let ctx = match AppContext::from_env().await {
        Ok(ctx) => ctx,
        Err(e) => {
            tracing::error!(function = name, error = %e, "refusing to start");
            eprintln!("{name}: refusing to start: {e}");
            return Err(e.to_string().into());
        }
    };
    tracing::info!(function = name, config = %ctx.config.summary(), "initialised");
    // One context per container for the life of the process.
    let ctx: &'static AppContext = Box::leak(Box::new(ctx));
    lambda_http::run(lambda_http::service_fn(|req: Request| {
        let fut = handle(ctx, req);
        async move { Ok::<_, Infallible>(fut.await) }
    }))
    .await
}
