//! The one error type handlers return. Each variant is mapped to a status, a contract code and
//! a client-safe message in exactly one place (`classify`, here), and to the contract's flat
//! envelope (`answer`), which `http::error` writes; internal detail stays in logs
//! (`log_error`).

use chrono::{DateTime, Utc};
use http::StatusCode;
use serde::Serialize;

use crate::domain::{TaskError, TaskStatus};

/// One invalid input field, as reported in `details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldProblem {
    pub field: String,
    pub problem: String,
}

impl FieldProblem {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// The variables that name the model key (`config::agent` reads them in this order).
const LLM_KEY_VARIABLES: &str = "LLM_API_KEY or OPENAI_API_KEY";

/// Storage failures, mapped from each adapter's own errors (the store ports' error; here so
/// that every layer can name it).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A conditional write failed: the record already exists or changed meanwhile.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The record an update needs does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Throttled or temporarily unavailable; the operation may be retried.
    #[error("unavailable (retryable): {0}")]
    Unavailable(String),
    /// Anything else; never shown to clients.
    #[error("store failure: {0}")]
    Internal(String),
}

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input failed validation; each field is named.
    #[error("validation failed: {0:?}")]
    Validation(Vec<FieldProblem>),
    /// Missing, malformed, expired, revoked or forged token.
    #[error("unauthorized: {0}")]
    Unauthorized(&'static str),
    /// Login with an unknown email or a wrong password.
    #[error("invalid credentials")]
    InvalidCredentials,
    /// Login of a disabled user (with the right password).
    #[error("account disabled")]
    AccountDisabled,
    /// Authenticated but not allowed.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Unknown id, or another tenant's id; `code` is the contract's code for the resource.
    #[error("not found: {message}")]
    NotFound { code: &'static str, message: String },
    /// Authenticated, but this action is not allowed, with a specific code
    /// (`AGENT_TOOLS_DISABLED`, `COMMAND_NOT_ALLOWED`, ...).
    #[error("denied {code}: {message}")]
    Denied { code: &'static str, message: String },
    /// Well-formed, but it cannot be carried out as asked (`PATCH_FAILED`, `FILE_TOO_LARGE`).
    #[error("unprocessable {code}: {message}")]
    Unprocessable { code: &'static str, message: String },
    /// A state conflict of another resource (`CONFLICT`, ...).
    #[error("conflict: {message}")]
    Conflict { code: &'static str, message: String },
    /// An `Idempotency-Key` reused with a different request body.
    #[error("idempotency key reused with a different request")]
    IdempotencyKeyReused,
    /// The server could not take the work on now (the client may retry shortly).
    #[error("overloaded: {0}")]
    Overloaded(&'static str),
    /// The request line's target is over the limit (`local-api`; API Gateway has its own).
    #[error("uri too long (limit {limit} bytes)")]
    UriTooLong { limit: usize },
    /// The request headers are over the limit (`local-api`; API Gateway has its own).
    #[error("headers too large (limit {limit} bytes)")]
    HeadersTooLarge { limit: usize },
    /// The request body is over the configured limit.
    #[error("payload too large (limit {limit} bytes)")]
    PayloadTooLarge { limit: usize },
    /// A rate limit was hit.
    #[error("rate limited until {reset_at}")]
    RateLimited {
        retry_after_seconds: i64,
        reset_at: DateTime<Utc>,
    },
    /// A per-user or per-tenant quantity is at its limit until `reset_at` (or until the caller
    /// frees some of it); answered `429` with `code`, `Retry-After` and `resetAt`.
    #[error("limit reached ({code}) until {reset_at}")]
    LimitReached {
        code: &'static str,
        message: String,
        retry_after_seconds: i64,
        reset_at: DateTime<Utc>,
    },
    /// The tenant's daily token budget is used up.
    #[error("token budget exceeded until {reset_at}")]
    TokenBudgetExceeded {
        retry_after_seconds: i64,
        reset_at: DateTime<Utc>,
    },
    /// No route for this method and path.
    #[error("no route for {method} {path}")]
    RouteNotFound { method: String, path: String },
    /// The route exists but not for this method.
    #[error("method {method} not allowed")]
    MethodNotAllowed { method: String },
    /// A task or session refusal (not found, busy, finished, step limit, ...).
    #[error("{0}")]
    Task(#[from] TaskError),
    /// The model kept failing (429, 5xx) after retries (`LLM_ERROR`).
    #[error("the model is unavailable")]
    ModelUnavailable,
    /// No model is configured.
    #[error("no LLM configured")]
    LlmNotConfigured,
    /// A service behind this one failed (`LLM_ERROR`, `UPSTREAM_ERROR`).
    #[error("upstream {code}: {message}")]
    Upstream { code: &'static str, message: String },
    /// Storage failed; the detail is logged, never returned.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// Any other server fault; the detail is logged, never returned.
    #[error("internal: {0}")]
    Internal(String),
    /// An error answer made (and logged) where the error happened — a phase of the step's
    /// state machine, maybe in another process — passed on as it is.
    #[error("relayed answer {}", .0.status)]
    Relayed(Box<Relayed>),
}

/// An error answer as data: the status, the contract's body and the `Retry-After` seconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Relayed {
    pub status: u16,
    pub body: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<i64>,
}

impl Error {
    /// A validation error for a single field.
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::Validation(vec![FieldProblem::new(field, problem)])
    }

    /// A server fault with a detail for the logs.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Error::Internal(detail.to_string())
    }

    /// The stable error name the step's state machine matches in `Retry` and `Catch`:
    /// `Store.Throttled` and `Model.Unavailable` are retried; `Step.Refused` (a 4xx answer),
    /// `Step.Overloaded` and `Step.Failed` go to the lease's release.
    pub fn state_error(&self) -> &'static str {
        match self {
            Error::Store(StoreError::Unavailable(_)) => "Store.Throttled",
            Error::ModelUnavailable => "Model.Unavailable",
            Error::Overloaded(_) => "Step.Overloaded",
            Error::Relayed(r) if r.status < 500 => "Step.Refused",
            Error::Relayed(_) => "Step.Failed",
            e if classify(e).0.is_client_error() => "Step.Refused",
            _ => "Step.Failed",
        }
    }
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
                "No language model is configured: set {LLM_KEY_VARIABLES} (and optionally \
                 LLM_BASE_URL, LLM_MODEL)"
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
        TaskError::Archived => (
            S::CONFLICT,
            "TASK_COMPLETED",
            "The task was stopped: its session was archived".into(),
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

/// An error's answer: its status, the contract's body and the `Retry-After` seconds.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub body: ErrorBody,
    pub retry_after: Option<i64>,
}

/// The answer to an error made here (a relayed one carries its own: see [`relay`]).
pub fn answer(e: &Error) -> Answer {
    let (status, code, message) = classify(e);
    let (details, reset_at) = match e {
        Error::Validation(p) => (p.clone(), None),
        Error::RateLimited { reset_at, .. }
        | Error::TokenBudgetExceeded { reset_at, .. }
        | Error::LimitReached { reset_at, .. } => (Vec::new(), Some(crate::time::iso(*reset_at))),
        _ => (Vec::new(), None),
    };
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
    Answer {
        status,
        body: ErrorBody {
            success: false,
            code,
            message,
            details,
            reset_at,
        },
        retry_after,
    }
}

/// The contract's code of an error's answer (`RATE_LIMITED`, `LLM_ERROR`, …), for metrics.
pub fn code(e: &Error) -> String {
    match e {
        Error::Relayed(r) => r
            .body
            .get("code")
            .and_then(|c| c.as_str())
            .unwrap_or("INTERNAL_ERROR")
            .to_owned(),
        e => classify(e).1.to_owned(),
    }
}

/// The error's answer as data, to pass on from a phase of the step's machine (maybe in another
/// process) and answer there as it is.
pub fn relay(e: &Error) -> Relayed {
    if let Error::Relayed(r) = e {
        return (**r).clone();
    }
    let a = answer(e);
    Relayed {
        status: a.status.as_u16(),
        body: serde_json::to_value(&a.body).unwrap_or_default(),
        retry_after: a.retry_after,
    }
}
