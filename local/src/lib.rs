//! local-api: every function's handler behind one HTTP server on 127.0.0.1. Each incoming
//! request is turned into the API Gateway v2 event Lambda would receive and parsed by
//! `lambda_http`, then handed to the very handler the function's `main` runs — so local runs
//! and tests exercise the code Lambda runs.

pub mod bootstrap;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use shared::error::Error;
use shared::http::apigw::{self, EventParts};
use shared::http::cors::CorsDecision;
use shared::http::{error_response, Request, Response, RouteSpec};
use shared::AppContext;
use tokio::net::TcpListener;

type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Response> + Send + 'a>>;
type Handler = for<'a> fn(&'a AppContext, Request) -> HandlerFuture<'a>;

/// Longest request target accepted (API Gateway's HTTP APIs refuse longer ones too).
pub const MAX_URI_BYTES: usize = 8_192;
/// Largest request line plus headers accepted (API Gateway's HTTP API limit).
pub const MAX_HEADER_BYTES: usize = 10_240;
/// How long a client may take to send a request's body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a client may take to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The OpenAPI document of every route, kept at the repository's root and served at
/// `/openapi.json` by the `api-docs` function (`tests/tests/consistency.rs` holds it to the
/// routes and the template).
pub use api_docs::DOCUMENT as OPENAPI;

/// One routed function.
pub struct Route {
    pub spec: &'static RouteSpec,
    handler: Handler,
}

macro_rules! routes {
    ($($krate:ident),* $(,)?) => {
        vec![$(Route {
            spec: &$krate::ROUTE,
            handler: {
                fn call<'a>(ctx: &'a AppContext, req: Request) -> HandlerFuture<'a> {
                    Box::pin($krate::handle(ctx, req))
                }
                call
            },
        }),*]
    };
}

/// Every function this server routes, in matching order ([`route_order`]).
pub fn routes() -> Vec<Route> {
    let mut routes = routes![
        agent_approval,
        agent_exec_cancel,
        agent_exec_get,
        agent_exec_start,
        agent_fs_delete,
        agent_fs_list,
        agent_fs_mkdir,
        agent_fs_patch,
        agent_fs_read,
        agent_fs_search,
        agent_fs_write,
        agent_interact,
        agent_mcp_call,
        agent_mcp_tools,
        agent_session,
        agent_status,
        agent_workspace_select,
        agent_workspaces,
        api_docs,
        auth_login,
        auth_logout,
        auth_session,
        debug_export,
        debug_inspect,
        debug_logs,
        debug_recipe_demote,
        debug_recipe_promote,
        debug_recipes,
        debug_snapshot,
        debug_tasks,
        knowledge_resolve,
        preferences_get,
        preferences_save,
        pusher_auth,
        session_archive,
        session_by_domain,
        session_get,
        session_init,
        session_latest,
        session_list,
        session_messages,
        session_rename,
        task_resume,
    ];
    routes.sort_by(|a, b| route_order(a.spec.path, b.spec.path));
    routes
}

/// The order routes are tried in: at the first segment where two paths differ, a literal
/// segment before a `{parameter}` (`/api/session/latest` before `/api/session/{sessionId}`),
/// and a shorter path before a longer one; otherwise by text, so the order is the same
/// however the list is written.
fn route_order(a: &str, b: &str) -> std::cmp::Ordering {
    let param = |s: &str| s.starts_with('{');
    for (x, y) in a.split('/').zip(b.split('/')) {
        if x != y {
            return param(x).cmp(&param(y)).then_with(|| x.cmp(y));
        }
    }
    a.split('/').count().cmp(&b.split('/').count())
}

/// Matches `path` against a route pattern, returning the `{name}` parameters.
fn match_path(pattern: &str, path: &str) -> Option<Vec<(String, String)>> {
    let mut params = Vec::new();
    let mut segs = path.trim_end_matches('/').split('/');
    for want in pattern.split('/') {
        let got = segs.next()?;
        match want.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
            Some(name) if !got.is_empty() => params.push((name.to_owned(), percent_decode(got))),
            Some(_) => return None,
            None if want == got => {}
            None => return None,
        }
    }
    segs.next().is_none().then_some(params)
}

/// A path segment percent-decoded (invalid UTF-8 replaced).
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The routing table plus the context it serves.
pub struct LocalApi {
    ctx: Arc<AppContext>,
    routes: Vec<Route>,
}

impl LocalApi {
    pub fn new(ctx: Arc<AppContext>) -> Self {
        Self {
            ctx,
            routes: routes(),
        }
    }

    pub fn context(&self) -> &Arc<AppContext> {
        &self.ctx
    }

    /// Answers one HTTP request.
    pub async fn handle(
        &self,
        req: http::Request<Incoming>,
        peer: SocketAddr,
        local: SocketAddr,
    ) -> http::Response<Full<Bytes>> {
        let cors = CorsDecision::for_request(&self.ctx.config.allowed_origins, req.headers());
        let response = match self.dispatch(req, peer, local).await {
            Ok(r) => r,
            Err(e) => {
                let mut r = error_response(&e);
                cors.apply(r.headers_mut());
                r
            }
        };
        let (parts, body) = response.into_parts();
        http::Response::from_parts(parts, Full::new(Bytes::from(body.to_vec())))
    }

    async fn dispatch(
        &self,
        req: http::Request<Incoming>,
        peer: SocketAddr,
        local: SocketAddr,
    ) -> Result<Response, Error> {
        // API Gateway's limits, answered with the contract's flat body (hyper's own refusals,
        // far above these, can only be empty).
        let uri_len = req.uri().to_string().len();
        if uri_len > MAX_URI_BYTES {
            return Err(Error::UriTooLong {
                limit: MAX_URI_BYTES,
            });
        }
        let header_bytes: usize = uri_len
            + req
                .headers()
                .iter()
                .map(|(k, v)| k.as_str().len() + v.len() + 4)
                .sum::<usize>();
        if header_bytes > MAX_HEADER_BYTES {
            return Err(Error::HeadersTooLarge {
                limit: MAX_HEADER_BYTES,
            });
        }
        let method = req.method().clone();
        let path = req.uri().path().to_owned();
        let query = req.uri().query().unwrap_or("").to_owned();
        let mut path_matched = false;
        let mut found = None;
        for route in &self.routes {
            if let Some(params) = match_path(route.spec.path, &path) {
                path_matched = true;
                if method == http::Method::OPTIONS || route.spec.methods.contains(&method) {
                    found = Some((route, params));
                    break;
                }
            }
        }
        let Some((route, params)) = found else {
            return Err(if path_matched {
                Error::MethodNotAllowed {
                    method: method.to_string(),
                }
            } else {
                Error::RouteNotFound {
                    method: method.to_string(),
                    path,
                }
            });
        };

        let (parts, body) = req.into_parts();
        let limit = self.ctx.config.max_body_bytes;
        let body = tokio::time::timeout(BODY_READ_TIMEOUT, Limited::new(body, limit).collect())
            .await
            .map_err(|_| Error::field("body", "was not received in time"))?
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    Error::PayloadTooLarge { limit }
                } else {
                    Error::Validation(vec![shared::error::FieldProblem::new(
                        "body",
                        "could not be read",
                    )])
                }
            })?
            .to_bytes();

        let headers: Vec<(String, String)> = parts
            .headers
            .iter()
            .filter(|(name, _)| *name != http::header::HOST)
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .chain(std::iter::once(("host".to_owned(), local.to_string())))
            .collect();
        let request_id = uuid::Uuid::new_v4().to_string();
        let method_name = method.to_string();
        let route_key = format!(
            "{} {}",
            route.spec.methods.first().map_or("ANY", |m| m.as_str()),
            route.spec.path
        );
        let source_ip = peer.ip().to_string();
        let domain_name = local.to_string();
        let parts = EventParts {
            method: &method_name,
            path: &path,
            query: &query,
            headers,
            body: &body,
            route_key: &route_key,
            path_parameters: params,
            source_ip: &source_ip,
            request_id: &request_id,
            domain_name: &domain_name,
            time_epoch_ms: self.ctx.clock.now().timestamp_millis(),
        };
        let request = apigw::request(&parts)
            .map_err(|e| Error::internal(format!("building the Lambda request failed: {e}")))?;
        Ok((route.handler)(&self.ctx, request).await)
    }
}

/// Connection limits of the server.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// How long a client may take to send a request's headers.
    pub header_read_timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_read_timeout: HEADER_READ_TIMEOUT,
        }
    }
}

/// Serves `api` on `listener` until `shutdown` resolves, then lets open requests finish
/// (up to ten seconds).
pub async fn serve(
    listener: TcpListener,
    api: Arc<LocalApi>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_with(listener, api, shutdown, ServeOptions::default()).await
}

/// [`serve`] with explicit connection limits.
pub async fn serve_with(
    listener: TcpListener,
    api: Arc<LocalApi>,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        continue;
                    }
                };
                // Responses go out in more than one write; don't let Nagle hold the last.
                let _ = stream.set_nodelay(true);
                let api = api.clone();
                let svc = service_fn(move |req| {
                    let api = api.clone();
                    async move { Ok::<_, Infallible>(api.handle(req, peer, local).await) }
                });
                // A client that trickles its headers is cut off (slow-header attacks).
                // hyper refuses more than its default 100 headers itself, with an empty body;
                // let every request within API Gateway's 10 KB reach the flat-body check.
                let conn = http1::Builder::new()
                    .max_headers(MAX_HEADER_BYTES / 4)
                    .timer(TokioTimer::new())
                    .header_read_timeout(options.header_read_timeout)
                    .serve_connection(TokioIo::new(stream), svc);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(10), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("open connections did not finish within 10 s");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_percent_decoded_and_malformed_escapes_kept() {
        assert_eq!(percent_decode("a%20b%2Fc"), "a b/c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%2"), "%zz%2");
        assert_eq!(percent_decode("%C3%A9"), "é");
        assert_eq!(
            percent_decode("%FF"),
            "\u{FFFD}",
            "invalid UTF-8 is replaced"
        );
    }

    #[test]
    fn paths_match_patterns_with_parameters() {
        assert_eq!(
            match_path("/api/v1/auth/login", "/api/v1/auth/login"),
            Some(vec![])
        );
        assert_eq!(
            match_path("/api/v1/auth/login", "/api/v1/auth/login/"),
            Some(vec![])
        );
        assert_eq!(match_path("/api/v1/auth/login", "/api/v1/auth"), None);
        assert_eq!(
            match_path("/api/v1/auth/login", "/api/v1/auth/login/x"),
            None
        );
        assert_eq!(
            match_path(
                "/api/session/{sessionId}/messages",
                "/api/session/a%20b/messages"
            ),
            Some(vec![("sessionId".into(), "a b".into())])
        );
        assert_eq!(
            match_path("/api/session/{sessionId}", "/api/session/"),
            None
        );
    }

    #[test]
    fn literal_paths_are_tried_before_the_parameters_that_would_match_them() {
        use std::cmp::Ordering::Less;
        assert_eq!(
            route_order("/api/session/latest", "/api/session/{sessionId}"),
            Less
        );
        assert_eq!(
            route_order(
                "/api/session/{sessionId}",
                "/api/session/{sessionId}/messages"
            ),
            Less
        );
        assert_eq!(
            route_order("/api/session/by-domain/{d}", "/api/session/{sessionId}"),
            Less
        );
        // No route is hidden behind an earlier pattern that would match its path.
        let routes = routes();
        for (i, later) in routes.iter().enumerate() {
            for earlier in &routes[..i] {
                assert!(
                    later.spec.path == earlier.spec.path
                        || match_path(earlier.spec.path, later.spec.path).is_none(),
                    "{} is tried before {}",
                    earlier.spec.path,
                    later.spec.path
                );
            }
        }
    }

    #[test]
    fn every_route_is_unique() {
        let routes = routes();
        for (i, a) in routes.iter().enumerate() {
            for b in &routes[i + 1..] {
                assert!(
                    a.spec.path != b.spec.path
                        || a.spec.methods.iter().all(|m| !b.spec.methods.contains(m))
                );
            }
        }
    }
}
