//! `PATCH /api/session/{sessionId}` with `{ title }`: renames a session. The `{domain}: ` prefix
//! is kept and `isRenamed` set, so automatic titles never overwrite it again.

use ::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use shared::domain::session::renamed_title;
use shared::http::guard::authenticate;
use shared::http::parse_json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::ports::SessionChanges;
use shared::sessions::{change_session, owned_session};
use shared::views::SessionView;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-rename",
    methods: &[Method::PATCH],
    path: "/api/session/{sessionId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

#[derive(Deserialize)]
struct RenameBody {
    title: String,
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let id = http::uuid_param(&req, "sessionId")?;
    let b: RenameBody = parse_json(&req)?;
    let title = b.title.trim();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(Error::field("title", "must be 1 to 200 characters"));
    }
    let session = owned_session(ctx.store.as_ref(), &p, &id).await?;
    let changes = SessionChanges {
        title: Some(renamed_title(&session.domain, title)),
        is_renamed: Some(true),
        ..SessionChanges::default()
    };
    let updated = change_session(ctx.sessions(), &p, &session, &changes, "session renamed").await?;
    Ok(http::json(
        StatusCode::OK,
        &json!({ "session": SessionView::from(&updated) }),
    ))
}
