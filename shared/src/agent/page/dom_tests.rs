use super::*;

fn texts(t: &DomTree) -> Vec<&str> {
    t.nodes
        .iter()
        .filter_map(|n| match n {
            DomNode::Text(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

fn max_depth(t: &DomTree) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(0usize, 0usize)];
    while let Some((idx, d)) = stack.pop() {
        deepest = deepest.max(d);
        if let DomNode::Element { children, .. } = &t.nodes[idx] {
            stack.extend(children.iter().map(|&c| (c, d + 1)));
        }
    }
    deepest
}

#[test]
fn scripts_styles_and_comments_never_reach_the_model() {
    let t = DomTree::parse(
        "<p>keep<script>var x = '<a id=9>';</script><style>.a{}</style><!-- note --> me</p>",
    );
    assert!(t.ids().is_empty(), "ids inside scripts do not count");
    assert_eq!(texts(&t).join("|"), "keep|me");
}

#[test]
fn an_unclosed_head_or_skipped_element_does_not_swallow_the_page() {
    let t = DomTree::parse(
        "<html><head><title>T</title><meta charset=utf-8><body><a id=\"1\">x</a></body></html>",
    );
    assert_eq!(t.ids(), vec!["1"]);
    let t =
        DomTree::parse("<div><svg id=\"1\"><path id=\"9\" d=\"M0\"></div><a id=\"2\">after</a>");
    assert_eq!(
        t.ids(),
        vec!["1", "2"],
        "the svg counts, its drawing does not, and it ends with its parent"
    );
    assert!(!texts(&t).contains(&"T"));
}

#[test]
fn self_closed_elements_are_empty_whatever_their_kind() {
    let t = DomTree::parse(
        r#"<div><iframe name="ad" title="x>y"/><a id="1">One</a><textarea id="2"/><a id="3">Three</a><br/><div/><a id="4">Four</a></div>"#,
    );
    assert_eq!(t.ids(), vec!["1", "2", "3", "4"]);
}

#[test]
fn ids_that_cannot_be_written_in_an_action_do_not_count() {
    let long = "x".repeat(MAX_ID_CHARS + 1);
    let t = DomTree::parse(&format!(
        r#"<a id="a b">1</a><a id="{long}">2</a><a data-id="o'k" id="fine">3</a><a id="(x)">4</a><a id="3..5">5</a><a id="x]">6</a>"#
    ));
    assert_eq!(t.ids(), vec!["fine"]);
}

#[test]
fn mismatched_end_tags_cost_no_more_than_the_depth_limit() {
    // 80 000 open <i> then 80 000 </b>: each end tag is matched against at most 128 open
    // elements, so this is linear (an unbounded stack made it quadratic).
    let html = format!(
        "{}{}<a id=\"z\">end</a>",
        "<i>".repeat(80_000),
        "</b>".repeat(80_000)
    );
    let t = DomTree::parse(&html);
    assert_eq!(t.ids(), vec!["z"]);
}

#[test]
fn end_tags_inside_skipped_content_close_inner_elements_first() {
    let t = DomTree::parse(
        r#"<div id="w"><template><div>x</div><button id="t">no</button></template>Download</div><a id="after">a</a>"#,
    );
    assert_eq!(t.ids(), vec!["w", "after"]);
    assert_eq!(t.text_of(1), "Download");
    let t = DomTree::parse(
        r#"<div id="w"><noscript><div>Enable JS</div><a id="x">Basic</a></noscript>Download</div>"#,
    );
    assert_eq!(t.ids(), vec!["w"], "noscript content is text");
    assert_eq!(t.text_of(1), "Download");
    let t = DomTree::parse(
        r#"<a id="out"><svg id="s"><a><text>t</text></a></svg>label</a><b id="b">x</b>"#,
    );
    assert_eq!(t.ids(), vec!["out", "s", "b"]);
    assert_eq!(t.text_of(1), "label");
}

#[test]
fn labels_read_as_the_page_shows_them() {
    let t = DomTree::parse(
        r#"<button id="1">Pa<span>y</span> now</button><button id="2">Pay <b>now</b></button><div id="3"><p>One</p><p>Two</p></div><button id="4"><img alt="Delete forever"></button><button id="5"><svg viewBox="0 0 1 1"><title>Send message</title><path d="M0"/></svg></button><a id="6"><i aria-label="Close"></i></a>"#,
    );
    let label = |id: &str| {
        let at = t.elements().find(|(_, _, i)| *i == id).map(|(k, _, _)| k);
        at.map(|k| t.label_of(k, 100)).unwrap_or_default()
    };
    assert_eq!(label("1"), "Pay now");
    assert_eq!(label("2"), "Pay now");
    assert_eq!(label("3"), "One Two", "blocks stay apart");
    assert_eq!(
        label("4"),
        "Delete forever",
        "an image's alt names its button"
    );
    assert_eq!(label("5"), "Send message", "so does a drawing's title");
    assert_eq!(label("6"), "Close");
}

#[test]
fn broken_markup_is_parsed_leniently() {
    let t = DomTree::parse(r#"<div><a id="1">x<b>y</div><input id="2"/><p>tail"#);
    assert_eq!(t.ids(), vec!["1", "2"]);
    assert!(texts(&t).contains(&"tail"));
    assert_eq!(
        t.text_of(2),
        "xy",
        "the link's text, its unclosed child's included (inline: no space between, as shown)"
    );
}

#[test]
fn deep_nesting_is_flattened_below_the_depth_limit_and_keeps_every_id() {
    // 100 000 unclosed elements, each with an id: no recursion over them can overflow.
    let html: String = (0..100_000).map(|i| format!("<b id=\"{i}\">w")).collect();
    let t = DomTree::parse(&html);
    assert_eq!(t.ids().len(), 100_000);
    assert!(max_depth(&t) <= MAX_DEPTH + 1, "{}", max_depth(&t));
    assert_eq!(t.text_of(1).chars().count(), LABEL_CHARS + 1);
    assert!(
        t.text_of(1).starts_with("www"),
        "inline elements join as shown"
    );
    // Closed nesting as deep, and text after it still lands at the top.
    let closed = format!(
        "{}x{}<p id=\"end\">tail</p>",
        "<i>".repeat(50_000),
        "</i>".repeat(50_000)
    );
    let t = DomTree::parse(&closed);
    assert!(max_depth(&t) <= MAX_DEPTH + 1);
    let DomNode::Element { children, .. } = &t.nodes[0] else {
        panic!("root")
    };
    assert!(children
        .iter()
        .any(|&c| matches!(&t.nodes[c], DomNode::Element { id: Some(id), .. } if id == "end")));
}

#[test]
fn labels_are_bounded_and_linear_for_nested_labelled_elements() {
    // Nested ids each containing everything below: labels stay short.
    let html = format!("{}{}", "<a id=\"x\">".repeat(100), "word ".repeat(10_000));
    let t = DomTree::parse(&html);
    for i in 1..t.nodes.len() {
        assert!(t.text_of(i).chars().count() <= LABEL_CHARS + 1);
    }
    assert_eq!(t.label_of(1, 10), "word word…");
}

#[test]
fn a_field_is_named_by_its_aria_label_else_its_label() {
    let t = DomTree::parse(
        r#"<label><input type="checkbox" role="switch" id="1"> Auto-renew</label>
        <label for="2">Card number</label><input id="2" placeholder="1234">
        <label>Email<input id="3" aria-label="Work email"></label>
        <input id="4" placeholder="Search"><label>Notes <textarea id="5"></textarea></label>
        <label><input type="hidden" id="6"><input id="7" name="city"> City</label>"#,
    );
    let label = |id: &str| {
        let at = t.elements().find(|(_, _, i)| *i == id).map(|(k, _, _)| k);
        at.map(|k| t.field_label(k, 100)).unwrap_or_default()
    };
    assert_eq!(label("1"), "Auto-renew", "the label around it");
    assert_eq!(label("2"), "Card number", "the label naming it");
    assert_eq!(label("3"), "Work email", "its aria-label first");
    assert_eq!(label("4"), "Search", "no label: its attributes");
    assert_eq!(label("5"), "Notes");
    assert_eq!(label("7"), "City", "a hidden field is not the one labelled");
}
