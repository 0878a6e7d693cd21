//! `GET /api/v1/agent/exec/{execId}?after=<seq>`: a command run's state (`running`, `exited`
//! with `exitCode`, `timed_out`, `cancelled`, `output_limit`, `failed`), its duration, and its
//! stdout/stderr chunks after sequence number `after`, in order (poll with `nextAfter`).

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-exec-get",
    methods: &[Method::GET],
    path: "/api/v1/agent/exec/{execId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (p, (id, after)) = http::agent::caller_with(ctx, &req, |req| {
        let id = http::uuid_param(req, "execId")?;
        let after = match http::query_param(req, "after") {
            None => None,
            Some(raw) => Some(
                raw.parse::<u64>()
                    .map_err(|_| Error::field("after", "must be a sequence number"))?,
            ),
        };
        Ok((id, after))
    })
    .await?;
    let view = shared::tools::execs::view(&ctx.tools(), &p, &id, after).await?;
    Ok(http::agent::ok(view))
}
