//! The risk gate. An action is risky when what it acts on (role, name, value, the page's URL)
//! or the model itself says it pays, buys, deletes, sends a message or credentials, or types
//! into a password or card field. A risky action is not returned: the user is asked first, and
//! only an affirmative reply lets exactly that action through, once. Enforced by the server,
//! whatever the page tells the model.

use serde::{Deserialize, Serialize};

use super::facts::{mentions_any, ElementFacts, PageFacts};
use super::outcome::ActionKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskKind {
    Payment,
    Deletion,
    Sending,
    Credentials,
    /// The model said so.
    Flagged,
}

/// Word lists of the gate (lower case; matched as whole words or phrases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiskPatterns {
    pub payment: Vec<String>,
    pub deletion: Vec<String>,
    pub sending: Vec<String>,
    pub credentials: Vec<String>,
    pub card: Vec<String>,
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

impl Default for RiskPatterns {
    /// English, German, French, Spanish, Portuguese, Italian and Dutch.
    fn default() -> Self {
        Self {
            payment: words(&[
                "pay",
                "pay now",
                "buy",
                "buy now",
                "purchase",
                "place order",
                "place your order",
                "confirm order",
                "complete order",
                "submit order",
                "complete purchase",
                "subscribe",
                "donate",
                "book now",
                "bezahlen",
                "jetzt kaufen",
                "kaufen",
                "zahlungspflichtig bestellen",
                "bestellen",
                "payer",
                "acheter",
                "commander",
                "valider la commande",
                "pagar",
                "comprar",
                "realizar pedido",
                "finalizar compra",
                "paga",
                "acquista",
                "ordina",
                "betalen",
                "kopen",
                "bestellen en betalen",
            ]),
            deletion: words(&[
                "delete",
                "remove",
                "erase",
                "destroy",
                "close account",
                "delete account",
                "cancel subscription",
                "unsubscribe",
                "löschen",
                "entfernen",
                "supprimer",
                "eliminar",
                "borrar",
                "excluir",
                "apagar",
                "elimina",
                "cancella",
                "verwijderen",
            ]),
            sending: words(&[
                "send",
                "post",
                "publish",
                "reply",
                "tweet",
                "transfer",
                "senden",
                "absenden",
                "veröffentlichen",
                "überweisen",
                "envoyer",
                "publier",
                "enviar",
                "publicar",
                "transferir",
                "invia",
                "pubblica",
                "verzenden",
                "versturen",
                "plaatsen",
            ]),
            credentials: words(&[
                "password",
                "passcode",
                "pin",
                "passwort",
                "kennwort",
                "mot de passe",
                "contraseña",
                "senha",
                "wachtwoord",
                "one-time code",
                "verification code",
                "security code",
            ]),
            card: words(&[
                "card number",
                "credit card",
                "debit card",
                "cvv",
                "cvc",
                "cvv2",
                "expiry",
                "expiration",
                "iban",
                "kartennummer",
                "kreditkarte",
                "prüfziffer",
                "numéro de carte",
                "carte bancaire",
                "número de tarjeta",
                "tarjeta",
                "número do cartão",
                "cartão",
                "numero di carta",
                "kaartnummer",
            ]),
        }
    }
}

/// Why an action needs the user's confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    pub kind: RiskKind,
    /// What would happen, for the question to the user.
    pub what: String,
}

fn label(target: &ElementFacts<'_>) -> String {
    let name = crate::text::single_line(&target.name, 60);
    if name.is_empty() {
        format!("element {}", target.id)
    } else {
        format!("\"{name}\"")
    }
}

/// The risk of an action on `target` at `url`; `flag` is the model's own warning.
pub fn assess(
    patterns: &RiskPatterns,
    action: &ActionKind<'_>,
    target: Option<&ElementFacts<'_>>,
    url: &str,
    flag: Option<&str>,
) -> Option<Risk> {
    let has = |text: &str, list: &[String]| {
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        mentions_any(text, &refs)
    };
    if let (ActionKind::SetValue(_, _), Some(t)) = (action, target) {
        let field = format!("{} {}", t.name, t.input_type.unwrap_or(""));
        if t.input_type == Some("password") || has(&field, &patterns.credentials) {
            return Some(Risk {
                kind: RiskKind::Credentials,
                what: format!("type a password or code into {}", label(t)),
            });
        }
        if has(&field, &patterns.card) {
            return Some(Risk {
                kind: RiskKind::Payment,
                what: format!("type card details into {}", label(t)),
            });
        }
    }
    let acting = matches!(action, ActionKind::Click(_) | ActionKind::Press(_));
    if let (true, Some(t)) = (acting, target) {
        let text = format!("{} {}", t.name, t.value.as_deref().unwrap_or(""));
        for (list, kind, verb) in [
            (
                &patterns.payment,
                RiskKind::Payment,
                "pay or place an order",
            ),
            (&patterns.deletion, RiskKind::Deletion, "delete something"),
            (
                &patterns.sending,
                RiskKind::Sending,
                "send or publish something",
            ),
        ] {
            if has(&text, list) {
                return Some(Risk {
                    kind,
                    what: format!("click {} — this would {verb}", label(t)),
                });
            }
        }
    }
    // Submitting on a payment page (Enter, or a generic "Continue").
    let payment_page = mentions_any(url, &["checkout", "payment", "pay", "kasse", "paiement"]);
    if acting
        && payment_page
        && target.is_none_or(|t| {
            mentions_any(
                &t.name,
                &[
                    "continue",
                    "confirm",
                    "submit",
                    "next",
                    "weiter",
                    "continuer",
                    "continuar",
                ],
            )
        })
    {
        return Some(Risk {
            kind: RiskKind::Payment,
            what: "submit the payment step of this checkout".into(),
        });
    }
    flag.map(|f| Risk {
        kind: RiskKind::Flagged,
        what: crate::text::single_line(f, 200),
    })
}

/// Elements after a field (in page order) whose buttons `Enter` in that field may submit.
const FORM_REACH: usize = 6;

/// The risk of pressing Enter right after typing into `typed_into`: the form's submit button,
/// if one of the next few elements is a risky button ("Send", "Pay now").
pub fn enter_risk(patterns: &RiskPatterns, page: &dyn PageFacts, typed_into: &str) -> Option<Risk> {
    let after = page
        .elements()
        .take(5_000)
        .skip_while(|e| e.id != typed_into)
        .skip(1)
        .take(FORM_REACH);
    for button in after.filter(|e| e.role == "btn") {
        if let Some(r) = assess(
            patterns,
            &ActionKind::Click(button.id),
            Some(&button),
            page.url(),
            None,
        ) {
            return Some(Risk {
                kind: r.kind,
                what: format!(
                    "press Enter, which would submit the form with {}",
                    r.what.strip_prefix("click ").unwrap_or(&r.what)
                ),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn el<'a>(name: &'a str, role: &'a str, input_type: Option<&'a str>) -> ElementFacts<'a> {
        ElementFacts {
            id: "7",
            role: Cow::Borrowed(role),
            name: Cow::Borrowed(name),
            value: None,
            states: Cow::Borrowed(""),
            href: None,
            input_type,
        }
    }

    fn kind(action: ActionKind<'_>, t: &ElementFacts<'_>, url: &str) -> Option<RiskKind> {
        assess(&RiskPatterns::default(), &action, Some(t), url, None).map(|r| r.kind)
    }

    #[test]
    fn paying_deleting_sending_and_credentials_are_risky_in_several_languages() {
        let shop = "https://shop.example.com/product/1";
        assert_eq!(
            kind(
                ActionKind::Click("7"),
                &el("Place order", "btn", None),
                shop
            ),
            Some(RiskKind::Payment)
        );
        assert_eq!(
            kind(
                ActionKind::Click("7"),
                &el("Jetzt kaufen", "btn", None),
                shop
            ),
            Some(RiskKind::Payment)
        );
        assert_eq!(
            kind(ActionKind::Click("7"), &el("Supprimer", "btn", None), shop),
            Some(RiskKind::Deletion)
        );
        assert_eq!(
            kind(
                ActionKind::Click("7"),
                &el("Send message", "btn", None),
                shop
            ),
            Some(RiskKind::Sending)
        );
        assert_eq!(
            kind(
                ActionKind::SetValue("7", "hunter2"),
                &el("Your secret", "inp", Some("password")),
                shop
            ),
            Some(RiskKind::Credentials)
        );
        assert_eq!(
            kind(
                ActionKind::SetValue("7", "4111"),
                &el("Número de tarjeta", "inp", None),
                shop
            ),
            Some(RiskKind::Payment)
        );
        assert_eq!(
            kind(
                ActionKind::Click("7"),
                &el("Add to cart", "btn", None),
                shop
            ),
            None
        );
        assert_eq!(
            kind(
                ActionKind::SetValue("7", "shoes"),
                &el("Search", "inp", None),
                shop
            ),
            None
        );
        assert_eq!(
            kind(
                ActionKind::Click("7"),
                &el("Display settings", "btn", None),
                shop
            ),
            None,
            "whole words only"
        );
        assert_eq!(
            kind(
                ActionKind::Click("7"),
                &el("Continue", "btn", None),
                "https://shop.example.com/checkout/payment"
            ),
            Some(RiskKind::Payment)
        );
        let flagged = assess(
            &RiskPatterns::default(),
            &ActionKind::Click("7"),
            Some(&el("Go", "btn", None)),
            shop,
            Some("This shares the user's address"),
        );
        assert_eq!(flagged.map(|r| r.kind), Some(RiskKind::Flagged));
    }
}
