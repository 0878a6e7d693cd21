//! `GET /api/knowledge/resolve?url=&query=` (internal, for debugging): whether the tenant has
//! organisation knowledge for a page, and what it is. `url` may be an absolute URL or a bare
//! hostname. A domain matching the tenant's allowed patterns is proxied to the extraction
//! service; any other — or any when no service is configured — gets `hasOrgKnowledge: false`
//! without an outbound call. `hasOrgKnowledge` is true only when the service returned
//! chunks. Never 403; a failing service is 502 `UPSTREAM_ERROR`.

use ::http::{Method, StatusCode};
use lambda_http::RequestExt;
use serde_json::json;
use shared::domain::site::normalised_url;
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "knowledge-resolve",
    methods: &[Method::GET],
    path: "/api/knowledge/resolve",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, resolve).await
}

async fn resolve(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let principal = authenticate(ctx, req.headers()).await?;
    let params = req.query_string_parameters();
    let raw = params
        .first("url")
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| Error::field("url", "is required"))?;
    let query = params
        .first("query")
        .map(str::trim)
        .filter(|q| !q.is_empty());
    if query.is_some_and(|q| q.chars().count() > 10_000) {
        return Err(Error::field("query", "must be at most 10000 characters"));
    }
    // The domain check and the service see the same URL: the one parsed and serialised here
    // (a bare hostname becomes `https://<host>/`), never the text as sent.
    let (url, host) = normalised_url(raw)
        .ok_or_else(|| Error::field("url", "must be an absolute URL or a hostname"))?;

    let domains = ctx.store.allowed_domains(&principal.tenant_id).await?;
    let empty = || {
        http::json(
            StatusCode::OK,
            &json!({ "allowed": true, "domain": host, "hasOrgKnowledge": false, "context": [] }),
        )
    };
    if !domains.iter().any(|d| d.matches(&host)) {
        return Ok(empty());
    }
    // Without an extraction service there is no organisation knowledge: an empty answer, not
    // an outage.
    let Some(knowledge) = ctx.knowledge.as_ref() else {
        return Ok(empty());
    };
    let result = knowledge
        .resolve(&url, query, &principal.tenant_id)
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "knowledge lookup failed");
            Error::Upstream {
                code: "UPSTREAM_ERROR",
                message: "The knowledge extraction service failed".into(),
            }
        })?;
    // Organisation knowledge is had only when the service returned some.
    let has = !result.context.is_empty();
    let mut body = json!({ "allowed": true, "domain": host, "hasOrgKnowledge": has, "context": result.context });
    if let Some(c) = result.citations {
        body["citations"] = serde_json::to_value(c).unwrap_or_default();
    }
    Ok(http::json(StatusCode::OK, &body))
}
