//! Self-correction after a failed verification: the strategy for the failure, and — when the
//! page decides it — the corrected action itself, so no model call is needed. At most
//! [`MAX_ATTEMPTS`] corrections per plan step; then the task stops or asks the user.

use serde::{Deserialize, Serialize};

use super::facts::{mentions_any, ElementSnapshot, PageFacts};
use super::outcome::ActionKind;
use crate::text::quote;

/// Corrections tried on one plan step before giving up.
pub const MAX_ATTEMPTS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Strategy {
    /// Another element with the same role and name.
    AlternativeSelector,
    /// Wait, then try again (timeouts, a page still loading).
    RetryWithDelay,
    /// Another way to the same effect (the link's URL, an option chosen instead of clicked).
    AlternativeTool,
    /// Look for the target (scroll, find its text).
    GatherInformation,
    /// The plan does not work: make a new one from the current page.
    UpdatePlan,
}

/// What to do after a failure.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Correct {
        strategy: Strategy,
        reason: String,
        /// The corrected action when the rules can tell it (client grammar).
        action: Option<String>,
    },
    /// Too many attempts on this step.
    GiveUp { reason: String },
}

/// The failure being corrected.
#[derive(Debug, Clone)]
pub struct Failure<'a> {
    pub action: ActionKind<'a>,
    /// The target as it was when the action was decided.
    pub target: Option<&'a ElementSnapshot>,
    /// The client's error code (`ELEMENT_NOT_FOUND`, `TIMEOUT`, ...).
    pub code: Option<&'a str>,
    pub message: Option<&'a str>,
    /// Corrections already tried on the current plan step.
    pub attempts: u32,
}

/// Words that name a form's submit button.
const SUBMIT_WORDS: &[&str] = &[
    "submit",
    "search",
    "go",
    "send",
    "continue",
    "next",
    "ok",
    "find",
    "login",
    "log in",
    "sign in",
    "suchen",
    "senden",
    "weiter",
    "rechercher",
    "envoyer",
    "continuer",
    "buscar",
    "enviar",
    "continuar",
    "cerca",
    "invia",
    "zoeken",
    "verzenden",
];

/// The same action, on another element.
fn retarget(action: &ActionKind<'_>, id: &str) -> Option<String> {
    Some(match action {
        ActionKind::Click(_) => format!("click({id})"),
        ActionKind::SetValue(_, v) => format!("setValue({id}, {})", quote(v)?),
        ActionKind::SelectOption(_, v) => format!("selectOption({id}, {})", quote(v)?),
        ActionKind::Check(_) => format!("check({id})"),
        ActionKind::Uncheck(_) => format!("uncheck({id})"),
        _ => return None,
    })
}

/// An absolute http(s) URL for `href` on a page at `base`.
fn absolute(href: &str, base: &str) -> Option<String> {
    let url = reqwest::Url::parse(base).ok()?.join(href).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

/// The correction for `failure` on the current page.
pub fn choose(failure: &Failure<'_>, page: &dyn PageFacts) -> Choice {
    if failure.attempts >= MAX_ATTEMPTS {
        return Choice::GiveUp {
            reason: format!("{MAX_ATTEMPTS} corrections of this step did not work"),
        };
    }
    let correct = |strategy, reason: String, action| Choice::Correct {
        strategy,
        reason,
        action,
    };
    let timeout = failure
        .code
        .is_some_and(|c| c.eq_ignore_ascii_case("TIMEOUT"))
        || failure
            .message
            .is_some_and(|m| mentions_any(m, &["timeout", "timed out", "loading"]));
    if timeout {
        return correct(
            Strategy::RetryWithDelay,
            "the page was still loading".into(),
            Some("wait(2)".into()),
        );
    }
    if failure.attempts + 1 >= MAX_ATTEMPTS {
        return correct(
            Strategy::UpdatePlan,
            "this step failed repeatedly; the plan needs another way".into(),
            None,
        );
    }
    let Some(target) = failure.target else {
        return correct(
            Strategy::AlternativeSelector,
            "the action did not have the expected effect".into(),
            None,
        );
    };
    if page.element(&target.id).is_none() {
        // The element is gone: the same role and name elsewhere, else look for it.
        let twin = page.elements().find(|e| {
            e.id != target.id
                && !target.name.is_empty()
                && e.role == target.role.as_str()
                && e.name.trim().eq_ignore_ascii_case(target.name.trim())
        });
        if let Some(twin) = twin {
            return correct(
                Strategy::AlternativeSelector,
                format!(
                    "element {} is gone; {} has the same role and name",
                    target.id, twin.id
                ),
                retarget(&failure.action, twin.id),
            );
        }
        let action = if target.name.trim().is_empty() {
            Some("scroll(true, 1)".into())
        } else {
            quote(&crate::text::single_line(&target.name, 60)).map(|q| format!("findText({q})"))
        };
        return correct(
            Strategy::GatherInformation,
            format!("element {} is not on the page", target.id),
            action,
        );
    }
    if let ActionKind::Click(_) = failure.action {
        if let Some(url) = target.href.as_deref().and_then(|h| absolute(h, page.url())) {
            return correct(
                Strategy::AlternativeTool,
                "the link did not open; going to its address".into(),
                quote(&url).map(|q| format!("navigate({q})")),
            );
        }
        // Not Enter: the shipping extension's key press carries no key code and submits
        // nothing, and with a client where it works it would submit the form a second time.
        if target.role == "btn" && mentions_any(&target.name, SUBMIT_WORDS) {
            return correct(
                Strategy::AlternativeTool,
                "the button did not submit: a required field may be empty or invalid, or another control submits the form".into(),
                None,
            );
        }
        if target.role == "sel" {
            return correct(
                Strategy::AlternativeTool,
                "clicking the list did not choose; select the option instead".into(),
                None,
            );
        }
    }
    correct(
        Strategy::AlternativeSelector,
        "the action did not have the expected effect".into(),
        None,
    )
}

/// The correction record: `{ stepIndex, strategy, reason, attemptNumber, originalStep?,
/// correctedStep?, timestamp }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Correction {
    pub step_index: u32,
    pub strategy: Strategy,
    pub reason: String,
    pub attempt_number: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected_step: Option<String>,
    pub timestamp: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    /// A page of the cart with `(id, role, name)` elements.
    fn cart(els: Vec<(&str, &str, &str)>) -> FakePage {
        FakePage::new(
            "https://shop.example.com/cart",
            els.into_iter().map(|(id, role, name)| el(id, role, name)),
        )
    }

    fn snap(id: &str, role: &str, name: &str, href: Option<&str>) -> ElementSnapshot {
        ElementSnapshot {
            id: id.into(),
            role: role.into(),
            name: name.into(),
            value: None,
            states: String::new(),
            href: href.map(Into::into),
        }
    }

    fn failure<'a>(action: ActionKind<'a>, target: &'a ElementSnapshot) -> Failure<'a> {
        Failure {
            action,
            target: Some(target),
            code: None,
            message: None,
            attempts: 0,
        }
    }

    fn strategy(c: &Choice) -> (Strategy, Option<&str>) {
        match c {
            Choice::Correct {
                strategy, action, ..
            } => (*strategy, action.as_deref()),
            Choice::GiveUp { .. } => panic!("gave up"),
        }
    }

    #[test]
    fn each_failure_gets_its_strategy() {
        let page = cart(vec![
            ("20", "btn", "Add to cart"),
            ("21", "btn", "Search"),
            ("22", "sel", "Size"),
        ]);
        // Gone, with a twin of the same role and name.
        let gone = snap("9", "btn", "Add to cart", None);
        assert_eq!(
            strategy(&choose(&failure(ActionKind::Click("9"), &gone), &page)),
            (Strategy::AlternativeSelector, Some("click(20)"))
        );
        // Gone without a twin: look for it.
        let lost = snap("9", "btn", "Checkout", None);
        assert_eq!(
            strategy(&choose(&failure(ActionKind::Click("9"), &lost), &page)),
            (Strategy::GatherInformation, Some("findText(\"Checkout\")"))
        );
        // A timeout: wait and retry.
        let mut slow = failure(ActionKind::Click("21"), &gone);
        slow.code = Some("TIMEOUT");
        assert_eq!(
            strategy(&choose(&slow, &page)),
            (Strategy::RetryWithDelay, Some("wait(2)"))
        );
        // A submit button that did nothing: the model looks for why (never Enter).
        let search = snap("21", "btn", "Search", None);
        assert_eq!(
            strategy(&choose(&failure(ActionKind::Click("21"), &search), &page)),
            (Strategy::AlternativeTool, None)
        );
        // A link that did not open: its address.
        let link = snap("22", "link", "Size", Some("/sizes?x=1"));
        assert_eq!(
            strategy(&choose(&failure(ActionKind::Click("22"), &link), &page)),
            (
                Strategy::AlternativeTool,
                Some("navigate(\"https://shop.example.com/sizes?x=1\")")
            )
        );
        // A list clicked: the model selects the option.
        let list = snap("22", "sel", "Size", None);
        assert_eq!(
            strategy(&choose(&failure(ActionKind::Click("22"), &list), &page)),
            (Strategy::AlternativeTool, None)
        );
        // Otherwise another element, chosen by the model.
        let other = snap("20", "btn", "Add to cart", None);
        assert_eq!(
            strategy(&choose(&failure(ActionKind::Click("20"), &other), &page)),
            (Strategy::AlternativeSelector, None)
        );
    }

    #[test]
    fn repeated_failures_replan_then_give_up() {
        let page = cart(vec![("20", "btn", "Add to cart")]);
        let t = snap("20", "btn", "Add to cart", None);
        let mut f = failure(ActionKind::Click("20"), &t);
        f.attempts = 2;
        assert_eq!(strategy(&choose(&f, &page)), (Strategy::UpdatePlan, None));
        f.attempts = 3;
        assert!(matches!(choose(&f, &page), Choice::GiveUp { .. }));
    }

    #[test]
    fn corrected_values_keep_the_typed_text() {
        let page = cart(vec![("30", "inp", "Email")]);
        let t = snap("5", "inp", "Email", None);
        assert_eq!(
            strategy(&choose(
                &failure(ActionKind::SetValue("5", "a'b\"c"), &t),
                &page
            )),
            (
                Strategy::AlternativeSelector,
                Some("setValue(30, `a'b\"c`)")
            )
        );
        let json = serde_json::to_value(Strategy::AlternativeSelector).expect("json");
        assert_eq!(json, "ALTERNATIVE_SELECTOR");
    }
}
