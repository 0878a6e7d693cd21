//! `GET /api/session/{sessionId}/messages?limit=&since=|after=|before=`: one page of messages
//! in ascending sequence. Without a cursor, the newest `limit`; `after=<sequenceNumber>` the
//! oldest ones after it (lossless polling: pass the last sequence number seen); `before=` the
//! newest ones before it (older history); `since=<ISO>` the newest ones stamped at or after
//! that time (inclusive, since one step's messages share a timestamp: de-duplicate by
//! `messageId`). `hasMore` says the page left matching messages out. An unknown session (or
//! another user's) answers `sessionExists: false` with no messages: the side panel polls ids
//! it made itself.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::adapters::keys::MAX_MESSAGE_SEQUENCE;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::ports::MessagesFrom;
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
    // The polling path: revocation, session and messages in one round of store calls (the
    // token first; the query is read beside the account's check).
    let req = &req;
    let (p, (id, session, messages)) = authenticate_with(ctx, req.headers(), |p| async move {
        let id = http::uuid_param(req, "sessionId")?;
        let limit = http::number_param(req, "limit", 50, 1, MAX_PAGE)?;
        let from = cursor(req)?;
        let (session, messages) = tokio::join!(
            ctx.store.session(&p.tenant_id, &id),
            ctx.store.messages(&p.tenant_id, &id, from, limit)
        );
        Ok((id, session?, messages?))
    })
    .await?;
    let Some(session) = session.filter(|s| s.user_id == p.user_id) else {
        return Ok(http::json(
            StatusCode::OK,
            &json!({ "sessionId": id, "messages": [], "total": 0, "hasMore": false, "sessionExists": false }),
        ));
    };
    let views: Vec<MessageView> = messages.messages.iter().map(MessageView::from).collect();
    Ok(http::json(
        StatusCode::OK,
        &json!({ "sessionId": session.session_id, "messages": views, "total": session.message_count, "hasMore": messages.has_more, "sessionExists": true }),
    ))
}

/// Where the page starts: at most one of `since`, `after` and `before`.
fn cursor(req: &Request) -> Result<MessagesFrom, Error> {
    let max = MAX_MESSAGE_SEQUENCE as usize;
    let since = http::time_param(req, "since")?.map(MessagesFrom::Since);
    let after =
        http::optional_number_param(req, "after", 0, max)?.map(|n| MessagesFrom::After(n as u64));
    let before =
        http::optional_number_param(req, "before", 1, max)?.map(|n| MessagesFrom::Before(n as u64));
    let mut given = [("since", since), ("after", after), ("before", before)]
        .into_iter()
        .filter_map(|(name, c)| Some((name, c?)));
    match (given.next(), given.next()) {
        (None, _) => Ok(MessagesFrom::Newest),
        (Some((_, c)), None) => Ok(c),
        (Some((first, _)), Some((second, _))) => Err(Error::field(
            second,
            format!("give one of since, after and before (also given: {first})"),
        )),
    }
}
