//! `GET /api/session?status=&includeArchived=&limit=&offset=`: the caller's sessions, newest
//! first, with pagination, in the `{ success, data }` envelope.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::ports::SessionFilter;
use shared::views::SessionView;
use shared::{AppContext, Error};

/// Most sessions per page.
const MAX_PAGE: usize = 100;

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-list",
    methods: &[Method::GET],
    path: "/api/session",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    // The token first; the query is read beside the account's check.
    let req = &req;
    let (_, (sessions, total, limit, offset)) =
        authenticate_with(ctx, req.headers(), |p| async move {
            let status = shared::sessions::status_filter(http::query_param(req, "status"))?;
            let include_archived = match http::query_param(req, "includeArchived").as_deref() {
                None | Some("false") => false,
                Some("true") => true,
                Some(_) => return Err(Error::field("includeArchived", "must be true or false")),
            };
            let limit = http::number_param(req, "limit", 50, 1, MAX_PAGE)?;
            let offset = http::number_param(req, "offset", 0, 0, 100_000)?;
            let filter = SessionFilter {
                status,
                include_archived,
            };
            let (sessions, total) = ctx
                .store
                .list_sessions(&p.tenant_id, &p.user_id, filter, limit, offset)
                .await?;
            Ok((sessions, total, limit, offset))
        })
        .await?;
    let views: Vec<SessionView> = sessions.iter().map(SessionView::from).collect();
    Ok(http::json(
        StatusCode::OK,
        &json!({ "success": true, "data": { "sessions": views, "pagination": {
            "total": total, "limit": limit, "offset": offset, "hasMore": offset + views.len() < total } } }),
    ))
}
