//! The action grammar the extension executes, parsed and written exactly the way its client
//! does: `name(args)`, arguments split on commas outside quotes, one pair of `"`, `'` or
//! `` ` `` stripped, no unescaping. So a string is always quoted with a quote character that
//! does not occur in it, and never with escapes.
//!
//! The model may add a reason to `fail("...")` and a question to `ask_user("...")`; the client
//! grammar has neither, so they travel in `thought`/`userQuestion` and the action is sent bare.

mod args;
mod lenient;

use std::fmt;

use args::{element_id, number, text};
pub use args::{split_args, split_model_args};

use crate::domain::outcome::ActionKind;

/// Scroll direction of `scroll_container`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

impl Direction {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "up" => Some(Self::Up),
            "down" => Some(Self::Down),
            "left" => Some(Self::Left),
            "right" => Some(Self::Right),
            _ => None,
        }
    }
    fn as_str(self) -> &'static str {
        match self {
            Self::Up => "up",
            Self::Down => "down",
            Self::Left => "left",
            Self::Right => "right",
        }
    }
}

/// One action of the grammar.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Click(String),
    SetValue(String, String),
    Navigate(String),
    GoBack,
    Wait(f64),
    Scroll {
        down: bool,
        pages: f64,
    },
    ScrollContainer(String, Direction),
    FindText(String),
    Hover(String),
    Press(String),
    SelectOption(String, String),
    Check(String),
    Uncheck(String),
    /// With the model's answer, when it gave one (shown in the thought; the client gets
    /// `finish()`).
    Finish(Option<String>),
    /// With the model's reason (not sent to the client).
    Fail(Option<String>),
    /// With the model's question (sent as `userQuestion`).
    AskUser(Option<String>),
    /// Server tools (memory): run by the server, never executed by the client.
    Remember(String, String),
    Recall(String),
    ExportToSession(String),
    /// Server tools: a web search, and a check of the task's success on the current page.
    GoogleSearch(String),
    VerifySuccess(String),
    /// `readPage("question")`: the server reads the current public page and answers.
    ReadPage(String),
}

/// Longest memory key.
pub const MAX_MEMORY_KEY: usize = 64;
/// Longest remembered value.
pub const MAX_MEMORY_VALUE: usize = 1_000;

fn memory_key(raw: &str) -> Result<String, String> {
    let k = raw.trim();
    if k.is_empty() || k.chars().count() > MAX_MEMORY_KEY {
        return Err(format!(
            "a memory key must be 1 to {MAX_MEMORY_KEY} characters"
        ));
    }
    Ok(k.to_owned())
}

/// Longest text argument accepted.
pub const MAX_TEXT_ARG: usize = 2000;
/// Longest search query, and longest description given to `verifySuccess`.
pub const MAX_SEARCH_QUERY: usize = crate::domain::web::QUERY_CHARS;
pub const MAX_VERIFY_TEXT: usize = 500;

/// A non-empty text argument of at most `max` characters.
fn bounded_text(raw: &str, what: &str, max: usize) -> Result<String, String> {
    let t = raw.trim();
    if t.is_empty() || t.chars().count() > max {
        return Err(format!("{what} must be 1 to {max} characters"));
    }
    Ok(t.to_owned())
}

impl Action {
    /// Parses one action; the error says what is wrong, for the model to fix.
    pub fn parse(raw: &str) -> Result<Action, String> {
        Self::parse_with(raw, split_args)
    }

    /// Parses one action as a model wrote it (backslash escapes inside quotes are resolved),
    /// reading what it obviously meant when there is one reading (see [`lenient`]).
    pub fn parse_model(raw: &str) -> Result<Action, String> {
        Self::parse_with(&lenient::as_meant(raw), split_model_args)
    }

    fn parse_with(raw: &str, split: fn(&str) -> Vec<String>) -> Result<Action, String> {
        let s = raw.trim().trim_end_matches(';').trim();
        let (name, rest) = s
            .split_once('(')
            .ok_or_else(|| format!("`{s}` is not of the form name(args)"))?;
        let inner = rest
            .strip_suffix(')')
            .ok_or_else(|| format!("`{s}` does not end with `)`"))?;
        let args = split(inner);
        let n = args.len();
        let arity = |want: usize| {
            if n == want {
                Ok(())
            } else {
                Err(format!(
                    "{}() takes {want} argument(s), got {n}",
                    name.trim()
                ))
            }
        };
        let a = |i: usize| args[i].as_str();
        Ok(match name.trim() {
            "click" => {
                arity(1)?;
                Action::Click(element_id(a(0))?)
            }
            "setValue" => {
                arity(2)?;
                Action::SetValue(element_id(a(0))?, text(a(1), "the value")?)
            }
            "navigate" => {
                arity(1)?;
                let url = a(0).trim();
                if !(url.starts_with("http://") || url.starts_with("https://"))
                    || url.contains(char::is_whitespace)
                {
                    return Err(format!(
                        "navigate() needs an absolute http(s) URL, got `{url}`"
                    ));
                }
                Action::Navigate(url.to_owned())
            }
            "goBack" => {
                arity(0)?;
                Action::GoBack
            }
            "wait" => {
                arity(1)?;
                Action::Wait(number(a(0), "wait seconds", 30.0)?)
            }
            "scroll" => {
                arity(2)?;
                let down = match a(0).trim() {
                    "true" => true,
                    "false" => false,
                    other => {
                        return Err(format!(
                            "scroll()'s first argument must be true or false, got `{other}`"
                        ))
                    }
                };
                Action::Scroll {
                    down,
                    pages: number(a(1), "scroll pages", 10.0)?,
                }
            }
            "scroll_container" => {
                arity(2)?;
                let dir = Direction::parse(a(1).trim()).ok_or_else(|| {
                    format!(
                        "scroll_container() direction must be up, down, left or right, got `{}`",
                        a(1)
                    )
                })?;
                Action::ScrollContainer(element_id(a(0))?, dir)
            }
            "findText" => {
                arity(1)?;
                Action::FindText(text(a(0), "the text")?)
            }
            "hover" => {
                arity(1)?;
                Action::Hover(element_id(a(0))?)
            }
            "press" => {
                arity(1)?;
                // A lone space is the Space key's DOM name.
                let key = if a(0) == " " { " " } else { a(0).trim() };
                if key.is_empty() || key.len() > 32 {
                    return Err(format!("press() needs a key name, got `{key}`"));
                }
                Action::Press(key.to_owned())
            }
            "selectOption" => {
                arity(2)?;
                Action::SelectOption(element_id(a(0))?, text(a(1), "the option")?)
            }
            "check" => {
                arity(1)?;
                Action::Check(element_id(a(0))?)
            }
            "uncheck" => {
                arity(1)?;
                Action::Uncheck(element_id(a(0))?)
            }
            "finish" if n <= 1 => {
                Action::Finish(args.first().filter(|r| !r.trim().is_empty()).cloned())
            }
            "fail" if n <= 1 => {
                Action::Fail(args.first().filter(|r| !r.trim().is_empty()).cloned())
            }
            "ask_user" if n <= 1 => {
                Action::AskUser(args.first().filter(|q| !q.trim().is_empty()).cloned())
            }
            "finish" | "fail" | "ask_user" => {
                return Err(format!("{}() takes at most one argument", name.trim()))
            }
            "remember" => {
                arity(2)?;
                if a(1).chars().count() > MAX_MEMORY_VALUE {
                    return Err(format!(
                        "a remembered value must be at most {MAX_MEMORY_VALUE} characters"
                    ));
                }
                Action::Remember(memory_key(a(0))?, a(1).to_owned())
            }
            "recall" => {
                arity(1)?;
                Action::Recall(memory_key(a(0))?)
            }
            "exportToSession" => {
                arity(1)?;
                Action::ExportToSession(memory_key(a(0))?)
            }
            "googleSearch" => {
                arity(1)?;
                Action::GoogleSearch(bounded_text(a(0), "a search query", MAX_SEARCH_QUERY)?)
            }
            "verifySuccess" => {
                arity(1)?;
                Action::VerifySuccess(bounded_text(a(0), "what to verify", MAX_VERIFY_TEXT)?)
            }
            "readPage" => {
                arity(1)?;
                Action::ReadPage(bounded_text(a(0), "a question", MAX_VERIFY_TEXT)?)
            }
            other => return Err(format!("`{other}` is not an action of the grammar")),
        })
    }

    /// The element this action operates on, if any.
    pub fn element(&self) -> Option<&str> {
        match self {
            Action::Click(id)
            | Action::SetValue(id, _)
            | Action::ScrollContainer(id, _)
            | Action::Hover(id)
            | Action::SelectOption(id, _)
            | Action::Check(id)
            | Action::Uncheck(id) => Some(id),
            _ => None,
        }
    }

    /// The client form of the action; `Err` when a string cannot be quoted (it contains all
    /// three quote characters).
    pub fn to_client_string(&self) -> Result<String, String> {
        Ok(match self {
            Action::Click(id) => format!("click({id})"),
            Action::SetValue(id, v) => format!("setValue({id}, {})", quote(v)?),
            Action::Navigate(u) => format!("navigate({})", quote(u)?),
            Action::GoBack => "goBack()".into(),
            Action::Wait(s) => format!("wait({})", num(*s)),
            Action::Scroll { down, pages } => format!("scroll({down}, {})", num(*pages)),
            Action::ScrollContainer(id, d) => format!("scroll_container({id}, \"{}\")", d.as_str()),
            Action::FindText(t) => format!("findText({})", quote(t)?),
            Action::Hover(id) => format!("hover({id})"),
            Action::Press(k) => format!("press({})", quote(k)?),
            Action::SelectOption(id, v) => format!("selectOption({id}, {})", quote(v)?),
            Action::Check(id) => format!("check({id})"),
            Action::Uncheck(id) => format!("uncheck({id})"),
            Action::Finish(_) => "finish()".into(),
            Action::Fail(_) => "fail()".into(),
            Action::AskUser(_) => "ask_user()".into(),
            Action::Remember(k, v) => format!("remember({}, {})", quote(k)?, quote(v)?),
            Action::Recall(k) => format!("recall({})", quote(k)?),
            Action::ExportToSession(k) => format!("exportToSession({})", quote(k)?),
            Action::GoogleSearch(q) => format!("googleSearch({})", quote(q)?),
            Action::VerifySuccess(d) => format!("verifySuccess({})", quote(d)?),
            Action::ReadPage(q) => format!("readPage({})", quote(q)?),
        })
    }

    /// A server tool: the server runs it; the client never sees it as an action.
    pub fn is_server_tool(&self) -> bool {
        matches!(
            self,
            Action::Remember(..)
                | Action::Recall(_)
                | Action::ExportToSession(_)
                | Action::GoogleSearch(_)
                | Action::VerifySuccess(_)
                | Action::ReadPage(_)
        )
    }

    /// What the step's rules need to know about the action.
    pub fn kind(&self) -> ActionKind<'_> {
        match self {
            Action::Click(id) => ActionKind::Click(id),
            Action::SetValue(id, v) => ActionKind::SetValue(id, v),
            Action::SelectOption(id, v) => ActionKind::SelectOption(id, v),
            Action::Check(id) => ActionKind::Check(id),
            Action::Uncheck(id) => ActionKind::Uncheck(id),
            Action::Navigate(u) => ActionKind::Navigate(u),
            Action::Press(k) => ActionKind::Press(k),
            Action::GoBack => ActionKind::GoBack,
            Action::Hover(id) | Action::ScrollContainer(id, _) => ActionKind::Passive(Some(id)),
            Action::Wait(_) | Action::Scroll { .. } | Action::FindText(_) => {
                ActionKind::Passive(None)
            }
            Action::Finish(_)
            | Action::Fail(_)
            | Action::AskUser(_)
            | Action::Remember(..)
            | Action::Recall(_)
            | Action::ExportToSession(_)
            | Action::GoogleSearch(_)
            | Action::VerifySuccess(_)
            | Action::ReadPage(_) => ActionKind::NotDom,
        }
    }
}

/// An action's name and value as a recipe step compares them: what it types or chooses, the
/// address or text it goes to, or for another action without a target its whole call.
pub fn name_and_value(client: &str) -> Option<(&str, Option<String>)> {
    let action = Action::parse(client).ok()?;
    let name = client.split('(').next().unwrap_or("").trim();
    let value = match &action {
        Action::SetValue(_, v) | Action::SelectOption(_, v) => Some(v.clone()),
        Action::Navigate(v) | Action::FindText(v) => Some(v.clone()),
        Action::Finish(_) | Action::Fail(_) | Action::AskUser(_) => None,
        a if a.element().is_none() => Some(client.to_owned()),
        _ => None,
    };
    Some((name, value))
}

/// A client action string with typed text removed, for logs: `setValue(4, "[12 characters]")`.
/// Anything that does not parse is reduced to its name.
pub fn redacted(action: &str) -> String {
    match Action::parse(action) {
        Ok(Action::SetValue(id, v)) => {
            format!("setValue({id}, \"[{} characters]\")", v.chars().count())
        }
        Ok(a) => a.to_string(),
        Err(_) => {
            let name: String = action
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .take(32)
                .collect();
            format!("{name}(…)")
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_client_string() {
            Ok(s) => f.write_str(&s),
            Err(e) => write!(f, "<unquotable action: {e}>"),
        }
    }
}

fn num(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Quotes `s` with a quote character it does not contain (no escapes exist in the grammar).
pub fn quote(s: &str) -> Result<String, String> {
    crate::text::quote(s).ok_or_else(|| "the text contains \", ' and ` at once and cannot be quoted; rephrase it without one of them".into())
}

#[cfg(test)]
mod tests;
