//! `GET /api/session/{sessionId}/messages?limit=&since=`: messages in ascending sequence,
//! optionally only those after `since`. An unknown session (or another user's) answers
//! `sessionExists: false` with no messages: the side panel polls ids it made itself.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::views::MessageView;
use shared::{AppContext, Error};

/// Most messages per answer.
const MAX_PAGE: usize = 200;

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-messages",
    methods: &[Method::GET],
    path: "/api/session/{sessionId}/messages",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let id = http::uuid_param(&req, "sessionId")?;
    let limit = http::number_param(&req, "limit", 50, 1, MAX_PAGE)?;
    let since = http::time_param(&req, "since")?;
    // The polling path: revocation, session and messages in one round of store calls.
    let sid = id.as_str();
    let (p, (session, messages)) = authenticate_with(ctx, req.headers(), |p| async move {
        let (session, messages) = tokio::join!(
            ctx.store.session(&p.tenant_id, sid),
            ctx.store.messages(&p.tenant_id, sid, since, limit)
        );
        Ok((session?, messages?))
    })
    .await?;
    let Some(session) = session.filter(|s| s.user_id == p.user_id) else {
        return Ok(http::json(
            StatusCode::OK,
            &json!({ "sessionId": id, "messages": [], "total": 0, "sessionExists": false }),
        ));
    };
    let views: Vec<MessageView> = messages.iter().map(MessageView::from).collect();
    Ok(http::json(
        StatusCode::OK,
        &json!({ "sessionId": session.session_id, "messages": views, "total": session.message_count, "sessionExists": true }),
    ))
}
