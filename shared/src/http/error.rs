//! An `Error` as an HTTP response: the contract's flat JSON envelope (`{ success: false, code,
//! message, details?, resetAt? }`, made by `error::answer`) with its status and `Retry-After`.
//! Internal detail goes to the log only; clients get a generic message for every 5xx.

use http::{HeaderValue, StatusCode};

use super::{json, Response};
use crate::error::{answer, Error};

/// The response for an error: the answer made where it happened for a relayed one, else its
/// [`answer`](crate::error::answer).
pub fn error_response(e: &Error) -> Response {
    let (mut resp, retry_after) = match e {
        Error::Relayed(r) => {
            let status =
                StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (json(status, &r.body), r.retry_after)
        }
        e => {
            let a = answer(e);
            (json(a.status, &a.body), a.retry_after)
        }
    };
    if let Some(v) = retry_after.and_then(|s| HeaderValue::from_str(&s.to_string()).ok()) {
        resp.headers_mut().insert(http::header::RETRY_AFTER, v);
    }
    resp
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
