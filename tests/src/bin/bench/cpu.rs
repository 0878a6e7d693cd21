//! The request path's CPU work on one page, each part timed alone in this thread (no HTTP, no
//! store, no other request): reading the body, the page model, its rendering, the rules' look
//! over the page and the snapshot's compression. Where a step's time goes when the machine
//! is quiet, part by part.

use std::time::Instant;

use serde_json::json;
use shared::agent::page::{Page, PageContent, PageView};
use shared::agent::render::{render, Budget, DEFAULT_CHARS_PER_TOKEN};
use shared::agent::request::{read, PageInput};
use shared::domain::blocker::{cookie_dismissal, detect};

use super::pages::{big_dom, big_tree};
use super::{elapsed_ms, stats};

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

pub fn page_work(runs: usize) {
    let runs = runs.max(50);
    let budget = Budget {
        max_tokens: 6_000,
        chars_per_token: DEFAULT_CHARS_PER_TOKEN,
    };
    let pages = [
        (
            "2000-node tree",
            json!({ "interactiveTree": big_tree(2000) }),
        ),
        ("200000-char dom", json!({ "dom": big_dom() })),
    ];
    for (name, page) in pages {
        let mut body = page;
        body["url"] = json!("https://www.example.com/");
        body["query"] = json!("Open the first product");
        let bytes = body.to_string().into_bytes();
        println!("{name} ({} KB body), {runs} runs each:", bytes.len() / 1024);
        time("  read and check the body", runs, || read(&bytes));
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
