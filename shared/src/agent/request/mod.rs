//! The `POST /api/agent/interact` request: read by its derived wire type ([`wire::Wire`], which
//! never fails on a field), then validated by pure rules that name every problem
//! (`interactiveTree[3].i`, `query`, ...). Unknown fields are ignored.

mod fields;
mod reports;
mod wire;

use serde_json::Value;

use super::page::Nodes;
use crate::error::Error;
use crate::text::truncate_chars;
use fields::{one_of, string, uuid, Field, Problems, Report};
use reports::{report, DOM_CHANGES_FIELDS, ERROR_FIELDS, OBSERVATION_FIELDS, RESULT_FIELDS};
use wire::{TreeField, Wire, MAX_NODE_PROBLEMS};

/// Longest `dom` accepted, in characters.
pub const MAX_DOM_CHARS: usize = 500_000;
/// Longest `query`, in characters.
pub const MAX_QUERY_CHARS: usize = 10_000;

/// The page as sent.
#[derive(Debug, Clone, PartialEq)]
pub enum PageInput {
    Tree {
        nodes: Nodes,
        /// The tree's JSON as sent (kept as the step's page snapshot).
        sent: String,
    },
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
    /// `screenshot`: the visible part of the page as base64 (data-URL prefix removed), when it
    /// is an image of at most [`MAX_SCREENSHOT_CHARS`]; a larger one is not kept.
    pub screenshot: Option<String>,
    /// What the client says it runs beyond the shipping extension's answers.
    pub capabilities: Capabilities,
}

/// What a client runs beyond the answers the shipping extension can (`clientCapabilities`, an
/// array of names; names the server does not know are ignored). The shipping extension sends
/// none, so everything here is off for it: each is an answer shape it was measured to fail on
/// (`../shared/CONTRACT.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// `serverRounds`: a round the server spent on its own work (a server tool, a refused
    /// answer, the step's deadline, the token budget) carries `toolAction { toolType: "SERVER" }`
    /// and the client calls again without acting. Without it the round is an ordinary
    /// `wait(1)` with the thought: the shipping extension throws on a SERVER `toolAction`.
    pub server_rounds: bool,
    /// `chainedActions`: the client runs `chainedActions` (with `CHAINED_ACTIONS=on`). Without
    /// it an answer's further actions wait on the server and go out one per request: the
    /// shipping extension fails a chain's first item and stops.
    pub chained_actions: bool,
}

/// Most names of `clientCapabilities` read (later ones are ignored, as unknown names are), and
/// the longest name.
const MAX_CAPABILITIES: usize = 32;
const MAX_CAPABILITY_CHARS: usize = 64;

impl Capabilities {
    /// Every capability (a client that runs every answer shape the server has).
    pub const ALL: [&'static str; 2] = ["serverRounds", "chainedActions"];

    fn read(field: Field<Vec<Value>>, p: &mut Problems) -> Self {
        let mut caps = Self::default();
        let name = "clientCapabilities";
        let Some(items) = field.value(name, "must be an array of names", p) else {
            return caps;
        };
        for (k, item) in items.iter().enumerate().take(MAX_CAPABILITIES) {
            match item.as_str() {
                Some(name) if name.chars().count() <= MAX_CAPABILITY_CHARS => match name {
                    "serverRounds" => caps.server_rounds = true,
                    "chainedActions" => caps.chained_actions = true,
                    _ => {}
                },
                _ => p.add(
                    format!("clientCapabilities[{k}]"),
                    format!("must be a name of at most {MAX_CAPABILITY_CHARS} characters"),
                ),
            }
        }
        caps
    }
}

/// Longest screenshot kept (base64 characters, about 1.1 MB of image).
pub const MAX_SCREENSHOT_CHARS: usize = 1_500_000;

/// The screenshot's base64 when it is a JPEG, PNG or WebP image within the bound; `Err` when
/// it is not base64 of an image, `Ok(None)` when it is too large to keep.
fn screenshot(raw: &str) -> Result<Option<String>, &'static str> {
    use base64::Engine;
    let b64 = raw
        .trim()
        .split_once(";base64,")
        .filter(|(head, _)| head.starts_with("data:image/"))
        .map_or(raw.trim(), |(_, b)| b);
    if b64.is_empty() {
        return Ok(None);
    }
    if b64.len() > MAX_SCREENSHOT_CHARS {
        return Ok(None);
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| "must be a base64 image or null")?;
    let image = bytes.starts_with(&[0xFF, 0xD8, 0xFF])
        || bytes.starts_with(b"\x89PNG")
        || (bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP"));
    if !image {
        return Err("must be a JPEG, PNG or WebP image (base64) or null");
    }
    Ok(Some(b64.to_owned()))
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

/// Validates a parsed JSON body (written out and read as a raw body is: one set of rules).
pub fn validate(body: &Value) -> Result<InteractRequest, Error> {
    if !body.is_object() {
        return Err(Error::field("body", "must be a JSON object"));
    }
    let text = serde_json::to_vec(body).unwrap_or_default();
    read(&text).unwrap_or_else(|| Err(Error::field("body", "must be a JSON object")))
}

/// Reads and validates a raw body (the tree's nodes checked as they are read); `None` when it
/// is not a JSON object — the caller's JSON reader then names the problem.
pub fn read(bytes: &[u8]) -> Option<Result<InteractRequest, Error>> {
    wire::wire(bytes).map(check)
}

/// The validation pass: each field's rules, every problem named.
fn check(w: Wire) -> Result<InteractRequest, Error> {
    let mut p = Problems(Vec::new());
    let url = required(w.url, "url", &mut p).and_then(|u| {
        let kept = page_url(&u);
        if kept.is_none() {
            p.add("url", "must be an absolute URL of at most 4096 characters");
        }
        kept
    });
    let query = required(w.query, "query", &mut p).and_then(|q| query_text(&q, &mut p));
    let tree = tree(w.interactive_tree, &mut p);
    let dom = string(w.dom, "dom", &mut p);
    if dom
        .as_ref()
        .is_some_and(|d| d.chars().count() > MAX_DOM_CHARS)
    {
        p.add("dom", format!("must be at most {MAX_DOM_CHARS} characters"));
    }
    let page = page(tree, dom, &mut p);
    let dom_mode = one_of(
        w.dom_mode,
        "domMode",
        &["semantic", "skeleton", "hybrid", "full"],
        &mut p,
    );
    let task_id = uuid(w.task_id, "taskId", &mut p);
    let session_id = uuid(w.session_id, "sessionId", &mut p);
    let statuses = ["success", "failure", "pending"];
    let last_action = LastAction {
        status: one_of(w.last_action_status, "lastActionStatus", &statuses, &mut p),
        error: report(w.last_action_error, "lastActionError", ERROR_FIELDS, &mut p),
        result: report(
            w.last_action_result,
            "lastActionResult",
            RESULT_FIELDS,
            &mut p,
        ),
        dom_changes: report(w.dom_changes, "domChanges", DOM_CHANGES_FIELDS, &mut p),
        client_observations: report(
            w.client_observations,
            "clientObservations",
            OBSERVATION_FIELDS,
            &mut p,
        ),
    };
    let page_title =
        string(w.page_title, "pageTitle", &mut p).map(|t| truncate_chars(t.trim(), 300));
    let viewport = viewport(w.viewport, &mut p);
    let shot = w
        .screenshot
        .value("screenshot", "must be a base64 image or null", &mut p)
        .and_then(|raw| {
            screenshot(&raw)
                .inspect_err(|why| p.add("screenshot", *why))
                .ok()
                .flatten()
        });
    let capabilities = Capabilities::read(w.client_capabilities, &mut p);

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
            screenshot: shot,
            capabilities,
        }),
        _ => Err(Error::Validation(p.0)),
    }
}

/// A string field the request cannot do without.
fn required(field: Field<String>, name: &str, p: &mut Problems) -> Option<String> {
    if field.missing() {
        p.add(name, "is required");
        return None;
    }
    string(field, name, p)
}

/// The instruction: trimmed, not empty, within its bound.
fn query_text(q: &str, p: &mut Problems) -> Option<String> {
    let q = q.trim();
    if q.is_empty() {
        p.add("query", "must not be empty");
        None
    } else if q.chars().count() > MAX_QUERY_CHARS {
        let problem = format!("must be at most {MAX_QUERY_CHARS} characters");
        p.add("query", problem);
        None
    } else {
        Some(q.to_owned())
    }
}

/// The tree's nodes and text as sent, its nodes' problems named.
fn tree(field: TreeField, p: &mut Problems) -> Option<(Nodes, String)> {
    match field {
        TreeField::Absent => None,
        TreeField::NotArray => {
            p.add("interactiveTree", "must be an array of nodes");
            None
        }
        TreeField::Nodes {
            nodes,
            bad,
            problems,
            sent,
        } => {
            p.0.extend(problems);
            if bad > MAX_NODE_PROBLEMS {
                let problem =
                    format!("{bad} nodes are invalid; the first {MAX_NODE_PROBLEMS} are listed");
                p.add("interactiveTree", problem);
            }
            Some((nodes, sent))
        }
    }
}

/// The page: a non-empty tree, else a non-empty dom within its bound; one of them is required
/// unless a problem with either was named already.
fn page(tree: Option<(Nodes, String)>, dom: Option<String>, p: &mut Problems) -> Option<PageInput> {
    let page = match (tree, dom) {
        (Some((nodes, sent)), _) if !nodes.is_empty() => Some(PageInput::Tree { nodes, sent }),
        (_, Some(d)) if !d.trim().is_empty() && d.chars().count() <= MAX_DOM_CHARS => {
            Some(PageInput::Dom(d))
        }
        _ => None,
    };
    let named =
        |x: &crate::error::FieldProblem| x.field.starts_with("interactiveTree") || x.field == "dom";
    if page.is_none() && !p.0.iter().any(named) {
        p.add(
            "interactiveTree",
            "a non-empty interactiveTree or dom is required",
        );
    }
    page
}

/// The viewport: `{ width, height }`, both positive numbers.
fn viewport(field: Report, p: &mut Problems) -> Option<(f64, f64)> {
    let v = field.value("viewport", "must be an object", p)?;
    let side = |k: &str| v.get(k).and_then(Value::as_f64).filter(|x| *x > 0.0);
    let sides = side("width").zip(side("height"));
    if sides.is_none() {
        p.add(
            "viewport",
            "must be { width, height } with positive numbers",
        );
    }
    sides
}

#[cfg(test)]
mod tests;
