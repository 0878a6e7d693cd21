//! An `Error` as the contract's flat JSON envelope: `{ success: false, code, message,
//! details?, resetAt? }` with the status and code `error::classify` gives it. Internal detail
//! goes to the log only; clients get a generic message for every 5xx.

use http::{HeaderValue, StatusCode};
use serde::Serialize;

use super::{json, Response};
pub use crate::error::classify;
use crate::error::{Error, FieldProblem};
use crate::ports::StoreError;

/// The error body every route answers with.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub success: bool,
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<FieldProblem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<String>,
}

/// Logs an error once, at a level fitting its class (5xx: error with detail; 4xx: info).
pub fn log_error(e: &Error) {
    if let Error::Relayed(_) = e {
        // Logged where it happened.
        return;
    }
    let (status, code, _) = classify(e);
    if status.is_server_error() {
        tracing::error!(code, error = %e, "request failed");
    } else if let Error::Validation(problems) = e {
        // Problem texts can quote the submitted value (a password sent as a number, say):
        // log which fields were wrong, never what was in them.
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        tracing::info!(code, fields = %fields.join(","), "request refused");
    } else {
        tracing::info!(code, reason = %e, "request refused");
    }
}

/// The error answer as data (to pass on from a phase of the step's machine).
pub fn relay(e: &Error) -> crate::error::Relayed {
    if let Error::Relayed(r) = e {
        return (**r).clone();
    }
    let r = error_response(e);
    crate::error::Relayed {
        status: r.status().as_u16(),
        body: serde_json::from_slice(r.body().as_ref()).unwrap_or_default(),
        retry_after: r
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok()?.parse().ok()),
    }
}

/// The response for an error.
pub fn error_response(e: &Error) -> Response {
    if let Error::Relayed(r) = e {
        let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = json(status, &r.body);
        if let Some(v) = r
            .retry_after
            .and_then(|s| HeaderValue::from_str(&s.to_string()).ok())
        {
            resp.headers_mut().insert(http::header::RETRY_AFTER, v);
        }
        return resp;
    }
    let (status, code, message) = classify(e);
    let (details, reset_at) = match e {
        Error::Validation(p) => (p.clone(), None),
        Error::RateLimited { reset_at, .. }
        | Error::TokenBudgetExceeded { reset_at, .. }
        | Error::LimitReached { reset_at, .. } => (Vec::new(), Some(crate::time::iso(*reset_at))),
        _ => (Vec::new(), None),
    };
    let body = ErrorBody {
        success: false,
        code,
        message,
        details,
        reset_at,
    };
    let mut r = json(status, &body);
    let retry_after = match e {
        Error::RateLimited {
            retry_after_seconds,
            ..
        }
        | Error::TokenBudgetExceeded {
            retry_after_seconds,
            ..
        }
        | Error::LimitReached {
            retry_after_seconds,
            ..
        } => Some(*retry_after_seconds),
        Error::Store(StoreError::Unavailable(_)) | Error::Overloaded(_) => Some(1),
        _ => None,
    };
    if let Some(secs) = retry_after {
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            r.headers_mut().insert(http::header::RETRY_AFTER, v);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn body(r: &Response) -> serde_json::Value {
        serde_json::from_slice(r.body().as_ref()).expect("json")
    }

    #[test]
    fn validation_errors_are_flat_and_name_fields() {
        let r = error_response(&Error::field("query", "must not be empty"));
        assert_eq!(r.status(), 400);
        let b = body(&r);
        assert_eq!(b["success"], false);
        assert_eq!(b["code"], "VALIDATION_ERROR");
        assert_eq!(b["message"], "query: must not be empty");
        assert_eq!(b["details"][0]["field"], "query");
    }

    #[test]
    fn rate_limit_sets_retry_after_and_iso_reset_at() {
        let reset_at = DateTime::from_timestamp(1_800_000_000, 0).expect("ts");
        let r = error_response(&Error::RateLimited {
            retry_after_seconds: 42,
            reset_at,
        });
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "42");
        assert_eq!(body(&r)["resetAt"], "2027-01-15T08:00:00.000Z");
    }

    #[test]
    fn internal_detail_never_reaches_the_client() {
        let r = error_response(&Error::internal("db password is hunter2"));
        assert_eq!(r.status(), 500);
        let text = String::from_utf8_lossy(r.body().as_ref()).to_string();
        assert!(!text.contains("hunter2"));
        assert_eq!(body(&r)["code"], "INTERNAL_ERROR");
    }
}
