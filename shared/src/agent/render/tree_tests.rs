use super::*;
use crate::agent::page::Page;
use crate::agent::render::tests::budget;
use crate::agent::render::{ids_in, listed_or_counted, render as render_page, weight, Budget};

fn no_hints() -> Hints<'static> {
    Hints::default()
}

fn nodes(count: usize, visible: usize) -> Nodes {
    let mut out = Nodes::default();
    for i in 0..count {
        let (id, name) = (
            i.to_string(),
            format!("Link number {i} with a rather long accessible name for testing"),
        );
        out.push(TreeNode {
            s: (i % 7 == 0).then_some("disabled"),
            xy: Some([10.0, if i < visible { 100.0 } else { 5000.0 }]),
            ..TreeNode::new(&id, if i % 3 == 0 { "btn" } else { "link" }, &name)
        });
    }
    out
}

#[test]
fn a_line_is_measured_exactly_as_it_is_written() {
    let names = [
        "",
        "Go",
        "  Ünïcödé   näme  with spaces ",
        "数字 1234567890",
        &"x".repeat(150),
    ];
    for (k, name) in names.iter().enumerate() {
        let (id, value, states) = (
            format!("{k}7"),
            format!("{name} value"),
            "disabled, checked,".repeat(k + 1),
        );
        let node = TreeNode {
            v: (k % 2 == 0).then_some(value.as_str()),
            s: (k % 3 == 0).then_some(states.as_str()),
            ..TreeNode::new(&id, [" btn", " two words ", "", "inp"][k % 4], name)
        };
        let parts = Parts::of(&node);
        for name_max in [0, 8, 10, 16, 40, 100] {
            assert_eq!(
                parts.weight(name_max),
                weight(&parts.line(name_max)),
                "{node:?} at {name_max}"
            );
        }
    }
}

#[test]
fn tree_lists_nodes_in_document_order_and_shortens_names_away_from_the_focus_first() {
    let p = Page::from_tree(nodes(50, 5), Some((800.0, 600.0)));
    let full = render_page(&p, budget(100_000));
    assert_eq!(full.form, "tree");
    let lines: Vec<&str> = full.text.lines().collect();
    assert_eq!(
        lines.len(),
        50,
        "no viewport separator: the client's coordinates cannot tell"
    );
    assert!(lines[5].starts_with("[5] link"), "{}", lines[5]);
    let mut forms = Vec::new();
    for tokens in (50..4000).step_by(25) {
        let r = render_page(&p, budget(tokens));
        assert!(r.text.chars().count() <= tokens, "{} at {tokens}", r.form);
        if !forms.contains(&r.form) {
            forms.push(r.form);
        }
        // Every element is listed or counted where it is, unless even the ids of the focus
        // overflow (then the prompt says how many are left out).
        if r.form != "tree-ids-trimmed" {
            assert_eq!(listed_or_counted(&r), 50, "{} at {tokens}", r.form);
        }
    }
    assert!(forms.len() >= 5, "{forms:?}");
}

#[test]
fn names_stay_whole_around_the_last_acted_on_element() {
    // 300 product cards: a link and an "Add to cart" each. The model last clicked deep in the
    // list: the names around it stay long while the far ones are cut.
    let mut ns = Nodes::default();
    for k in 0..300 {
        ns.push(TreeNode::new(
            &format!("p{k}"),
            "link",
            &format!("Trail Runner model {k} in blue, waterproof"),
        ));
        ns.push(TreeNode::new(&format!("a{k}"), "btn", "Add to cart"));
    }
    let p = Page::from_tree(ns, None);
    let b = budget(12_000);
    let plain = crate::agent::render::render(&p, b);
    let hints = Hints {
        anchor: Some("p250"),
        words: &[],
    };
    let around = crate::agent::render::render_for(&p, b, hints);
    assert_ne!(plain.form, "tree", "the page does not fit whole");
    let line = |r: &crate::agent::render::Rendered, id: &str| {
        r.text
            .lines()
            .find(|l| l.starts_with(&format!("[{id}]")))
            .unwrap_or("")
            .to_owned()
    };
    assert!(
        line(&around, "p250").contains("Trail Runner model 250 in blue"),
        "{}",
        line(&around, "p250")
    );
    assert!(
        !line(&plain, "p250").contains("model 250 in blue"),
        "{}",
        line(&plain, "p250")
    );
    assert!(
        line(&around, "p0").contains("Trail Runner model 0 in blue"),
        "the start keeps its names"
    );
    assert_eq!(listed_or_counted(&around), 600, "{}", around.form);
}

#[test]
fn the_form_chosen_by_weighing_is_the_first_that_writing_would_fit() {
    // Written the plain way: each form's lines in document order, the first that fits wins.
    let plain = |nodes: &Nodes, anchor: Option<&str>, max| {
        let hints = Hints {
            anchor,
            ..no_hints()
        };
        let near = focus(nodes, hints, None);
        FORMS.iter().find_map(|&(form, near_max, far_max, _)| {
            let mut out = Out::new(max);
            for (n, near) in nodes.iter().zip(&near) {
                out.line(&Parts::of(&n).line(if *near { near_max } else { far_max }));
            }
            out.finish().map(|text| (form, text))
        })
    };
    for (count, anchor) in [
        (50, None),
        (120, Some("100")),
        (120, Some("nope")),
        (1, None),
        (7, Some("3")),
    ] {
        let nodes = nodes(count, 0);
        for max in (0..40_000).step_by(97) {
            let hints = Hints {
                anchor,
                ..no_hints()
            };
            let (form, text, _) = render(&nodes, hints, None, max);
            match plain(&nodes, anchor, max) {
                Some(expected) => {
                    assert_eq!((form, text), expected, "{count}/{anchor:?} at {max}")
                }
                None => assert!(!FORMS.iter().any(|f| f.0 == form), "{form} at {max}"),
            }
        }
    }
}

#[test]
fn a_huge_tree_stays_within_the_budget() {
    // 50 000 nodes, all claiming to be on screen: the rendering is cut, never over the
    // ceiling, and counts what it does not list.
    let p = Page::from_tree(nodes(50_000, 50_000), Some((800.0, 600.0)));
    let r = render_page(&p, budget(15_000));
    assert!(r.text.chars().count() <= 15_000);
    assert_eq!(r.form, "tree-named-summary");
    assert_eq!(listed_or_counted(&r), 50_000);
    assert!(ids_in(&r).contains("0"));
    // Without room for the focus, ids are listed bare and the rest said to be left out.
    let r = render_page(&p, budget(2_000));
    assert!(r.text.chars().count() <= 2_000);
    assert!(
        r.notes.iter().any(|n| n.contains("are not listed")),
        "{}: {:?}",
        r.form,
        r.notes
    );
}

#[test]
fn an_article_sized_tree_names_far_more_than_its_start_and_counts_the_rest() {
    // 838 links with long names in a 6 000-token budget (Wikipedia's size): the start and the
    // first screen keep long names, as many others as fit keep short ones, and the rest are
    // counted where they are instead of listed as bare ids.
    let p = Page::from_tree(nodes(838, 40), Some((800.0, 600.0)));
    let b = Budget {
        max_tokens: 6_000,
        chars_per_token: 2.5,
    };
    let r = render_page(&p, b);
    assert_eq!(r.form, "tree-named-summary");
    assert_eq!(listed_or_counted(&r), 838);
    let named = r.text.lines().filter(|l| l.contains(" \"")).count();
    assert!(named >= 200, "{named} named");
    assert!(r
        .text
        .lines()
        .all(|l| l.contains(" \"") || l.starts_with("(… ")));
}

#[test]
fn elements_named_with_the_tasks_words_keep_their_names_wherever_they_are() {
    let mut ns = nodes(838, 40);
    ns.push(TreeNode::new(
        "800x",
        "link",
        "Contact the Zephyrine support desk",
    ));
    let p = Page::from_tree(ns, Some((800.0, 600.0)));
    let b = Budget {
        max_tokens: 3_000,
        chars_per_token: 2.5,
    };
    let words = crate::agent::render::task_words("Open the Zephyrine support page");
    let with = crate::agent::render::render_for(
        &p,
        b,
        Hints {
            anchor: None,
            words: &words,
        },
    );
    let without = render_page(&p, b);
    let line = |r: &crate::agent::render::Rendered| {
        r.text
            .lines()
            .any(|l| l.starts_with("[800x]") && l.contains("Zephyrine support"))
    };
    assert!(line(&with), "{}", with.form);
    assert!(!line(&without), "{}", without.form);
}
