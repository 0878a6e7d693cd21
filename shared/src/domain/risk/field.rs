//! Fields that take secrets: passwords, one-time codes, API keys and other credentials, and
//! card details. Known from the input type and `autocomplete` a `dom` page writes, and from
//! every name the field has (label, placeholder, `aria-label`, its `name` and id) in any
//! language of the phrase table; "PIN code" (an Indian postcode) and "Name on card" are not
//! secrets. A value the user wrote in the task itself, together with a word for the field's
//! kind ("log in as ada with password X"), may be typed into such a field without asking again.

use super::fold::variants;
use super::lexicon::Kind;
use super::{ElementFacts, RiskPatterns};

/// What a sensitive field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitive {
    /// Passwords, codes, keys: [`RiskKind::Credentials`].
    Secret,
    /// Card details: [`RiskKind::Payment`].
    Card,
}

/// `autocomplete` tokens of secret fields.
const SECRET_AUTOCOMPLETE: &[&str] = &["current-password", "new-password", "one-time-code"];
const CARD_AUTOCOMPLETE: &[&str] = &[
    "cc-number",
    "cc-csc",
    "cc-exp",
    "cc-exp-month",
    "cc-exp-year",
];

/// What kind of secret `el` takes, if any (an expiry date counts as a card's only beside other
/// card fields: see [`kind_beside`]).
pub fn field_kind(patterns: &RiskPatterns, el: &ElementFacts<'_>) -> Option<Sensitive> {
    kind_beside(patterns, el, || false)
}

/// What kind of secret `el` takes, `beside_cards` telling whether the page asks for card
/// details elsewhere (then an expiry date is a card's).
pub(super) fn kind_beside(
    patterns: &RiskPatterns,
    el: &ElementFacts<'_>,
    beside_cards: impl Fn() -> bool,
) -> Option<Sensitive> {
    // A password input, a field the client marks so (`s: "password"`), or one that shows only
    // mask characters.
    let hides = el
        .value
        .as_deref()
        .is_some_and(|v| !v.trim().is_empty() && masked(v));
    if el
        .input_type
        .is_some_and(|t| t.eq_ignore_ascii_case("password"))
        || el.has_state("password")
        || hides
    {
        return Some(Sensitive::Secret);
    }
    if let Some(auto) = el.attr("autocomplete") {
        let auto = auto.to_ascii_lowercase();
        let has = |list: &[&str]| auto.split_whitespace().any(|t| list.contains(&t));
        if has(SECRET_AUTOCOMPLETE) {
            return Some(Sensitive::Secret);
        }
        if has(CARD_AUTOCOMPLETE) {
            return Some(Sensitive::Card);
        }
    }
    let mut found = None;
    for n in names_of(el) {
        for f in variants(n) {
            let hs = patterns.hits(&f, |k| {
                matches!(
                    k,
                    Kind::Secret | Kind::Card | Kind::CardContext | Kind::NotSecret
                )
            });
            let kept = |kind: Kind| {
                hs.iter().any(|h| {
                    h.kind == kind && !hs.iter().any(|n| n.kind == Kind::NotSecret && h.within(n))
                })
            };
            if kept(Kind::Secret) {
                return Some(Sensitive::Secret);
            }
            if kept(Kind::Card) || (kept(Kind::CardContext) && beside_cards()) {
                found = Some(Sensitive::Card);
            }
        }
    }
    found
}

/// A value a page shows in place of one it hides (`••••`).
pub fn masked(value: &str) -> bool {
    value
        .chars()
        .all(|c| matches!(c, '•' | '*' | '●' | '·' | '∙' | '⁕') || c.is_whitespace())
}

/// Every name of a field: its label, the attributes that name it, and a page's own id for it
/// ("pwd", "card_number"; the extension's numeric ids say nothing).
pub(super) fn names_of<'e>(el: &'e ElementFacts<'_>) -> Vec<&'e str> {
    let mut names: Vec<&str> = vec![&el.name];
    for a in ["aria-label", "placeholder", "title", "name", "data-name"] {
        names.extend(el.attr(a));
    }
    if !el.id.chars().all(|c| c.is_ascii_digit()) {
        names.push(el.id);
    }
    names.retain(|n| !n.trim().is_empty());
    names
}
