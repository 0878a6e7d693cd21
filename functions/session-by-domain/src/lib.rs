//! `GET /api/session/by-domain/{domain}?status=`: the caller's most recent session on the
//! root domain of `domain` (public suffix list; `localhost` and IPs as they are), or `null`.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::domain::site::{host_of, root_domain};
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::views::SessionView;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-by-domain",
    methods: &[Method::GET],
    path: "/api/session/by-domain/{domain}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let raw = http::path_param(&req, "domain")?;
    let host = host_of(&raw).ok_or_else(|| Error::field("domain", "must be a host name"))?;
    let status = shared::sessions::status_filter(http::query_param(&req, "status"))?;
    let session = ctx
        .store
        .session_by_domain(&p.tenant_id, &p.user_id, &root_domain(&host), status)
        .await?;
    Ok(http::json(
        StatusCode::OK,
        &json!({ "session": session.as_ref().map(SessionView::from) }),
    ))
}
