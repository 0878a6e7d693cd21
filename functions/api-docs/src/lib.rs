//! `GET /openapi.json`: the OpenAPI 3.1 document of every route (`openapi.json` at the
//! repository's root, held to the routes and the template by `tests/tests/consistency.rs`),
//! for client authors and the task inspector's link. Public: it describes the contract, it
//! holds no data.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "api-docs",
    methods: &[Method::GET],
    path: "/openapi.json",
};

/// The document.
pub const DOCUMENT: &str = include_str!("../../../openapi.json");

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(_ctx: &AppContext, _req: Request) -> Result<Response, Error> {
    Ok(http::text(
        "application/json",
        DOCUMENT,
        &[("cache-control", "public, max-age=300")],
    ))
}
