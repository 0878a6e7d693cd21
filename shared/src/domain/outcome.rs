//! Outcome prediction: what should be true after an action, in terms the next request's page
//! can be checked against (a field's value, an element's state, the URL, a change of the page).
//! Derived from the action and its target; the model may refine the description.

use serde::{Deserialize, Serialize};

use super::facts::{ElementSnapshot, PageFacts};

/// One machine-checkable expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum DomExpectation {
    /// The element's value is this text.
    ValueEquals {
        element_id: String,
        value: String,
    },
    /// The element has (or lacks) a state, e.g. `checked`.
    StateHas {
        element_id: String,
        state: String,
    },
    StateLacks {
        element_id: String,
        state: String,
    },
    /// The page is at this URL.
    UrlIs {
        url: String,
    },
    /// The URL or the content changed.
    PageChanges,
}

/// The prediction for an action: `{ description, domExpectations }` in the contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedOutcome {
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dom_expectations: Vec<DomExpectation>,
    /// The target element as it was when the action was decided (not sent to the client).
    #[serde(default, skip_serializing)]
    pub target: Option<ElementSnapshot>,
}

/// What an action is, as far as prediction and the other rules care.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionKind<'a> {
    Click(&'a str),
    SetValue(&'a str, &'a str),
    SelectOption(&'a str, &'a str),
    Check(&'a str),
    Uncheck(&'a str),
    Navigate(&'a str),
    Press(&'a str),
    GoBack,
    /// Hover, scroll, wait, findText: nothing to check but the absence of an error.
    Passive(Option<&'a str>),
    /// finish, fail, ask_user, server tools: no browser action.
    NotDom,
}

impl ActionKind<'_> {
    /// The element the action is on.
    pub fn target(&self) -> Option<&str> {
        match self {
            ActionKind::Click(id)
            | ActionKind::SetValue(id, _)
            | ActionKind::SelectOption(id, _)
            | ActionKind::Check(id)
            | ActionKind::Uncheck(id) => Some(id),
            ActionKind::Passive(id) => *id,
            _ => None,
        }
    }
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", crate::text::single_line(s, 60))
}

/// The expected outcome of an action on `page` (`None` for actions that do nothing in the
/// browser). `refined` is the model's own description, when it gave one.
pub fn predict(
    action: &ActionKind<'_>,
    page: &dyn PageFacts,
    refined: Option<&str>,
) -> Option<ExpectedOutcome> {
    let target = action.target().and_then(|id| page.element(id));
    let name = target
        .as_ref()
        .map(|t| quoted(&t.name))
        .filter(|n| n != "\"\"")
        .unwrap_or_else(|| "the element".into());
    let id = |s: &str| s.to_owned();
    let (description, dom_expectations) = match action {
        ActionKind::NotDom => return None,
        ActionKind::SetValue(el, v) => (
            format!("{name} contains {}", quoted(v)),
            vec![DomExpectation::ValueEquals {
                element_id: id(el),
                value: (*v).to_owned(),
            }],
        ),
        ActionKind::SelectOption(el, v) => (
            format!("{} is selected in {name}", quoted(v)),
            vec![DomExpectation::ValueEquals {
                element_id: id(el),
                value: (*v).to_owned(),
            }],
        ),
        ActionKind::Check(el) => (
            format!("{name} is checked"),
            vec![DomExpectation::StateHas {
                element_id: id(el),
                state: "checked".into(),
            }],
        ),
        ActionKind::Uncheck(el) => (
            format!("{name} is unchecked"),
            vec![DomExpectation::StateLacks {
                element_id: id(el),
                state: "checked".into(),
            }],
        ),
        ActionKind::Navigate(url) => (
            format!("the browser shows {url}"),
            vec![DomExpectation::UrlIs {
                url: (*url).to_owned(),
            }],
        ),
        ActionKind::Click(_) => {
            let link = target
                .as_ref()
                .is_some_and(|t| t.role == "link" || t.href.is_some());
            (
                if link {
                    format!("clicking {name} opens another page or changes this one")
                } else {
                    format!("clicking {name} changes the page")
                },
                vec![DomExpectation::PageChanges],
            )
        }
        ActionKind::Press(key) => (
            format!("pressing {} changes the page", quoted(key)),
            vec![DomExpectation::PageChanges],
        ),
        ActionKind::GoBack => (
            "the browser shows the previous page".into(),
            vec![DomExpectation::PageChanges],
        ),
        ActionKind::Passive(_) => ("the action completes without an error".into(), Vec::new()),
    };
    Some(ExpectedOutcome {
        description: refined
            .map(|r| crate::text::single_line(r, 200))
            .filter(|r| !r.is_empty())
            .unwrap_or(description),
        dom_expectations,
        target: target.map(|t| t.snapshot()),
    })
}

/// Whether a field showing `shown` holds `typed`, as pages reformat what is typed: case and
/// spacing ("new york" shown as "New York"), the digits of a phone number or an amount
/// ("5551234567" as "(555) 123-4567", "1000" as "1,000"), a value inside a longer label (an
/// option's value "express" shown as "Express (2 days)").
fn same_value(shown: &str, typed: &str) -> bool {
    let fold = |t: &str| crate::text::collapse_ws(t).to_lowercase();
    let (s, t) = (fold(shown), fold(typed));
    if s == t || (!t.is_empty() && s.contains(&t)) {
        return true;
    }
    let digits = |x: &str| x.chars().filter(char::is_ascii_digit).collect::<String>();
    let letters = |x: &str| x.chars().any(char::is_alphabetic);
    let d = digits(typed);
    d.len() >= 3 && !letters(typed) && !letters(shown) && digits(shown) == d
}

/// A password field shows what was typed as one mask character per character.
fn masks(shown: &str, typed: &str) -> bool {
    let typed = typed.trim();
    !typed.is_empty()
        && shown.chars().count() == typed.chars().count()
        && shown
            .chars()
            .all(|c| matches!(c, '•' | '●' | '∗' | '*' | '·'))
}

/// How one expectation fared on the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Met(String),
    Unmet(String),
    /// The page cannot tell (the element is gone, the page did not visibly change).
    Unknown(String),
}

/// What the server knows about the page before the action (stored with the step).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Before<'a> {
    pub url: &'a str,
    pub hash: &'a str,
}

/// Checks each expectation on the current page. `client_changed` is the client's own report
/// that the URL or the DOM changed.
pub fn check(
    expectations: &[DomExpectation],
    before: Option<&Before<'_>>,
    page: &dyn PageFacts,
    client_changed: Option<bool>,
) -> Vec<Check> {
    let normalize = |u: &str| u.trim_end_matches('/').to_owned();
    expectations
        .iter()
        .map(|e| match e {
            DomExpectation::ValueEquals { element_id, value } => match page.element(element_id) {
                None => Check::Unknown(format!("element {element_id} is no longer on the page")),
                Some(el) => {
                    let now = el.value.as_deref().unwrap_or("");
                    if same_value(now, value) {
                        Check::Met(format!("element {element_id} holds {}", quoted(now)))
                    } else if masks(now, value) {
                        Check::Met(format!(
                            "element {element_id} shows a masked value of the typed length"
                        ))
                    } else {
                        Check::Unmet(format!(
                            "element {element_id} holds {} instead of {}",
                            quoted(now),
                            quoted(value)
                        ))
                    }
                }
            },
            DomExpectation::StateHas { element_id, state }
            | DomExpectation::StateLacks { element_id, state } => {
                let want = matches!(e, DomExpectation::StateHas { .. });
                match page.element(element_id) {
                    None => {
                        Check::Unknown(format!("element {element_id} is no longer on the page"))
                    }
                    Some(el) if el.has_state(state) == want => Check::Met(format!(
                        "element {element_id} is {}{state}",
                        if want { "" } else { "not " }
                    )),
                    Some(_) => Check::Unmet(format!(
                        "element {element_id} is {}{state}",
                        if want { "not " } else { "still " }
                    )),
                }
            }
            DomExpectation::UrlIs { url } => {
                if normalize(page.url()) == normalize(url) {
                    Check::Met(format!("the page is {}", page.url()))
                } else if before.is_some_and(|b| normalize(b.url) != normalize(page.url())) {
                    // Redirected elsewhere: the navigation happened.
                    Check::Met(format!("the page moved on to {}", page.url()))
                } else {
                    Check::Unmet(format!("the page is still {}", page.url()))
                }
            }
            DomExpectation::PageChanges => {
                let server_saw = before.map(|b| b.url != page.url() || b.hash != page.hash());
                match (server_saw, client_changed) {
                    (Some(true), _) | (_, Some(true)) => Check::Met("the page changed".into()),
                    _ => Check::Unknown("the page shows no visible change".into()),
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    fn page(url: &str, hash: &str, els: &[(&str, &str, &str, Option<&str>, &str)]) -> FakePage {
        FakePage::new(
            url,
            els.iter().map(|(id, role, name, value, states)| {
                let e = el(id, role, name).states(states);
                match value {
                    Some(v) => e.value(v),
                    None => e,
                }
            }),
        )
        .with_hash(hash)
    }

    #[test]
    fn expectations_follow_the_action() {
        let p = page(
            "https://a.com/",
            "h1",
            &[
                ("4", "inp", "Email", None, ""),
                ("7", "chk", "Agree", None, ""),
            ],
        );
        let set = predict(&ActionKind::SetValue("4", "a@b.c"), &p, None).expect("outcome");
        assert_eq!(set.description, "\"Email\" contains \"a@b.c\"");
        assert_eq!(
            serde_json::to_value(&set).expect("json"),
            serde_json::json!({ "description": "\"Email\" contains \"a@b.c\"",
                "domExpectations": [{ "type": "value_equals", "elementId": "4", "value": "a@b.c" }] })
        );
        assert_eq!(set.target.as_ref().map(|t| t.name.as_str()), Some("Email"));
        let check =
            predict(&ActionKind::Check("7"), &p, Some("The terms are accepted")).expect("o");
        assert_eq!(check.description, "The terms are accepted");
        assert!(predict(&ActionKind::NotDom, &p, None).is_none());
        assert!(predict(&ActionKind::Passive(None), &p, None)
            .expect("o")
            .dom_expectations
            .is_empty());
    }

    #[test]
    fn a_value_the_page_reformats_meets_its_expectation() {
        assert!(same_value("New York", "new york"));
        assert!(same_value("(555) 123-4567", "5551234567"));
        assert!(same_value("1,000", "1000"));
        assert!(same_value("Express (2 days)", "express"));
        assert!(same_value("  a   b ", "a b"));
        // Another value is no match.
        assert!(!same_value("555-123-4568", "5551234567"));
        assert!(!same_value("Boston", "new york"));
        assert!(!same_value("", "x"));
        assert!(!same_value("12", "12a3"));
    }

    #[test]
    fn a_password_field_masking_the_typed_value_meets_its_expectation() {
        let exp = |v: &str| DomExpectation::ValueEquals {
            element_id: "4".into(),
            value: v.into(),
        };
        let after = page("https://a.com/", "h2", &[("4", "inp", "", Some("•••"), "")]);
        assert!(matches!(
            check(&[exp("3hI")], None, &after, None)[0],
            Check::Met(_)
        ));
        // Another length, or a value that is not a mask, is no match.
        assert!(matches!(
            check(&[exp("secret")], None, &after, None)[0],
            Check::Unmet(_)
        ));
        let plain = page("https://a.com/", "h2", &[("4", "inp", "", Some("abc"), "")]);
        assert!(matches!(
            check(&[exp("3hI")], None, &plain, None)[0],
            Check::Unmet(_)
        ));
    }

    #[test]
    fn checks_compare_the_next_page_with_the_expectations() {
        let before = Before {
            url: "https://a.com/",
            hash: "h1",
        };
        let after = page(
            "https://a.com/",
            "h2",
            &[
                ("4", "inp", "Email", Some("a@b.c"), ""),
                ("7", "chk", "Agree", None, ""),
            ],
        );
        let exp = vec![
            DomExpectation::ValueEquals {
                element_id: "4".into(),
                value: "a@b.c".into(),
            },
            DomExpectation::StateHas {
                element_id: "7".into(),
                state: "checked".into(),
            },
            DomExpectation::ValueEquals {
                element_id: "9".into(),
                value: "x".into(),
            },
            DomExpectation::PageChanges,
            DomExpectation::UrlIs {
                url: "https://a.com/next".into(),
            },
        ];
        let got = check(&exp, Some(&before), &after, None);
        assert!(matches!(got[0], Check::Met(_)));
        assert!(matches!(got[1], Check::Unmet(_)));
        assert!(matches!(got[2], Check::Unknown(_)));
        assert!(matches!(got[3], Check::Met(_)), "the hash changed");
        assert!(matches!(got[4], Check::Unmet(_)));
        let same = page("https://a.com/", "h1", &[]);
        assert!(matches!(
            check(
                &[DomExpectation::PageChanges],
                Some(&before),
                &same,
                Some(false)
            )[0],
            Check::Unknown(_)
        ));
        assert!(matches!(
            check(
                &[DomExpectation::PageChanges],
                Some(&before),
                &same,
                Some(true)
            )[0],
            Check::Met(_)
        ));
    }
}
