//! Fields that take secrets: passwords, one-time codes, API keys and other credentials, and
//! card details. Known from the input type and `autocomplete` a `dom` page writes, and from
//! every name the field has (label, placeholder, `aria-label`, its `name` and id) in any
//! language of the phrase table; "PIN code" (an Indian postcode) and "Name on card" are not
//! secrets. A value the user wrote in the task itself, together with a word for the field's
//! kind ("log in as ada with password X"), may be typed into such a field without asking again.

use super::act::Scope;
use super::fold::{fold, variants};
use super::lexicon::{hits, Kind};
use super::{label, ElementFacts, Risk, RiskKind, RiskPatterns};

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
fn kind_beside(
    patterns: &RiskPatterns,
    el: &ElementFacts<'_>,
    beside_cards: impl Fn() -> bool,
) -> Option<Sensitive> {
    if el
        .input_type
        .is_some_and(|t| t.eq_ignore_ascii_case("password"))
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
            let hs = hits(patterns.phrases(), &f, |k| {
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

/// Every name of a field: its label, the attributes that name it, and a page's own id for it
/// ("pwd", "card_number"; the extension's numeric ids say nothing).
fn names_of<'e>(el: &'e ElementFacts<'_>) -> Vec<&'e str> {
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

/// Whether `value` typed into `field` is a one-time code: a number of 4 to 10 digits, a field
/// named for a code ("Enter the 6-digit code", "Kod BLIK"), on a sign-in, verification or
/// payment page.
fn one_time_code(scope: &Scope<'_>, field: &ElementFacts<'_>, value: &str) -> bool {
    let digits: Vec<char> = value.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    if !(4..=10).contains(&digits.len()) || !digits.iter().all(char::is_ascii_digit) {
        return false;
    }
    let named = names_of(field).iter().any(|n| {
        variants(n).iter().any(|f| {
            let hs = hits(scope.patterns.phrases(), f, |k| {
                matches!(k, Kind::Code | Kind::NotSecret)
            });
            hs.iter().any(|h| {
                h.kind == Kind::Code && !hs.iter().any(|x| x.kind == Kind::NotSecret && h.within(x))
            })
        })
    });
    named && (scope.page_is(Kind::AuthPage) || scope.page_is(Kind::PayPage))
}

/// What kind of secret typing `value` into `field` types: a secret field's, or a one-time
/// code's.
pub(super) fn sensitive(
    scope: &Scope<'_>,
    field: &ElementFacts<'_>,
    value: &str,
) -> Option<Sensitive> {
    kind_beside(scope.patterns, field, || scope.has_cards())
        .or_else(|| one_time_code(scope, field, value).then_some(Sensitive::Secret))
}

/// The risk of typing `value` into `field`.
pub(super) fn typing(
    scope: &Scope<'_>,
    field: &ElementFacts<'_>,
    value: &str,
    said: &str,
) -> Option<Risk> {
    if value.trim().is_empty() {
        return None;
    }
    let kind = sensitive(scope, field, value)?;
    if given_by_user(scope.patterns, kind, value, said) {
        return None;
    }
    Some(match kind {
        Sensitive::Secret => Risk {
            kind: RiskKind::Credentials,
            what: format!("type a password or code into {}", label(field)),
        },
        Sensitive::Card => Risk {
            kind: RiskKind::Payment,
            what: format!("type card details into {}", label(field)),
        },
    })
}

/// Whether the user's own words hold `value` and name a field of `kind` ("… with password X").
fn given_by_user(patterns: &RiskPatterns, kind: Sensitive, value: &str, said: &str) -> bool {
    let said = fold(said);
    let value = fold(value);
    if value.is_empty() || value.len() > said.len() {
        return false;
    }
    let holds = said
        .plain
        .windows(value.len())
        .any(|w| w == value.plain.as_slice());
    // "password X", or a sign-in the user asked for ("log in as ada / X").
    let names = |k: Kind| match kind {
        Sensitive::Secret => matches!(k, Kind::Secret | Kind::AuthPage),
        Sensitive::Card => k == Kind::Card,
    };
    holds && !hits(patterns.phrases(), &said, names).is_empty()
}
