//! `GET /inspect` (development): the task inspector, one page of plain HTML, CSS and script
//! (`web/inspect.html`). It signs in with the same login and reads everything through the
//! debug routes (`/api/debug/tasks`, `…/export`, `…/snapshot/{n}`, `/api/debug/recipes` and
//! its promote and demote), so it shows exactly what they allow: a member's own tasks and
//! recipes, an admin's tenant's. 403 unless `DEBUG_ROUTES` is on.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-inspect",
    methods: &[Method::GET],
    path: "/inspect",
};

/// The page.
pub const PAGE: &str = include_str!("../../../web/inspect.html");

/// What the page may do: its own inline script and style, requests to this origin only, no
/// frames around it, no forms posted anywhere.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                      connect-src 'self'; img-src 'self' data:; form-action 'none'; \
                      frame-ancestors 'none'; base-uri 'none'";

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, _req: Request) -> Result<Response, Error> {
    http::require_debug_routes(ctx)?;
    Ok(http::text(
        "text/html; charset=utf-8",
        PAGE,
        &[
            ("content-security-policy", POLICY),
            ("cache-control", "no-store"),
            ("referrer-policy", "no-referrer"),
            ("x-content-type-options", "nosniff"),
        ],
    ))
}
