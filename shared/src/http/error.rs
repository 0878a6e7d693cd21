//! The single mapping from `Error` to the contract's status, code and flat JSON envelope:
//! `{ success: false, code, message, details?, resetAt? }`. Internal detail goes to the log
//! only; clients get a generic message for every 5xx.

use http::{HeaderValue, StatusCode};
use serde::Serialize;

use super::{json, Response};
use crate::domain::{TaskError, TaskStatus};
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

/// Status, code and client-safe message of an error.
pub fn classify(e: &Error) -> (StatusCode, &'static str, String) {
    use StatusCode as S;
    match e {
        Error::Validation(problems) => (
            S::BAD_REQUEST,
            "VALIDATION_ERROR",
            problems
                .iter()
                .map(|p| format!("{}: {}", p.field, p.problem))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        Error::Unauthorized(_) => (
            S::UNAUTHORIZED,
            "UNAUTHORIZED",
            "Missing, invalid, expired or revoked access token".into(),
        ),
        Error::InvalidCredentials => (
            S::UNAUTHORIZED,
            "INVALID_CREDENTIALS",
            "Invalid email or password".into(),
        ),
        Error::AccountDisabled => (
            S::FORBIDDEN,
            "ACCOUNT_DISABLED",
            "This account is disabled".into(),
        ),
        Error::Forbidden(m) => (S::FORBIDDEN, "FORBIDDEN", m.clone()),
        Error::NotFound { code, message } => (S::NOT_FOUND, code, message.clone()),
        Error::Conflict { code, message } => (S::CONFLICT, code, message.clone()),
        Error::Denied { code, message } => (S::FORBIDDEN, code, message.clone()),
        Error::Unprocessable { code, message } => (S::UNPROCESSABLE_ENTITY, code, message.clone()),
        Error::IdempotencyKeyReused => (
            S::UNPROCESSABLE_ENTITY,
            "IDEMPOTENCY_KEY_REUSED",
            "This Idempotency-Key was used with a different request body".into(),
        ),
        Error::Overloaded(_) => (
            S::SERVICE_UNAVAILABLE,
            "SERVICE_UNAVAILABLE",
            "The server is busy; retry shortly".into(),
        ),
        Error::UriTooLong { limit } => (
            S::URI_TOO_LONG,
            "URI_TOO_LONG",
            format!("The request URI exceeds the limit of {limit} bytes"),
        ),
        Error::HeadersTooLarge { limit } => (
            S::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "HEADERS_TOO_LARGE",
            format!("The request line and headers exceed the limit of {limit} bytes"),
        ),
        Error::PayloadTooLarge { limit } => (
            S::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            format!("Request body exceeds the limit of {limit} bytes"),
        ),
        Error::RateLimited {
            retry_after_seconds,
            ..
        } => (
            S::TOO_MANY_REQUESTS,
            "RATE_LIMIT",
            format!("Too many requests; retry after {retry_after_seconds} seconds"),
        ),
        Error::LimitReached { code, message, .. } => (S::TOO_MANY_REQUESTS, code, message.clone()),
        Error::TokenBudgetExceeded { reset_at, .. } => (
            S::TOO_MANY_REQUESTS,
            "TOKEN_BUDGET_EXCEEDED",
            format!(
                "The daily token budget of this organisation is used up; it renews at {}",
                crate::time::iso(*reset_at)
            ),
        ),
        Error::Task(t) => task_error(t),
        Error::LlmNotConfigured => (
            S::SERVICE_UNAVAILABLE,
            "LLM_NOT_CONFIGURED",
            format!(
                "No language model is configured: set {} (and optionally LLM_BASE_URL, LLM_MODEL)",
                crate::config::LLM_KEY_VARIABLES
            ),
        ),
        Error::Upstream { code, message } => (S::BAD_GATEWAY, code, message.clone()),
        Error::ModelUnavailable => (
            S::BAD_GATEWAY,
            "LLM_ERROR",
            "The language model failed after retries".into(),
        ),
        Error::RouteNotFound { method, path } => (
            S::NOT_FOUND,
            "NOT_FOUND",
            format!("No route for {method} {path}"),
        ),
        Error::MethodNotAllowed { method } => (
            S::METHOD_NOT_ALLOWED,
            "METHOD_NOT_ALLOWED",
            format!("Method {method} is not allowed on this route"),
        ),
        Error::Store(StoreError::Conflict(_)) => (
            S::CONFLICT,
            "CONFLICT",
            "The resource changed or already exists".into(),
        ),
        Error::Store(StoreError::NotFound(_)) => (S::NOT_FOUND, "NOT_FOUND", "Not found".into()),
        Error::Store(StoreError::Unavailable(_)) => (
            S::SERVICE_UNAVAILABLE,
            "SERVICE_UNAVAILABLE",
            "Storage is busy; retry shortly".into(),
        ),
        Error::Relayed(r) => (
            S::from_u16(r.status).unwrap_or(S::INTERNAL_SERVER_ERROR),
            "RELAYED",
            r.body["message"].as_str().unwrap_or_default().to_owned(),
        ),
        Error::Store(StoreError::Internal(_)) | Error::Internal(_) => (
            S::INTERNAL_SERVER_ERROR,
            "INTERNAL_ERROR",
            "Internal server error".into(),
        ),
    }
}

/// Status, code and message of a task or session refusal.
fn task_error(t: &TaskError) -> (StatusCode, &'static str, String) {
    use StatusCode as S;
    match t {
        TaskError::NotFound => (S::NOT_FOUND, "TASK_NOT_FOUND", "No such task".into()),
        TaskError::Busy(why) => (S::CONFLICT, "TASK_BUSY", (*why).to_owned()),
        TaskError::Finished(status) => (
            S::CONFLICT,
            "TASK_COMPLETED",
            format!(
                "The task is {}: it takes no more steps",
                if *status == TaskStatus::Completed {
                    "completed"
                } else {
                    "failed"
                }
            ),
        ),
        TaskError::StepLimit { max } => (
            S::BAD_REQUEST,
            "MAX_STEPS_EXCEEDED",
            format!("The task reached its limit of {max} steps and was marked failed"),
        ),
        TaskError::SessionNotFound => (S::NOT_FOUND, "SESSION_NOT_FOUND", "No such session".into()),
        TaskError::SessionTaken => (
            S::CONFLICT,
            "SESSION_ID_TAKEN",
            "This session id is already in use by another account; start a new session".into(),
        ),
    }
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
