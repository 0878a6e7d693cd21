//! HTTP plumbing shared by every function: the request wrapper (`serve`) that adds request
//! ids, structured logs, CORS and error mapping around a handler; JSON body parsing with the
//! size limit; and response helpers.

pub mod agent;
pub mod apigw;
pub mod cors;
pub mod error;
pub mod guard;
pub mod reply;

use std::future::Future;
use std::time::Instant;

use http::{HeaderValue, Method, StatusCode};
use lambda_http::{Body, RequestExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tracing::Instrument;

use crate::context::AppContext;
use crate::error::{Error, FieldProblem};

pub use error::error_response;

/// The request type every handler takes (what Lambda hands a function).
pub type Request = lambda_http::Request;
/// The response type every handler returns.
pub type Response = http::Response<Body>;

/// Header carrying the request id back to the caller.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// One HTTP route: the function that serves it, its methods and its path pattern
/// (`{name}` segments are path parameters, as in API Gateway route keys).
#[derive(Debug, Clone)]
pub struct RouteSpec {
    pub name: &'static str,
    pub methods: &'static [Method],
    pub path: &'static str,
}

/// The API Gateway request id, the Lambda request id, or a fresh one.
pub fn request_id(req: &Request) -> String {
    if let Some(lambda_http::request::RequestContext::ApiGatewayV2(c)) = req.request_context_ref() {
        if let Some(id) = c.request_id.as_deref().filter(|s| !s.is_empty()) {
            return id.to_owned();
        }
    }
    req.lambda_context_ref()
        .map(|c| c.request_id.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

/// SHA-256 of the request body, hex: identifies a request for idempotency checks.
pub fn body_hash(req: &Request) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(req.body().as_ref()))
}

/// The caller's network address as API Gateway saw it (never a client-set header).
pub fn source_ip(req: &Request) -> Option<String> {
    match req.request_context_ref() {
        Some(lambda_http::request::RequestContext::ApiGatewayV2(c)) => c.http.source_ip.clone(),
        _ => None,
    }
}

/// Runs `handler` for one request with everything every route shares: request id, a log
/// span and one completion log line (no bodies, no secrets), CORS (including preflight),
/// the body-size limit, and the mapping of errors to the contract's flat envelope.
pub async fn serve<'a, F, Fut>(
    ctx: &'a AppContext,
    req: Request,
    route: &RouteSpec,
    handler: F,
) -> Response
where
    F: FnOnce(&'a AppContext, Request) -> Fut,
    Fut: Future<Output = Result<Response, Error>> + 'a,
{
    let started = Instant::now();
    let request_id = request_id(&req);
    let method = req.method().clone();
    let cors = cors::CorsDecision::for_request(&ctx.config.allowed_origins, req.headers());
    let span = tracing::info_span!("request", request_id = %request_id, route = route.name, method = %method);

    let outcome = async {
        if method == Method::OPTIONS {
            return Ok(cors.preflight());
        }
        if !route.methods.contains(&method) {
            return Err(Error::MethodNotAllowed {
                method: method.to_string(),
            });
        }
        let body_len = req.body().len();
        if body_len > ctx.config.max_body_bytes {
            return Err(Error::PayloadTooLarge {
                limit: ctx.config.max_body_bytes,
            });
        }
        handler(ctx, req).await
    }
    .instrument(span.clone())
    .await;

    let mut code = None;
    let mut response = match outcome {
        Ok(r) => r,
        Err(e) => {
            let _enter = span.enter();
            crate::error::log_error(&e);
            code = Some(crate::error::code(&e));
            error_response(&e)
        }
    };
    cors.apply(response.headers_mut());
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    let _enter = span.enter();
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let status = response.status().as_u16();
    tracing::info!(status, duration_ms = latency_ms, "request completed");
    if method != Method::OPTIONS {
        let figures = crate::metrics::RequestFigures {
            status,
            code: code.as_deref(),
            latency_ms,
        };
        ctx.metrics.request(route.name, &figures);
    }
    response
}

/// A path parameter (`{name}` in the route), percent-decoded by the router; 400 when absent.
pub fn path_param(req: &Request, name: &str) -> Result<String, Error> {
    req.path_parameters()
        .first(name)
        .map(str::to_owned)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Error::field(name, "is required"))
}

/// A path parameter that must be a UUID (normalised to lower-case hyphenated form).
pub fn uuid_param(req: &Request, name: &str) -> Result<String, Error> {
    let raw = path_param(req, name)?;
    uuid::Uuid::parse_str(&raw)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| Error::field(name, "must be a UUID"))
}

/// An optional query parameter, trimmed; empty counts as absent.
pub fn query_param(req: &Request, name: &str) -> Option<String> {
    req.query_string_parameters_ref()
        .and_then(|q| q.first(name))
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// An optional whole-number query parameter within `min..=max`.
pub fn number_param(
    req: &Request,
    name: &str,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, Error> {
    Ok(optional_number_param(req, name, min, max)?.unwrap_or(default))
}

/// An optional whole-number query parameter within `min..=max`.
pub fn optional_number_param(
    req: &Request,
    name: &str,
    min: usize,
    max: usize,
) -> Result<Option<usize>, Error> {
    query_param(req, name)
        .map(|raw| match raw.parse::<usize>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(Error::field(
                name,
                format!("must be a whole number from {min} to {max}"),
            )),
        })
        .transpose()
}

/// An optional ISO-8601 timestamp query parameter.
pub fn time_param(
    req: &Request,
    name: &str,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, Error> {
    query_param(req, name)
        .map(|raw| {
            chrono::DateTime::parse_from_rfc3339(&raw)
                .map(|t| t.with_timezone(&chrono::Utc))
                .map_err(|_| Error::field(name, "must be an ISO-8601 timestamp"))
        })
        .transpose()
}

/// 403 unless the debug routes are switched on.
pub fn require_debug_routes(ctx: &AppContext) -> Result<(), Error> {
    if ctx.config.debug_routes {
        Ok(())
    } else {
        Err(Error::Forbidden(
            "The debug routes are switched off (DEBUG_ROUTES)".into(),
        ))
    }
}

/// A JSON response.
pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => http::Response::builder()
            .status(status)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Body::Binary(bytes))
            .unwrap_or_else(|_| fallback_500()),
        Err(e) => error_response(&Error::internal(format!("response serialisation: {e}"))),
    }
}

/// A `200 OK` text document (`content_type`) with extra headers: the inspector's page, the
/// OpenAPI document.
pub fn text(
    content_type: &'static str,
    text: &str,
    headers: &[(&'static str, &'static str)],
) -> Response {
    let mut r = http::Response::new(Body::Text(text.to_owned()));
    let h = r.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(content_type),
    );
    for (name, value) in headers {
        h.insert(*name, HeaderValue::from_static(value));
    }
    r
}

/// `204 No Content`.
pub fn no_content() -> Response {
    let mut r = http::Response::new(Body::Empty);
    *r.status_mut() = StatusCode::NO_CONTENT;
    r
}

fn fallback_500() -> Response {
    let mut r = http::Response::new(Body::Text(
        r#"{"success":false,"code":"INTERNAL_ERROR","message":"Internal server error"}"#.into(),
    ));
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    r
}

/// Parses a JSON request body into `T`. Type errors and missing fields come back as
/// `400 VALIDATION_ERROR` naming the field; unknown fields are ignored.
pub fn parse_json<T: DeserializeOwned>(req: &Request) -> Result<T, Error> {
    let bytes: &[u8] = req.body().as_ref();
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Error::field("body", "must be a JSON object"));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        Error::Validation(vec![describe_json_error(&path, &inner)])
    })
}

/// Turns a serde error at `path` into a field problem a client can act on.
fn describe_json_error(path: &str, e: &serde_json::Error) -> FieldProblem {
    let raw = e.to_string();
    // serde_json appends " at line L column C"; the field name says more to a client.
    let msg = raw.rfind(" at line ").map_or(raw.as_str(), |i| &raw[..i]);
    let join = |child: &str| {
        if path == "." {
            child.to_owned()
        } else {
            format!("{path}.{child}")
        }
    };
    if let Some(field) = msg
        .strip_prefix("missing field `")
        .and_then(|s| s.strip_suffix('`'))
    {
        return FieldProblem::new(join(field), "is required");
    }
    if e.is_syntax() || e.is_eof() {
        return FieldProblem::new("body", format!("is not valid JSON: {msg}"));
    }
    let field = if path == "." {
        "body".to_owned()
    } else {
        path.to_owned()
    };
    FieldProblem::new(field, msg.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Login {
        email: String,
        password: String,
    }

    fn req(body: &str) -> Request {
        http::Request::new(Body::Text(body.into()))
    }

    fn problem(body: &str) -> FieldProblem {
        match parse_json::<Login>(&req(body)) {
            Err(Error::Validation(mut p)) => p.remove(0),
            other => panic!("expected validation error, got {other:?}"),
        }
    }

    #[test]
    fn missing_field_is_named() {
        assert_eq!(
            problem(r#"{"email":"a@b.c"}"#),
            FieldProblem::new("password", "is required")
        );
    }

    #[test]
    fn wrong_type_is_named() {
        let p = problem(r#"{"email":5,"password":"x"}"#);
        assert_eq!(p.field, "email");
        assert!(
            p.problem.starts_with("invalid type: integer"),
            "{}",
            p.problem
        );
    }

    #[test]
    fn malformed_and_empty_bodies_name_the_body() {
        assert_eq!(problem("{").field, "body");
        assert_eq!(problem("").field, "body");
        assert_eq!(problem("[1]").field, "body");
    }

    #[test]
    fn unknown_fields_are_ignored() {
        assert!(parse_json::<Login>(&req(r#"{"email":"a","password":"b","x":1}"#)).is_ok());
    }
}
