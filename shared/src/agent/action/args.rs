//! Splitting and checking action arguments the way the extension's client does (and the
//! tolerant variant for what models write).

use super::MAX_TEXT_ARG;

/// Splits `args` on commas outside quotes and strips one pair of quotes, as the client does.
pub fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                cur.push(c);
            }
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' || c == '`' => {
                quote = Some(c);
                cur.push(c);
            }
            None if c == ',' => out.push(std::mem::take(&mut cur)),
            None => cur.push(c),
        }
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|a| {
            let a = a.trim();
            for q in ['"', '\'', '`'] {
                if a.len() >= 2 && a.starts_with(q) && a.ends_with(q) {
                    return a[1..a.len() - 1].to_owned();
                }
            }
            a.to_owned()
        })
        .collect()
}

/// Splits a model's arguments: like [`split_args`], but inside quotes a backslash escapes the
/// next character (models write `"say \"hi\""` despite being told not to).
pub fn split_model_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let mut chars = args.chars();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) if c == '\\' => {
                if let Some(next) = chars.next() {
                    cur.push(next);
                }
            }
            Some(_) => cur.push(c),
            None if (c == '"' || c == '\'' || c == '`') && cur.trim().is_empty() && !quoted => {
                cur.clear();
                quoted = true;
                quote = Some(c);
            }
            None if c == ',' => {
                out.push(if quoted {
                    std::mem::take(&mut cur)
                } else {
                    std::mem::take(&mut cur).trim().to_owned()
                });
                quoted = false;
            }
            None if quoted => {} // text after a closing quote is ignored
            None => cur.push(c),
        }
    }
    if any && (!cur.trim().is_empty() || quoted || !out.is_empty()) {
        out.push(if quoted { cur } else { cur.trim().to_owned() });
    }
    out
}

pub(super) fn element_id(raw: &str) -> Result<String, String> {
    let id = raw.trim();
    if id.is_empty()
        || id.len() > 64
        || id
            .chars()
            .any(|c| c.is_whitespace() || "\"'`(),".contains(c))
    {
        return Err(format!("`{raw}` is not an element id"));
    }
    Ok(id.to_owned())
}

pub(super) fn text(raw: &str, what: &str) -> Result<String, String> {
    if raw.chars().count() > MAX_TEXT_ARG {
        return Err(format!("{what} is longer than {MAX_TEXT_ARG} characters"));
    }
    Ok(raw.to_owned())
}

pub(super) fn number(raw: &str, what: &str, max: f64) -> Result<f64, String> {
    let n: f64 = raw
        .trim()
        .parse()
        .map_err(|_| format!("{what} must be a number, got `{raw}`"))?;
    if !(n > 0.0 && n <= max) {
        return Err(format!("{what} must be above 0 and at most {max}"));
    }
    Ok(n)
}
