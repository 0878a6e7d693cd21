//! The templatized `dom` format: legend lines `Tn: <template with $1, $2 …>`, a blank line,
//! then a body in which repeated subtrees are calls `{Tn(arg, "arg", …)}`. Expansion is
//! bounded: a call takes at most [`MAX_TEMPLATE_ARGS`] arguments, the expanded page at most
//! [`MAX_EXPANDED_BYTES`], and each template is substituted in one pass over it.

use std::collections::BTreeMap;

use super::PageError;

/// Most arguments one template call may pass (the corpus's largest call passes 56).
pub const MAX_TEMPLATE_ARGS: usize = 128;
/// Largest expanded page (the corpus expands by at most 2.2×; a 500 000-character string
/// may grow to 2 MB).
pub const MAX_EXPANDED_BYTES: usize = 2_000_000;
/// Most templates a legend may define.
pub const MAX_TEMPLATES: usize = 10_000;

/// The legend of a templatized string and the body that calls it.
#[derive(Debug, Clone, PartialEq)]
pub struct Templates {
    /// Template name → body with `$k` placeholders.
    pub legend: BTreeMap<String, String>,
    pub body: String,
}

/// One `{Tn(args)}` call in a body: where it is and its parsed arguments.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    start: usize,
    end: usize,
    name: String,
    args: Vec<String>,
}

/// The expanded page and the element ids passed to templates as `id=$k` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    pub html: String,
    pub ids: Vec<String>,
}

/// Whether `line` starts with a legend name `T<digits>: `.
fn template_name(line: &str) -> Option<&str> {
    let digits = line
        .strip_prefix('T')?
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    (digits > 0 && line[1 + digits..].starts_with(": ")).then(|| &line[..1 + digits])
}

impl Templates {
    /// Recognises a templatized string: legend lines `Tn: ...` (possibly none, then the string
    /// starts with a blank line) followed by a blank line and the body. `None` for plain HTML.
    pub fn parse(dom: &str) -> Option<Self> {
        let mut legend = BTreeMap::new();
        let mut rest = dom;
        loop {
            if let Some(r) = rest.strip_prefix('\n') {
                // The blank line that ends the legend.
                return (!legend.is_empty() || dom.starts_with('\n')).then(|| Templates {
                    legend,
                    body: r.to_owned(),
                });
            }
            let (line, tail) = rest.split_once('\n')?;
            let name = template_name(line)?;
            // A template body can span lines: it continues until the next `Tn: ` or blank line.
            let mut template = line[name.len() + 2..].to_owned();
            let mut tail = tail;
            while !tail.is_empty() && !tail.starts_with('\n') && template_name(tail).is_none() {
                let (l, t) = tail.split_once('\n').unwrap_or((tail, ""));
                template.push('\n');
                template.push_str(l);
                tail = t;
            }
            legend.insert(name.to_owned(), template);
            if legend.len() > MAX_TEMPLATES {
                return None;
            }
            rest = tail;
        }
    }

    fn calls(&self) -> Result<Vec<Call>, PageError> {
        let bytes = self.body.as_bytes();
        let mut calls = Vec::new();
        let mut i = 0;
        while let Some(off) = self.body[i..].find("{T") {
            let start = i + off;
            let digits = bytes[start + 2..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let name_end = start + 2 + digits;
            if digits == 0 || bytes.get(name_end) != Some(&b'(') {
                i = start + 2;
                continue;
            }
            let name = &self.body[start + 1..name_end];
            if !self.legend.contains_key(name) {
                i = name_end;
                continue;
            }
            match parse_args(&self.body[name_end + 1..]) {
                Ok(Some((args, used))) => {
                    let end = name_end + 1 + used;
                    calls.push(Call {
                        start,
                        end,
                        name: name.to_owned(),
                        args,
                    });
                    i = end;
                }
                Ok(None) => i = name_end,
                Err(()) => {
                    return Err(PageError::TooManyArguments {
                        template: name.to_owned(),
                        max: MAX_TEMPLATE_ARGS,
                    })
                }
            }
        }
        Ok(calls)
    }

    /// The body with every call replaced by its template, arguments substituted (ids quoted),
    /// and the ids passed as `id=$k` arguments.
    pub fn expand(&self) -> Result<Expansion, PageError> {
        let id_positions: BTreeMap<&str, Vec<usize>> = self
            .legend
            .iter()
            .map(|(name, t)| (name.as_str(), id_placeholders(t)))
            .collect();
        let calls = self.calls()?;
        let mut html = String::with_capacity(self.body.len().min(MAX_EXPANDED_BYTES) * 2);
        let mut ids = Vec::new();
        let mut last = 0;
        let too_large = || PageError::TooLarge {
            max: MAX_EXPANDED_BYTES,
        };
        for call in &calls {
            html.push_str(&self.body[last..call.start]);
            if let Some(t) = self.legend.get(&call.name) {
                substitute(t, &call.args, &mut html, MAX_EXPANDED_BYTES).ok_or_else(too_large)?;
            }
            for &k in id_positions.get(call.name.as_str()).into_iter().flatten() {
                if let Some(v) = call.args.get(k - 1).map(|v| v.trim()) {
                    if super::dom::usable_id(v) {
                        ids.push(v.to_owned());
                    }
                }
            }
            last = call.end;
            if html.len() > MAX_EXPANDED_BYTES {
                return Err(too_large());
            }
        }
        html.push_str(&self.body[last..]);
        if html.len() > MAX_EXPANDED_BYTES {
            return Err(too_large());
        }
        Ok(Expansion { html, ids })
    }
}

/// Placeholder numbers used as the value of an id attribute (`id`, `data-id`,
/// `data-element-id`, as a whole attribute name) in a template.
fn id_placeholders(template: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(off) = template[from..].find("id=$") {
        let pos = from + off;
        from = pos + 4;
        let before = &template[..pos];
        let whole_name = ["", "data-", "data-element-"].iter().any(|prefix| {
            before
                .strip_suffix(prefix)
                .is_some_and(|b| b.ends_with(|c: char| c.is_whitespace()))
        });
        if !whole_name {
            continue;
        }
        let digits: String = template[from..]
            .chars()
            .take_while(char::is_ascii_digit)
            .take(6)
            .collect();
        if let Ok(k) = digits.parse::<usize>() {
            if (1..=MAX_TEMPLATE_ARGS).contains(&k) {
                out.push(k);
            }
        }
    }
    out
}

/// Appends `template` with `$k` replaced by argument k to `out`, in one pass. The longest
/// `$digits` prefix naming an existing argument wins (`$12` is argument 12 when there are at
/// least 12, else argument 1 followed by `2`); a placeholder right after `id=` gets a quoted
/// value. `None` when `out` would grow beyond `limit` bytes.
fn substitute(template: &str, args: &[String], out: &mut String, limit: usize) -> Option<()> {
    let bytes = template.as_bytes();
    let mut last = 0;
    let mut i = 0;
    while let Some(off) = template[i..].find('$') {
        let dollar = i + off;
        let digits = bytes[dollar + 1..]
            .iter()
            .take(6)
            .take_while(|b| b.is_ascii_digit())
            .count();
        // The longest prefix of the digits that names an argument.
        let chosen = (1..=digits).rev().find_map(|n| {
            let k: usize = template[dollar + 1..dollar + 1 + n].parse().ok()?;
            (1..=args.len()).contains(&k).then_some((n, k))
        });
        let Some((n, k)) = chosen else {
            i = dollar + 1;
            continue;
        };
        out.push_str(&template[last..dollar]);
        let value = &args[k - 1];
        if template[..dollar].ends_with("id=") {
            out.push('"');
            out.push_str(value.trim());
            out.push('"');
        } else {
            out.push_str(value);
        }
        if out.len() > limit {
            return None;
        }
        last = dollar + 1 + n;
        i = last;
    }
    out.push_str(&template[last..]);
    (out.len() <= limit).then_some(())
}

/// Parses `a, "b", 3)}` after a call's `(`: the arguments and the bytes consumed (through the
/// closing `)` and `}`). `Ok(None)` when this is not a well-formed call; `Err` when it passes
/// more than [`MAX_TEMPLATE_ARGS`] arguments. A bare (unquoted) argument never contains
/// `{ } ( " <` or a line break, so a broken call stops at the next call instead of reading
/// the rest of the body.
fn parse_args(s: &str) -> Result<Option<(Vec<String>, usize)>, ()> {
    let mut args = Vec::new();
    let mut chars = s.char_indices().peekable();
    loop {
        while chars.peek().is_some_and(|(_, c)| *c == ' ') {
            chars.next();
        }
        if args.len() >= MAX_TEMPLATE_ARGS {
            return Err(());
        }
        match chars.peek().copied() {
            Some((_, ')')) if args.is_empty() => {
                chars.next();
                break;
            }
            Some((start, '"')) => {
                // A JSON string: find its end, honouring escapes, and decode it.
                chars.next();
                let mut escaped = false;
                let mut end = None;
                for (i, c) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        end = Some(i);
                        break;
                    }
                }
                let Some(end) = end else {
                    return Ok(None);
                };
                let raw = &s[start..=end];
                args.push(
                    serde_json::from_str::<String>(raw)
                        .unwrap_or_else(|_| raw[1..raw.len() - 1].to_owned()),
                );
            }
            Some((start, _)) => {
                // A bare argument: up to the next comma or `)`.
                let mut end = None;
                while let Some(&(i, c)) = chars.peek() {
                    if c == ',' || c == ')' {
                        end = Some(i);
                        break;
                    }
                    if matches!(c, '{' | '}' | '(' | '"' | '<' | '\n') {
                        return Ok(None);
                    }
                    chars.next();
                }
                let Some(end) = end else {
                    return Ok(None);
                };
                args.push(s[start..end].to_owned());
            }
            None => return Ok(None),
        }
        match chars.next() {
            Some((_, ',')) => continue,
            Some((_, ')')) => break,
            _ => return Ok(None),
        }
    }
    Ok(match chars.next() {
        Some((i, '}')) => Some((args, i + 1)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_calls_expand_and_their_id_arguments_count() {
        let dom = "T1: <div><a id=$1>$2</a><p>$3</p></div>\nT2: <li id=$1>$2</li>\n\n<html><body>{T1(12,\"Hello, \\\"world\\\"\",\"x\")}<a id=\"5\">Home</a>{T2(99,\"Item\")}{T9(1)}</body></html>";
        let t = Templates::parse(dom).expect("templatized");
        assert_eq!(t.legend.len(), 2);
        let e = t.expand().expect("expands");
        let mut ids = e.ids.clone();
        ids.sort();
        assert_eq!(ids, vec!["12", "99"]);
        assert!(
            e.html.contains(r#"<a id="12">Hello, "world"</a>"#),
            "{}",
            e.html
        );
        assert!(e.html.contains("{T9(1)}"), "unknown templates stay as text");
    }

    #[test]
    fn only_id_attributes_pass_ids_and_only_usable_ones() {
        assert_eq!(
            id_placeholders("<a id=$1 data-uid=$2 grid=$3 data-id=$4 data-element-id=$5>"),
            vec![1, 4, 5]
        );
        let t =
            Templates::parse("T1: <a id=$1>$2</a>\n\n{T1(7,\"x\")}{T1(\"a b\",\"y\")}").expect("t");
        assert_eq!(t.expand().expect("expands").ids, vec!["7"]);
    }

    #[test]
    fn a_string_starting_with_a_blank_line_is_templatized_without_templates() {
        let t = Templates::parse("\n<html><head/><body><a id=\"3\">x</a></body></html>")
            .expect("format");
        assert!(t.legend.is_empty());
        assert!(Templates::parse("<html><body></body></html>").is_none());
        assert!(Templates::parse("Title: something\n\nbody").is_none());
        let multi = Templates::parse("T1: <ul>\n<li>$1</li>\n</ul>\nT2: <b>$1</b>\n\n{T1(\"a\")}")
            .expect("multi-line template");
        assert_eq!(multi.legend["T1"], "<ul>\n<li>$1</li>\n</ul>");
    }

    #[test]
    fn placeholders_pick_the_longest_argument_number_that_exists_in_one_pass() {
        let args: Vec<String> = (1..=12).map(|k| format!("a{k}")).collect();
        let mut out = String::new();
        substitute("$12|$1|$13|id=$2|$x|$", &args, &mut out, 1000).expect("fits");
        assert_eq!(out, "a12|a1|a13|id=\"a2\"|$x|$");
        let mut out = String::new();
        substitute("$12", &args[..5], &mut out, 1000).expect("fits");
        assert_eq!(out, "a12", "with 5 arguments $12 is argument 1 then '2'");
        // Arguments are not substituted again.
        let mut out = String::new();
        substitute("$1 $2", &["$2".into(), "b".into()], &mut out, 1000).expect("fits");
        assert_eq!(out, "$2 b");
    }

    #[test]
    fn too_many_arguments_or_too_large_an_expansion_is_refused() {
        let args = vec!["1"; MAX_TEMPLATE_ARGS + 1].join(",");
        let t = Templates::parse(&format!("T1: <a id=$1>$2</a>\n\n{{T1({args})}}")).expect("t");
        assert!(matches!(
            t.expand(),
            Err(PageError::TooManyArguments { .. })
        ));
        // 500 KB of calls to a 60 KB template would be gigabytes.
        let template = "x".repeat(60_000);
        let body = "{T1(1)}".repeat(70_000);
        let t = Templates::parse(&format!("T1: {template}$1\n\n{body}")).expect("t");
        assert!(matches!(t.expand(), Err(PageError::TooLarge { .. })));
    }

    #[test]
    fn broken_calls_and_long_legends_cost_linear_time() {
        // 120 000 unclosed calls: each attempt stops at the next call.
        let body = "{T1(12 ".repeat(120_000);
        let t = Templates::parse(&format!("T1: <a id=$1>x</a>\n\n{body}")).expect("t");
        let e = t.expand().expect("nothing to expand");
        assert!(e.ids.is_empty());
        // A legend of 50 000 continuation lines without any ": ".
        let legend = format!("T1: <p>\n{}\n<b>x</b>", "<i>y</i>\n".repeat(50_000));
        let t = Templates::parse(&legend).expect("t");
        assert_eq!(t.body, "<b>x</b>");
    }
}
