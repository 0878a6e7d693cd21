//! Parsing a Pusher channel-auth request: form-encoded `socket_id` and `channel_name` (what
//! pusher-js sends), or the same as JSON.

use crate::error::{Error, FieldProblem};
use crate::http::Request;

fn valid_socket_id(s: &str) -> bool {
    s.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && a.chars().chain(b.chars()).all(|c| c.is_ascii_digit())
    })
}

/// `(socket_id, channel_name)` of the request.
pub fn parse_request(req: &Request) -> Result<(String, String), Error> {
    let body: &[u8] = req.body().as_ref();
    let text = std::str::from_utf8(body).map_err(|_| Error::field("body", "must be text"))?;
    let fields: Vec<(String, String)> = if text.trim_start().starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|_| Error::field("body", "is not valid JSON"))?;
        ["socket_id", "channel_name"]
            .iter()
            .filter_map(|k| {
                v.get(*k)
                    .and_then(|x| x.as_str())
                    .map(|x| ((*k).to_owned(), x.to_owned()))
            })
            .collect()
    } else {
        reqwest::Url::parse(&format!("http://form/?{text}"))
            .map(|u| {
                u.query_pairs()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let get = |k: &str| {
        fields
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.trim().to_owned())
    };
    let mut problems = Vec::new();
    let socket_id = get("socket_id").filter(|s| valid_socket_id(s));
    if socket_id.is_none() {
        problems.push(FieldProblem::new(
            "socket_id",
            "must be a socket id like 1234.5678",
        ));
    }
    let channel = get("channel_name").filter(|c| !c.is_empty() && c.len() <= 200);
    if channel.is_none() {
        problems.push(FieldProblem::new("channel_name", "is required"));
    }
    match (socket_id, channel) {
        (Some(s), Some(c)) => Ok((s, c)),
        _ => Err(Error::Validation(problems)),
    }
}
