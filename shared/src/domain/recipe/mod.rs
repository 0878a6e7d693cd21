//! Recipes' rules (issue 34, first part): what identifies a recipe — the site (registrable
//! domain and path pattern) and the task's instruction with the values the user supplied
//! turned into parameters — and how a recorded target is described by what is stable on a
//! page (role, normalised accessible name, position among equals) and found again on a new
//! page: exactly one element, or nothing is acted on. Pure functions over plain data. What a
//! recipe holds is in [`book`]; how a run follows one, and when it hands a step to the model,
//! in [`run`].

pub mod book;
pub mod loose;
pub mod run;

use serde::{Deserialize, Serialize};

use super::facts::{ElementFacts, PageFacts};

/// Longest instruction a recipe is made from or matched against.
pub const MAX_INSTRUCTION_CHARS: usize = 2_000;
/// Most parameters an instruction yields.
pub const MAX_PARAMS: usize = 12;
/// Longest parameter value.
pub const MAX_PARAM_CHARS: usize = 200;
/// Path segments kept in a site's path pattern.
const MAX_PATH_SEGMENTS: usize = 8;
/// Longest accessible name kept in a target description.
const MAX_NAME_CHARS: usize = 120;

/// Where a recipe applies: the registrable domain and the path with its variable segments
/// (ids, numbers, hashes) as `*`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SiteKey {
    pub domain: String,
    pub path: String,
}

/// The site of an absolute http(s) URL; `None` for other URLs (`about:blank`, `data:`).
pub fn site_key(url: &str) -> Option<SiteKey> {
    let parsed = reqwest::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed
        .host_str()?
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    let segments: Vec<String> = parsed
        .path_segments()
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .take(MAX_PATH_SEGMENTS)
        .map(|s| {
            if variable_segment(s) {
                "*".to_owned()
            } else {
                s.to_ascii_lowercase().chars().take(60).collect()
            }
        })
        .collect();
    Some(SiteKey {
        domain: super::site::root_domain(&host),
        path: format!("/{}", segments.join("/")),
    })
}

/// A path segment that names one record rather than a kind of page: a number, two digits in a
/// row (`sku-42`, a date, a UUID), mostly digits, or a long run of hex. A lone digit is part
/// of a page's name (`step-2`, `v2`, `click-tab-2-hard.html`).
fn variable_segment(s: &str) -> bool {
    let alnum = s.chars().filter(|c| c.is_alphanumeric()).count();
    let digits = s.chars().filter(char::is_ascii_digit).count();
    record_code(s) || (digits > 0 && digits * 2 > alnum)
}

/// Two digits in a row (a number, a date, an amount, `INV-1041`) or a long run of hex.
fn record_code(s: &str) -> bool {
    let run = s
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_digit() && w[1].is_ascii_digit());
    run || (s.len() >= 16 && s.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Whether an element's name holds a record's number or code ("Invoice INV-1041", "Order
/// 20-113", "$12.99"): what the recording run's page listed then, not what names the element
/// on every run — "open my latest invoice" may need another one next month. A lone digit
/// ("Tab 2", "Step 3 of 4") names a place, not a record.
pub fn names_a_record(name: &str) -> bool {
    name.split_whitespace().any(record_code)
}

/// An instruction with the user's values as named parameters: `order {quantity} of SKU {sku}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The normalised instruction with `{name}` where a value was.
    pub text: String,
    /// The values of this instruction, by name, in order of appearance.
    pub params: Vec<(String, String)>,
}

/// Lower case, whitespace collapsed, trailing sentence punctuation dropped.
pub fn normalise(text: &str) -> String {
    collapsed(text).to_lowercase()
}

/// [`normalise`] without the lower case: the values as the user wrote them.
pub(super) fn collapsed(text: &str) -> String {
    let text: String = text.chars().take(MAX_INSTRUCTION_CHARS).collect();
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    joined
        .trim_end_matches(['.', '!', '?', ' '])
        .replace(['{', '}'], "")
}

/// The template of `instruction` given the values the run typed or chose, each with the
/// name of the field it went into: a value that appears in the instruction as a whole word
/// becomes a parameter named after its field (`Quantity` → `quantity`). Values the
/// instruction does not contain stay out (they came from the page or the model), and so do
/// secrets (the caller passes none).
pub fn parameterise(instruction: &str, supplied: &[(&str, &str)]) -> Template {
    let mut text = normalise(instruction);
    let mut params: Vec<(String, String)> = Vec::new();
    // Longer values first, so `12` inside `123` is not taken.
    let mut values: Vec<(String, String)> = supplied
        .iter()
        .map(|(field, v)| (slug(field), normalise(v)))
        .filter(|(_, v)| !v.is_empty() && v.chars().count() <= MAX_PARAM_CHARS)
        .collect();
    values.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (field, value) in values {
        if params.len() >= MAX_PARAMS {
            break;
        }
        let Some(at) = find_word(&text, &value) else {
            continue;
        };
        let mut name = if field.is_empty() {
            "value".to_owned()
        } else {
            field
        };
        let base = name.clone();
        let mut n = 2;
        while params.iter().any(|(p, _)| *p == name) {
            name = format!("{base}{n}");
            n += 1;
        }
        text.replace_range(at..at + value.len(), &format!("{{{name}}}"));
        params.push((name, value));
    }
    // In order of appearance.
    params.sort_by_key(|(name, _)| text.find(&format!("{{{name}}}")).unwrap_or(usize::MAX));
    Template { text, params }
}

/// `text` in lower case when every character keeps its length in bytes (so the offsets of one
/// are the offsets of the other); `None` when some does not (`İ`, `Ω`).
pub fn aligned_lower(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let before = out.len();
        out.extend(c.to_lowercase());
        if out.len() - before != c.len_utf8() {
            return None;
        }
    }
    Some(out)
}

/// Whether a template has enough of its own words to name one task: at least two literal
/// words (`{search}` alone, or `go {where}`, would take any instruction).
pub fn specific(template: &str) -> bool {
    let mut literal = String::new();
    let mut depth = 0;
    for c in template.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if depth == 0 => literal.push(c),
            _ => {}
        }
    }
    literal
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count()
        >= 2
}

/// The values `instruction` gives `template`'s parameters, when it is the same task: matched
/// in lower case, each value as the user wrote it (`Grace Hopper` is typed as written). A
/// parameter followed by words that come again later (`add {item} to {list}` against "add back
/// to school supplies to shopping") could end at either: no binding, the model decides.
pub fn bind(template: &str, instruction: &str) -> Option<Vec<(String, String)>> {
    if !specific(template) {
        return None;
    }
    let written = collapsed(instruction);
    let text = written.to_lowercase();
    // Lower-casing that changes lengths (a few non-ASCII letters) leaves the values lower case.
    let aligned = aligned_lower(&written);
    let source = match &aligned {
        Some(_) => &written,
        None => &text,
    };
    let pieces = split_template(template)?;
    let mut at = 0;
    let mut out = Vec::new();
    let mut pending: Option<&str> = None;
    for piece in &pieces {
        match piece {
            Piece::Literal(lit) => {
                let found = match pending {
                    // After a parameter the literal may come anywhere later, but only once when
                    // it holds a word.
                    Some(_) => {
                        // Only a space between two values: where the first ends is a guess
                        // ("Mary Ann Smith" as a first and a last name).
                        if lit.trim().is_empty() {
                            return None;
                        }
                        let k = text[at..].find(lit.as_str()).map(|k| at + k)?;
                        let worded = lit.chars().any(char::is_alphanumeric);
                        if worded && text[k + lit.len()..].contains(lit.as_str()) {
                            return None;
                        }
                        k
                    }
                    None => {
                        if !text[at..].starts_with(lit.as_str()) {
                            return None;
                        }
                        at
                    }
                };
                if let Some(name) = pending.take() {
                    out.push((name.to_owned(), source[at..found].to_owned()));
                }
                at = found + lit.len();
            }
            Piece::Param(name) => pending = Some(name),
        }
    }
    match pending {
        Some(name) => out.push((name.to_owned(), source[at..].to_owned())),
        None if at != text.len() => return None,
        None => {}
    }
    let valid = out
        .iter()
        .all(|(_, v)| !v.trim().is_empty() && v.chars().count() <= MAX_PARAM_CHARS);
    valid.then_some(out)
}

pub(super) enum Piece {
    Literal(String),
    Param(String),
}

/// A template's literal text and parameters; `None` for two parameters in a row (their
/// boundary would be a guess).
pub(super) fn split_template(template: &str) -> Option<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        if open > 0 {
            pieces.push(Piece::Literal(rest[..open].to_owned()));
        } else if matches!(pieces.last(), Some(Piece::Param(_))) {
            return None;
        }
        pieces.push(Piece::Param(rest[open + 1..close].to_owned()));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest.to_owned()));
    }
    Some(pieces)
}

/// Where `word` occurs in `text` with no letter or digit right before or after it.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        !alnum(text[..at].chars().next_back()) && !alnum(text[at + word.len()..].chars().next())
    })
}

/// A field's name as a parameter name: lower-case letters, digits and `_`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').chars().take(40).collect()
}

/// A recorded target by what survives a reload: never by element id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetDescription {
    pub role: String,
    /// The accessible name, normalised.
    pub name: String,
    /// Its position among the elements of the same role and name, and how many there were.
    pub nth: usize,
    pub of: usize,
}

/// Where a described target is on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// Exactly one element is the target.
    Unique(String),
    /// No element has its role and name.
    Missing,
    /// Several do and the page does not say which (their number changed).
    Ambiguous(usize),
}

/// The description of element `id` of `page`.
pub fn describe(page: &dyn PageFacts, id: &str) -> Option<TargetDescription> {
    let target = page.element(id)?;
    let key = (target.role.to_string(), name_key(&target));
    let equals: Vec<String> = page
        .elements()
        .filter(|e| (e.role.to_string(), name_key(e)) == key)
        .map(|e| e.id.to_owned())
        .collect();
    let nth = equals.iter().position(|e| e == id)?;
    Some(TargetDescription {
        role: key.0,
        name: key.1,
        nth,
        of: equals.len(),
    })
}

/// The element of `page` that `target` describes: one with its role and name, or, among
/// several, the one at its position when there are as many as when it was recorded.
pub fn locate(page: &dyn PageFacts, target: &TargetDescription) -> Located {
    let equals: Vec<String> = page
        .elements()
        .filter(|e| e.role == target.role.as_str() && name_key(e) == target.name)
        .map(|e| e.id.to_owned())
        .collect();
    match equals.len() {
        0 => Located::Missing,
        // One of several when recorded, and their number changed: which is it is a guess.
        n if n != target.of.max(1) => Located::Ambiguous(n),
        n => match equals.get(target.nth) {
            Some(id) => Located::Unique(id.clone()),
            None => Located::Ambiguous(n),
        },
    }
}

/// An element's accessible name as compared: normalised, at most [`MAX_NAME_CHARS`].
fn name_key(e: &ElementFacts<'_>) -> String {
    normalise(&e.name).chars().take(MAX_NAME_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    #[test]
    fn a_site_is_its_registrable_domain_and_the_kind_of_page() {
        let key = |u: &str| site_key(u).map(|k| format!("{} {}", k.domain, k.path));
        assert_eq!(
            key("https://www.shop.example.co.uk/orders/123/edit?x=1#top").as_deref(),
            Some("example.co.uk /orders/*/edit")
        );
        assert_eq!(
            key("https://app.acme.com/items/SKU-42").as_deref(),
            Some("acme.com /items/*")
        );
        assert_eq!(
            key("http://localhost:3000/").as_deref(),
            Some("localhost /")
        );
        assert_eq!(
            key("https://a.com/x/3f2a9c0d1e2b3a4c5d6e7f8091a2b3c4").as_deref(),
            Some("a.com /x/*")
        );
        // A lone digit names a kind of page; more of them a record.
        assert_eq!(
            key("http://127.0.0.1:8000/miniwob/click-tab-2-hard.html").as_deref(),
            Some("127.0.0.1 /miniwob/click-tab-2-hard.html")
        );
        assert_eq!(
            key("https://a.com/v2/orders/7/items/2024-05-01").as_deref(),
            Some("a.com /v2/orders/*/items/*")
        );
        assert_eq!(key("about:blank"), None);
        assert_eq!(key("data:text/html,hi"), None);
    }

    #[test]
    fn the_users_values_become_named_parameters_and_bind_again() {
        let t = parameterise(
            "Order 3 of SKU 123.",
            &[("Quantity", "3"), ("SKU", "123"), ("Coupon", "SAVE10")],
        );
        assert_eq!(t.text, "order {quantity} of sku {sku}");
        assert_eq!(
            t.params,
            vec![
                ("quantity".into(), "3".into()),
                ("sku".into(), "123".into())
            ]
        );
        assert_eq!(
            bind(&t.text, "order 12 of SKU 987"),
            Some(vec![
                ("quantity".into(), "12".into()),
                ("sku".into(), "987".into())
            ])
        );
        // Matched in lower case; values come back as written.
        assert_eq!(
            bind("ship to {name}, today", "Ship to  Grace Hopper, today."),
            Some(vec![("name".into(), "Grace Hopper".into())])
        );
        // Another task is not this one.
        assert_eq!(bind(&t.text, "cancel 12 of SKU 987"), None);
        assert_eq!(bind(&t.text, "order 12 of SKU"), None);
        assert_eq!(
            bind(&t.text, "order 12 of SKU 987 and call me"),
            Some(vec![
                ("quantity".into(), "12".into()),
                ("sku".into(), "987 and call me".into())
            ]),
            "a trailing parameter takes the rest"
        );
        // ... which the recorded value's shape then turns down: a one-word SKU is not four.
        assert!(!book::ParamShape::of("123").fits("987 and call me"));
        assert!(book::ParamShape::of("123").fits("987-A"));
        assert!(book::ParamShape::of("Ada Lovelace").fits("Mary Ann Smith"));
        assert!(!book::ParamShape::of("Ada Lovelace").fits("Mary Ann Smith and then log out"));
        // Only a space between two values: no binding.
        assert_eq!(
            bind("add contact {first} {last}", "Add contact Mary Ann Smith"),
            None
        );
        // No supplied value: the instruction itself is the key.
        let plain = parameterise("Open my invoices", &[]);
        assert_eq!(
            (plain.text.as_str(), plain.params.len()),
            ("open my invoices", 0)
        );
        assert_eq!(bind(&plain.text, "open my  Invoices!"), Some(vec![]));
        assert_eq!(bind(&plain.text, "open my invoices from 2023"), None);
    }

    #[test]
    fn values_are_taken_as_whole_words_and_names_stay_distinct() {
        // `12` inside `123` is not the quantity; the longer value is placed first.
        let t = parameterise("add 12 of item 123", &[("Qty", "12"), ("Item", "123")]);
        assert_eq!(t.text, "add {qty} of item {item}");
        let t = parameterise("from Paris to Rome", &[("City", "Paris"), ("City", "Rome")]);
        assert_eq!(t.text, "from {city} to {city2}");
        // Two parameters in a row cannot be told apart: such a template never binds.
        let t = parameterise("send 5 3", &[("a", "5"), ("b", "3")]);
        assert_eq!(t.text, "send {a} {b}");
        assert_eq!(bind("send {a}{b}", "send 53"), None);
        // A template that is mostly a parameter would take any instruction.
        assert!(!specific("{search}") && !specific("go {where}"));
        assert_eq!(bind("{search}", "cancel my last order"), None);
        // Words after a parameter that come again later: either split could be meant.
        assert_eq!(
            bind(
                "add {item} to the list {list}",
                "add back to school to the list x"
            ),
            Some(vec![
                ("item".into(), "back to school".into()),
                ("list".into(), "x".into())
            ])
        );
        assert_eq!(
            bind(
                "add {item} to {list} now",
                "add back to school supplies to shopping now"
            ),
            None
        );
        // Letters whose lower case has another length never split a character.
        // İ grows by a byte in lower case and the Ohm sign shrinks by one: the lengths of the
        // whole agree, the offsets do not.
        let got = bind("send {a} to {b} now", "send İ to Ωmega now").expect("bound");
        assert_eq!(got[1].1, "ωmega now".trim_end_matches(" now"));
        assert_eq!(
            crate::domain::recipe::book::templated("İ Ω x", &[("p".into(), "x".into())]),
            "İ Ω x"
        );
        let got = bind("send {a} to {b} now", "send İ to Élodie Ω now").expect("bound");
        assert_eq!(
            got[1].1, "élodie ω",
            "values lower-cased when offsets would not line up"
        );
        // Braces in an instruction are not parameters.
        assert_eq!(normalise("Find {x}"), "find x");
    }

    #[test]
    fn a_target_is_found_again_only_when_exactly_one_element_is_it() {
        let page = FakePage::new(
            "https://shop.example.com/cart",
            [
                el("10", "btn", "Remove"),
                el("11", "btn", "Remove"),
                el("12", "btn", "Checkout"),
                el("13", "inp", "Quantity"),
            ],
        );
        let checkout = describe(&page, "12").expect("described");
        assert_eq!(
            checkout,
            TargetDescription {
                role: "btn".into(),
                name: "checkout".into(),
                nth: 0,
                of: 1
            }
        );
        let second_remove = describe(&page, "11").expect("described");
        assert_eq!((second_remove.nth, second_remove.of), (1, 2));

        // The same page after a reload: new ids, the same elements.
        let reloaded = FakePage::new(
            "https://shop.example.com/cart",
            [
                el("a1", "btn", "Remove"),
                el("a2", "btn", "Remove"),
                el("a3", "btn", "  CHECKOUT "),
            ],
        );
        assert_eq!(locate(&reloaded, &checkout), Located::Unique("a3".into()));
        assert_eq!(
            locate(&reloaded, &second_remove),
            Located::Unique("a2".into())
        );
        // A renamed button is missing; a third Remove makes "the second" a guess.
        let changed = FakePage::new(
            "https://shop.example.com/cart",
            [
                el("b1", "btn", "Remove"),
                el("b2", "btn", "Remove"),
                el("b3", "btn", "Remove"),
                el("b4", "btn", "Proceed to payment"),
            ],
        );
        assert_eq!(locate(&changed, &checkout), Located::Missing);
        assert_eq!(locate(&changed, &second_remove), Located::Ambiguous(3));
        // One "Remove" left of two: not "the second" any more.
        let one_left = FakePage::new(
            "https://shop.example.com/cart",
            [el("c1", "btn", "Remove"), el("c2", "btn", "Checkout")],
        );
        assert_eq!(locate(&one_left, &second_remove), Located::Ambiguous(1));
        assert_eq!(locate(&one_left, &checkout), Located::Unique("c2".into()));
        assert_eq!(describe(&page, "99"), None);
    }
}
