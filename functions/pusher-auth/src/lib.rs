//! `POST /api/pusher/auth` (form-encoded `socket_id`/`channel_name`, or JSON): signs a
//! subscription to `private-session-<sessionId>` (a side-panel session's messages) or
//! `private-agent-<agentSessionId>` (an agent session's command output) for the caller's own
//! sessions only (403 otherwise). A server without Pusher settings answers 404
//! `REALTIME_NOT_CONFIGURED`: not 401/403, which a client takes for a problem with the user's
//! sign-in or access, and not 5xx, which it retries and operators count as faults. The client's
//! Pusher library reports the failed subscription and the side panel keeps polling messages.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::auth::Principal;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "pusher-auth",
    methods: &[Method::POST],
    path: "/api/pusher/auth",
};

/// Which kind of private channel is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    /// `private-session-<id>`: a side-panel session's messages.
    Session,
    /// `private-agent-<id>`: an agent session's command output (`exec_output`, `exec_exit`).
    Agent,
}

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    // The token first: a caller without one learns nothing of what the route reads. The
    // request is read, and the channel's session looked up, beside the account's check.
    let (_, (socket_id, channel, owned)) = authenticate_with(ctx, req.headers(), |p| {
        let req = &req;
        async move {
            let (socket_id, channel) = shared::realtime_auth::parse_request(req)?;
            realtime(ctx)?;
            let owned = owns_channel(ctx, &p, &channel).await?;
            Ok((socket_id, channel, owned))
        }
    })
    .await?;
    if !owned {
        return Err(Error::Forbidden("Not your session".into()));
    }
    Ok(http::json(
        StatusCode::OK,
        &json!({ "auth": realtime(ctx)?.channel_auth(&socket_id, &channel) }),
    ))
}

/// The realtime service, or `404 REALTIME_NOT_CONFIGURED` (not a 403, which a client reads as
/// a sign-in or access problem).
fn realtime(ctx: &AppContext) -> Result<&dyn shared::ports::realtime::Realtime, Error> {
    ctx.realtime.as_deref().ok_or_else(|| Error::NotFound {
        code: "REALTIME_NOT_CONFIGURED",
        message: "Realtime is not configured on this server; poll GET /api/session/{sessionId}/messages instead".into(),
    })
}

/// Whether `p` owns the private channel `channel` (a session or an agent session of theirs).
async fn owns_channel(ctx: &AppContext, p: &Principal, channel: &str) -> Result<bool, Error> {
    let (kind, id) = if let Some(id) = channel.strip_prefix("private-session-") {
        (Channel::Session, id)
    } else if let Some(id) = channel.strip_prefix("private-agent-") {
        (Channel::Agent, id)
    } else {
        return Err(Error::Forbidden(
            "Only private-session-<sessionId> and private-agent-<agentSessionId> channels can be joined"
                .into(),
        ));
    };
    let session_id = uuid::Uuid::parse_str(id)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| Error::Forbidden("The channel does not name a session id".into()))?;
    if kind == Channel::Agent {
        // Agent sessions (the agent tools' command output) are made by the server with fresh
        // ids, under the caller's tenant.
        let s = ctx.store.agent_session(&p.tenant_id, &session_id).await?;
        return Ok(s.is_some_and(|s| s.user_id == p.user_id));
    }
    // The channel name is global: sign it only for the one account that owns the session id.
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
}
