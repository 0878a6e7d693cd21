//! Prompt tokens of the corpus pages and the synthetic pages of the interact benchmarks.

use std::time::Instant;

use serde_json::json;

/// The corpus directory (beside the repository).
use super::{elapsed_ms, stats};

fn corpus_dir() -> std::path::PathBuf {
    api_tests::brief_dir().join("corpus")
}

/// Annotates a page the way the extension's fallback mode does: every link, button, input,
/// select, textarea and element with an interactive ARIA role gets `data-element-id` 0..N in
/// document order, and the page's own `id`/`data-id`/`data-element-id` attributes are dropped.
/// Returns the annotated HTML and N.
fn annotate(html: &str) -> (String, usize) {
    use std::cell::Cell;
    use std::rc::Rc;
    const ROLES: &[&str] = &[
        "button",
        "link",
        "checkbox",
        "radio",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tab",
        "switch",
        "slider",
        "option",
        "combobox",
        "textbox",
        "searchbox",
        "treeitem",
        "spinbutton",
    ];
    let n = Rc::new(Cell::new(0usize));
    let counter = n.clone();
    let out = lol_html::rewrite_str(
        html,
        lol_html::RewriteStrSettings {
            element_content_handlers: vec![lol_html::element!("*", move |el| {
                // Only the extension's ids are element ids (pages use these attributes too).
                el.remove_attribute("id");
                el.remove_attribute("data-id");
                el.remove_attribute("data-element-id");
                let tag = el.tag_name().to_ascii_lowercase();
                let role = el
                    .get_attribute("role")
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                if matches!(
                    tag.as_str(),
                    "a" | "button" | "input" | "select" | "textarea"
                ) || ROLES.contains(&role.as_str())
                {
                    let id = counter.get();
                    el.set_attribute("data-element-id", &id.to_string())?;
                    counter.set(id + 1);
                }
                Ok(())
            })],
            ..lol_html::RewriteStrSettings::new()
        },
    )
    .unwrap_or_else(|_| html.to_owned());
    (out, n.get())
}

/// Prompt tokens of raw vs rendered pages, and the share of element ids kept.
pub fn prompt_tokens() {
    use shared::agent::page::Page;
    use shared::agent::render::{ids_in, render, Budget};
    let Ok(bpe) = tiktoken_rs::o200k_base() else {
        println!("prompt tokens: tokenizer unavailable");
        return;
    };
    let budget = Budget {
        max_tokens: 6_000,
        chars_per_token: shared::agent::render::DEFAULT_CHARS_PER_TOKEN,
    };
    let count = |s: &str| bpe.encode_with_special_tokens(s).len();
    // browser-use's figures as the issue measured them (its system prompt alone, and its
    // action schema); ours is the decision prompt's fixed part, tokenised here.
    println!(
        "fixed prompt (o200k): ours {} tokens (system prompt with the action grammar); browser-use about 5 200 (system prompt) + 3 500 (action schema)",
        count(shared::agent::prompt::SYSTEM_PROMPT)
    );
    println!(
        "prompt tokens per page (o200k; page budget {} tokens at {} chars/token):",
        budget.max_tokens, budget.chars_per_token
    );
    println!(
        "  {:<34} {:>9} {:>9} {:>7} {:>9} {:<20}",
        "page", "raw", "rendered", "ids", "ids kept", "form"
    );
    let mut names: Vec<_> = std::fs::read_dir(corpus_dir().join("pages"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    let (mut raw_total, mut rendered_total, mut chars_total, mut ids_total, mut kept_total) =
        (0, 0, 0, 0, 0);
    let mut overhead = Vec::new();
    let mut largest = (0, String::new());
    for path in &names {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let html = String::from_utf8_lossy(&bytes);
        let (annotated, n) = annotate(&html);
        let t = Instant::now();
        let Ok(page) = Page::from_dom(&annotated) else {
            println!("  {:<34} refused", path.display());
            continue;
        };
        let rendered = render(&page, budget);
        overhead.push(elapsed_ms(t));
        let shown = ids_in(&rendered);
        let kept = (0..n).filter(|i| shown.contains(&i.to_string())).count();
        let (raw, r) = (count(&annotated), count(&rendered.text));
        if r > largest.0 {
            let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
            largest = (r, format!("{name} ({})", rendered.form));
        }
        raw_total += raw;
        rendered_total += r;
        chars_total += rendered.text.chars().count();
        ids_total += n;
        kept_total += kept;
        let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
        println!(
            "  {name:<34} {raw:>9} {r:>9} {n:>7} {:>8.1}% {:<20}",
            100.0 * kept as f64 / n.max(1) as f64,
            rendered.form
        );
    }
    println!(
        "  {:<34} {raw_total:>9} {rendered_total:>9} {ids_total:>7} {:>8.1}%   ({:.1}x fewer tokens; {:.2} rendered chars/token)",
        "all pages",
        100.0 * kept_total as f64 / ids_total.max(1) as f64,
        raw_total as f64 / rendered_total.max(1) as f64,
        chars_total as f64 / rendered_total.max(1) as f64
    );
    println!(
        "  largest rendered page: {} tokens (o200k) for a budget of {}: {}",
        largest.0, budget.max_tokens, largest.1
    );
    stats("parse + render one annotated corpus page", overhead);
    tree_retention(budget, &count);

    let mut names: Vec<_> = std::fs::read_dir(corpus_dir().join("templatized"))
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".templatized.txt"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let (mut raw_total, mut rendered_total, mut ids_total, mut kept_total) = (0, 0, 0, 0);
    for path in &names {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(page) = Page::from_dom(&text) else {
            println!("  {:<34} refused", path.display());
            continue;
        };
        let rendered = render(&page, budget);
        let shown = ids_in(&rendered);
        let ids = page.id_set();
        let kept = ids.iter().filter(|id| shown.contains(*id)).count();
        if kept < ids.len() {
            let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
            println!(
                "    templatized: {name:<40} {:>5} ids {:>6.1}% kept ({})",
                ids.len(),
                100.0 * kept as f64 / ids.len() as f64,
                rendered.form
            );
        }
        raw_total += count(&text);
        rendered_total += count(&rendered.text);
        ids_total += ids.len();
        kept_total += kept;
    }
    println!(
        "  {:<34} {raw_total:>9} {rendered_total:>9} {ids_total:>7} {:>8.1}%   ({} templatized strings)",
        "templatized strings",
        100.0 * kept_total as f64 / ids_total.max(1) as f64,
        names.len()
    );
}

/// The corpus pages as the extension's `interactiveTree` (its default mode): one node per
/// annotated element, named by its text or label, the first 30 on the first screen and the
/// rest below it, rendered at the default budget. For each page, three tasks name an element
/// far down the page ("Open the “…” link"): whether the rendering for that task names it.
/// Printed per page: ids listed, elements named (with a readable name), named per 1 000
/// tokens (o200k), and the tasks' targets named.
fn tree_retention(budget: shared::agent::render::Budget, count: &dyn Fn(&str) -> usize) {
    use shared::agent::page::{Nodes, Page, PageContent, TreeNode};
    use shared::agent::render::{ids_in, render_for, task_words, Hints};
    let role = |tag: &str| match tag {
        "a" => "link",
        "button" => "btn",
        "input" | "textarea" => "inp",
        "select" => "sel",
        _ => "el",
    };
    let mut names: Vec<_> = std::fs::read_dir(corpus_dir().join("pages"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    println!(
        "  as interactive trees: {:<34} {:>6} {:>8} {:>7} {:>10} {:>8}  form",
        "page", "nodes", "ids", "named", "named/1k", "targets"
    );
    let (mut nodes_total, mut ids_total, mut named_total, mut tokens_total) = (0, 0, 0, 0);
    let (mut targets_total, mut found_total) = (0, 0);
    for path in &names {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let (annotated, _) = annotate(&String::from_utf8_lossy(&bytes));
        let Ok(page) = Page::from_dom(&annotated) else {
            continue;
        };
        let PageContent::Dom { tree, .. } = &page.content else {
            continue;
        };
        let mut nodes = Nodes::default();
        let mut labels = Vec::new();
        for (order, (k, tag, id)) in tree.elements().enumerate() {
            let y = if order < 30 {
                100.0
            } else {
                2000.0 + order as f64
            };
            let label = tree.label_of(k, 100);
            nodes.push(TreeNode {
                xy: Some([20.0, y]),
                ..TreeNode::new(id, role(tag), &label)
            });
            labels.push((id.to_owned(), label));
        }
        let n = nodes.len();
        let tree_page = Page::from_tree(nodes, Some((1280.0, 800.0)));
        let rendered = render_for(&tree_page, budget, Hints::default());
        let ids = ids_in(&rendered).intersection(&tree_page.id_set()).count();
        let named = rendered.text.lines().filter(|l| l.contains(" \"")).count();
        let tokens = count(&rendered.text);
        // Three far elements with a name of two words at least, each the target of a task.
        let far: Vec<&(String, String)> = [n / 2, 3 * n / 4, n.saturating_sub(5)]
            .iter()
            .filter_map(|&k| {
                labels[k.min(n.saturating_sub(1))..]
                    .iter()
                    .find(|(_, l)| l.split_whitespace().count() >= 2)
            })
            .collect();
        let mut found = 0;
        for (id, label) in &far {
            let words = task_words(&format!("Open the “{label}” link"));
            let hints = Hints {
                anchor: None,
                words: &words,
            };
            let r = render_for(&tree_page, budget, hints);
            let short: String = label.chars().take(12).collect();
            found += usize::from(
                r.text
                    .lines()
                    .any(|l| l.starts_with(&format!("[{id}]")) && l.contains(short.trim())),
            );
        }
        let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
        println!(
            "    {name:<34} {n:>6} {:>7.1}% {named:>7} {:>10.1} {:>6}/{}  {}",
            100.0 * ids as f64 / n.max(1) as f64,
            1000.0 * named as f64 / tokens.max(1) as f64,
            found,
            far.len(),
            rendered.form
        );
        nodes_total += n;
        ids_total += ids;
        named_total += named;
        tokens_total += tokens;
        targets_total += far.len();
        found_total += found;
    }
    println!(
        "  {:<34} {nodes_total:>6} nodes, {:.1}% ids listed, {named_total} named ({:.1} per 1 000 tokens), task targets named {found_total}/{targets_total}",
        "corpus pages as interactive trees",
        100.0 * ids_total as f64 / nodes_total.max(1) as f64,
        1000.0 * named_total as f64 / tokens_total.max(1) as f64,
    );
}

/// A synthetic tree of `n` nodes, a few in the viewport.
pub fn big_tree(n: usize) -> serde_json::Value {
    let roles = ["link", "btn", "inp", "chk", "sel", "tab", "menu"];
    serde_json::Value::Array(
        (0..n)
            .map(|i| {
                json!({ "i": i.to_string(), "r": roles[i % roles.len()], "n": format!("Product {i} - a fairly long accessible name"),
                        "xy": [100, if i < 40 { 50 + i * 10 } else { 5000 + i }], "box": [80, 40, 120, 20] })
            })
            .collect(),
    )
}

/// A 200 000-character dom: the largest corpus page, annotated, without scripts, styles and
/// comments (as the extension's simplifier sends it), cut.
pub fn big_dom() -> String {
    let path = corpus_dir().join("pages/peb__amazon-com-stress.html");
    let html = std::fs::read_to_string(path).unwrap_or_default();
    let (annotated, _) = annotate(&html);
    let stripped = lol_html::rewrite_str(
        &annotated,
        lol_html::RewriteStrSettings {
            element_content_handlers: vec![lol_html::element!(
                "script, style, noscript, svg",
                |el| {
                    el.remove();
                    Ok(())
                }
            )],
            document_content_handlers: vec![lol_html::doc_comments!(|c| {
                c.remove();
                Ok(())
            })],
            ..lol_html::RewriteStrSettings::new()
        },
    )
    .unwrap_or(annotated);
    stripped.chars().take(200_000).collect()
}
