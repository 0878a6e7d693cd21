//! What the step's rules know about the current page: its URL, a hash of its content, and for
//! each element its id, short role, name, value and states. The agent's page model provides
//! it; the rules (outcomes, verdicts, corrections, risk, blockers, chains) read nothing else.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// One element of the page as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementFacts<'a> {
    pub id: &'a str,
    /// Short role (`btn`, `link`, `inp`, `chk`, `radio`, `sel`, ...).
    pub role: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub value: Option<Cow<'a, str>>,
    /// Comma-separated states (`checked,disabled`).
    pub states: Cow<'a, str>,
    pub href: Option<&'a str>,
    /// The input type of an `<input>` (`password`, `submit`, ...), when known.
    pub input_type: Option<&'a str>,
}

impl ElementFacts<'_> {
    pub fn has_state(&self, state: &str) -> bool {
        self.states
            .split(',')
            .any(|s| s.trim().eq_ignore_ascii_case(state))
    }

    /// A copy that owns its text, to store with a step.
    pub fn snapshot(&self) -> ElementSnapshot {
        ElementSnapshot {
            id: self.id.to_owned(),
            role: self.role.to_string(),
            name: crate::text::single_line(&self.name, 100),
            value: self
                .value
                .as_ref()
                .map(|v| crate::text::single_line(v, 200)),
            states: self.states.to_string(),
            href: self.href.map(|h| crate::text::truncate_chars(h, 500)),
        }
    }
}

/// An element as it was when an action on it was decided (stored with the step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElementSnapshot {
    pub id: String,
    pub role: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default)]
    pub states: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
}

impl ElementSnapshot {
    /// The element as the rules read it.
    pub fn facts(&self) -> ElementFacts<'_> {
        ElementFacts {
            id: &self.id,
            role: Cow::Borrowed(&self.role),
            name: Cow::Borrowed(&self.name),
            value: self.value.as_deref().map(Cow::Borrowed),
            states: Cow::Borrowed(&self.states),
            href: self.href.as_deref(),
            input_type: None,
        }
    }
}

/// The current page as the rules see it.
pub trait PageFacts {
    fn url(&self) -> &str;
    /// Hash of the page's meaningful content.
    fn hash(&self) -> &str;
    fn element_count(&self) -> usize;
    fn element(&self, id: &str) -> Option<ElementFacts<'_>>;
    fn elements(&self) -> Box<dyn Iterator<Item = ElementFacts<'_>> + '_>;
}

/// Whether `text` (lower-cased by the caller or not) contains any of `words` as a word or
/// phrase, case-insensitively.
pub fn mentions_any(text: &str, words: &[&str]) -> bool {
    let text = text.to_lowercase();
    words.iter().any(|w| {
        let w = w.to_lowercase();
        text.match_indices(&w).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + w.len()..].chars().next();
            let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
            boundary(before) && boundary(after)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_whole_words_in_any_case() {
        assert!(mentions_any("Please Sign in to continue", &["sign in"]));
        assert!(!mentions_any("designing", &["sign"]));
        assert!(mentions_any("Jetzt bezahlen!", &["bezahlen"]));
        assert!(!mentions_any("", &["x"]));
    }

    #[test]
    fn states_are_read_from_the_comma_list() {
        let e = ElementFacts {
            id: "1",
            role: "chk".into(),
            name: "Agree".into(),
            value: None,
            states: "disabled, checked".into(),
            href: None,
            input_type: None,
        };
        assert!(e.has_state("checked") && e.has_state("DISABLED") && !e.has_state("expanded"));
        assert_eq!(e.snapshot().states, "disabled, checked");
    }
}
