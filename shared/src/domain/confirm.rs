//! Confirmations of risky actions: what the user was asked, bound to one action on one element
//! of one page, and how a reply is read. Only a short, plain yes confirms ("yes", "ok, go
//! ahead"); anything hedged, conditional or asking back ("not sure", "ok but first …") is
//! unclear and confirms nothing.

use serde::{Deserialize, Serialize};

use super::facts::{ElementSnapshot, PageFacts};
use super::risk::RiskKind;

/// Words a plain yes is made of; at least one of [`YES`] must be among them.
const YES: &[&str] = &[
    "yes",
    "y",
    "yep",
    "yeah",
    "ok",
    "okay",
    "sure",
    "confirm",
    "confirmed",
    "proceed",
    "approve",
    "approved",
    "ja",
    "jawohl",
    "oui",
    "sí",
    "si",
    "sim",
    "claro",
    "certo",
    "da",
    "はい",
    "是",
    "好",
];
/// Words a plain no is made of; at least one of [`NO`] must be among them.
const NO: &[&str] = &[
    "no",
    "n",
    "nope",
    "cancel",
    "stop",
    "abort",
    "deny",
    "don't",
    "dont",
    "nein",
    "non",
    "não",
    "nao",
    "annulla",
    "nee",
    "never",
    "いいえ",
    "不",
    "否",
];
/// Words that may come with a yes or a no without changing it.
const FILLER: &[&str] = &[
    "go", "ahead", "do", "it", "please", "thanks", "thank", "you", "that", "this", "fine", "right",
    "correct", "bitte", "mach", "das", "vas-y", "allez", "adelante", "vai", "pode", "prego",
    "graag", "way",
];
/// Longest reply read as a plain yes or no.
const MAX_WORDS: usize = 6;

/// A user's reply to a confirmation: `Some(true)` yes, `Some(false)` no, `None` unclear.
pub fn reply_is_yes(reply: &str) -> Option<bool> {
    reply_naming(reply, &[])
}

/// Words a reply may use to name the act it answers ("yes, place the order").
fn act_words(kind: RiskKind) -> &'static [&'static str] {
    match kind {
        RiskKind::Payment => &[
            "pay", "buy", "order", "place", "purchase", "checkout", "book",
        ],
        RiskKind::Deletion => &["delete", "remove", "erase", "cancel", "close"],
        RiskKind::Sending => &["send", "post", "publish", "reply", "submit"],
        RiskKind::Transfer => &["transfer", "send", "money", "wire", "pay"],
        RiskKind::Credentials => &["type", "enter", "use", "password", "code"],
        RiskKind::Sharing => &["share", "invite", "allow", "grant", "publish", "add"],
        RiskKind::Security => &["change", "turn", "disable", "remove", "sign", "show"],
        RiskKind::Subscription => &["subscribe", "upgrade", "start", "renew", "pay", "buy"],
        RiskKind::Flagged => &[],
    }
}

/// Articles and the like a reply naming the act may carry.
const NAMING: &[&str] = &["the", "a", "an", "my", "now", "and", "to"];

/// [`reply_is_yes`] where the reply may also name the act with `naming` words.
fn reply_naming(reply: &str, naming: &[String]) -> Option<bool> {
    let lower = reply.trim().to_lowercase();
    if lower.is_empty() || lower.contains('?') {
        return None;
    }
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | ';' | ':'))
        .filter(|w| !w.is_empty())
        .collect();
    let max = if naming.is_empty() {
        MAX_WORDS
    } else {
        MAX_WORDS + 3
    };
    if words.is_empty() || words.len() > max {
        return None;
    }
    let named =
        |w: &&str| naming.iter().any(|n| n == w) || (!naming.is_empty() && NAMING.contains(w));
    let all_in = |lists: &[&[&str]]| {
        words
            .iter()
            .all(|w| lists.iter().any(|l| l.contains(w)) || named(w))
    };
    let any_of = |list: &[&str]| words.iter().any(|w| list.contains(w));
    if any_of(YES) && !any_of(NO) && all_in(&[YES, FILLER]) {
        return Some(true);
    }
    if any_of(NO) && !any_of(YES) && all_in(&[NO, FILLER]) {
        return Some(false);
    }
    None
}

/// A confirmation the user was asked for: exactly this action, on this step, on this element
/// as it was (role, name, value) and on this page, may run once after a yes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingConfirmation {
    /// The action in the client's grammar.
    pub action: String,
    pub element_id: Option<String>,
    pub step_index: u32,
    pub kind: RiskKind,
    pub question: String,
    /// The element as it was asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ElementSnapshot>,
    /// The page's address without query or fragment (kept for reading older records).
    #[serde(default)]
    pub page: String,
    /// The page's whole address, query and fragment included: a yes given on
    /// `?amount=5&to=alice` is no yes for `?amount=5000&to=mallory`.
    #[serde(default)]
    pub url: String,
    /// The page's hash (an action without a target needs the very same page).
    #[serde(default)]
    pub page_hash: String,
    /// The question was asked again after an unclear reply (it is asked again once).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asked_again: bool,
}

/// Words that hedge or turn a reply around: never read as naming the act, even when the
/// question has them.
const HEDGES: &[&str] = &[
    "but", "not", "first", "if", "only", "wait", "later", "after", "before", "unless", "except",
    "maybe", "perhaps", "instead", "without", "until", "then",
];

/// `url` without its query and fragment.
pub fn page_of(url: &str) -> String {
    url.split(['?', '#'])
        .next()
        .unwrap_or(url)
        .trim_end_matches('/')
        .to_owned()
}

impl PendingConfirmation {
    /// The user's reply to this question: a plain yes or no, which may name the act ("yes,
    /// place the order", "no, don't delete it") by its element's words or the act's own.
    pub fn reply(&self, reply: &str) -> Option<bool> {
        let mut naming: Vec<String> = act_words(self.kind)
            .iter()
            .map(|w| (*w).to_owned())
            .collect();
        // The element's words and the question's own ("Yes, place the order" to "… click
        // \"Place order\" …"), never a word that hedges or says no.
        let question = self.question.to_lowercase();
        let name = self
            .target
            .as_ref()
            .map(|t| t.name.to_lowercase())
            .unwrap_or_default();
        naming.extend(
            [name.as_str(), question.as_str()]
                .iter()
                .flat_map(|t| t.split(|c: char| !c.is_alphanumeric() && c != '\''))
                .filter(|w| !w.is_empty() && !HEDGES.contains(w) && !NO.contains(w))
                .map(str::to_owned),
        );
        reply_naming(reply, &naming)
    }

    /// Whether a yes given at step `step_index` on `page` may run the confirmed action: it is
    /// the next step, the page is at the very same address (query included), and the element is
    /// the same (role, name and value) — or, without an element, the page is unchanged.
    pub fn still_applies(&self, step_index: u32, page: &dyn PageFacts) -> bool {
        if self.step_index + 1 != step_index || self.url.is_empty() || page.url() != self.url {
            return false;
        }
        match (&self.element_id, &self.target) {
            (Some(id), Some(was)) => page.element(id).is_some_and(|now| {
                let now = now.snapshot();
                now.role == was.role && now.name == was.name && now.value == was.value
            }),
            (Some(_), None) => false,
            (None, _) => page.hash() == self.page_hash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    #[test]
    fn only_a_plain_yes_confirms() {
        for yes in [
            "Yes",
            "yes, go ahead",
            "OK",
            "Ja",
            "oui",
            "Sí",
            "はい",
            "ok please do it",
        ] {
            assert_eq!(reply_is_yes(yes), Some(true), "{yes}");
        }
        for no in ["No", "no thanks", "Cancel", "nein", "don't do it", "no way"] {
            assert_eq!(reply_is_yes(no), Some(false), "{no}");
        }
        for unclear in [
            "the blue one",
            "",
            "yes no",
            "I'm not sure",
            "That's not ok",
            "OK, but first search for cheaper ones",
            "seulement si le prix baisse",
            "Sure, order the usual",
            "yes?",
            "yes yes yes yes yes yes yes",
        ] {
            assert_eq!(reply_is_yes(unclear), None, "{unclear}");
        }
    }

    #[test]
    fn a_yes_may_name_the_act_it_confirms() {
        let page = FakePage::new(
            "https://shop.example/checkout",
            [el("10", "btn", "Place order")],
        );
        let pending = PendingConfirmation {
            action: "click(10)".into(),
            element_id: Some("10".into()),
            step_index: 1,
            kind: RiskKind::Payment,
            question: "Shall I place the order?".into(),
            target: page.element("10").map(|e| e.snapshot()),
            page: page_of(page.url()),
            url: page.url().to_owned(),
            page_hash: "h".into(),
            asked_again: false,
        };
        for yes in [
            "yes, place the order",
            "Yes please, place my order",
            "ok, pay now",
            "yes",
        ] {
            assert_eq!(pending.reply(yes), Some(true), "{yes}");
        }
        assert_eq!(pending.reply("no, don't place the order"), Some(false));
        // A yes may repeat the question's own words; its hedges never count.
        let asked = PendingConfirmation {
            question: "I am about to click \"Place order\", which will charge your card. Shall I go ahead?"
                .into(),
            ..pending.clone()
        };
        assert_eq!(asked.reply("Yes, charge my card and click it"), Some(true));
        assert_eq!(asked.reply("yes, but not my card"), None);
        assert_eq!(asked.reply("yes, shall I wait"), None);
        // The largest question and reply: bounded, read or refused, never a panic.
        let long = PendingConfirmation {
            question: "place order ".repeat(1_000),
            ..pending.clone()
        };
        assert_eq!(long.reply(&"yes place order ".repeat(5_000)), None);
        assert_eq!(long.reply("yes, place order"), Some(true));
        for unclear in [
            "yes, but order the cheaper one",
            "place the order",
            "yes, delete my account",
            "OK, but first search for cheaper ones",
        ] {
            assert_eq!(pending.reply(unclear), None, "{unclear}");
        }
    }

    /// A page at `url` with hash `hash` and `(id, name)` buttons.
    fn page_at(url: &str, hash: &str, buttons: Vec<(&str, &str)>) -> FakePage {
        FakePage::new(
            url,
            buttons.into_iter().map(|(id, name)| el(id, "btn", name)),
        )
        .with_hash(hash)
    }

    #[test]
    fn a_confirmation_holds_for_its_element_on_its_page_at_the_next_step() {
        let shop = page_at(
            "https://shop.example.com/cart?x=1",
            "h1",
            vec![("10", "Pay now")],
        );
        let pending = PendingConfirmation {
            action: "click(10)".into(),
            element_id: Some("10".into()),
            step_index: 3,
            kind: RiskKind::Payment,
            question: "Shall I pay?".into(),
            target: shop.element("10").map(|e| e.snapshot()),
            page: page_of(shop.url()),
            url: shop.url().to_owned(),
            page_hash: "h1".into(),
            asked_again: false,
        };
        assert!(pending.still_applies(4, &shop));
        assert!(!pending.still_applies(5, &shop), "only the next step");
        let bank = page_at("https://bank.example/", "h2", vec![("10", "Transfer")]);
        assert!(!pending.still_applies(4, &bank), "another page");
        let renamed = page_at(
            "https://shop.example.com/cart?x=1",
            "h3",
            vec![("10", "Pay 900 EUR now")],
        );
        assert!(!pending.still_applies(4, &renamed), "the element changed");
        let other_query = page_at(
            "https://shop.example.com/cart?x=1000",
            "h1",
            vec![("10", "Pay now")],
        );
        assert!(
            !pending.still_applies(4, &other_query),
            "a yes is bound to the query too"
        );
        let press = PendingConfirmation {
            action: "press(\"Enter\")".into(),
            element_id: None,
            target: None,
            ..pending
        };
        assert!(press.still_applies(4, &shop));
        let changed = page_at(
            "https://shop.example.com/cart?x=1",
            "h9",
            vec![("10", "Pay now")],
        );
        assert!(
            !press.still_applies(4, &changed),
            "a targetless action needs the same page"
        );
    }
}
