//! API Gateway HTTP API (payload v2) events. `local-api` turns each incoming HTTP request into
//! such an event and lets `lambda_http` parse it exactly as it does inside Lambda, so handlers
//! see the same request (query map, path parameters, request context, source address) in both.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};

use super::Request;

/// What an HTTP request looked like on the wire, plus what API Gateway adds.
#[derive(Debug, Clone, Default)]
pub struct EventParts<'a> {
    pub method: &'a str,
    /// Path without the query string.
    pub path: &'a str,
    /// Raw query string without `?`.
    pub query: &'a str,
    /// Header names and values, in order (repeated names are joined with `,`).
    pub headers: Vec<(String, String)>,
    pub body: &'a [u8],
    /// The route pattern, e.g. `POST /api/session/{sessionId}`.
    pub route_key: &'a str,
    pub path_parameters: Vec<(String, String)>,
    pub source_ip: &'a str,
    pub request_id: &'a str,
    pub domain_name: &'a str,
    pub time_epoch_ms: i64,
}

/// Builds the v2 event JSON for `parts`.
pub fn event(parts: &EventParts<'_>) -> Value {
    let mut headers = Map::new();
    let mut cookies = Vec::new();
    for (name, value) in &parts.headers {
        let name = name.to_ascii_lowercase();
        if name == "cookie" {
            cookies.extend(value.split(';').map(|c| Value::String(c.trim().to_owned())));
            continue;
        }
        match headers.get_mut(&name) {
            Some(Value::String(existing)) => {
                existing.push(',');
                existing.push_str(value);
            }
            _ => {
                headers.insert(name, Value::String(value.clone()));
            }
        }
    }
    let (body, is_base64) = if parts.body.is_empty() {
        (Value::Null, false)
    } else {
        match std::str::from_utf8(parts.body) {
            Ok(text) => (Value::String(text.to_owned()), false),
            Err(_) => (Value::String(STANDARD.encode(parts.body)), true),
        }
    };
    let path_parameters: Map<String, Value> = parts
        .path_parameters
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let user_agent = headers.get("user-agent").cloned().unwrap_or(Value::Null);
    let mut event = json!({
        "version": "2.0",
        "routeKey": parts.route_key,
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": headers,
        "requestContext": {
            "accountId": "local",
            "apiId": "local",
            "domainName": parts.domain_name,
            "domainPrefix": "local",
            "http": {
                "method": parts.method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": parts.source_ip,
                "userAgent": user_agent,
            },
            "requestId": parts.request_id,
            "routeKey": parts.route_key,
            "stage": "$default",
            "timeEpoch": parts.time_epoch_ms,
        },
        "isBase64Encoded": is_base64,
    });
    if !cookies.is_empty() {
        event["cookies"] = Value::Array(cookies);
    }
    if !path_parameters.is_empty() {
        event["pathParameters"] = Value::Object(path_parameters);
    }
    if !body.is_null() {
        event["body"] = body;
    }
    event
}

/// Parses an event the way the Lambda runtime does.
pub fn request_from_event(event: &Value) -> Result<Request, serde_json::Error> {
    lambda_http::request::from_str(&event.to_string())
}

/// The request `parts` make, as `lambda_http` builds it from their event, without writing
/// the body into the event and reading it back: a body can be megabytes of JSON, which that
/// round trip escapes, copies and unescapes. Everything else goes through the event, so
/// handlers see what they see inside Lambda.
pub fn request(parts: &EventParts<'_>) -> Result<Request, serde_json::Error> {
    let mut req = request_from_event(&event(&EventParts {
        body: &[],
        ..parts.clone()
    }))?;
    *req.body_mut() = body_of(parts.body);
    Ok(req)
}

/// The body as `lambda_http` reads it from an event: none, text, or base64 decoded to bytes.
fn body_of(body: &[u8]) -> lambda_http::Body {
    if body.is_empty() {
        return lambda_http::Body::Empty;
    }
    match std::str::from_utf8(body) {
        Ok(text) => lambda_http::Body::Text(text.to_owned()),
        Err(_) => lambda_http::Body::Binary(body.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lambda_http::RequestExt;

    #[test]
    fn local_request_matches_what_lambda_would_see() {
        let parts = EventParts {
            method: "GET",
            path: "/api/session/abc/messages",
            query: "limit=50&since=2026-11-22T06%3A47%3A41.782Z",
            headers: vec![
                ("Authorization".into(), "Bearer t".into()),
                ("X-Multi".into(), "a".into()),
                ("x-multi".into(), "b".into()),
            ],
            body: b"",
            route_key: "GET /api/session/{sessionId}/messages",
            path_parameters: vec![("sessionId".into(), "abc".into())],
            source_ip: "127.0.0.1",
            request_id: "req-1",
            domain_name: "127.0.0.1:3000",
            time_epoch_ms: 0,
        };
        let req = request_from_event(&event(&parts)).expect("parses");
        assert_eq!(req.method(), "GET");
        assert_eq!(req.uri().path(), "/api/session/abc/messages");
        assert_eq!(req.headers()["authorization"], "Bearer t");
        assert_eq!(req.headers()["x-multi"], "a,b");
        let q = req.query_string_parameters();
        assert_eq!(q.first("since"), Some("2026-11-22T06:47:41.782Z"));
        assert_eq!(req.path_parameters().first("sessionId"), Some("abc"));
        assert_eq!(super::super::source_ip(&req).as_deref(), Some("127.0.0.1"));
        assert_eq!(super::super::request_id(&req), "req-1");
    }

    #[test]
    fn binary_bodies_travel_base64_encoded() {
        let parts = EventParts {
            method: "POST",
            path: "/x",
            body: &[0xff, 0x00, 0x10],
            route_key: "POST /x",
            ..Default::default()
        };
        let req = request_from_event(&event(&parts)).expect("parses");
        assert_eq!(req.body().as_ref(), &[0xff, 0x00, 0x10]);
    }

    #[test]
    fn a_request_built_beside_its_body_is_the_one_its_event_makes() {
        for body in [
            &b""[..],
            b"{\"query\":\"caf\xc3\xa9 \\\"x\\\"\"}",
            &[0xff, 0x00, 0x10],
        ] {
            let parts = EventParts {
                method: "POST",
                path: "/api/agent/interact",
                query: "a=1",
                headers: vec![("Content-Type".into(), "application/json".into())],
                body,
                route_key: "POST /api/agent/interact",
                path_parameters: vec![("id".into(), "x".into())],
                request_id: "req-2",
                ..Default::default()
            };
            let whole = request_from_event(&event(&parts)).expect("parses");
            let beside = request(&parts).expect("parses");
            assert_eq!(format!("{whole:?}"), format!("{beside:?}"));
            assert_eq!(
                format!("{:?}", whole.request_context()),
                format!("{:?}", beside.request_context())
            );
            assert_eq!(whole.path_parameters(), beside.path_parameters());
            assert_eq!(
                whole.query_string_parameters(),
                beside.query_string_parameters()
            );
        }
    }
}
