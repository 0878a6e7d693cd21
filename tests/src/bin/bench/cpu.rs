//! The request path's CPU work on one page, each part timed alone in this thread (no HTTP, no
//! store, no other request): reading the body, the page model, its rendering, the rules' look
//! over the page and the snapshot's compression. Where a step's time goes when the machine
//! is quiet, part by part.

use std::time::Instant;

use serde_json::{json, Value};
use shared::agent::page::{Nodes, Page, PageContent, PageView, TreeNode};
use shared::agent::render::{render, Budget, DEFAULT_CHARS_PER_TOKEN};
use shared::agent::request::{read, PageInput};
use shared::domain::blocker::{cookie_dismissal, detect};

use super::heap::peak;
use super::pages::{big_dom, big_tree};
use super::{elapsed_ms, stats};

/// The tree read by derived types instead of the request's visitors (`agent/request/wire.rs`):
/// each node a struct of JSON values, then put into the same [`Nodes`]. What the visitors are
/// measured against.
#[derive(serde::Deserialize)]
struct DerivedBody {
    #[serde(rename = "interactiveTree", default)]
    tree: Vec<DerivedNode>,
}

#[derive(serde::Deserialize)]
struct DerivedNode {
    #[serde(default)]
    i: Value,
    #[serde(default)]
    r: Value,
    #[serde(default)]
    n: Value,
    #[serde(default)]
    v: Value,
    #[serde(default)]
    s: Value,
    #[serde(default)]
    xy: Value,
    #[serde(default, rename = "box")]
    r#box: Value,
}

fn derived_nodes(bytes: &[u8]) -> Option<Nodes> {
    let body: DerivedBody = serde_json::from_slice(bytes).ok()?;
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let numbers =
        |v: &Value| -> Option<Vec<f64>> { v.as_array()?.iter().map(Value::as_f64).collect() };
    let mut nodes = Nodes::default();
    for n in &body.tree {
        let (i, r, name) = (
            text(&n.i)?,
            text(&n.r).unwrap_or_default(),
            text(&n.n).unwrap_or_default(),
        );
        let (v, s) = (text(&n.v), text(&n.s));
        let xy = numbers(&n.xy).and_then(|x| <[f64; 2]>::try_from(x).ok());
        let r#box = numbers(&n.r#box).and_then(|x| <[f64; 4]>::try_from(x).ok());
        nodes.push(TreeNode {
            i: &i,
            r: &r,
            n: &name,
            v: v.as_deref(),
            s: s.as_deref(),
            xy,
            r#box,
        });
    }
    Some(nodes)
}

/// Runs `work` `runs` times and prints its times.
fn time<T>(name: &str, runs: usize, mut work: impl FnMut() -> T) {
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(work());
        ms.push(elapsed_ms(t));
    }
    stats(name, ms);
}

/// BENCH_PAGES=tree,dom,large,smallest picks pages (tree and dom by default; `large` is a tree
/// of 48 000 nodes like the 2 000-node one, 5 MB; `smallest` is 5 MB of the smallest nodes a
/// tree can have, 500 000 of them).
pub fn page_work(runs: usize) {
    let budget = Budget {
        max_tokens: 6_000,
        chars_per_token: DEFAULT_CHARS_PER_TOKEN,
    };
    let only = std::env::var("BENCH_PAGES").unwrap_or_else(|_| "tree,dom".into());
    let chosen = |key: &str| only.split(',').any(|p| p.trim() == key);
    let mut pages = Vec::new();
    if chosen("tree") {
        pages.push((
            "2000-node tree",
            json!({ "interactiveTree": big_tree(2000) }),
            runs.max(50),
        ));
    }
    if chosen("dom") {
        pages.push(("200000-char dom", json!({ "dom": big_dom() }), runs.max(50)));
    }
    if chosen("large") {
        pages.push((
            "48000-node tree",
            json!({ "interactiveTree": big_tree(48_000) }),
            runs.min(10),
        ));
    }
    if chosen("smallest") {
        let nodes: Vec<_> = (0..500_000)
            .map(|i| json!({ "i": (i % 10).to_string() }))
            .collect();
        pages.push((
            "500000 smallest nodes",
            json!({ "interactiveTree": nodes }),
            runs.min(5),
        ));
    }
    for (name, page, runs) in pages {
        let mut body = page;
        body["url"] = json!("https://www.example.com/");
        body["query"] = json!("Open the first product");
        let bytes = body.to_string().into_bytes();
        println!("{name} ({} KB body), {runs} runs each:", bytes.len() / 1024);
        time("  read and check the body", runs, || read(&bytes));
        if name.contains("node") {
            time("    the tree by derived types instead", runs, || {
                derived_nodes(&bytes)
            });
            let (_, visitors) = peak(|| read(&bytes));
            let (_, derived) = peak(|| derived_nodes(&bytes));
            println!(
                "    peak heap: read and check {} KiB, the tree by derived types {} KiB",
                visitors / 1024,
                derived / 1024
            );
        }
        let Some(Ok(request)) = read(&bytes) else {
            println!("  the body was refused");
            continue;
        };
        let viewport = Some((1280.0, 800.0));
        let page = match &request.page {
            PageInput::Tree { nodes, sent } => {
                // The model takes the nodes whole: timed with a copy of them, and the copy alone.
                time("  page model (and a copy of the nodes)", runs, || {
                    Page::from_tree(nodes.clone(), viewport)
                });
                time("    the copy alone", runs, || nodes.clone());
                time("  snapshot compression", runs, || {
                    shared::ports::Compressed::of(sent.as_bytes())
                });
                Page::from_tree(nodes.clone(), viewport)
            }
            PageInput::Dom(dom) => {
                time("  page model", runs, || Page::from_dom(dom));
                time("  snapshot compression", runs, || {
                    shared::ports::Compressed::of(dom.as_bytes())
                });
                match Page::from_dom(dom) {
                    Ok(p) => p,
                    Err(e) => {
                        println!("  the dom was refused: {e}");
                        continue;
                    }
                }
            }
        };
        time("  rendering for the prompt", runs, || render(&page, budget));
        let view = PageView {
            page: &page,
            url: &request.url,
        };
        time("  blockers and cookie banners", runs, || {
            (
                detect(&view, &request.query),
                cookie_dismissal(&view, &request.query, &[]),
            )
        });
        if let PageContent::Tree(nodes) = &page.content {
            time("  lower-case page text", runs, || {
                shared::domain::facts::lowered(nodes.text())
            });
        }
    }
}
