//! The risk gate: a classifier of what an action would do. An action is risky when it would
//! pay or buy, delete or do something that cannot be undone, send a message or post, move
//! money, or type credentials or card details — read from the element's role, its names
//! (every spelling folded to one, [`fold`]), its value, the form around it, the page's URL and
//! the phrase table of some thirty languages ([`lexicon`]). Reading and navigating is left
//! alone: links to articles and help pages, options of a list, filters, a composer that only
//! opens. Every action kind that can perform an act is read: click, check and uncheck,
//! selectOption, navigate, Enter or Space on what has the focus, and each item of a chain.
//!
//! A risky action is not returned: the user is asked first, and only an affirmative reply lets
//! exactly that action through, once ([`super::confirm`]). The server enforces this, whatever
//! the page tells the model; the model's own `<Risk>` note adds a question unless it says there
//! is none.

mod act;
mod field;
pub mod fold;
pub mod lexicon;
mod typing;

use serde::{Deserialize, Serialize};

use super::facts::{ElementFacts, PageFacts};
use super::outcome::ActionKind;
use lexicon::{Kind, Phrase};

pub use act::page_asks_for_cards;
pub use field::{field_kind, masked, Sensitive};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskKind {
    Payment,
    Deletion,
    Sending,
    Credentials,
    Transfer,
    /// The model said so.
    Flagged,
}

impl RiskKind {
    fn of(act: lexicon::Act) -> Self {
        match act {
            lexicon::Act::Pay => RiskKind::Payment,
            lexicon::Act::Delete => RiskKind::Deletion,
            lexicon::Act::Send => RiskKind::Sending,
            lexicon::Act::Transfer => RiskKind::Transfer,
        }
    }

    /// What an act of this kind would do, for the question to the user.
    fn would(self) -> &'static str {
        match self {
            RiskKind::Payment => "pay or place an order",
            RiskKind::Deletion => "delete something or do something that cannot be undone",
            RiskKind::Sending => "send or publish something",
            RiskKind::Transfer => "move money",
            RiskKind::Credentials => "type a secret",
            RiskKind::Flagged => "do something risky",
        }
    }
}

/// Phrases an operator adds to the built-in table (`RISK_*_WORDS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RiskPatterns {
    extra: Vec<Phrase>,
}

impl RiskPatterns {
    /// Adds `words` (each a phrase; a `*` ends a stem) to what means `kind`.
    pub fn add(&mut self, kind: RiskKind, words: impl IntoIterator<Item = String>) {
        let kind = match kind {
            RiskKind::Payment => Kind::Act(lexicon::Act::Pay, lexicon::Force::Verb),
            RiskKind::Deletion => Kind::Act(lexicon::Act::Delete, lexicon::Force::Verb),
            RiskKind::Sending => Kind::Act(lexicon::Act::Send, lexicon::Force::Verb),
            RiskKind::Transfer => Kind::Act(lexicon::Act::Transfer, lexicon::Force::Verb),
            RiskKind::Credentials => Kind::Secret,
            RiskKind::Flagged => return,
        };
        self.extra.extend(
            words
                .into_iter()
                .filter_map(|w| Phrase::new(kind, "config", &w)),
        );
    }

    /// The built-in phrases and the added ones.
    fn phrases(&self) -> impl Iterator<Item = &Phrase> + Clone {
        lexicon::builtin().iter().chain(&self.extra)
    }
}

/// Why an action needs the user's confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    pub kind: RiskKind,
    /// What would happen, for the question to the user.
    pub what: String,
}

/// What the gate knows besides the action and its target.
#[derive(Default)]
pub struct Context<'a> {
    /// The element the task's last action left the focus on (Enter and Space act on it).
    pub focus: Option<ElementFacts<'a>>,
    /// What the user wrote (the task and their answers): a value in it may be typed into a
    /// field of the kind it names without asking again.
    pub said: &'a str,
    /// The model's own `<Risk>` note.
    pub flag: Option<&'a str>,
}

/// `"Name"` of an element for a question, or its id.
fn label(target: &ElementFacts<'_>) -> String {
    let name = crate::text::single_line(&target.name, 60);
    if name.is_empty() {
        format!("element {}", target.id)
    } else {
        format!("\"{name}\"")
    }
}

/// Which values typed into a page's fields are secrets: a password, code or card field's, or a
/// one-time code (one per page, so what it learns of the page it learns once).
pub struct Secrets<'a>(act::Scope<'a>);

impl<'a> Secrets<'a> {
    pub fn new(patterns: &'a RiskPatterns, page: &'a dyn PageFacts) -> Self {
        Self(act::Scope::new(patterns, page))
    }

    /// Whether typing `value` into `field` types a secret.
    pub fn typed(&self, field: &ElementFacts<'_>, value: &str) -> bool {
        typing::sensitive(&self.0, field, value).is_some()
    }
}

/// The risk of `action` on `target` on `page`, if any.
pub fn assess(
    patterns: &RiskPatterns,
    action: &ActionKind<'_>,
    target: Option<&ElementFacts<'_>>,
    page: &dyn PageFacts,
    ctx: &Context<'_>,
) -> Option<Risk> {
    let scope = act::Scope::new(patterns, page);
    let found = match (action, target) {
        (ActionKind::SetValue(_, value), Some(t)) => typing::typing(&scope, t, value, ctx.said),
        (ActionKind::Click(_), Some(t)) => scope.element(t, false).map(|kind| Risk {
            kind,
            what: format!("click {} — this would {}", label(t), kind.would()),
        }),
        (ActionKind::Check(_) | ActionKind::Uncheck(_), Some(t)) => {
            scope.element(t, true).map(|kind| Risk {
                kind,
                what: format!("switch {} — this would {}", label(t), kind.would()),
            })
        }
        (ActionKind::SelectOption(id, value), Some(t)) => {
            scope.choice(id, value).map(|kind| Risk {
                kind,
                what: format!(
                    "choose \"{}\" in {} — this would {}",
                    crate::text::single_line(value, 60),
                    label(t),
                    kind.would()
                ),
            })
        }
        (ActionKind::Navigate(url), _) => scope.address(url).map(|kind| Risk {
            kind,
            what: format!(
                "open {} — this would {}",
                crate::text::single_line(url, 120),
                kind.would()
            ),
        }),
        (ActionKind::Press(key), _) => scope.press(key, ctx.focus.as_ref()),
        _ => None,
    };
    found.or_else(|| {
        let note = ctx.flag?;
        (!act::says_none(patterns, note)).then(|| Risk {
            kind: RiskKind::Flagged,
            what: crate::text::single_line(note, 200),
        })
    })
}

#[cfg(test)]
mod tests;
