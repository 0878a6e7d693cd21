//! CORS for the configured extension origins. Allowed origins are echoed back; any other
//! origin gets no CORS headers at all (the browser then blocks the response).

use http::header::{self, HeaderMap, HeaderValue};
use http::StatusCode;
use lambda_http::Body;

use super::Response;
use crate::config::OriginRule;

/// How long a browser may cache a preflight answer.
pub const MAX_AGE_SECONDS: &str = "600";
const ALLOW_METHODS: &str = "GET, POST, PATCH, DELETE, OPTIONS";
const ALLOW_HEADERS: &str = "Authorization, Content-Type, Idempotency-Key";
const EXPOSE_HEADERS: &str = "Retry-After, X-Request-Id";

/// The CORS verdict for one request.
#[derive(Debug, Clone)]
pub struct CorsDecision {
    allowed_origin: Option<HeaderValue>,
}

impl CorsDecision {
    pub fn for_request(rules: &[OriginRule], headers: &HeaderMap) -> Self {
        let allowed_origin = headers
            .get(header::ORIGIN)
            .filter(|v| v.to_str().is_ok_and(|o| rules.iter().any(|r| r.allows(o))))
            .cloned();
        Self { allowed_origin }
    }

    /// Whether the request came from an allowed origin.
    pub fn is_allowed(&self) -> bool {
        self.allowed_origin.is_some()
    }

    /// The answer to an `OPTIONS` preflight: `204`, with CORS headers only for allowed origins.
    pub fn preflight(&self) -> Response {
        let mut r = http::Response::new(Body::Empty);
        *r.status_mut() = StatusCode::NO_CONTENT;
        if self.is_allowed() {
            let h = r.headers_mut();
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static(ALLOW_METHODS),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(ALLOW_HEADERS),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static(MAX_AGE_SECONDS),
            );
        }
        r
    }

    /// Adds the per-response CORS headers (every response, errors included).
    pub fn apply(&self, h: &mut HeaderMap) {
        h.append(header::VARY, HeaderValue::from_static("Origin"));
        if let Some(origin) = &self.allowed_origin {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            h.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSE_HEADERS),
            );
        }
    }
}
