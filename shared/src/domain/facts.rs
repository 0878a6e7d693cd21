//! What the step's rules know about the current page: its URL, a hash of its content, and for
//! each element its id, short role, name, value and states. The agent's page model provides
//! it; the rules (outcomes, verdicts, corrections, risk, blockers, chains) read nothing else.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

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
    /// The element's attributes as the page wrote them (`dom` pages: `aria-label`, `title`,
    /// `alt`, `autocomplete`, `name`, ...; none in the extension's tree).
    pub attrs: &'a [(String, String)],
}

impl ElementFacts<'_> {
    /// The attribute `name`, when the page wrote it.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn has_state(&self, state: &str) -> bool {
        self.states
            .split(',')
            .any(|s| s.trim().eq_ignore_ascii_case(state))
    }

    /// The element as a note to the model names it: `[3] inp "Name"` (the name cut to
    /// `name_chars`).
    pub fn brief(&self, name_chars: usize) -> String {
        let name = crate::text::page_name(&self.name, name_chars);
        if name.is_empty() {
            format!("[{}] {}", self.id, self.role)
        } else {
            format!("[{}] {} \"{name}\"", self.id, self.role)
        }
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
            attrs: &[],
        }
    }
}

/// The dialog or form that holds an element: what it says, and whether it is a dialog (a
/// question put to the user) rather than a form on the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub text: String,
    pub dialog: bool,
}

/// The current page as the rules see it.
pub trait PageFacts {
    fn url(&self) -> &str;
    /// Hash of the page's meaningful content.
    fn hash(&self) -> &str;
    fn element_count(&self) -> usize;
    fn element(&self, id: &str) -> Option<ElementFacts<'_>>;
    fn elements(&self) -> Box<dyn Iterator<Item = ElementFacts<'_>> + '_>;
    /// A text holding every element's name and link (and maybe more) in lower case
    /// ([`lowered`]), when the page has one: a word it does not hold is on no element, which
    /// spares a look at each.
    fn lower_text(&self) -> Option<&str> {
        None
    }
    /// The controls that submitting the form around `field` may press, first the form's
    /// default button (`None` when the page says nothing of forms: the extension's tree).
    fn form_submits(&self, field: &str) -> Option<Vec<ElementFacts<'_>>> {
        let _ = field;
        None
    }
    /// What the dialog or form holding `id` says (its heading and text), when the page tells:
    /// a `dom` page's dialog or form, or in the extension's tree a dialog node just before it.
    fn holder_text(&self, id: &str) -> Option<String> {
        self.holder(id).map(|h| h.text)
    }
    /// The texts just before `id` that label it, nearest first (a row's words, then its
    /// section's heading; in the extension's tree the name of the element before it).
    fn texts_before(&self, id: &str) -> Vec<String> {
        let _ = id;
        Vec::new()
    }
    /// The dialog or form holding `id`, when the page tells.
    fn holder(&self, id: &str) -> Option<Holder> {
        let _ = id;
        None
    }
    /// The text of the option of list `select` whose value or text is `value` (`dom` pages).
    fn option_text(&self, select: &str, value: &str) -> Option<String> {
        let _ = (select, value);
        None
    }
}

/// A fixed word list matched as [`mentions_any`] matches, in one pass over the text
/// (Aho-Corasick): the rules check every element of pages with thousands against these.
pub struct WordSet {
    words: &'static [&'static str],
    matcher: OnceLock<Option<AhoCorasick>>,
    /// The words as they are in lower-case text, for whole pages: a searcher that skips
    /// through the text with vector instructions (12 µs over a 100 KB page here, where the
    /// case-folding automaton takes 200 µs).
    page_searcher: OnceLock<Option<aho_corasick::packed::Searcher>>,
}

impl WordSet {
    pub const fn new(words: &'static [&'static str]) -> Self {
        Self {
            words,
            matcher: OnceLock::new(),
            page_searcher: OnceLock::new(),
        }
    }

    fn matcher(&self) -> Option<&AhoCorasick> {
        self.matcher
            .get_or_init(|| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(self.words.iter().map(|w| w.to_lowercase()))
                    .ok()
            })
            .as_ref()
    }

    /// Whether `text` contains one of the words as a word or phrase, case-insensitively.
    pub fn in_text(&self, text: &str) -> bool {
        let Some(matcher) = self.matcher() else {
            return mentions_any(text, self.words);
        };
        let as_is = case_folded(text);
        // Most texts hold none of the words: the first search skips ahead on rare bytes and
        // stops at the first match; only a text with one is searched for all its matches.
        if as_is && !matcher.is_match(text) {
            return false;
        }
        let text = if as_is {
            std::borrow::Cow::Borrowed(text)
        } else {
            lowered(text).into()
        };
        matcher.find_overlapping_iter(&*text).any(|m| {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            word_boundary(before) && word_boundary(after)
        })
    }

    /// Whether some element of `page` may name one of the words: `false` only when the page's
    /// whole text holds none of them anywhere (then no element does), checked in one pass.
    pub fn on_page(&self, page: &dyn PageFacts) -> bool {
        let Some(text) = page.lower_text() else {
            return true;
        };
        let searcher = self.page_searcher.get_or_init(|| {
            aho_corasick::packed::Config::new()
                .builder()
                .extend(self.words.iter().map(|w| lowered(w)))
                .build()
        });
        match (searcher, self.matcher()) {
            (Some(searcher), _) => searcher.find(text).is_some(),
            // No vector searcher on this processor: the automaton reads lower-case text too.
            (None, Some(matcher)) => matcher.is_match(text),
            (None, None) => true,
        }
    }
}

/// `text` in lower case, each character lowered on its own (a name's lower case is a piece of
/// its page's, whatever comes before and after it).
pub fn lowered(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        text.chars().flat_map(char::to_lowercase).collect()
    }
}

/// Whether the word matcher, which folds ASCII case itself, can read `text` as it is: no
/// character beyond ASCII changes in lower case (most names are ASCII, and many start with a
/// capital; the others are copied in lower case first).
fn case_folded(text: &str) -> bool {
    text.is_ascii()
        || text
            .chars()
            .all(|c| c.is_ascii() || c.to_lowercase().eq([c]))
}

fn word_boundary(c: Option<char>) -> bool {
    c.is_none_or(|c| !c.is_alphanumeric())
}

/// `s` in lower case, copied only when there is something to lower (the word lists are not).
fn lower(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_uppercase) {
        s.to_lowercase().into()
    } else {
        s.into()
    }
}

/// Whether `text` (lower-cased by the caller or not) contains any of `words` as a word or
/// phrase, case-insensitively.
pub fn mentions_any(text: &str, words: &[&str]) -> bool {
    let text = lower(text);
    words.iter().any(|w| {
        let w = lower(w);
        text.match_indices(&*w).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + w.len()..].chars().next();
            word_boundary(before) && word_boundary(after)
        })
    })
}

/// A page for the rules' tests.
#[cfg(test)]
pub mod fake {
    use std::borrow::Cow;

    use super::{ElementFacts, Holder, PageFacts};

    /// One element of a [`FakePage`].
    #[derive(Debug, Clone, Default)]
    pub struct El {
        pub id: String,
        pub role: String,
        pub name: String,
        pub value: Option<String>,
        pub states: String,
        pub href: Option<String>,
        pub input_type: Option<String>,
        pub attrs: Vec<(String, String)>,
        /// The text of the dialog (or, with `form`, the form) it is in.
        pub dialog: Option<String>,
        pub form: bool,
        /// The texts just before it, nearest first (its row, its section's heading).
        pub before: Vec<String>,
    }

    /// An element with an id, a short role and a name.
    pub fn el(id: &str, role: &str, name: &str) -> El {
        El {
            id: id.into(),
            role: role.into(),
            name: name.into(),
            ..El::default()
        }
    }

    impl El {
        pub fn value(mut self, v: &str) -> Self {
            self.value = Some(v.into());
            self
        }
        pub fn states(mut self, s: &str) -> Self {
            self.states = s.into();
            self
        }
        pub fn href(mut self, h: &str) -> Self {
            self.href = Some(h.into());
            self
        }
        pub fn input(mut self, t: &str) -> Self {
            self.input_type = Some(t.into());
            self
        }
        pub fn attr(mut self, k: &str, v: &str) -> Self {
            self.attrs.push((k.into(), v.into()));
            self
        }
        pub fn in_dialog(mut self, text: &str) -> Self {
            self.dialog = Some(text.into());
            self
        }
        pub fn in_form(mut self, text: &str) -> Self {
            (self.dialog, self.form) = (Some(text.into()), true);
            self
        }
        pub fn after(mut self, texts: &[&str]) -> Self {
            self.before = texts.iter().map(|t| (*t).to_owned()).collect();
            self
        }
    }

    /// A page at a URL with a hash and elements, in page order.
    #[derive(Debug, Clone)]
    pub struct FakePage {
        pub url: String,
        pub hash: String,
        pub els: Vec<El>,
    }

    /// A sign-up form's fields (a password among them), with `more` after them.
    pub fn signup(more: impl IntoIterator<Item = El>) -> FakePage {
        let mut els = vec![
            el("1", "inp", "First name"),
            el("2", "inp", "Last name"),
            el("3", "chk", "Newsletter"),
            el("4", "inp", "Password").input("password"),
        ];
        els.extend(more);
        FakePage::new("https://a.com/signup", els)
    }

    impl FakePage {
        pub fn new(url: &str, els: impl IntoIterator<Item = El>) -> Self {
            Self {
                url: url.into(),
                hash: "h".into(),
                els: els.into_iter().collect(),
            }
        }
        pub fn with_hash(mut self, hash: &str) -> Self {
            self.hash = hash.into();
            self
        }
    }

    impl PageFacts for FakePage {
        fn url(&self) -> &str {
            &self.url
        }
        fn hash(&self) -> &str {
            &self.hash
        }
        fn element_count(&self) -> usize {
            self.els.len()
        }
        fn element(&self, id: &str) -> Option<ElementFacts<'_>> {
            self.elements().find(|e| e.id == id)
        }
        fn texts_before(&self, id: &str) -> Vec<String> {
            (self.els.iter().find(|e| e.id == id)).map_or_else(Vec::new, |e| e.before.clone())
        }
        fn holder(&self, id: &str) -> Option<Holder> {
            let e = self.els.iter().find(|e| e.id == id)?;
            e.dialog.as_ref().map(|text| Holder {
                text: text.clone(),
                dialog: !e.form,
            })
        }
        fn elements(&self) -> Box<dyn Iterator<Item = ElementFacts<'_>> + '_> {
            Box::new(self.els.iter().map(|e| ElementFacts {
                id: &e.id,
                role: Cow::Borrowed(&e.role),
                name: Cow::Borrowed(&e.name),
                value: e.value.as_deref().map(Cow::Borrowed),
                states: Cow::Borrowed(&e.states),
                href: e.href.as_deref(),
                input_type: e.input_type.as_deref(),
                attrs: &e.attrs,
            }))
        }
    }
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
            attrs: &[],
        };
        assert!(e.has_state("checked") && e.has_state("DISABLED") && !e.has_state("expanded"));
        assert_eq!(e.snapshot().states, "disabled, checked");
    }
}

#[cfg(test)]
#[path = "facts_word_tests.rs"]
mod word_tests;
