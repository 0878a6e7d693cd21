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
pub mod shape;
mod typing;

use serde::{Deserialize, Serialize};

use super::facts::{ElementFacts, PageFacts};
use super::outcome::ActionKind;
use fold::Folded;
use lexicon::{Hit, Kind, Phrase, Phrases};

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
    /// Sharing with someone or with everyone, granting access, changing a member's role.
    Sharing,
    /// Changing how the account is protected.
    Security,
    /// Starting a recurring charge.
    Subscription,
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
            lexicon::Act::Share => RiskKind::Sharing,
            lexicon::Act::Secure => RiskKind::Security,
            lexicon::Act::Subscribe => RiskKind::Subscription,
        }
    }

    /// The kind a model names in its declared effect (`commit:payment`), if it is one.
    pub fn named(name: &str) -> Option<Self> {
        let n = name.trim().to_ascii_lowercase();
        Some(match n.trim_end_matches('s') {
            "payment" | "pay" | "purchase" | "order" | "buy" => RiskKind::Payment,
            "deletion" | "delete" | "remove" | "irreversible" => RiskKind::Deletion,
            "sending" | "send" | "message" | "post" | "publish" => RiskKind::Sending,
            "credential" | "secret" | "password" => RiskKind::Credentials,
            "transfer" | "money" => RiskKind::Transfer,
            "sharing" | "share" | "permission" | "access" => RiskKind::Sharing,
            "security" | "account" => RiskKind::Security,
            "subscription" | "subscribe" | "recurring" => RiskKind::Subscription,
            _ => return None,
        })
    }

    /// What an act of this kind would do, for the question to the user.
    fn would(self) -> &'static str {
        match self {
            RiskKind::Payment => "pay or place an order",
            RiskKind::Deletion => "delete something or do something that cannot be undone",
            RiskKind::Sending => "send or publish something",
            RiskKind::Transfer => "move money",
            RiskKind::Credentials => "type a secret",
            RiskKind::Sharing => "share something or give someone access",
            RiskKind::Security => "change how your account is protected",
            RiskKind::Subscription => "start a subscription or a recurring charge",
            RiskKind::Flagged => "do something risky",
        }
    }
}

/// Phrases an operator adds to the built-in table (`RISK_*_WORDS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RiskPatterns {
    extra: Phrases,
}

impl RiskPatterns {
    /// Adds `words` (each a phrase; a `*` ends a stem) to what means `kind`.
    pub fn add(&mut self, kind: RiskKind, words: impl IntoIterator<Item = String>) {
        let kind = match kind {
            RiskKind::Payment => Kind::Act(lexicon::Act::Pay, lexicon::Force::Verb),
            RiskKind::Deletion => Kind::Act(lexicon::Act::Delete, lexicon::Force::Verb),
            RiskKind::Sending => Kind::Act(lexicon::Act::Send, lexicon::Force::Verb),
            RiskKind::Transfer => Kind::Act(lexicon::Act::Transfer, lexicon::Force::Verb),
            RiskKind::Sharing => Kind::Act(lexicon::Act::Share, lexicon::Force::Verb),
            RiskKind::Security => Kind::Act(lexicon::Act::Secure, lexicon::Force::Verb),
            RiskKind::Subscription => Kind::Act(lexicon::Act::Subscribe, lexicon::Force::Verb),
            RiskKind::Credentials => Kind::Secret,
            RiskKind::Flagged => return,
        };
        self.extra.extend(
            words
                .into_iter()
                .filter_map(|w| Phrase::new(kind, "config", &w)),
        );
    }

    /// The hits in `text` of the built-in phrases, then the added ones, then the acts written in
    /// two parts, whose kind `want`s.
    fn hits(&self, text: &Folded, want: impl Fn(Kind) -> bool + Copy) -> Vec<Hit> {
        let mut out = lexicon::builtin().hits(text, want);
        out.extend(self.extra.hits(text, want));
        out.extend(lexicon::builtin().composed(text, want));
        out
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
    /// The element the task's last action left the focus on: Enter and Space act on it, and a
    /// terse "Continue" agrees to the choice it made.
    pub focus: Option<ElementFacts<'a>>,
    /// What the user wrote (the task and their answers): a value in it may be typed into a
    /// field of the kind it names without asking again.
    pub said: &'a str,
    /// The model's own `<Risk>` note.
    pub flag: Option<&'a str>,
    /// What the model declared the action does (`<Effect>`).
    pub effect: Option<Effect>,
    /// The page's title (`pageTitle`): with the URL and the dialog or form around it, it tells
    /// what a terse "OK" or "Confirm" commits.
    pub title: Option<&'a str>,
}

/// What a model declares its action does (`<Effect>read|navigate|input|change|commit:<kind>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "effect", content = "kind")]
pub enum Effect {
    Read,
    Navigate,
    Input,
    /// A change the user can undo (add to cart, a filter, a draft).
    Change,
    /// An act that cannot simply be undone; its kind when the model named one.
    Commit(Option<RiskKind>),
}

impl Effect {
    /// Reads a model's `<Effect>` leniently: the first word decides, `commit` may name its
    /// kind after `:`, `-`, `/` or a space; anything else is no declaration.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        let (head, rest) = t
            .split_once([':', '-', '/', ' ', '(', '='])
            .unwrap_or((t.as_str(), ""));
        let rest = rest.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        Some(match head.trim() {
            "read" | "reading" | "none" => Effect::Read,
            "navigate" | "navigation" | "open" => Effect::Navigate,
            "input" | "type" | "typing" | "fill" => Effect::Input,
            "change" | "reversible" => Effect::Change,
            "commit" | "irreversible" => Effect::Commit(RiskKind::named(rest)),
            other => Effect::Commit(Some(RiskKind::named(other)?)),
        })
    }
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
    let scope = act::Scope::new(patterns, page).titled(ctx.title);
    let found = match (action, target) {
        (ActionKind::SetValue(_, value), Some(t)) => typing::typing(&scope, t, value, ctx.said),
        (ActionKind::Click(_), Some(t)) => (scope.element(t, false, None))
            .or_else(|| scope.commits_choice(t, ctx.focus.as_ref()?, ctx.said))
            .map(|kind| Risk {
                kind,
                what: format!("click {} — this would {}", label(t), kind.would()),
            }),
        (ActionKind::Check(_) | ActionKind::Uncheck(_), Some(t)) => {
            let on = matches!(action, ActionKind::Check(_));
            scope.element(t, true, Some(on)).map(|kind| Risk {
                kind,
                what: format!("switch {} — this would {}", label(t), kind.would()),
            })
        }
        (ActionKind::SelectOption(_, value), Some(t)) => scope.choice(t, value).map(|kind| Risk {
            kind,
            what: format!(
                "choose \"{}\" in {} — this would {}",
                crate::text::single_line(value, 60),
                label(t),
                kind.would()
            ),
        }),
        (ActionKind::Navigate(url), _) => scope.address(url, true).map(|kind| Risk {
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
    // A form sent on another site than the user named, with a secret in it.
    let sends = match (action, target) {
        (ActionKind::Click(_), Some(t)) => scope.sends_form(t),
        (ActionKind::Press(key), _) => {
            key.trim().eq_ignore_ascii_case("enter")
                && ctx.focus.as_ref().is_some_and(|f| scope.sends_form(f))
        }
        _ => false,
    };
    let found = found.or_else(|| {
        sends
            .then(|| typing::sent_elsewhere(&scope, ctx.said))
            .flatten()
    });
    found
        .or_else(|| {
            let note = ctx.flag?;
            (!act::says_none(patterns, note)).then(|| Risk {
                kind: RiskKind::Flagged,
                what: crate::text::single_line(note, 200),
            })
        })
        .or_else(|| declared(action, target, ctx.effect?))
}

/// The question for a commit the model declared (and the gate did not find itself).
fn declared(
    action: &ActionKind<'_>,
    target: Option<&ElementFacts<'_>>,
    effect: Effect,
) -> Option<Risk> {
    let Effect::Commit(kind) = effect else {
        return None;
    };
    let acts = matches!(
        action,
        ActionKind::Click(_)
            | ActionKind::SetValue(..)
            | ActionKind::SelectOption(..)
            | ActionKind::Check(_)
            | ActionKind::Uncheck(_)
            | ActionKind::Navigate(_)
            | ActionKind::Press(_)
    );
    if !acts {
        return None;
    }
    let kind = kind.unwrap_or(RiskKind::Flagged);
    let what = match (action, target) {
        (ActionKind::Navigate(url), _) => {
            format!("open {}", crate::text::single_line(url, 120))
        }
        (_, Some(t)) => format!("act on {}", label(t)),
        _ => "act".to_owned(),
    };
    Some(Risk {
        kind,
        what: format!("{what} — the agent says this would {}", kind.would()),
    })
}

#[cfg(test)]
mod tests;
