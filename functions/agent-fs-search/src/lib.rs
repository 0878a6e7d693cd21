//! `POST /api/v1/agent/fs/search { sessionId, pattern?, glob?, path?, caseInsensitive?,
//! maxMatches? }`: with `pattern`, matching lines (`search.grep`); without, matching files
//! (`search.glob`). Both auto tier, bounded in files, bytes and matches.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-search",
    methods: &[Method::POST],
    path: "/api/v1/agent/fs/search",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |args| {
        if args.get("pattern").is_some_and(|p| !p.is_null()) {
            "search.grep"
        } else {
            "search.glob"
        }
    })
    .await
}
