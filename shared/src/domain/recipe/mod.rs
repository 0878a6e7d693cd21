//! Recipes' rules (the model: `docs/recipes.md`): a site key, an instruction as a template of
//! the user's values, and a target found again by role, name and position among equals.

pub mod book;
pub mod run;

use serde::{Deserialize, Serialize};

use super::facts::{ElementFacts, PageFacts};
use crate::text::{collapse_ws, word_starts};

/// Bounds: instruction, parameters and a value, path segments, a name, a context.
const MAX_INSTRUCTION_CHARS: usize = 2_000;
const MAX_PARAMS: usize = 12;
const MAX_PARAM_CHARS: usize = 200;
const MAX_PATH_SEGMENTS: usize = 16;
const MAX_NAME_CHARS: usize = 120;
const MAX_CONTEXT_CHARS: usize = 120;
/// Words an approximate match (`RECIPE_MATCH=approximate`) lets an instruction add or drop.
const FILLER: &[&str] = &["please", "kindly", "just", "now", "the", "a", "an"];

/// `scheme://host:port` and the path (with a `#/route`), variable segments as `*`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SiteKey {
    pub origin: String,
    pub path: String,
}

/// The site of an absolute http(s) URL; `None` for others (`about:blank`, `data:`).
pub fn site_key(url: &str) -> Option<SiteKey> {
    let parsed = reqwest::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str()?.to_ascii_lowercase();
    let port = parsed.port_or_known_default()?;
    let pattern = |path: &str| {
        let segments = path.split('/').filter(|s| !s.is_empty());
        let mut kept: Vec<String> = (segments.clone().take(MAX_PATH_SEGMENTS))
            .map(|s| match variable_segment(s) {
                true => "*".to_owned(),
                false => s.to_ascii_lowercase().chars().take(60).collect(),
            })
            .collect();
        // Deeper than kept: another kind of page than the one the kept segments name.
        if segments.count() > MAX_PATH_SEGMENTS {
            kept.push("…".into());
        }
        format!("/{}", kept.join("/"))
    };
    let route =
        (parsed.fragment().and_then(crate::text::hash_route)).map(|f| format!("#{}", pattern(f)));
    Some(SiteKey {
        origin: format!("{}://{host}:{port}", parsed.scheme()),
        path: format!("{}{}", pattern(parsed.path()), route.unwrap_or_default()),
    })
}

/// A segment naming a record: a record's code, or mostly digits (`step-2`, `v2` are pages).
fn variable_segment(s: &str) -> bool {
    let alnum = s.chars().filter(|c| c.is_alphanumeric()).count();
    let digits = s.chars().filter(char::is_ascii_digit).count();
    record_code(s) || (digits > 0 && digits * 2 > alnum)
}

/// Two digits in a row (a number, a date, `INV-1041`) or a long run of hex.
fn record_code(s: &str) -> bool {
    let run = (s.as_bytes().windows(2)).any(|w| w[0].is_ascii_digit() && w[1].is_ascii_digit());
    run || (s.len() >= 16 && s.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Whether a name holds a record's number or code ("Invoice INV-1041"; "Tab 2" names a place).
pub fn names_a_record(name: &str) -> bool {
    name.split_whitespace().any(record_code)
}

/// Words as compared: normalised, numbers as `#`; `None` when nothing is left.
pub fn context(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in normalise(text).chars().take(MAX_CONTEXT_CHARS) {
        match c.is_numeric() {
            true if out.ends_with('#') => {}
            true => out.push('#'),
            false => out.push(c),
        }
    }
    Some(out.trim().to_owned()).filter(|o| !o.is_empty())
}

/// An instruction with the user's values as named parameters: `order {quantity} of SKU {sku}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub text: String,
    /// The values, by name, in order of appearance.
    pub params: Vec<(String, String)>,
}

/// Lower case, whitespace collapsed, trailing sentence punctuation and braces dropped.
pub fn normalise(text: &str) -> String {
    collapsed(text).to_lowercase()
}

/// [`normalise`] without the lower case: the values as the user wrote them.
fn collapsed(text: &str) -> String {
    let text = collapse_ws(&text.chars().take(MAX_INSTRUCTION_CHARS).collect::<String>());
    text.trim_end_matches(['.', '!', '?', ' '])
        .replace(['{', '}'], "")
}

/// The template of `instruction` given the values the run typed or chose, by field: a value
/// the instruction holds as a whole word (the longest first) becomes a parameter named after
/// its field; other values stay out.
pub fn parameterise(instruction: &str, supplied: &[(&str, &str)]) -> Template {
    let mut text = normalise(instruction);
    let mut params: Vec<(String, String)> = Vec::new();
    let mut values: Vec<(String, String)> = (supplied.iter())
        .map(|(field, v)| (slug(field), normalise(v)))
        .filter(|(_, v)| !v.is_empty() && v.chars().count() <= MAX_PARAM_CHARS)
        .collect();
    values.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (field, value) in values {
        let at = word_starts(&text, &value).next();
        let Some(at) = at.filter(|_| params.len() < MAX_PARAMS) else {
            continue;
        };
        let base = if field.is_empty() {
            "value".into()
        } else {
            field
        };
        let taken = |name: &String| params.iter().any(|(p, _)| p == name);
        let mut name = base.clone();
        for n in 2.. {
            if !taken(&name) {
                break;
            }
            name = format!("{base}{n}");
        }
        text.replace_range(at..at + value.len(), &format!("{{{name}}}"));
        params.push((name, value));
    }
    params.sort_by_key(|(name, _)| text.find(&format!("{{{name}}}")).unwrap_or(usize::MAX));
    Template { text, params }
}

/// Whether a template has two words of its own (`{search}`, `go {where}` take anything).
pub fn specific(template: &str) -> bool {
    let parts = parts(template, false).unwrap_or_default();
    let words = parts.iter().flat_map(|(_, lit)| lit);
    (words.filter(|w| w.chars().any(char::is_alphanumeric))).count() >= 2
}

/// The values `instruction` gives `template`'s parameters, as written; `None` for another task.
/// Words and marks compare in order (`loose`: words only, [`FILLER`] words free). A parameter
/// takes a word at least, up to the words after it, which must come once.
pub fn bind(template: &str, instruction: &str, loose: bool) -> Option<Vec<(String, String)>> {
    if !specific(template) {
        return None;
    }
    let written = collapsed(instruction);
    let text = words(&written, loose);
    let (mut at, mut out) = (0, Vec::new());
    for (param, lit) in parts(template, loose)? {
        let here = |j: usize| {
            let ws = text.get(j..j + lit.len());
            ws.is_some_and(|ws| ws.iter().zip(&lit).all(|(w, l)| w.0 == *l))
        };
        let worded = lit.iter().any(|w| w.chars().any(char::is_alphanumeric));
        let j = match &param {
            None if here(at) => at,
            None => return None,
            Some(_) if lit.is_empty() => text.len(),
            Some(_) => {
                let mut found = (at + 1..text.len()).filter(|&j| here(j));
                let j = found.next()?;
                (!worded || found.next().is_none()).then_some(j)?
            }
        };
        if let Some(name) = param {
            out.push((name, value(&written, &text[at..j])?));
        }
        at = j + lit.len();
    }
    (at == text.len()).then_some(out)
}

/// A word or mark of an instruction: its lower case and where it is in the text as written.
type Word = (String, usize, usize);

/// The words (runs of letters and digits) of `text` and, unless `loose`, each mark between
/// them; `loose` leaves the fillers out.
fn words(text: &str, loose: bool) -> Vec<Word> {
    let (mut out, mut start) = (Vec::new(), None);
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if let Some(s) = start.filter(|_| !c.is_alphanumeric()) {
            let lower = text[s..i].to_lowercase();
            if !(loose && FILLER.contains(&lower.as_str())) {
                out.push((lower, s, i));
            }
            start = None;
        }
        if c.is_alphanumeric() {
            start = start.or(Some(i));
        } else if !loose && !c.is_whitespace() {
            out.push((c.to_string(), i, i + c.len_utf8()));
        }
    }
    out
}

/// A template's words before its first parameter, then each parameter with the words after
/// it; `None` for two parameters with nothing compared between them.
fn parts(template: &str, loose: bool) -> Option<Vec<(Option<String>, Vec<String>)>> {
    let (mut out, mut param, mut rest) = (Vec::new(), None, template);
    loop {
        let open = rest.find('{').unwrap_or(rest.len());
        let lit: Vec<String> = words(&rest[..open], loose)
            .into_iter()
            .map(|w| w.0)
            .collect();
        if param.is_some() && lit.is_empty() && open < rest.len() {
            return None;
        }
        out.push((param.take(), lit));
        if open == rest.len() {
            return Some(out);
        }
        let close = open + rest[open..].find('}')?;
        param = Some(rest[open + 1..close].to_owned());
        rest = &rest[close + 1..];
    }
}

/// A parameter's value as written: its words and what is between them, with a sign, point or
/// currency mark before the first (`-3`, `$20`) and what sticks to the last (`50%`, `Hello!`).
fn value(written: &str, ws: &[Word]) -> Option<String> {
    let (first, last) = (ws.first()?, ws.last()?);
    let marks = ['-', '+', '.', '$', '€', '£', '¥', '#'];
    let start = written[..first.1].trim_end_matches(marks).len();
    let tail = &written[last.2..];
    let stuck = tail.find(|c: char| c.is_whitespace() || "\"'“”‘’«»),;:".contains(c));
    let v = written[start..last.2 + stuck.unwrap_or(tail.len())].trim();
    (!v.is_empty() && v.chars().count() <= MAX_PARAM_CHARS).then(|| v.to_owned())
}

/// A field's name as a parameter's: lower-case letters and digits, words joined by `_`.
fn slug(name: &str) -> String {
    let lower = name.to_lowercase();
    let words: Vec<&str> = (lower.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    words.join("_").chars().take(40).collect()
}

/// A recorded target by what survives a reload: role, normalised name, its position among
/// the elements of that role and name, and how many there were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetDescription {
    pub role: String,
    pub name: String,
    pub nth: usize,
    pub of: usize,
}

/// Where a described target is on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    Unique(String),
    Missing,
    /// Several could be it and the page does not say which (their number changed).
    Ambiguous(usize),
}

/// The elements of `page` with `role` and name `name`.
fn equals(page: &dyn PageFacts, role: &str, name: &str) -> Vec<String> {
    let named = |e: &ElementFacts<'_>| e.role == role && name_key(e) == name;
    page.elements()
        .filter(named)
        .map(|e| e.id.to_owned())
        .collect()
}

/// The description of element `id` of `page`.
pub fn describe(page: &dyn PageFacts, id: &str) -> Option<TargetDescription> {
    let target = page.element(id)?;
    let (role, name) = (target.role.to_string(), name_key(&target));
    let equals = equals(page, &role, &name);
    let nth = equals.iter().position(|e| e == id)?;
    let of = equals.len();
    Some(TargetDescription {
        role,
        name,
        nth,
        of,
    })
}

/// The element `target` describes: the one with its role and name or, among as many as when
/// recorded, the one at its position.
pub fn locate(page: &dyn PageFacts, target: &TargetDescription) -> Located {
    let equals = equals(page, &target.role, &target.name);
    match (equals.len(), equals.get(target.nth)) {
        (0, _) => Located::Missing,
        (n, Some(id)) if n == target.of.max(1) => Located::Unique(id.clone()),
        (n, _) => Located::Ambiguous(n),
    }
}

fn name_key(e: &ElementFacts<'_>) -> String {
    normalise(&e.name).chars().take(MAX_NAME_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    #[test]
    fn a_site_is_its_origin_and_the_kind_of_page() {
        let key = |u: &str| site_key(u).map(|k| format!("{} {}", k.origin, k.path));
        assert_eq!(
            key("https://www.shop.example.co.uk/orders/123/edit?x=1#top").as_deref(),
            Some("https://www.shop.example.co.uk:443 /orders/*/edit")
        );
        assert_eq!(
            key("https://app.acme.com/items/SKU-42").as_deref(),
            Some("https://app.acme.com:443 /items/*")
        );
        // Another scheme, host or port is another site.
        assert_eq!(
            key("http://localhost:3000/").as_deref(),
            Some("http://localhost:3000 /")
        );
        assert_ne!(key("http://app.acme.com/x"), key("https://app.acme.com/x"));
        assert_ne!(
            key("https://evil.acme.com/x"),
            key("https://app.acme.com/x")
        );
        assert_ne!(
            key("http://127.0.0.1:8001/x"),
            key("http://127.0.0.1:8000/x")
        );
        assert_eq!(
            key("https://a.com/x/3f2a9c0d1e2b3a4c5d6e7f8091a2b3c4").as_deref(),
            Some("https://a.com:443 /x/*")
        );
        // A lone digit names a kind of page; more of them a record.
        assert_eq!(
            key("http://127.0.0.1:8000/miniwob/click-tab-2-hard.html").as_deref(),
            Some("http://127.0.0.1:8000 /miniwob/click-tab-2-hard.html")
        );
        assert_eq!(
            key("https://a.com/v2/orders/7/items/2024-05-01").as_deref(),
            Some("https://a.com:443 /v2/orders/*/items/*")
        );
        assert_eq!(key("about:blank"), None);
        assert_eq!(key("data:text/html,hi"), None);
    }

    #[test]
    fn a_context_is_its_words_with_numbers_as_a_mark() {
        assert_eq!(
            context("  Clear all 12 notifications? "),
            context("Clear all 3 notifications")
        );
        assert_ne!(
            context("Clear all notifications?"),
            context("Delete your workspace and all its data?")
        );
        assert_eq!(context(" 42 "), Some("#".into()));
        assert_eq!(context("  "), None);
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
            bind(&t.text, "order 12 of SKU 987", false),
            Some(vec![
                ("quantity".into(), "12".into()),
                ("sku".into(), "987".into())
            ])
        );
        // Matched in lower case; values come back as written.
        assert_eq!(
            bind(
                "ship to {name}, today",
                "Ship to  Grace Hopper, today.",
                false
            ),
            Some(vec![("name".into(), "Grace Hopper".into())])
        );
        // Another task is not this one.
        assert_eq!(bind(&t.text, "cancel 12 of SKU 987", false), None);
        assert_eq!(bind(&t.text, "order 12 of SKU", false), None);
        assert_eq!(
            bind(&t.text, "order 12 of SKU 987 and call me", false),
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
            bind(
                "add contact {first} {last}",
                "Add contact Mary Ann Smith",
                false
            ),
            None
        );
        // No supplied value: the instruction itself is the key.
        let plain = parameterise("Open my invoices", &[]);
        assert_eq!(
            (plain.text.as_str(), plain.params.len()),
            ("open my invoices", 0)
        );
        assert_eq!(bind(&plain.text, "open my  Invoices!", false), Some(vec![]));
        assert_eq!(bind(&plain.text, "open my invoices from 2023", false), None);
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
        assert_eq!(bind("send {a}{b}", "send 53", false), None);
        // A template that is mostly a parameter would take any instruction.
        assert!(!specific("{search}") && !specific("go {where}"));
        assert_eq!(bind("{search}", "cancel my last order", false), None);
        // Words after a parameter that come again later: either split could be meant.
        assert_eq!(
            bind(
                "add {item} to the list {list}",
                "add back to school to the list x",
                false
            ),
            Some(vec![
                ("item".into(), "back to school".into()),
                ("list".into(), "x".into())
            ])
        );
        assert_eq!(
            bind(
                "add {item} to {list} now",
                "add back to school supplies to shopping now",
                false
            ),
            None
        );
        // Letters whose lower case has another length (İ grows by a byte, the Ohm sign
        // shrinks by one) never split a character, and values keep them as written.
        let got = bind("send {a} to {b} now", "send İ to Ωmega now", false).expect("bound");
        assert_eq!((got[0].1.as_str(), got[1].1.as_str()), ("İ", "Ωmega"));
        let got = bind("send {a} to {b} now", "send İ to Élodie Ω now", false).expect("bound");
        assert_eq!(got[1].1, "Élodie Ω");
        // Quotes around a value are the template's; what sticks to its end is the value's.
        let enter = "enter \"{text}\" into the field";
        let said = "Enter \"Hello, world!\" into the field";
        let hello = Some(vec![("text".into(), "Hello, world!".into())]);
        assert_eq!(bind(enter, said, false), hello);
        assert_eq!(bind(enter, &said.replace('"', "'"), false), None);
        assert_eq!(bind(enter, &said.replace('"', "'"), true), hello);
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

    fn bindl(template: &str, instruction: &str) -> Option<Vec<(String, String)>> {
        bind(template, instruction, true)
    }

    fn vals(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn other_punctuation_and_filler_words_bind_with_the_values_as_written() {
        let t = "ship {quantity} boxes of {item} to the office";
        assert_eq!(
            bindl(t, "Please ship 3 boxes of A4 paper, to office!"),
            vals(&[("quantity", "3"), ("item", "A4 paper")])
        );
        // Two parameters with only punctuation between them: where one ends is a guess.
        let checkout = "ship to {name}, {street}, with {shipping} shipping";
        assert_eq!(
            bindl(
                checkout,
                "please ship to Grace Hopper, 1 Main Street, Arlington with standard shipping"
            ),
            None
        );
    }

    #[test]
    fn words_of_the_template_must_all_come_in_order() {
        let t = "click the {button} button on the form";
        assert_eq!(
            bindl(t, "Please click the 'Press me' button on the form."),
            vals(&[("button", "Press me")])
        );
        assert_eq!(
            bindl(t, "click Press me button on form now"),
            vals(&[("button", "Press me")])
        );
        // A word of its own missing, another added, or the order changed: another task.
        assert_eq!(bindl(t, "click the Press me button"), None);
        assert_eq!(
            bindl(t, "click the Press me button on the form twice"),
            None
        );
        assert_eq!(bindl(t, "on the form click the Press me button"), None);
        // The literal after a parameter must come once.
        assert_eq!(
            bindl("add {item} to {list} now", "add back to school to shopping"),
            None
        );
        assert_eq!(bindl("{search}", "anything at all"), None);
    }
}
