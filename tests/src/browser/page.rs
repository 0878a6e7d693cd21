//! What the extension reads from a page: the `interactiveTree` built from the browser's
//! accessibility tree in the client's node format (`i` = backend node id, short roles, names,
//! values, states, `xy`/`box` in document coordinates — unchanged by scrolling, as the
//! shipping client sends them), or in the `dom` mode the page's simplified HTML with a
//! `data-id` on every visible element; the URL, title and viewport, and the page's settling
//! after an action (DOM mutations counted by an observer every document gets, loads,
//! requests).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::cdp::Tab;

/// Installed in every document before its scripts run: counts element insertions and
/// removals and notes when the DOM last changed.
pub const OBSERVER: &str = r#"(() => {
  if (window.__agentObs) return;
  const st = window.__agentObs = { added: 0, removed: 0, last: performance.now(), doc: performance.timeOrigin };
  const elements = list => { let n = 0; for (const x of list) if (x.nodeType === 1) n++; return n; };
  new MutationObserver(ms => {
    for (const m of ms) { st.added += elements(m.addedNodes); st.removed += elements(m.removedNodes); }
    st.last = performance.now();
  }).observe(document, { childList: true, subtree: true });
})()"#;

/// The counters of the current document (its `doc` marks which document it is).
const COUNTERS: &str =
    "({ url: location.href, doc: window.__agentObs?.doc ?? 0, a: window.__agentObs?.added ?? 0, \
    r: window.__agentObs?.removed ?? 0, e: document.getElementsByTagName('*').length })";

/// Longest name and value sent, as the client cuts them.
const NAME_MAX: usize = 100;
const VALUE_MAX: usize = 200;

/// The client's short role for an accessibility role, for interactive roles only.
pub fn short_role(role: &str) -> Option<&'static str> {
    Some(match role {
        "button" | "PopUpButton" | "ToggleButton" => "btn",
        "link" => "link",
        "textbox" | "searchbox" | "spinbutton" | "TextField" | "date" | "DateTime"
        | "InputTime" => "inp",
        "combobox" | "listbox" => "sel",
        "checkbox" | "menuitemcheckbox" => "chk",
        "radio" | "menuitemradio" => "radio",
        "tab" => "tab",
        "menuitem" => "menu",
        "switch" => "switch",
        "slider" => "slider",
        "option" => "opt",
        "treeitem" => "tree",
        _ => return None,
    })
}

fn cut(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.chars().take(max).collect()
}

/// The states the client lists, from an accessibility node's properties.
fn states(properties: &[Value]) -> String {
    let mut out = Vec::new();
    for p in properties {
        let value = &p["value"]["value"];
        let on = value == true || value == "true" || value == "mixed";
        match p["name"].as_str().unwrap_or("") {
            "disabled" if on => out.push("disabled"),
            "checked" | "pressed" if on => out.push("checked"),
            "selected" if on => out.push("selected"),
            "expanded" => out.push(if on { "expanded" } else { "collapsed" }),
            "focused" if on => out.push("focused"),
            "required" if on => out.push("required"),
            "readonly" if on => out.push("readonly"),
            "invalid" if value.as_str().is_some_and(|v| v != "false") => out.push("invalid"),
            _ => {}
        }
    }
    out.join(",")
}

/// What the client sends about the page it sees.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub url: String,
    pub title: String,
    pub viewport: (u64, u64),
    pub nodes: Vec<Value>,
    /// The page's HTML (at most 500 000 characters): in the `dom` mode, or when the page has
    /// no interactive element (the client then sends the page in its `full` mode instead).
    pub dom: Option<String>,
    /// Element ids are the `data-id` values of the `dom` (the `dom` mode), not node ids.
    pub dom_ids: bool,
}

impl Snapshot {
    /// The ids an action may name on this page.
    pub fn ids(&self) -> Vec<&str> {
        if self.dom_ids {
            return self.dom.as_deref().map(data_ids).unwrap_or_default();
        }
        self.nodes.iter().filter_map(|n| n["i"].as_str()).collect()
    }

    /// The nodes' `i` values by accessible name (lower case), for tests.
    pub fn ids_named(&self, name: &str) -> Vec<String> {
        let wanted = name.to_lowercase();
        self.nodes
            .iter()
            .filter(|n| n["n"].as_str().is_some_and(|x| x.to_lowercase() == wanted))
            .filter_map(|n| n["i"].as_str().map(str::to_owned))
            .collect()
    }
}

/// The `data-id` values of a `dom` string, in order.
fn data_ids(dom: &str) -> Vec<&str> {
    dom.split(" data-id=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

/// Marks every visible element of the body with a `data-id` (kept across snapshots of a
/// document) and returns the body as simplified HTML: no scripts, styles or hidden elements,
/// current field values and states as attributes.
const DOM_SNAPSHOT: &str = r#"(() => {
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'LINK', 'META']);
  const visible = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  let n = window.__agentIds || 0;
  const live = [...document.body.querySelectorAll('*')];
  for (const el of live) if (!skip.has(el.tagName) && visible(el) && !el.hasAttribute('data-id'))
    el.setAttribute('data-id', String(++n));
  window.__agentIds = n;
  const copy = document.body.cloneNode(true);
  const copies = [...copy.querySelectorAll('*')];
  live.forEach((el, k) => {
    const c = copies[k];
    if (skip.has(el.tagName) || !visible(el)) { c.setAttribute('data-drop', ''); return; }
    if (!el.hasAttribute('data-id')) return;
    if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) {
      if (el.checked) c.setAttribute('checked', ''); else c.removeAttribute('checked');
    } else if (el.tagName === 'TEXTAREA') {
      c.textContent = el.value;
    } else if ('value' in el && ['INPUT', 'SELECT'].includes(el.tagName)) {
      c.setAttribute('value', el.value);
    }
  });
  for (const c of copy.querySelectorAll('[data-drop]')) c.remove();
  return copy.outerHTML;
})()"#;

/// A snapshot of the page's URL, title and viewport with these nodes or this HTML.
async fn snapshot_with(
    tab: &Tab,
    nodes: Vec<Value>,
    dom: Option<String>,
    dom_ids: bool,
) -> Result<Snapshot, String> {
    let page = tab
        .eval("({ url: location.href, title: document.title, w: innerWidth, h: innerHeight })")
        .await?;
    Ok(Snapshot {
        dom,
        dom_ids,
        url: page["url"].as_str().unwrap_or("").to_owned(),
        title: page["title"].as_str().unwrap_or("").to_owned(),
        viewport: (
            page["w"].as_u64().unwrap_or(1280),
            page["h"].as_u64().unwrap_or(800),
        ),
        nodes,
    })
}

/// The page as the extension reads it in its `dom` mode.
pub async fn dom_snapshot(tab: &Tab) -> Result<Snapshot, String> {
    let html = tab.eval(DOM_SNAPSHOT).await?;
    let dom = html.as_str().unwrap_or("").chars().take(500_000).collect();
    snapshot_with(tab, Vec::new(), Some(dom), true).await
}

/// The page as the extension reads it in its default (semantic) mode.
pub async fn snapshot(tab: &Tab) -> Result<Snapshot, String> {
    let ax = tab.call("Accessibility.getFullAXTree", json!({})).await?;
    let all = ax["nodes"].as_array().cloned().unwrap_or_default();
    let by_id: HashMap<&str, &Value> = all
        .iter()
        .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
        .collect();
    // Options of a closed native select are not on screen: the select's value stands for
    // them; the parts of a native date or time field are one field to the client.
    let in_native_select = |n: &Value| {
        let mut parent = n["parentId"].as_str();
        for _ in 0..64 {
            let Some(p) = parent.and_then(|p| by_id.get(p)) else {
                return false;
            };
            if matches!(
                p["role"]["value"].as_str(),
                Some("combobox" | "MenuListPopup" | "date" | "DateTime" | "InputTime")
            ) {
                return true;
            }
            parent = p["parentId"].as_str();
        }
        false
    };
    // Boxes come relative to the viewport; the client sends them in document coordinates.
    let scroll = tab.eval("[scrollX, scrollY]").await?;
    let (sx, sy) = (
        scroll[0].as_f64().unwrap_or(0.0),
        scroll[1].as_f64().unwrap_or(0.0),
    );
    let mut nodes = Vec::new();
    for n in &all {
        if n["ignored"] == true {
            continue;
        }
        let Some(role) = n["role"]["value"].as_str().and_then(short_role) else {
            continue;
        };
        let Some(backend) = n["backendDOMNodeId"].as_u64() else {
            continue;
        };
        if matches!(role, "opt" | "inp" | "btn") && in_native_select(n) {
            continue;
        }
        // Laid-out elements only: the client reads each element's box.
        let Ok(model) = tab
            .call("DOM.getBoxModel", json!({ "backendNodeId": backend }))
            .await
        else {
            continue;
        };
        let quad = &model["model"]["border"];
        let (x, y) = (
            quad[0].as_f64().unwrap_or(0.0) + sx,
            quad[1].as_f64().unwrap_or(0.0) + sy,
        );
        let (w, h) = (
            model["model"]["width"].as_f64().unwrap_or(0.0),
            model["model"]["height"].as_f64().unwrap_or(0.0),
        );
        let mut node = json!({
            "i": backend.to_string(),
            "r": role,
            "n": cut(n["name"]["value"].as_str().unwrap_or(""), NAME_MAX),
            "xy": [(x + w / 2.0).round() as i64, (y + h / 2.0).round() as i64],
            "box": [x.round() as i64, y.round() as i64, w.round() as i64, h.round() as i64],
        });
        let mut value = match &n["value"]["value"] {
            Value::String(s) => cut(s, VALUE_MAX),
            Value::Number(v) => v.to_string(),
            _ => String::new(),
        };
        // The client reads a field's own value; an ARIA spin button's accessible value is its
        // `aria-valuenow`, which a widget may update late.
        if n["role"]["value"] == "spinbutton" {
            if let Ok(Value::String(v)) = tab
                .on_node(
                    backend,
                    "function () { return 'value' in this ? String(this.value) : null; }",
                    &[],
                )
                .await
            {
                value = cut(&v, VALUE_MAX);
            }
        }
        if !value.is_empty() && !matches!(role, "chk" | "radio" | "link" | "btn") {
            node["v"] = json!(value);
        }
        let s = states(n["properties"].as_array().map(Vec::as_slice).unwrap_or(&[]));
        if !s.is_empty() {
            node["s"] = json!(s);
        }
        nodes.push(node);
    }
    let dom = if nodes.is_empty() {
        let html = tab.eval("document.documentElement.outerHTML").await?;
        Some(html.as_str().unwrap_or("").chars().take(500_000).collect())
    } else {
        None
    };
    snapshot_with(tab, nodes, dom, false).await
}

/// The counters read before an action, to report what it changed.
#[derive(Debug, Clone)]
pub struct Before {
    url: String,
    doc: f64,
    added: u64,
    removed: u64,
    requests: u64,
    elements: u64,
    started: Instant,
}

/// Reads the counters before an action.
pub async fn before(tab: &Tab) -> Before {
    let v = tab.eval(COUNTERS).await.unwrap_or(Value::Null);
    Before {
        url: v["url"].as_str().unwrap_or("").to_owned(),
        doc: v["doc"].as_f64().unwrap_or(0.0),
        added: v["a"].as_u64().unwrap_or(0),
        removed: v["r"].as_u64().unwrap_or(0),
        requests: tab.events("Network.requestWillBeSent"),
        elements: v["e"].as_u64().unwrap_or(0),
        started: Instant::now(),
    }
}

/// Waits until the page settled (the main frame loaded, DOM quiet for 200 ms; at most 8 s).
pub async fn settle(tab: &Tab) {
    let deadline = Instant::now() + Duration::from_secs(8);
    // Quiet counts from now: what the action set off (a navigation, an observer, a fetch)
    // gets its 200 ms.
    let _ = tab
        .eval("window.__agentObs && (window.__agentObs.last = performance.now())")
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    while Instant::now() < deadline {
        // The main frame's load (an ad frame may never finish).
        let frame = tab.main_frame();
        let loading = tab.events(&format!("Page.frameStartedLoading@{frame}"))
            > tab.events(&format!("Page.frameStoppedLoading@{frame}"));
        let quiet = tab
            .eval("document.readyState === 'complete' && performance.now() - (window.__agentObs?.last ?? 0) > 200")
            .await;
        if !loading && quiet == Ok(Value::Bool(true)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `domChanges` and `clientObservations` as the extension reports them, once the page settled.
pub async fn changes(tab: &Tab, before: &Before, old: &Snapshot, new: &Snapshot) -> (Value, Value) {
    let now = tab.eval(COUNTERS).await.unwrap_or(Value::Null);
    let url_changed = new.url != before.url;
    let new_document = now["doc"].as_f64().unwrap_or(0.0) != before.doc;
    let (added, removed) = if new_document {
        // A new document: everything in it came, everything of the old one went.
        (now["e"].as_u64().unwrap_or(0), before.elements)
    } else {
        (
            now["a"].as_u64().unwrap_or(0).saturating_sub(before.added),
            now["r"]
                .as_u64()
                .unwrap_or(0)
                .saturating_sub(before.removed),
        )
    };
    let network = tab.events("Network.requestWillBeSent") > before.requests;
    let had: Vec<&str> = old.nodes.iter().filter_map(|n| n["i"].as_str()).collect();
    let new_options: Vec<String> = new
        .nodes
        .iter()
        .filter(|n| n["r"] == "opt" && !had.contains(&n["i"].as_str().unwrap_or("")))
        .filter_map(|n| n["n"].as_str().map(str::to_owned))
        .collect();
    let mut dom = json!({
        "addedCount": added,
        "removedCount": removed,
        "dropdownDetected": !new_options.is_empty(),
        "stabilizationTime": before.started.elapsed().as_millis() as u64,
        "previousUrl": before.url,
        "urlChanged": url_changed,
        "didNetworkOccur": network,
    });
    if !new_options.is_empty() {
        dom["dropdownOptions"] = json!(new_options);
    }
    let observations = json!({
        "didUrlChange": url_changed,
        "didDomMutate": added + removed > 0,
        "didNetworkOccur": network,
    });
    (dom, observations)
}
