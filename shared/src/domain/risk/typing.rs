//! What typing a value into a field risks: a secret field's or a one-time code's value (a
//! number named for a code on a sign-in or payment page) asks the user first, unless the user
//! wrote that value in the task itself together with a word for the field's kind ("log in as
//! ada with password X").

use super::act::Scope;
use super::field::{kind_beside, names_of, Sensitive};
use super::fold::{fold, variants};
use super::lexicon::{hits, Kind};
use super::{label, ElementFacts, Risk, RiskKind, RiskPatterns};

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
