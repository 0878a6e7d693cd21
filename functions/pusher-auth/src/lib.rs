//! `POST /api/pusher/auth` (form-encoded `socket_id`/`channel_name`, or JSON): signs a
//! subscription to `private-session-<sessionId>` for the caller's own sessions only (403
//! otherwise, and when realtime is not configured).

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "pusher-auth",
    methods: &[Method::POST],
    path: "/api/pusher/auth",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (socket_id, channel) = shared::realtime_auth::parse_request(&req)?;
    let realtime = ctx
        .realtime
        .as_ref()
        .ok_or_else(|| Error::Forbidden("Realtime is not configured".into()))?;
    let session_id = channel
        .strip_prefix("private-session-")
        .and_then(|id| uuid::Uuid::parse_str(id).ok())
        .map(|u| u.hyphenated().to_string())
        .ok_or_else(|| {
            Error::Forbidden("Only private-session-<sessionId> channels can be joined".into())
        })?;
    // The channel name is global: sign it only for the one account that owns the session id.
    let (_, owned) = authenticate_with(ctx, req.headers(), |p| async move {
        let (owner, session) = tokio::join!(
            ctx.store.session_owner(&session_id),
            ctx.store.session(&p.tenant_id, &session_id)
        );
        match owner? {
            Some(o) => Ok(o.tenant_id == p.tenant_id && o.user_id == p.user_id),
            // An own session stored before ids were claimed: claim it now.
            None => match session?.filter(|s| s.user_id == p.user_id) {
                Some(s) => Ok(ctx.store.claim_session(&s).await?),
                None => Ok(false),
            },
        }
    })
    .await?;
    if !owned {
        return Err(Error::Forbidden("Not your session".into()));
    }
    Ok(http::json(
        StatusCode::OK,
        &json!({ "auth": realtime.channel_auth(&socket_id, &channel) }),
    ))
}
