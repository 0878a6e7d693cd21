//! An action as a model wrote it, read as meant when there is one reading:
//! - the call inside a sentence, a fence or backticks (`I'll click(5) now.`), a trailing `;`;
//! - the action's name in any case, with or without `_` (`Click`, `set_value`, `SELECTOPTION`);
//! - an element id written `id=5`, `element: 5`, `[5]`, `"5"` or `#5`, and other arguments
//!   with their name before them (`text="hi"`, `url=…`);
//! - a window scroll by direction (`scroll("down")`, one page unless given) and a wait in
//!   milliseconds (`wait(2000)`: 100 or more).
//!
//! Anything else (no call of the grammar, or two different ones) is left as written, for the
//! grammar's own error to name what is wrong.

/// The grammar's action names.
const NAMES: &[&str] = &[
    "click",
    "setValue",
    "navigate",
    "goBack",
    "wait",
    "scroll",
    "scroll_container",
    "findText",
    "hover",
    "press",
    "selectOption",
    "check",
    "uncheck",
    "finish",
    "fail",
    "ask_user",
    "remember",
    "recall",
    "exportToSession",
    "googleSearch",
    "verifySuccess",
    "readPage",
];
/// Actions whose first argument is an element.
const ON_ELEMENT: &[&str] = &[
    "click",
    "setValue",
    "hover",
    "selectOption",
    "check",
    "uncheck",
    "scroll_container",
];
/// Names models write before an argument (`id=5`, `text: "hi"`), compared as [`key`] does.
const ARG_NAMES: &[&str] = &[
    "id",
    "element",
    "elementid",
    "elementindex",
    "index",
    "ref",
    "target",
    "node",
    "text",
    "value",
    "url",
    "query",
    "key",
    "option",
    "direction",
    "pages",
    "seconds",
    "answer",
    "reason",
    "question",
    "description",
];
/// Longest answer searched for a call (an action is far shorter; a text argument is bounded
/// by the grammar).
const MAX_SCAN: usize = 8_000;

/// `raw` rewritten to the grammar when it holds exactly one call of it; otherwise as written.
pub(super) fn as_meant(raw: &str) -> String {
    let s = raw.trim();
    let Some((name, args)) = call_in(s) else {
        return s.to_owned();
    };
    let element = ON_ELEMENT.contains(&name);
    let args: Vec<String> = (args.iter().enumerate())
        .map(|(i, a)| argument(a, element && i == 0))
        .collect();
    let unquoted = |a: &str| a.trim_matches(['"', '\'', '`']).to_ascii_lowercase();
    match (name, args.as_slice()) {
        ("scroll", [dir, rest @ ..]) if matches!(unquoted(dir).as_str(), "down" | "up") => {
            let pages = rest.first().map_or("1", |p| p.as_str());
            format!("scroll({}, {pages})", unquoted(dir) == "down")
        }
        ("wait", [ms]) => match unquoted(ms).parse::<f64>() {
            Ok(ms) if ms >= 100.0 => format!("wait({})", ms / 1000.0),
            _ => format!("wait({ms})"),
        },
        _ => format!("{name}({})", args.join(", ")),
    }
}

/// A name compared: its letters and digits in lower case (`set_value` is `setValue`).
fn key(name: &str) -> String {
    (name.chars().filter(char::is_ascii_alphanumeric))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The one call of the grammar in `s`, with its arguments as written; `None` for none, or for
/// several that differ.
fn call_in(s: &str) -> Option<(&'static str, Vec<&str>)> {
    let end = (0..=MAX_SCAN.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))?;
    let s = &s[..end];
    let mut calls: Vec<(&'static str, Vec<&str>)> = Vec::new();
    let mut from = 0;
    while let Some(at) = s[from..].find('(').map(|a| from + a) {
        let name_len: usize = (s[..at].chars().rev())
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .map(char::len_utf8)
            .sum();
        let name = NAMES
            .iter()
            .find(|n| name_len > 0 && key(n) == key(&s[at - name_len..at]));
        match name.and_then(|n| Some((n, arguments(&s[at..])?))) {
            Some((name, (args, close))) => {
                calls.push((name, args));
                from = at + close + 1;
            }
            None => from = at + 1,
        }
    }
    let first = calls.first()?.clone();
    calls.iter().all(|c| *c == first).then_some(first)
}

/// The arguments of the call whose `(` starts `s`, as written (quotes kept), and where its `)`
/// is. Quotes open only at an argument's start and a backslash escapes inside them, as
/// [`super::split_model_args`] reads them; `None` when the call does not close.
fn arguments(s: &str) -> Option<(Vec<&str>, usize)> {
    let (mut out, mut start, mut depth) = (Vec::new(), 1, 0usize);
    let (mut quote, mut escaped) = (None::<char>, false);
    for (i, c) in s.char_indices().skip(1) {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if "\"'`".contains(c) && s[start..i].trim().is_empty() => quote = Some(c),
            None if c == '(' => depth += 1,
            None if c == ')' && depth > 0 => depth -= 1,
            None if c == ')' => {
                out.push(&s[start..i]);
                return Some((out, i));
            }
            None if c == ',' && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            None => {}
        }
    }
    None
}

/// An argument as the grammar reads it: a name before it dropped, and for an element an id
/// in brackets or after `#` unwrapped.
fn argument(raw: &str, element: bool) -> String {
    let a = raw.trim();
    let named = a.split_once(['=', ':']).filter(|(k, _)| {
        let k = k.trim();
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && ARG_NAMES.contains(&key(k).as_str())
    });
    let v = named.map_or(a, |(_, v)| v.trim());
    let id = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c))
    };
    let unwrapped = (v.strip_prefix('[').and_then(|r| r.strip_suffix(']')))
        .or_else(|| v.strip_prefix('#'))
        .filter(|inner| element && id(inner));
    unwrapped.unwrap_or(v).to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::Action;

    fn read(raw: &str) -> Result<String, String> {
        Action::parse_model(raw).map(|a| a.to_string())
    }

    #[test]
    fn the_spellings_a_model_writes_read_as_the_one_action_they_mean() {
        for raw in [
            "click(5)",
            "Click(5)",
            "CLICK(5)",
            "click(id=5)",
            "click(id = 5)",
            "click(element=5)",
            "click(elementId: 5)",
            "click([5])",
            "click(\"5\")",
            "click('5')",
            "click(#5)",
            "click(5);",
            "`click(5)`",
            "I will click(5) to open the form.",
            "Action: click(5)",
        ] {
            assert_eq!(read(raw), Ok("click(5)".into()), "{raw}");
        }
        assert_eq!(
            read("set_value(id=3, text='Ada, Lovelace')"),
            Ok("setValue(3, \"Ada, Lovelace\")".into())
        );
        assert_eq!(
            read("SelectOption(element: [4], option=\"Blue\")"),
            Ok("selectOption(4, \"Blue\")".into())
        );
        assert_eq!(
            read("navigate(url=\"https://a.test/x?y=1\")"),
            Ok("navigate(\"https://a.test/x?y=1\")".into())
        );
        assert_eq!(read("Finish(\"Done\")"), Ok("finish()".into()));
        assert_eq!(read("askUser(\"Which one?\")"), Ok("ask_user()".into()));
        assert_eq!(read("scroll(\"down\")"), Ok("scroll(true, 1)".into()));
        assert_eq!(read("wait(2000)"), Ok("wait(2)".into()));
    }

    #[test]
    fn text_that_looks_like_a_name_or_a_call_stays_the_users() {
        // A value's own `=`, `:`, `#`, brackets and calls are the value.
        assert_eq!(
            read("setValue(3, \"id=5\")"),
            Ok("setValue(3, \"id=5\")".into())
        );
        assert_eq!(
            read("setValue(3, \"click(9) #2 [x]\")"),
            Ok("setValue(3, \"click(9) #2 [x]\")".into())
        );
        assert_eq!(
            read("navigate(https://a.test/a:b)"),
            Ok("navigate(\"https://a.test/a:b\")".into())
        );
        assert_eq!(read("press(\"#\")"), Ok("press(\"#\")".into()));
    }

    #[test]
    fn no_reading_or_two_readings_are_refused_with_the_grammars_own_words() {
        let e = read("click(5) or click(6)").expect_err("two readings");
        assert!(e.contains("element id"), "{e}");
        let e = read("tap(5)").expect_err("no action");
        assert!(e.contains("not an action of the grammar"), "{e}");
        let e = read("click the Submit button").expect_err("no call");
        assert!(e.contains("name(args)"), "{e}");
        // The same call twice is one reading.
        assert_eq!(read("click(5) — yes, click(5)"), Ok("click(5)".into()));
    }

    #[test]
    fn any_text_is_read_without_panicking_and_within_its_bound() {
        let long = format!("{}click(5)", "((\"'`\\".repeat(3_000));
        let _ = read(&long);
        for raw in [
            "(",
            ")",
            "click(",
            "é(",
            "click(\"",
            "a(b(c(d)))",
            "ñ click(1)",
        ] {
            let _ = read(raw);
        }
        assert_eq!(read("ñ click(1)"), Ok("click(1)".into()));
    }
}
