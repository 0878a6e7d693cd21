//! The prompt-only policy's solvers: per MiniWoB task type, the action a competent model takes
//! given the decision prompt alone — the task line, the page block as the server rendered it
//! (tree lines `[id] role "name" =value (states)` or compact HTML with ids) and the actions the
//! history lists. Each solver reads the page's state (values, checked boxes, selected tabs)
//! rather than counting its own steps wherever the page shows it, as a model would.

use std::sync::OnceLock;

use regex::Regex;

use super::model::quoted;

/// One element of the page block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct El {
    pub id: String,
    /// The tree's short role, or the HTML tag (`input` elements: their type, `text` by
    /// default; `textarea`; `select`).
    pub kind: String,
    /// The tree's name, or the element's text.
    pub name: String,
    pub value: Option<String>,
    pub states: String,
    /// HTML: the element's own start tag; tree: the line.
    pub raw: String,
}

impl El {
    pub fn named(&self, name: &str) -> bool {
        norm(&self.name) == norm(name)
    }
    pub fn checked(&self) -> bool {
        self.states.split(',').any(|s| s.trim() == "checked")
    }
    pub fn is_field(&self) -> bool {
        matches!(
            self.kind.as_str(),
            "inp" | "text" | "password" | "textarea" | "number" | "email" | "tel" | "search"
        )
    }
    pub fn is_button(&self) -> bool {
        matches!(self.kind.as_str(), "btn" | "button" | "submit")
    }
    /// A box whose state a click toggles (its state, not the history, says what is left).
    pub fn is_toggle(&self) -> bool {
        matches!(self.kind.as_str(), "chk" | "checkbox" | "radio")
    }
    /// Its value in a field (a password field's as typed: the same number of bullets).
    pub fn holds(&self, v: &str) -> bool {
        holds(self, v) || masked(self, v)
    }
}

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The parts of a decision prompt a solver reads.
#[derive(Debug, Default)]
pub struct Prompt {
    pub task: String,
    pub html: bool,
    pub els: Vec<El>,
    /// The history's actions, oldest first (as the server lists them).
    pub done: Vec<String>,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

/// Tree lines: `[id] role "name" =value (states)`.
fn tree_els(page: &str) -> Vec<El> {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let line = re(
        &LINE,
        r#"^\*?\[([^\]]+)\] (\w+)(?: "((?:[^"]|"[^ ])*)")?(?: =(.*?))?(?: \(([\w,-]+)\))?$"#,
    );
    page.lines()
        .filter_map(|l| {
            let c = line.captures(l.trim())?;
            Some(El {
                id: c[1].to_owned(),
                kind: c[2].to_owned(),
                name: c.get(3).map_or("", |m| m.as_str()).to_owned(),
                value: c.get(4).map(|m| m.as_str().to_owned()),
                states: c.get(5).map_or("", |m| m.as_str()).to_owned(),
                raw: l.to_owned(),
            })
        })
        .collect()
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let rest = &tag[at..];
    Some(rest[..rest.find('"')?].to_owned())
}

/// Compact HTML: every element with an id, with the text inside it.
fn html_els(page: &str) -> Vec<El> {
    static TOKEN: OnceLock<Regex> = OnceLock::new();
    let token = re(&TOKEN, r"<(/?)([a-zA-Z][\w-]*)([^>]*?)(/?)>|([^<]+)");
    let mut els: Vec<El> = Vec::new();
    // Open elements: their index in `els` (None: an element without id).
    let mut open: Vec<(String, Option<usize>)> = Vec::new();
    for c in token.captures_iter(page) {
        if let Some(text) = c.get(5) {
            let text = text.as_str();
            for (_, k) in &open {
                if let Some(k) = k {
                    let name = &mut els[*k].name;
                    if !name.is_empty() && !name.ends_with(' ') && !text.starts_with(' ') {
                        name.push(' ');
                    }
                    name.push_str(text);
                }
            }
            continue;
        }
        let tag = c[2].to_lowercase();
        if &c[1] == "/" {
            if let Some(at) = open.iter().rposition(|(t, _)| *t == tag) {
                open.truncate(at);
            }
            continue;
        }
        let attrs = c.get(3).map_or("", |m| m.as_str());
        let own = format!("<{tag}{attrs}>");
        let index = attr(&own, "id").map(|id| {
            let kind = match tag.as_str() {
                "input" => attr(&own, "type").unwrap_or_else(|| "text".into()),
                t => t.to_owned(),
            };
            let mut states = Vec::new();
            if own.contains(" checked") {
                states.push("checked");
            }
            if own.contains(" disabled") {
                states.push("disabled");
            }
            els.push(El {
                id,
                kind,
                name: String::new(),
                value: attr(&own, "value"),
                states: states.join(","),
                raw: own.clone(),
            });
            els.len() - 1
        });
        let void = matches!(
            tag.as_str(),
            "input" | "br" | "img" | "hr" | "meta" | "link"
        );
        if c[4].is_empty() && !void {
            open.push((tag, index));
        }
    }
    for e in &mut els {
        e.name = e.name.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    els
}

impl Prompt {
    pub fn parse(prompt: &str) -> Self {
        let task = prompt
            .lines()
            .find_map(|l| l.strip_prefix("Task: "))
            .unwrap_or("")
            .trim()
            .to_owned();
        let page_at = prompt.rfind("<page ").unwrap_or(prompt.len());
        let page = &prompt[page_at..];
        let page_end = page.find("</page>").unwrap_or(page.len());
        let head_end = page.find('>').map_or(0, |k| k + 1).min(page_end);
        let head = &page[..head_end];
        let body = &page[head_end..page_end];
        // The decision prompt says the form; the verifier's page block is the rendered text
        // alone, HTML when it starts with a tag.
        let html = head.contains("form=\"html\"") || body.trim_start().starts_with('<');
        let els = if html { html_els(body) } else { tree_els(body) };
        static ACTION: OnceLock<Regex> = OnceLock::new();
        let action = re(
            &ACTION,
            r#"\b(click|setValue|selectOption|check|uncheck|press|wait|hover|findText|scroll)\(([^()]*)\)"#,
        );
        let history = &prompt[..page_at];
        let history = history.split_once("\nTask: ").map_or(history, |(_, h)| h);
        let history = history.split_once('\n').map_or("", |(_, h)| h);
        let done = action
            .captures_iter(history)
            .map(|c| c[0].to_owned())
            .collect();
        Self {
            task,
            html,
            els,
            done,
        }
    }

    pub fn find(&self, f: impl Fn(&El) -> bool) -> Option<&El> {
        self.els.iter().find(|e| f(e))
    }

    fn all(&self, f: impl Fn(&El) -> bool) -> Vec<&El> {
        self.els.iter().filter(|e| f(e)).collect()
    }

    fn button(&self, name: &str) -> Result<&El, String> {
        self.find(|e| e.is_button() && e.named(name))
            .or_else(|| self.find(|e| e.named(name)))
            .ok_or_else(|| format!("no button {name:?} on the page"))
    }

    fn fields(&self) -> Vec<&El> {
        self.all(El::is_field)
    }

    /// How often the history has clicked element `id`.
    pub fn clicked(&self, id: &str) -> usize {
        let me = format!("click({id})");
        self.done.iter().filter(|d| **d == me).count()
    }
}

fn click(e: &El) -> String {
    format!("click({})", e.id)
}

fn set(e: &El, v: &str) -> String {
    format!("setValue({}, {})", e.id, quoted(v))
}

/// `value` is already in field `e`.
fn holds(e: &El, v: &str) -> bool {
    e.value.as_deref().map(str::trim) == Some(v)
}

/// A password field shows its value masked: the same number of bullets.
fn masked(e: &El, v: &str) -> bool {
    e.value.as_deref().is_some_and(|x| {
        !x.is_empty()
            && x.chars().count() == v.chars().count()
            && x.chars().all(|c| matches!(c, '•' | '●' | '*'))
    })
}

/// Fills `values` into `fields` in order (one per answer), then clicks `submit`.
fn fill_then(p: &Prompt, pairs: &[(&El, String)], submit: &str) -> Result<String, String> {
    for (f, v) in pairs {
        if !holds(f, v) && !masked(f, v) {
            return Ok(set(f, v));
        }
    }
    Ok(click(p.button(submit)?))
}

/// Fills the page's first field with `value`, then clicks Submit.
fn fill_first(p: &Prompt, value: impl Into<String>) -> Result<String, String> {
    let field = *p.fields().first().ok_or("no field")?;
    fill_then(p, &[(field, value.into())], "Submit")
}

fn ordinal(word: &str) -> Option<usize> {
    let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A regex's first group over the task.
fn cap(task: &str, pattern: &str) -> Option<Vec<String>> {
    Regex::new(pattern).ok()?.captures(task).map(|c| {
        c.iter()
            .skip(1)
            .map(|m| m.map_or(String::new(), |m| m.as_str().to_owned()))
            .collect()
    })
}

type Solver = fn(&Prompt, &[String]) -> Result<String, String>;

/// Task patterns and their solvers, in the order they are tried.
const SOLVERS: &[(&str, Solver)] = &[
    (r#"^Click on the "(.+)" button\.$"#, |p, c| {
        Ok(click(p.button(&c[0])?))
    }),
    (r"^Click button ONE, then click button TWO\.$", |p, _| {
        let one = p.button("ONE")?;
        if p.clicked(&one.id) == 0 {
            Ok(click(one))
        } else {
            Ok(click(p.button("TWO")?))
        }
    }),
    (
        r"^Click button ONE, wait (\d+) seconds?, then click button TWO\.$",
        |p, c| {
            let one = p.button("ONE")?;
            if p.clicked(&one.id) == 0 {
                return Ok(click(one));
            }
            if !p.done.iter().any(|d| d.starts_with("wait(")) {
                return Ok(format!("wait({})", c[0]));
            }
            Ok(click(p.button("TWO")?))
        },
    ),
    (r"^Click button ONE\.$", |p, _| Ok(click(p.button("ONE")?))),
    (r"^Click the button\.$", |p, _| {
        Ok(click(p.find(El::is_button).ok_or("no button")?))
    }),
    (r"^Click the cancel button\.$", |p, _| {
        Ok(click(p.button("Cancel")?))
    }),
    (r"^Select (.+) from the list and click Submit\.$", |p, c| {
        let list = p
            .find(|e| matches!(e.kind.as_str(), "sel" | "select"))
            .ok_or("no list")?;
        if !holds(list, &c[0]) {
            return Ok(format!("selectOption({}, {})", list.id, quoted(&c[0])));
        }
        Ok(click(p.button("Submit")?))
    }),
    (r"^Select (.+) and click Submit\.$", |p, c| {
        let wanted: Vec<String> = if c[0] == "nothing" {
            Vec::new()
        } else {
            c[0].split(", ").map(str::to_owned).collect()
        };
        let boxes = p.all(|e| matches!(e.kind.as_str(), "chk" | "checkbox" | "radio"));
        for b in &boxes {
            let want = wanted.iter().any(|w| b.named(w));
            if want && !b.checked() {
                return Ok(click(b));
            }
            if !want && b.checked() && b.kind != "radio" {
                return Ok(click(b));
            }
        }
        Ok(click(p.button("Submit")?))
    }),
    (r#"^Click on the link "(.+)"\.$"#, |p, c| {
        Ok(click(p.find(|e| e.named(&c[0])).ok_or("no such link")?))
    }),
    (r"^Click on Tab #(\d+)\.$", |p, c| {
        let name = format!("Tab #{}", c[0]);
        Ok(click(
            p.find(|e| e.kind == "tab" && e.named(&name))
                .or_else(|| p.find(|e| e.named(&name)))
                .ok_or("no such tab")?,
        ))
    }),
    (
        r#"^Switch between the tabs to find and click on the link "(.+)"\.$"#,
        |p, c| {
            if let Some(link) = p.find(|e| e.kind == "span" && e.named(&c[0])) {
                return Ok(click(link));
            }
            // The tabs not shown, those opened least first, in order (a tab's link points at
            // its panel; its item says whether it is the one shown): a tab left before its
            // link was clicked is opened again.
            let next = p
                .els
                .iter()
                .enumerate()
                .filter(|(_, e)| e.kind == "a" && e.raw.contains("href=\"#tabs-"))
                .filter(|(k, _)| {
                    !p.els[k.saturating_sub(1)]
                        .raw
                        .contains("aria-selected=\"true\"")
                })
                .map(|(_, e)| e)
                .min_by_key(|t| p.clicked(&t.id))
                .ok_or("no other tab")?;
            Ok(click(next))
        },
    ),
    (
        r#"^Navigate through the file tree\. Find and click on the folder or file named "(.+)"\.$"#,
        |p, c| {
            if let Some(item) = p.find(|e| e.kind == "span" && e.named(&c[0])) {
                return Ok(click(item));
            }
            // A folder that opens has its handle (an empty element) right before its name;
            // clicking a file would end the task, so only such folders are opened: a closed
            // one (clicked an even number of times: a click toggles it), least clicked first.
            let folder = p
                .els
                .windows(2)
                .filter(|w| w[0].kind == "div" && w[0].name.is_empty() && w[1].kind == "span")
                .map(|w| &w[1])
                .filter(|f| p.clicked(&f.id) % 2 == 0)
                .min_by_key(|f| p.clicked(&f.id))
                .ok_or("no folder left to open")?;
            Ok(click(folder))
        },
    ),
    (r#"^Click on a "(\w+)" widget\.$"#, |p, c| {
        let kind = c[0].as_str();
        Ok(click(
            p.find(|e| e.kind == kind)
                .ok_or_else(|| format!("no {kind} widget"))?,
        ))
    }),
    (
        r#"^Enter the password "(.+)" into both text fields and press submit\.$"#,
        |p, c| {
            let f = p.fields();
            fill_then(
                p,
                &f.iter().map(|e| (*e, c[0].clone())).collect::<Vec<_>>(),
                "Submit",
            )
        },
    ),
    (
        r#"^Enter "(.*)" into the text field and press Submit\.$"#,
        |p, c| {
            let f = p.fields();
            fill_then(
                p,
                &[(*f.first().ok_or("no field")?, c[0].clone())],
                "Submit",
            )
        },
    ),
    (
        r#"^Type "(.*)" in all (upper|lower) case letters in the text input and press Submit\.$"#,
        |p, c| {
            let v = if c[1] == "upper" {
                c[0].to_uppercase()
            } else {
                c[0].to_lowercase()
            };
            fill_first(p, v)
        },
    ),
    (r"^Focus into the textbox\.$", |p, _| {
        Ok(click(p.fields().first().ok_or("no field")?))
    }),
    (r"^Focus into the (\d+)\w* input textbox\.$", |p, c| {
        let k = ordinal(&c[0]).ok_or("no position")?;
        Ok(click(p.fields().get(k - 1).ok_or("no such field")?))
    }),
    (
        r#"^Enter the username "(.+)" and the password "(.+)" into the text fields and press login\.$"#,
        |p, c| {
            // A popup asking whether to go on is answered so the form can be used.
            if let Some(cancel) = p.find(|e| e.is_button() && e.named("Cancel")) {
                return Ok(click(cancel));
            }
            let f = p.fields();
            let (user, pass) = match p.html {
                true => (
                    p.find(|e| e.kind == "text").ok_or("no username field")?,
                    p.find(|e| e.kind == "password")
                        .ok_or("no password field")?,
                ),
                false => (
                    *f.first().ok_or("no field")?,
                    *f.get(1).ok_or("no second field")?,
                ),
            };
            let submit = match p.button("Login") {
                Ok(b) => b.name.clone(),
                // The form's own button, whatever it says.
                Err(_) => p.els[p.els.iter().position(|e| e.id == pass.id).unwrap_or(0)..]
                    .iter()
                    .find(|e| e.is_button())
                    .ok_or("no login button")?
                    .name
                    .clone(),
            };
            fill_then(p, &[(user, c[0].clone()), (pass, c[1].clone())], &submit)
        },
    ),
    (r#"^Close the dialog box by clicking the "x"\.$"#, |p, _| {
        Ok(click(p.button("Close")?))
    }),
    (
        r#"^Click the button in the dialog box labeled "(.+)"\.$"#,
        |p, c| {
            let name = if c[0] == "x" { "Close" } else { c[0].as_str() };
            Ok(click(p.button(name)?))
        },
    ),
    (r"^Expand the section below and click submit\.$", |p, _| {
        if let Some(section) = p.find(|e| {
            e.kind == "tab" && e.states.contains("collapsed") && e.name.starts_with("Section")
        }) {
            return Ok(click(section));
        }
        Ok(click(p.button("Submit")?))
    }),
    (
        r"^Enter (\d\d)/(\d\d)/(\d{4}) as the date and hit submit\.$",
        |p, c| {
            let f = p.fields();
            let iso = format!("{}-{}-{}", c[2], c[0], c[1]);
            fill_then(p, &[(*f.first().ok_or("no field")?, iso)], "Submit")
        },
    ),
    (
        r"^Enter (\d+):(\d\d) (AM|PM) as the time and press submit\.$",
        |p, c| {
            let mut h: u32 = c[0].parse().map_err(|_| "hour")?;
            if c[2] == "PM" && h < 12 {
                h += 12;
            }
            if c[2] == "AM" && h == 12 {
                h = 0;
            }
            let f = p.fields();
            fill_then(
                p,
                &[(*f.first().ok_or("no field")?, format!("{h:02}:{}", c[1]))],
                "Submit",
            )
        },
    ),
    (
        r"^Select (-?\d+) with the spinner and hit Submit\.$",
        |p, c| {
            let f = p.fields();
            fill_then(
                p,
                &[(*f.first().ok_or("no field")?, c[0].clone())],
                "Submit",
            )
        },
    ),
    (
        r"^Enter the value of (.+) into the text field and press Submit\.$",
        |p, c| {
            let cells = p.all(|e| e.kind == "td");
            let at = cells
                .iter()
                .position(|e| e.named(&c[0]))
                .ok_or("no such row")?;
            let value = cells.get(at + 1).ok_or("no value cell")?.name.clone();
            fill_first(p, value)
        },
    ),
    (
        r"^Find the (\d+)\w* word in the paragraph, type that into the textbox and press .Submit.\.$",
        |p, c| {
            let k = ordinal(&c[0]).ok_or("no position")?;
            let para = p.find(|e| e.kind == "p").ok_or("no paragraph")?;
            let word: String = para
                .name
                .split_whitespace()
                .nth(k - 1)
                .ok_or("no such word")?
                .chars()
                .filter(|c| c.is_alphanumeric())
                .collect();
            fill_first(p, word)
        },
    ),
    (
        r"^Enter the value that corresponds with each label into the form and submit when done\.$",
        |p, _| {
            let cells = p.all(|e| e.kind == "td");
            let mut pairs = Vec::new();
            for (k, e) in p.els.iter().enumerate() {
                // A form's labels: each right before its field.
                if e.kind != "label" || !p.els.get(k + 1).is_some_and(El::is_field) {
                    continue;
                }
                let label = e.name.trim_end_matches(':');
                let at = cells
                    .iter()
                    .position(|c| c.named(label))
                    .ok_or("no such row")?;
                let value = cells.get(at + 1).ok_or("no value cell")?.name.clone();
                let field = p.els[k..].iter().find(|x| x.is_field()).ok_or("no field")?;
                pairs.push((field, value));
            }
            fill_then(p, &pairs, "Submit")
        },
    ),
    (
        r#"^Check the (\d+)\w* radio button and enter the number "(-?\d+)" into the (\d+)\w* textbox\.$"#,
        |p, c| {
            let radio = ordinal(&c[0]).ok_or("no position")?;
            let field = ordinal(&c[2]).ok_or("no position")?;
            let radios = p.all(|e| matches!(e.kind.as_str(), "radio"));
            let r = radios.get(radio - 1).ok_or("no such radio")?;
            if !r.checked() {
                return Ok(click(r));
            }
            let f = p.fields();
            fill_then(
                p,
                &[(*f.get(field - 1).ok_or("no such field")?, c[1].clone())],
                "Submit",
            )
        },
    ),
    (
        r"^Search for (.+) movies directed by (.+) from year (\d+)\.$",
        |p, c| {
            // Each field's label is the nearest text around it that names a film's part.
            let label_of = |k: usize| {
                let near =
                    |x: &El| matches!(x.kind.as_str(), "div" | "label" | "span" | "th" | "td");
                let before = p.els[..k]
                    .iter()
                    .rev()
                    .take(2)
                    .find(|x| near(x) && !x.name.is_empty());
                let after = p.els[k + 1..]
                    .iter()
                    .take(2)
                    .find(|x| near(x) && !x.name.is_empty());
                [before, after]
                    .into_iter()
                    .flatten()
                    .map(|x| x.name.to_lowercase())
                    .find(|n| {
                        ["genre", "director", "name", "year", "date"]
                            .iter()
                            .any(|w| n.contains(w))
                            && n.len() < 40
                    })
            };
            let mut pairs = Vec::new();
            for (k, e) in p.els.iter().enumerate() {
                if !e.is_field() {
                    continue;
                }
                let label = label_of(k).ok_or("a field without a label")?;
                let value = if label.contains("genre") {
                    c[0].clone()
                } else if label.contains("director") || label.contains("name") {
                    c[1].clone()
                } else {
                    c[2].clone()
                };
                pairs.push((e, value));
            }
            // The form's button, whatever it says ("Submit", "Search", "Go!").
            let last_field = p.els.iter().rposition(El::is_field).unwrap_or(0);
            let submit = p
                .find(|e| e.is_button() && (e.named("Submit") || e.named("Search")))
                .or_else(|| p.find(|e| e.named("Submit") || e.named("Search")))
                .or_else(|| p.els[last_field..].iter().find(|e| e.is_button()))
                .ok_or("no submit button")?
                .name
                .clone();
            fill_then(p, &pairs, &submit)
        },
    ),
    (
        r"^Solve the math problem and type your answer into the textbox\. Press submit when done\.$",
        |p, _| {
            let problem = p
                .find(|e| e.name.trim_end().ends_with('='))
                .ok_or("no problem")?;
            let parts: Vec<&str> = problem
                .name
                .trim_end_matches('=')
                .split_whitespace()
                .collect();
            let (a, op, b) = match parts.as_slice() {
                [a, op, b] => (
                    a.parse::<i64>().map_err(|_| "a")?,
                    *op,
                    b.parse::<i64>().map_err(|_| "b")?,
                ),
                _ => return Err("not a b-op problem".into()),
            };
            let answer = match op {
                "+" => a + b,
                "-" => a - b,
                "x" | "*" => a * b,
                "/" if b != 0 => a / b,
                _ => return Err(format!("operator {op}")),
            };
            fill_first(p, answer.to_string())
        },
    ),
    (
        r"^Solve for x and type your answer into the textbox\. Press Submit when done\.$",
        |p, _| {
            let num = |t: &str| t.parse::<i64>().map_err(|_| format!("not a number: {t}"));
            let x = p
                .els
                .iter()
                .find_map(|e| {
                    let parts: Vec<&str> = e.name.split_whitespace().collect();
                    Some(match parts.as_slice() {
                        ["x", "+", b, "=", c] => num(c).and_then(|c| Ok(c - num(b)?)),
                        ["x", "-", b, "=", c] => num(c).and_then(|c| Ok(c + num(b)?)),
                        [b, "+", "x", "=", c] => num(c).and_then(|c| Ok(c - num(b)?)),
                        [b, "-", "x", "=", c] => num(c).and_then(|c| Ok(num(b)? - c)),
                        _ => return None,
                    })
                })
                .ok_or("no equation")??;
            fill_first(p, x.to_string())
        },
    ),
    (
        r"^Mark the numbers below as odd or even and press submit when done\.$",
        |p, _| {
            // Each row: an Odd button, the number, an Even button, in order.
            let mut pending: Option<&El> = None;
            let mut last_odd: Option<&El> = None;
            let mut number: Option<i64> = None;
            for e in &p.els {
                if e.is_button() && e.named("Odd") {
                    last_odd = Some(e);
                } else if e.kind == "div" && e.name.parse::<i64>().is_ok() {
                    number = e.name.parse().ok();
                } else if e.is_button() && e.named("Even") {
                    let (Some(odd), Some(n)) = (last_odd, number) else {
                        continue;
                    };
                    let pick = if n % 2 == 0 { e } else { odd };
                    if p.clicked(&pick.id) == 0 && pending.is_none() {
                        pending = Some(pick);
                    }
                }
            }
            match pending {
                Some(b) => Ok(click(b)),
                None => Ok(click(p.button("Submit")?)),
            }
        },
    ),
    (
        r#"^Use the textbox to enter "(.+)" and press "Search", then find and click the (\d+)\w* search result\.$"#,
        |p, c| {
            let k = ordinal(&c[1]).ok_or("no position")?;
            let field = *p.fields().first().ok_or("no field")?;
            let search = p.button("Search")?;
            if !holds(field, &c[0]) {
                return Ok(set(field, &c[0]));
            }
            if p.clicked(&search.id) == 0 {
                return Ok(click(search));
            }
            // Three results a page: the result's page, then its place on it.
            let page = (k - 1) / 3 + 1;
            let results: Vec<&El> = p.all(|e| {
                e.kind == "link"
                    && !e
                        .name
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '<' || c == '>')
            });
            let pager = p.find(|e| e.kind == "link" && e.named(&page.to_string()));
            let searched = p
                .done
                .iter()
                .rposition(|d| *d == click(search))
                .unwrap_or(0);
            let since = p.done[searched + 1..]
                .iter()
                .filter(|d| d.starts_with("click("))
                .count();
            if page > 1 && since == 0 {
                return Ok(click(pager.ok_or("no pager link")?));
            }
            Ok(click(results.get((k - 1) % 3).ok_or("no such result")?))
        },
    ),
];

/// A short thought for an action (never the action itself: the history quotes thoughts).
fn thought(action: &str) -> &'static str {
    match action.split('(').next().unwrap_or("") {
        "setValue" => "Filling in the field the task names.",
        "selectOption" => "Choosing the option the task names.",
        "click" => "Clicking the element the task needs next.",
        _ => "Doing the next thing the task needs.",
    }
}

/// MiniWoB's START cover is on the page: the episode is over (it shows the result).
pub fn shows_end(p: &Prompt) -> bool {
    p.els.iter().any(|e| e.name.trim() == "START")
}

/// The action a competent model takes next on the task and page of `p` (the history as
/// listed), or why no solver can give one.
pub fn next_action(p: &Prompt) -> Result<String, String> {
    for (pattern, solve) in SOLVERS {
        if let Some(c) = cap(&p.task, pattern) {
            return solve(p, &c);
        }
    }
    Err(format!("no solver for the task {:?}", p.task))
}

/// The answer to a decision prompt, or why no solver can give one.
pub fn decide(prompt: &str) -> Result<String, String> {
    let p = Prompt::parse(prompt);
    // The episode is over once the agent has acted: MiniWoB shows the result and covers the
    // task with its START button. The task is done.
    if !p.done.is_empty() && shows_end(&p) {
        return Ok(
            "<Thought>The task is done: the page shows its result.</Thought>\n<Action>finish()</Action>"
                .into(),
        );
    }
    let action = next_action(&p)?;
    let plan = if p.done.is_empty() && prompt.contains("start your answer with a <Plan>") {
        "<Plan>\n1. Do what the task says on this page\n2. Submit\n</Plan>\n<Step>1</Step>\n"
    } else {
        ""
    };
    Ok(format!(
        "{plan}<Thought>{}</Thought>\n<Action>{action}</Action>",
        thought(&action)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tree_lines_and_html() {
        let t = tree_els("[12] inp \"Search\" =red shoes (focused)\n[14] btn \"Go\"\n[3] chk\n");
        assert_eq!(t[0].value.as_deref(), Some("red shoes"));
        assert_eq!(t[0].states, "focused");
        assert_eq!((t[1].kind.as_str(), t[1].name.as_str()), ("btn", "Go"));
        assert_eq!(t[2].kind, "chk");
        let h = html_els(
            r#"<div id="1">Enter <span id="2">Gender</span> here<input id="3" type="text" value="x"/><textarea id="4" value="hi"></textarea><button id="5">Submit</button></div>"#,
        );
        assert_eq!(h[0].name, "Enter Gender here Submit");
        assert_eq!(h[1].name, "Gender");
        assert_eq!(
            (h[2].kind.as_str(), h[2].value.as_deref()),
            ("text", Some("x"))
        );
        assert_eq!(h[3].kind, "textarea");
        assert_eq!(
            (h[4].kind.as_str(), h[4].name.as_str()),
            ("button", "Submit")
        );
    }
}
