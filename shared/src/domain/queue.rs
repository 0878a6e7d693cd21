//! The rest of a multi-action answer, kept on the server. A model that fills a form often
//! answers every field and then the submit click at once; the shipping extension cannot run
//! `chainedActions`, so the first action goes out and the others wait in the task. Each later
//! request sends the next one only while it still fits the page the model saw: the previous
//! action did not fail, the page did not navigate away, and the target is still there with
//! the same role and name. Anything else drops what is left and asks the model again.
//!
//! What may wait: form fills (type, tick, select) on different elements, then at most one
//! click, never a risky action or a secret field (the task record would keep the value).

use serde::{Deserialize, Serialize};

use super::facts::{ElementSnapshot, PageFacts};
use super::outcome::ActionKind;
use super::risk::{assess, Context, RiskPatterns, Secrets};

/// Actions kept after the first one of an answer.
pub const MAX_QUEUED: usize = 4;
/// Longest thought kept with the queue.
const THOUGHT_CHARS: usize = 300;

/// One kept action, in the client's grammar, with its target as the model saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Queued {
    pub action: String,
    pub target: ElementSnapshot,
}

/// The actions of one answer still to run, next first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionQueue {
    pub items: Vec<Queued>,
    /// The page the answer was given on.
    pub url: String,
    /// The answer's thought (shown again with each action).
    pub thought: String,
    /// Actions of the answer that went out so far (the first included).
    pub done: usize,
    /// Actions the answer had that the server keeps or ran.
    pub total: usize,
}

/// Why an action of an answer was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// Only fills and one final click wait; a navigation, key, scroll or tool does not.
    Kind,
    /// After the click the page is another page.
    AfterClick,
    /// It was meant to follow an action that does not run.
    AfterDropped,
    SameElement,
    Missing,
    /// Risky, or typed into a secret field: it needs its own answer.
    Risky,
    TooMany,
}

impl Dropped {
    pub fn describe(self) -> &'static str {
        match self {
            Dropped::Kind => "only form fills and one final click run from one answer",
            Dropped::AfterClick => "nothing runs after the click, which may change the page",
            Dropped::AfterDropped => "it was meant to follow an action that does not run",
            Dropped::SameElement => "the element was already used by this answer",
            Dropped::Missing => "its element is not on the page",
            Dropped::Risky => "it needs its own answer (risky, or a secret field)",
            Dropped::TooMany => "too many actions in one answer",
        }
    }
}

fn is_fill(kind: &ActionKind<'_>) -> bool {
    matches!(
        kind,
        ActionKind::SetValue(..)
            | ActionKind::SelectOption(..)
            | ActionKind::Check(_)
            | ActionKind::Uncheck(_)
    )
}

/// The answer's actions after the first one (each with its client string): what the server
/// keeps for later requests, and what it drops (the action, why). The first action is kept
/// only as the head of a form fill: after anything else the rest is dropped.
pub fn plan(
    first: &ActionKind<'_>,
    rest: &[(ActionKind<'_>, String)],
    page: &dyn PageFacts,
    patterns: &RiskPatterns,
) -> (Vec<Queued>, Vec<(String, Dropped)>) {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let mut used: Vec<&str> = first.target().into_iter().collect();
    // Why nothing more waits once something stopped the answer: its click, a refused action,
    // or a first action that is not a fill.
    let mut closed = (!is_fill(first)).then_some(Dropped::Kind);
    let secrets = Secrets::new(patterns, page);
    for (kind, client) in rest {
        let why = if let Some(why) = closed {
            Some(why)
        } else if !is_fill(kind) && !matches!(kind, ActionKind::Click(_)) {
            Some(Dropped::Kind)
        } else if kept.len() >= MAX_QUEUED {
            Some(Dropped::TooMany)
        } else {
            None
        };
        if let Some(why) = why {
            dropped.push((client.clone(), why));
            continue;
        }
        let id = kind.target().unwrap_or_default();
        let Some(target) = page.element(id) else {
            dropped.push((client.clone(), Dropped::Missing));
            continue;
        };
        if used.contains(&id) {
            dropped.push((client.clone(), Dropped::SameElement));
            continue;
        }
        let secret = matches!(kind, ActionKind::SetValue(_, v) if secrets.typed(&target, v));
        if secret || assess(patterns, kind, Some(&target), page, &Context::default()).is_some() {
            dropped.push((client.clone(), Dropped::Risky));
            // What follows a refused action was meant to follow it.
            closed = Some(Dropped::AfterDropped);
            continue;
        }
        used.push(id);
        if matches!(kind, ActionKind::Click(_)) {
            closed = Some(Dropped::AfterClick);
        }
        kept.push(Queued {
            action: client.clone(),
            target: target.snapshot(),
        });
    }
    (kept, dropped)
}

impl ActionQueue {
    /// The queue of an answer given on `url` whose first action just went out.
    pub fn new(items: Vec<Queued>, url: &str, thought: &str) -> Option<Self> {
        (!items.is_empty()).then(|| Self {
            total: items.len() + 1,
            done: 1,
            items,
            url: url.to_owned(),
            thought: crate::text::truncate_chars(thought.trim(), THOUGHT_CHARS),
        })
    }
}

/// Why the next kept action does not go out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The previous action failed.
    Failed,
    /// The page is another page.
    Navigated,
    /// The target is gone, or now another element (role or name).
    Changed(String),
}

impl Stop {
    pub fn describe(&self) -> String {
        match self {
            Stop::Failed => "the previous action failed".into(),
            Stop::Navigated => "the page changed to another address".into(),
            Stop::Changed(id) => format!(
                "element {} is no longer the one you chose",
                crate::text::single_line(id, 40)
            ),
        }
    }
}

/// The next kept action if the waiting ones still fit `page` at `url` (`failed`: the verdict
/// on the previous action).
pub fn next<'q>(
    queue: &'q ActionQueue,
    url: &str,
    page: &dyn PageFacts,
    failed: bool,
) -> Result<&'q Queued, Stop> {
    if failed {
        return Err(Stop::Failed);
    }
    if !same_document(url, &queue.url) {
        return Err(Stop::Navigated);
    }
    // Every waiting target is checked: the model chose them together, on one page.
    for item in &queue.items {
        let want = &item.target;
        match page.element(&want.id) {
            Some(now) if now.role == want.role.as_str() && same_name(&now.name, &want.name) => {}
            _ => return Err(Stop::Changed(want.id.clone())),
        }
    }
    queue.items.first().ok_or(Stop::Failed)
}

/// The document an address names, for telling whether the page changed under the waiting
/// actions: scheme, host, port, path (a trailing slash aside), the query's parameters in any
/// order (`?step=1` and `?step=2` are two pages whose fields may bear the same names) but for
/// tracking ones an analytics script may add, and a fragment that routes a single-page app
/// (`#/cart`, `#!/cart`) — an in-page anchor (`#terms`, which a page may set as a field
/// scrolls into view) is the same page.
fn document_of(url: &str) -> Option<Document> {
    const TRACKING: [&str; 5] = ["gclid", "fbclid", "msclkid", "_gl", "_ga"];
    let u = reqwest::Url::parse(url.trim()).ok()?;
    let mut query: Vec<(String, String)> = u
        .query_pairs()
        .into_owned()
        .filter(|(k, _)| !k.starts_with("utm_") && !TRACKING.contains(&k.as_str()))
        .collect();
    query.sort();
    Some(Document {
        place: format!(
            "{}://{}:{:?}{}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port_or_known_default(),
            u.path().trim_end_matches('/')
        ),
        query,
        route: u
            .fragment()
            .filter(|f| f.starts_with(['/', '!']))
            .map(str::to_owned),
    })
}

/// What [`document_of`] compares.
#[derive(PartialEq)]
struct Document {
    /// Scheme, host, port and path.
    place: String,
    query: Vec<(String, String)>,
    route: Option<String>,
}

/// Whether two addresses name the same document ([`document_of`]; text that is no URL is
/// compared as it is).
fn same_document(a: &str, b: &str) -> bool {
    match (document_of(a), document_of(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Names as snapshots keep them (one line, cut).
fn same_name(now: &str, kept: &str) -> bool {
    crate::text::single_line(now, 100) == kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, signup, FakePage};

    fn form() -> FakePage {
        signup([
            el("5", "btn", "Sign up"),
            el("6", "btn", "Delete my account"),
            el("7", "link", "Help"),
        ])
    }

    fn acts(list: &[(ActionKind<'static>, &str)]) -> Vec<(ActionKind<'static>, String)> {
        list.iter()
            .map(|(k, s)| (k.clone(), (*s).to_owned()))
            .collect()
    }

    #[test]
    fn fills_then_one_click_wait_and_the_rest_is_dropped_with_a_reason() {
        let p = RiskPatterns::default();
        let rest = acts(&[
            (
                ActionKind::SetValue("2", "Lovelace"),
                "setValue(2, \"Lovelace\")",
            ),
            (ActionKind::Check("3"), "check(3)"),
            (ActionKind::Click("5"), "click(5)"),
            (ActionKind::Click("7"), "click(7)"),
        ]);
        let (kept, dropped) = plan(&ActionKind::SetValue("1", "Ada"), &rest, &form(), &p);
        let kept: Vec<&str> = kept.iter().map(|q| q.action.as_str()).collect();
        assert_eq!(kept, ["setValue(2, \"Lovelace\")", "check(3)", "click(5)"]);
        assert_eq!(dropped, [("click(7)".to_owned(), Dropped::AfterClick)]);
    }

    #[test]
    fn risky_secret_missing_repeated_and_non_fill_actions_never_wait() {
        let p = RiskPatterns::default();
        let fill = ActionKind::SetValue("1", "Ada");
        let cases = [
            (ActionKind::SetValue("4", "hunter2"), "pw", Dropped::Risky),
            (ActionKind::Click("6"), "del", Dropped::Risky),
            (ActionKind::SetValue("9", "x"), "gone", Dropped::Missing),
            (
                ActionKind::SetValue("1", "Bob"),
                "again",
                Dropped::SameElement,
            ),
            (ActionKind::Navigate("https://b.com"), "nav", Dropped::Kind),
            (ActionKind::Press("Enter"), "key", Dropped::Kind),
        ];
        for (kind, label, why) in cases {
            let (kept, dropped) = plan(&fill, &acts(&[(kind, label)]), &form(), &p);
            assert!(kept.is_empty(), "{label}");
            assert_eq!(dropped, [(label.to_owned(), why)], "{label}");
        }
        // After a click nothing is kept; after a risky action, neither is what follows it.
        let (kept, _) = plan(
            &ActionKind::Click("5"),
            &acts(&[(ActionKind::SetValue("2", "x"), "s")]),
            &form(),
            &p,
        );
        assert!(kept.is_empty());
        let (kept, _) = plan(
            &fill,
            &acts(&[
                (ActionKind::SetValue("4", "pw"), "pw"),
                (ActionKind::Click("5"), "submit"),
            ]),
            &form(),
            &p,
        );
        assert!(
            kept.is_empty(),
            "the submit was meant to follow the password"
        );
        let many: Vec<_> = ["2", "3"]
            .iter()
            .map(|id| (ActionKind::Check(id), format!("check({id})")))
            .chain((0..5).map(|_| (ActionKind::Click("5"), "click(5)".to_owned())))
            .collect();
        let (kept, _) = plan(&fill, &many, &form(), &p);
        assert!(kept.len() <= MAX_QUEUED);
    }

    #[test]
    fn the_next_action_goes_only_while_the_page_is_the_one_the_model_saw() {
        let p = RiskPatterns::default();
        let (kept, _) = plan(
            &ActionKind::SetValue("1", "Ada"),
            &acts(&[(ActionKind::Click("5"), "click(5)")]),
            &form(),
            &p,
        );
        let q = ActionQueue::new(kept, "https://a.com/signup", "Filling in").expect("queue");
        assert_eq!((q.done, q.total), (1, 2));
        let url = "https://a.com/signup";
        assert_eq!(
            next(&q, url, &form(), false).map(|i| i.action.as_str()),
            Ok("click(5)")
        );
        assert_eq!(next(&q, url, &form(), true), Err(Stop::Failed));
        assert_eq!(
            next(&q, "https://a.com/welcome", &form(), false),
            Err(Stop::Navigated)
        );
        let renamed = FakePage::new(
            url,
            [el("1", "inp", "First name"), el("5", "btn", "Cancel")],
        );
        assert_eq!(
            next(&q, url, &renamed, false),
            Err(Stop::Changed("5".into()))
        );
        // Another page whose fields bear the same names: only its address tells.
        for (then, now) in [
            ("https://a.com/signup?step=1", "https://a.com/signup?step=2"),
            ("https://a.com/signup", "https://a.com/signup?step=2"),
            (
                "https://a.com/signup#/step-1",
                "https://a.com/signup#/step-2",
            ),
            (
                "https://a.com/signup#!/step-1",
                "https://a.com/signup#!/step-2",
            ),
            ("https://a.com/signup", "http://a.com/signup"),
            ("https://a.com/signup", "https://a.com:8443/signup"),
        ] {
            let q = ActionQueue {
                url: then.into(),
                ..q.clone()
            };
            assert_eq!(next(&q, now, &form(), false), Err(Stop::Navigated), "{now}");
            assert!(next(&q, then, &form(), false).is_ok(), "{then}");
        }
        // The same page written another way: a trailing slash, the parameters in another order,
        // the default port; an in-page anchor set or cleared, a tracking parameter added.
        for (then, now) in [
            (
                "https://a.com/signup?a=1&b=2",
                "https://a.com/signup/?b=2&a=1",
            ),
            ("https://a.com/signup", "https://a.com:443/signup"),
            ("https://a.com/signup", "https://a.com/signup#address"),
            ("https://a.com/signup#", "https://a.com/signup"),
            (
                "https://a.com/signup?a=1",
                "https://a.com/signup?a=1&utm_source=x&gclid=7",
            ),
        ] {
            let q = ActionQueue {
                url: then.into(),
                ..q.clone()
            };
            assert!(next(&q, now, &form(), false).is_ok(), "{now}");
        }
        let gone = FakePage::new(url, [el("1", "inp", "First name")]);
        assert!(next(&q, url, &gone, false).is_err());
        let relabelled = FakePage::new(url, [el("5", "link", "Sign up")]);
        assert!(next(&q, url, &relabelled, false).is_err());
    }
}
