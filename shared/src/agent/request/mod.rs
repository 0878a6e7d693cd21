//! The `POST /api/agent/interact` request, validated field by field: every problem is named
//! (`interactiveTree[3].i`, `query`, ...), unknown fields are ignored.

mod fields;
mod reports;
mod wire;

use serde_json::Value;

use super::page::TreeNode;
use crate::error::Error;
use crate::text::truncate_chars;
use fields::{enum_field, object_field, string_field, uuid_field, Problems};
use reports::{report_field, DOM_CHANGES_FIELDS, ERROR_FIELDS, OBSERVATION_FIELDS, RESULT_FIELDS};
use serde_json::Map;
use wire::{Body, TreeField, MAX_NODE_PROBLEMS};

/// Longest `dom` accepted, in characters.
pub const MAX_DOM_CHARS: usize = 500_000;
/// Longest `query`, in characters.
pub const MAX_QUERY_CHARS: usize = 10_000;

/// The page as sent.
#[derive(Debug, Clone, PartialEq)]
pub enum PageInput {
    Tree(Vec<TreeNode>),
    Dom(String),
}

/// What the client reported about the previous action.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dom_changes: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_observations: Option<Value>,
}

impl LastAction {
    pub fn is_empty(&self) -> bool {
        *self == LastAction::default()
    }

    /// A text field of `lastActionError` (`code`, `message`, ...).
    pub fn error_field(&self, key: &str) -> Option<&str> {
        self.error.as_ref()?.get(key)?.as_str()
    }
}

/// A validated interact request.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractRequest {
    pub url: String,
    pub query: String,
    pub page: PageInput,
    pub dom_mode: Option<String>,
    pub task_id: Option<String>,
    pub session_id: Option<String>,
    pub last_action: LastAction,
    pub page_title: Option<String>,
    pub viewport: Option<(f64, f64)>,
}

/// Longest page URL kept.
pub const MAX_URL_CHARS: usize = 4096;

/// The page's URL as kept: any absolute URL a browser can show — web pages, `file:`, and the
/// pages users start tasks on, `about:blank` and `data:` (a long `data:` URL is kept as its
/// media type only: its content is the page the request already carries).
pub fn page_url(raw: &str) -> Option<String> {
    let u = raw.trim();
    let parsed = reqwest::Url::parse(u).ok()?;
    if u.chars().count() <= MAX_URL_CHARS {
        return Some(u.to_owned());
    }
    if parsed.scheme() == "data" {
        let media = u.split_once(',').map_or(u, |(m, _)| m);
        return Some(format!("{},…", media.chars().take(200).collect::<String>()));
    }
    None
}

/// Whether a page URL is on the web (organisation knowledge is looked up for those only).
pub fn is_web_url(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// Validates a parsed JSON body.
pub fn validate(body: &Value) -> Result<InteractRequest, Error> {
    let Some(obj) = body.as_object() else {
        return Err(Error::field("body", "must be a JSON object"));
    };
    check(obj, TreeField::of(obj.get("interactiveTree")))
}

/// Reads and validates a raw body in one pass (the tree's nodes checked as they are read);
/// `None` when it is not a JSON object — the caller's JSON reader then names the problem.
pub fn read(bytes: &[u8]) -> Option<Result<InteractRequest, Error>> {
    let body: Body = serde_json::from_slice(bytes).ok()?;
    Some(check(&body.fields, body.tree))
}

/// The checks over the fields and the tree as read.
fn check(obj: &Map<String, Value>, tree_field: TreeField) -> Result<InteractRequest, Error> {
    let mut p = Problems(Vec::new());

    let url = match string_field(obj, "url", &mut p) {
        None if !obj.contains_key("url") || obj["url"].is_null() => {
            p.add("url", "is required");
            None
        }
        None => None,
        Some(u) => match page_url(&u) {
            Some(u) => Some(u),
            None => {
                p.add("url", "must be an absolute URL of at most 4096 characters");
                None
            }
        },
    };
    let query = match string_field(obj, "query", &mut p) {
        None if !obj.contains_key("query") || obj["query"].is_null() => {
            p.add("query", "is required");
            None
        }
        None => None,
        Some(q) => {
            let q = q.trim().to_owned();
            if q.is_empty() {
                p.add("query", "must not be empty");
                None
            } else if q.chars().count() > MAX_QUERY_CHARS {
                p.add(
                    "query",
                    format!("must be at most {MAX_QUERY_CHARS} characters"),
                );
                None
            } else {
                Some(q)
            }
        }
    };

    let mut tree = None;
    match tree_field {
        TreeField::Absent => {}
        TreeField::Nodes {
            nodes,
            bad,
            problems,
        } => {
            p.0.extend(problems);
            if bad > MAX_NODE_PROBLEMS {
                p.add(
                    "interactiveTree",
                    format!("{bad} nodes are invalid; the first {MAX_NODE_PROBLEMS} are listed"),
                );
            }
            tree = Some(nodes);
        }
        TreeField::NotArray => p.add("interactiveTree", "must be an array of nodes"),
    }
    let dom = string_field(obj, "dom", &mut p);
    if dom
        .as_ref()
        .is_some_and(|d| d.chars().count() > MAX_DOM_CHARS)
    {
        p.add("dom", format!("must be at most {MAX_DOM_CHARS} characters"));
    }
    let page = match (tree, dom) {
        (Some(t), _) if !t.is_empty() => Some(PageInput::Tree(t)),
        (_, Some(d)) if !d.trim().is_empty() && d.chars().count() <= MAX_DOM_CHARS => {
            Some(PageInput::Dom(d))
        }
        _ => None,
    };
    if page.is_none()
        && !p
            .0
            .iter()
            .any(|x| x.field.starts_with("interactiveTree") || x.field == "dom")
    {
        p.add(
            "interactiveTree",
            "a non-empty interactiveTree or dom is required",
        );
    }

    let dom_mode = enum_field(
        obj,
        "domMode",
        &["semantic", "skeleton", "hybrid", "full"],
        &mut p,
    );
    let task_id = uuid_field(obj, "taskId", &mut p);
    let session_id = uuid_field(obj, "sessionId", &mut p);
    let last_action = LastAction {
        status: enum_field(
            obj,
            "lastActionStatus",
            &["success", "failure", "pending"],
            &mut p,
        ),
        error: report_field(obj, "lastActionError", ERROR_FIELDS, &mut p),
        result: report_field(obj, "lastActionResult", RESULT_FIELDS, &mut p),
        dom_changes: report_field(obj, "domChanges", DOM_CHANGES_FIELDS, &mut p),
        client_observations: report_field(obj, "clientObservations", OBSERVATION_FIELDS, &mut p),
    };
    let page_title = string_field(obj, "pageTitle", &mut p).map(|t| truncate_chars(t.trim(), 300));
    let viewport = object_field(obj, "viewport", &mut p).and_then(|v| {
        let (w, h) = (
            v.get("width").and_then(Value::as_f64),
            v.get("height").and_then(Value::as_f64),
        );
        match (w, h) {
            (Some(w), Some(h)) if w > 0.0 && h > 0.0 => Some((w, h)),
            _ => {
                p.add(
                    "viewport",
                    "must be { width, height } with positive numbers",
                );
                None
            }
        }
    });
    if let Some(v) = obj.get("screenshot") {
        if !(v.is_null() || v.is_string()) {
            p.add("screenshot", "must be a base64 string or null");
        }
    }

    match (url, query, page) {
        (Some(url), Some(query), Some(page)) if p.0.is_empty() => Ok(InteractRequest {
            url,
            query,
            page,
            dom_mode,
            task_id,
            session_id,
            last_action,
            page_title,
            viewport,
        }),
        _ => Err(Error::Validation(p.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_pass_reading_agrees_with_the_checks_over_parsed_json() {
        let long = "x".repeat(150);
        let bodies = [
            json!({ "url": "https://a.com/", "query": "go", "interactiveTree": [
                { "i": "1", "r": "btn", "n": "Go", "xy": [1, 2], "box": [0, 0, 3, 4], "extra": { "deep": [1, 2] } },
                { "i": 7, "r": "link", "n": long, "v": 3.5, "s": true, "xy": [1], "box": "no" },
                { "i": " 9 ", "r": null, "n": ["a"], "v": { "k": 1 } }
            ], "domChanges": { "addedCount": 1 }, "viewport": { "width": 800, "height": 600 } }),
            json!({ "url": "https://a.com/", "query": "go", "interactiveTree": [
                1, "node", [], null, { "i": "" }, { "i": "a b" }, { "n": "no id" }
            ] }),
            json!({ "url": "https://a.com/", "query": "go", "interactiveTree": "nodes" }),
            json!({ "url": "https://a.com/", "query": "go", "interactiveTree": null, "dom": "<p id=1>x</p>" }),
            json!({ "url": "https://a.com/", "query": "go", "interactiveTree": { "i": "1" } }),
            json!({ "query": 5, "interactiveTree": [] }),
        ];
        for body in bodies {
            let bytes = serde_json::to_vec(&body).expect("json");
            let one_pass = read(&bytes).expect("an object");
            assert_eq!(
                format!("{one_pass:?}"),
                format!("{:?}", validate(&body)),
                "{body}"
            );
        }
        assert!(read(b"[1, 2]").is_none());
        assert!(read(b"{\"url\": ").is_none());
        // The last of repeated keys counts, as in a parsed body.
        let twice = br#"{"url":"https://a.com/","query":"go","interactiveTree":"x","interactiveTree":[{"i":"1"}]}"#;
        assert!(read(twice).expect("object").is_ok());
    }

    fn fields(body: Value) -> Vec<String> {
        match validate(&body) {
            Err(Error::Validation(p)) => p.into_iter().map(|x| x.field).collect(),
            other => panic!("expected validation error, got {other:?}"),
        }
    }

    #[test]
    fn the_captured_first_step_validates() {
        let body = json!({"url": "http://127.0.0.1:3000/test-page", "query": "Click the Press me button", "tabId": 1123291683,
            "sessionId": "8131ab15-75ec-448e-80c7-8ef0a28fb1e3", "screenshot": null, "domMode": "semantic",
            "interactiveTree": [{"i": "1", "r": "inp", "n": "Search box", "xy": [97, 90], "box": [8, 80, 177, 21]},
                                {"i": "10", "r": "btn", "n": "Press me", "xy": [225, 90], "box": [189, 80, 72, 21]}],
            "viewport": {"width": 780, "height": 437}, "pageTitle": "Probe Page"});
        let r = validate(&body).expect("valid");
        assert_eq!(r.viewport, Some((780.0, 437.0)));
        let PageInput::Tree(nodes) = &r.page else {
            panic!("tree")
        };
        assert_eq!(nodes[1].i, "10");
        assert_eq!(
            r.session_id.as_deref(),
            Some("8131ab15-75ec-448e-80c7-8ef0a28fb1e3")
        );
    }

    #[test]
    fn every_bad_field_is_named() {
        let f = fields(
            json!({ "query": "", "taskId": "task-1", "lastActionStatus": "done", "domMode": "x", "dom": 5 }),
        );
        for want in [
            "url",
            "query",
            "taskId",
            "lastActionStatus",
            "domMode",
            "dom",
        ] {
            assert!(f.contains(&want.to_string()), "{want} missing from {f:?}");
        }
        for ok in [
            "about:blank",
            "data:text/html,<h1>hi</h1>",
            "chrome://newtab/",
            "file:///tmp/a.html",
        ] {
            assert_eq!(page_url(ok).as_deref(), Some(ok), "{ok}");
        }
        let long = format!("data:text/html;charset=utf-8,{}", "x".repeat(10_000));
        assert_eq!(
            page_url(&long).as_deref(),
            Some("data:text/html;charset=utf-8,…")
        );
        assert!(page_url(&format!("https://a.com/{}", "x".repeat(5000))).is_none());
        assert!(
            is_web_url("https://a.com/") && !is_web_url("about:blank") && !is_web_url("data:,x")
        );
        let f = fields(json!({ "url": "not a url", "query": "q", "interactiveTree": [] }));
        assert_eq!(f, vec!["url", "interactiveTree"]);
        let f = fields(
            json!({ "url": "https://a.com", "query": "q", "interactiveTree": [{"i": ""}, {"r": "btn"}, 7] }),
        );
        assert_eq!(
            f,
            vec![
                "interactiveTree[0].i",
                "interactiveTree[1].i",
                "interactiveTree[2]"
            ]
        );
        let f = fields(
            json!({ "url": "https://a.com", "query": "q", "dom": "x".repeat(MAX_DOM_CHARS + 1) }),
        );
        assert_eq!(f, vec!["dom"]);
        let f = fields(
            json!({ "url": "https://a.com", "query": "q".repeat(MAX_QUERY_CHARS + 1), "dom": "<a id=1>x</a>" }),
        );
        assert_eq!(f, vec!["query"]);
    }

    #[test]
    fn client_reports_keep_known_fields_only_and_bounded() {
        let r = validate(&json!({ "url": "https://a.com/x", "query": "q", "dom": "<a id=1>x</a>",
            "lastActionStatus": "failure",
            "lastActionError": { "message": "m".repeat(4_000_000), "code": "ELEMENT_NOT_FOUND", "elementId": 12, "stack": "x".repeat(1000) },
            "lastActionResult": { "success": false, "actualState": { "blob": "y".repeat(5000) } },
            "domChanges": { "addedCount": 3, "dropdownOptions": vec!["o"; 500], "urlChanged": "yes" },
            "clientObservations": { "didUrlChange": true, "extra": 1 } }))
        .expect("valid");
        let stored = serde_json::to_string(&r.last_action).expect("json");
        assert!(stored.len() < 10_000, "{}", stored.len());
        let e = r.last_action.error.expect("error");
        assert_eq!(
            e["message"].as_str().map(|m| m.chars().count()),
            Some(1_000)
        );
        assert_eq!(
            (e["code"].as_str(), e["elementId"].as_str()),
            (Some("ELEMENT_NOT_FOUND"), Some("12"))
        );
        assert!(e.get("stack").is_none());
        let res = r.last_action.result.expect("result");
        assert!(res["actualState"]
            .as_str()
            .is_some_and(|s| s.chars().count() == 1_000));
        let ch = r.last_action.dom_changes.expect("changes");
        assert_eq!(ch["dropdownOptions"].as_array().map(Vec::len), Some(50));
        assert!(
            ch.get("urlChanged").is_none(),
            "wrong types are dropped, not refused"
        );
        assert_eq!(
            r.last_action.client_observations,
            Some(json!({ "didUrlChange": true }))
        );
    }

    #[test]
    fn unknown_fields_are_ignored_and_long_names_cut() {
        let r = validate(
            &json!({ "url": "https://a.com/x", "query": " q ", "futureField": {"x": 1},
            "interactiveTree": [{"i": 5, "r": "btn", "n": "n".repeat(300)}] }),
        )
        .expect("valid");
        assert_eq!(r.query, "q");
        let PageInput::Tree(nodes) = r.page else {
            panic!("tree")
        };
        assert_eq!(
            (nodes[0].i.as_str(), nodes[0].n.chars().count()),
            ("5", 100)
        );
    }
}
