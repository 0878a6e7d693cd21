//! Executes the server's actions the way the extension does: it parses `name(args)`, splits
//! the arguments on commas outside quotes, strips one pair of quotes (no unescaping) and acts
//! on the element whose `i` is the id, through the DevTools protocol (mouse and key events for
//! clicks and keys, the element's own properties and events for values and options).
//!
//! [`Client::Extension`] behaves as the shipping extension was measured to (CONTRACT.md,
//! "Measured by driving the shipping extension"): `setValue` blurs the field; `press` sends a
//! key event with no key code, so Enter never submits a form, and reports success; a window
//! `scroll()` works once per document and later ones only report success; `findText` scrolls
//! to the text when it exists and reports success either way; chains fail on their first item
//! (see `run`). [`Client::Ideal`] does what each action's name promises, for comparison.

use std::time::Duration;

use serde_json::{json, Value};

use super::cdp::Tab;
use super::page::Snapshot;

/// Which client executes the actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Client {
    /// The shipping extension as measured.
    #[default]
    Extension,
    /// A client that does what each action's name promises (Enter submits, every scroll
    /// scrolls, `findText` reports a missing text, chains run).
    Ideal,
}

impl Client {
    /// `CLIENT=ideal` picks the idealised client (for comparison); anything else the extension.
    pub fn from_env() -> Self {
        match std::env::var("CLIENT").as_deref() {
            Ok("ideal") => Self::Ideal,
            _ => Self::Extension,
        }
    }
}

/// An action the client understood: its name and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub name: String,
    pub args: Vec<String>,
}

/// Parses an action string like the client; `None` for one it cannot read.
pub fn parse(action: &str) -> Option<Parsed> {
    let action = action.trim();
    let open = action.find('(')?;
    if !action.ends_with(')') {
        return None;
    }
    let name = action[..open].trim().to_owned();
    let inner = &action[open + 1..action.len() - 1];
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '"' | '\'' | '`') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (None, ',') => args.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() || !args.is_empty() {
        args.push(current);
    }
    let args = args
        .into_iter()
        .map(|a| {
            let a = a.trim();
            let mut chars = a.chars();
            match (chars.next(), chars.next_back()) {
                (Some(f), Some(l)) if f == l && matches!(f, '"' | '\'' | '`') && a.len() >= 2 => {
                    a[1..a.len() - 1].to_owned()
                }
                _ => a.to_owned(),
            }
        })
        .collect();
    Some(Parsed { name, args })
}

/// A failed action as the client reports it (`lastActionError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

fn failed(code: &'static str, message: impl Into<String>) -> Failure {
    Failure {
        code,
        message: message.into(),
    }
}

/// The action's element, which must be on the page the action was chosen for: its backend
/// node id (a `dom` page's `data-id` is looked up in the document).
async fn element(tab: &Tab, p: &Parsed, page: &Snapshot) -> Result<u64, Failure> {
    let id = p.args.first().map(String::as_str).unwrap_or("");
    let missing = || {
        failed(
            "ELEMENT_NOT_FOUND",
            format!("element {id} is not on the page"),
        )
    };
    if !page.ids().contains(&id) {
        return Err(missing());
    }
    if !page.dom_ids {
        return id.parse().map_err(|_| missing());
    }
    let found = tab
        .call(
            "Runtime.evaluate",
            json!({ "expression": format!("document.querySelector('[data-id=\"{id}\"]')") }),
        )
        .await
        .map_err(|_| missing())?;
    let object = found["result"]["objectId"].as_str().ok_or_else(missing)?;
    let node = tab
        .call("DOM.describeNode", json!({ "objectId": object }))
        .await
        .map_err(|_| missing())?;
    node["node"]["backendNodeId"].as_u64().ok_or_else(missing)
}

fn arg(p: &Parsed, k: usize) -> Result<&str, Failure> {
    p.args.get(k).map(String::as_str).ok_or_else(|| {
        failed(
            "ACTION_FAILED",
            format!("{} needs {} arguments", p.name, k + 1),
        )
    })
}

/// The element's centre in the viewport, after scrolling it into view.
async fn centre(tab: &Tab, node: u64) -> Result<(f64, f64), Failure> {
    let _ = tab
        .call(
            "DOM.scrollIntoViewIfNeeded",
            json!({ "backendNodeId": node }),
        )
        .await;
    let model = tab
        .call("DOM.getBoxModel", json!({ "backendNodeId": node }))
        .await
        .map_err(|e| failed("ELEMENT_NOT_FOUND", e))?;
    let q = &model["model"]["content"];
    let xs = [0, 2, 4, 6].map(|k| q[k].as_f64().unwrap_or(0.0));
    let ys = [1, 3, 5, 7].map(|k| q[k].as_f64().unwrap_or(0.0));
    Ok((xs.iter().sum::<f64>() / 4.0, ys.iter().sum::<f64>() / 4.0))
}

async fn mouse(tab: &Tab, kind: &str, (x, y): (f64, f64)) -> Result<(), Failure> {
    tab.call(
        "Input.dispatchMouseEvent",
        json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
    )
    .await
    .map(|_| ())
    .map_err(|e| failed("ACTION_FAILED", e))
}

async fn script(tab: &Tab, node: u64, function: &str, args: &[Value]) -> Result<Value, Failure> {
    tab.on_node(node, function, args)
        .await
        .map_err(|e| failed("ACTION_FAILED", e))
}

/// Key events for a key name (`Enter`, `Tab`, `Escape`, arrows, a character).
fn key_event(key: &str) -> Value {
    let (code, vk, text) = match key {
        "Enter" | "Return" => ("Enter", 13, "\r"),
        "Tab" => ("Tab", 9, ""),
        "Escape" | "Esc" => ("Escape", 27, ""),
        "Backspace" => ("Backspace", 8, ""),
        "ArrowDown" => ("ArrowDown", 40, ""),
        "ArrowUp" => ("ArrowUp", 38, ""),
        "ArrowLeft" => ("ArrowLeft", 37, ""),
        "ArrowRight" => ("ArrowRight", 39, ""),
        " " | "Space" => ("Space", 32, " "),
        other => ("", 0, other),
    };
    json!({ "key": if code == "Space" { " " } else { key }, "code": code,
            "windowsVirtualKeyCode": vk, "text": text })
}

/// Sets the value; the extension then blurs the field (`blur` true).
const SET_VALUE: &str =
    "function (v, blur) { this.scrollIntoView({ block: 'center' }); this.focus();
  if ('value' in this) this.value = v; else this.textContent = v;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  const ok = 'value' in this ? this.value === v : true;
  if (blur) this.blur();
  return ok; }";

const SELECT: &str = "function (v) { const o = [...(this.options || [])]
    .find(o => o.value === v || o.text.trim() === v || o.label === v);
  if (!o) return false; this.value = o.value;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true })); return true; }";

const TICK: &str = "function (want) {
  const on = () => 'checked' in this ? this.checked : this.getAttribute('aria-checked') === 'true';
  if (on() !== want) this.click(); return on() === want; }";

const SCROLL_CONTAINER: &str =
    "function (d) { const v = this.clientHeight * 0.8, h = this.clientWidth * 0.8;
  const [x, y] = { up: [0, -v], down: [0, v], left: [-h, 0], right: [h, 0] }[d] || [0, v];
  this.scrollBy(x, y); return true; }";

/// The extension's window scroll: the first of a document scrolls, later ones do nothing.
const SCROLL_ONCE: &str = "(pages) => { if (window.__agentScrolled) return false;
  window.__agentScrolled = true; window.scrollBy(0, innerHeight * pages); return true; }";

/// Executes one browser action on the page whose element ids are `ids`, as `client` does.
pub async fn execute(
    tab: &Tab,
    client: Client,
    p: &Parsed,
    page: &Snapshot,
) -> Result<(), Failure> {
    match p.name.as_str() {
        "click" => {
            let at = centre(tab, element(tab, p, page).await?).await?;
            mouse(tab, "mouseMoved", at).await?;
            mouse(tab, "mousePressed", at).await?;
            mouse(tab, "mouseReleased", at).await
        }
        "hover" => {
            let at = centre(tab, element(tab, p, page).await?).await?;
            mouse(tab, "mouseMoved", at).await
        }
        "setValue" => {
            let node = element(tab, p, page).await?;
            let blur = client == Client::Extension;
            match script(tab, node, SET_VALUE, &[json!(arg(p, 1)?), json!(blur)]).await? {
                Value::Bool(true) => Ok(()),
                _ => Err(failed("ACTION_FAILED", "the field did not take the value")),
            }
        }
        "selectOption" => {
            let node = element(tab, p, page).await?;
            let value = arg(p, 1)?;
            match script(tab, node, SELECT, &[json!(value)]).await? {
                Value::Bool(true) => Ok(()),
                _ => Err(failed("ACTION_FAILED", format!("no option {value:?}"))),
            }
        }
        "check" | "uncheck" => {
            let node = element(tab, p, page).await?;
            match script(tab, node, TICK, &[json!(p.name == "check")]).await? {
                Value::Bool(true) => Ok(()),
                _ => Err(failed("ACTION_FAILED", "the box did not change")),
            }
        }
        "press" if client == Client::Extension => {
            // The key alone: no code, no key code, no text (nothing submits, nothing types).
            for kind in ["keyDown", "keyUp"] {
                tab.call(
                    "Input.dispatchKeyEvent",
                    json!({ "type": kind, "key": arg(p, 0)? }),
                )
                .await
                .map_err(|e| failed("ACTION_FAILED", e))?;
            }
            Ok(())
        }
        "press" => {
            let mut event = key_event(arg(p, 0)?);
            for kind in ["keyDown", "keyUp"] {
                event["type"] = json!(kind);
                if kind == "keyUp" {
                    event["text"] = json!("");
                }
                tab.call("Input.dispatchKeyEvent", event.clone())
                    .await
                    .map_err(|e| failed("ACTION_FAILED", e))?;
            }
            Ok(())
        }
        "scroll" => {
            let down = p.args.first().is_none_or(|d| d.trim() != "false");
            let pages: f64 = p
                .args
                .get(1)
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(1.0);
            let sign = if down { 1.0 } else { -1.0 };
            let pages = sign * pages.clamp(0.0, 10.0);
            let js = match client {
                Client::Extension => format!("({SCROLL_ONCE})({pages})"),
                Client::Ideal => format!("window.scrollBy(0, innerHeight * {pages})"),
            };
            tab.eval(&js)
                .await
                .map(|_| ())
                .map_err(|e| failed("ACTION_FAILED", e))
        }
        "scroll_container" => {
            let node = element(tab, p, page).await?;
            script(tab, node, SCROLL_CONTAINER, &[json!(arg(p, 1)?)])
                .await
                .map(|_| ())
        }
        "navigate" => {
            let r = tab
                .call("Page.navigate", json!({ "url": arg(p, 0)? }))
                .await
                .map_err(|e| failed("ACTION_FAILED", e))?;
            match r["errorText"].as_str() {
                Some(e) if !e.is_empty() => Err(failed("ACTION_FAILED", e.to_owned())),
                _ => Ok(()),
            }
        }
        "goBack" => tab
            .eval("history.back()")
            .await
            .map(|_| ())
            .map_err(|e| failed("ACTION_FAILED", e)),
        "wait" => {
            let s: f64 = p
                .args
                .first()
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(1.0);
            tokio::time::sleep(Duration::from_secs_f64(s.clamp(0.0, 3.0))).await;
            Ok(())
        }
        "findText" if client == Client::Extension => {
            // Scrolls to the text when it is there; success either way, with no result.
            let _ = tab
                .eval(&format!(
                    "window.find({}, false, false, true)",
                    json!(arg(p, 0)?)
                ))
                .await;
            Ok(())
        }
        "findText" => {
            let text = arg(p, 0)?;
            // Case-insensitive, forwards, wrapping around (a second search finds it again).
            match tab
                .eval(&format!("window.find({}, false, false, true)", json!(text)))
                .await
            {
                Ok(Value::Bool(true)) => Ok(()),
                _ => Err(failed(
                    "TEXT_NOT_FOUND",
                    format!("{text:?} is not on the page"),
                )),
            }
        }
        other => Err(failed("ACTION_FAILED", format!("unknown action {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_the_client() {
        let p = parse(r#"setValue(12, "a, b")"#).expect("parsed");
        assert_eq!(
            (p.name.as_str(), p.args),
            ("setValue", vec!["12".to_owned(), "a, b".to_owned()])
        );
        let p = parse("selectOption(3, 'Express (2 days)')").expect("parsed");
        assert_eq!(p.args[1], "Express (2 days)");
        assert_eq!(
            parse("goBack()").expect("parsed").args,
            Vec::<String>::new()
        );
        assert_eq!(
            parse(r#"navigate(`http://a.test/?q="x"`)"#)
                .expect("parsed")
                .args[0],
            r#"http://a.test/?q="x""#
        );
        assert!(parse("click 3").is_none());
    }
}
