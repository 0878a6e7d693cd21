//! The request's checks: every field named, a raw body read as its parsed JSON is.

use super::*;
use serde_json::json;

#[test]
fn a_raw_body_reads_as_its_parsed_json() {
    let long = "x".repeat(150);
    let bodies = [
        json!({ "url": "https://a.com/", "query": "go", "interactiveTree": [
            { "i": "1", "r": "btn", "n": "Go", "xy": [1, 2], "box": [0, 0, 3, 4], "extra": { "deep": [1, 2] } },
            { "i": 7, "r": "link", "n": long, "v": 3.5, "s": true, "xy": [1], "box": "no" },
            { "i": " 9 ", "r": null, "n": ["a"], "v": { "k": 1 } }
        ], "domChanges": { "addedCount": 1 }, "viewport": { "width": 800, "height": 600 } }),
        json!({ "url": "https://a.com/", "query": "go", "interactiveTree": [
            1, "node", [], null, { "i": "" }, { "i": "a b" }, { "n": "no id" }
        ] }),
        json!({ "url": "https://a.com/", "query": "go", "interactiveTree": "nodes" }),
        json!({ "url": "https://a.com/", "query": "go", "interactiveTree": null, "dom": "<p id=1>x</p>" }),
        json!({ "url": "https://a.com/", "query": "go", "interactiveTree": { "i": "1" } }),
        json!({ "query": 5, "interactiveTree": [] }),
    ];
    for body in bodies {
        let text = body.to_string();
        assert_eq!(
            format!("{:?}", read(text.as_bytes()).expect("an object")),
            format!("{:?}", validate(&body)),
            "{body}"
        );
    }
    assert!(read(b"[1, 2]").is_none());
    assert!(read(b"{\"url\": ").is_none());
    // The last of repeated keys counts, as in a parsed body.
    let twice = br#"{"url":"https://a.com/","query":"go","interactiveTree":"x","interactiveTree":[{"i":"1"}]}"#;
    assert!(read(twice).expect("object").is_ok());
    // Where the JSON reader reads text as text, surrogates must pair and numbers fit an f64
    // (else the body is not JSON: `none`); where it skips, only the form counts. A node that
    // is not an object is refused by name (`err`).
    let head = r#"{"url":"https://a.com/","query":"go","interactiveTree":["#;
    for (node, expected) in [
        (r#"{"i":"1","x":"\ud800"}"#, "ok"),
        (r#"{"i":"1","n":"\ud800"}"#, "none"),
        (r#"{"i":"1","n":"\udc00"}"#, "none"),
        (
            r#"{"i":"1","n":"\ud83d\ude00 \u00e9\/\b\f\n\r\t\"\\"}"#,
            "ok",
        ),
        (r#"{"i":"1","n":"\ud83d\u0041"}"#, "none"),
        (r#"{"i":"1","n":"\ud83dx"}"#, "none"),
        (r#"{"i":"1","x":{"\ud800":1}}"#, "ok"),
        (r#"{"i":"1","n":{"\ud800":1}}"#, "none"),
        (r#"{"i":"1","n":[{"\ud800":1}]}"#, "ok"),
        (r#"{"\u0069":"1","\ud800":1}"#, "none"),
        (r#"{"i":"1","x":1e400}"#, "ok"),
        (r#"{"i":"1","xy":[1e400,1]}"#, "none"),
        (
            r#"{"i":"1","xy":[-0,0.1],"box":[1.5e3,-97.25,123456789012345678,9007199254740993]}"#,
            "ok",
        ),
        (r#"{"i":"1","xy":["\ud800",1]}"#, "none"),
        (
            r#"{"i":1e2,"r":-0,"n":12345678901234567890123,"v":false}"#,
            "ok",
        ),
        (r#"{"i":"1","n":"a\u0001b"}"#, "ok"),
        (r#"{"i":"1","n":"tab	raw"}"#, "none"),
        (r#"{"i":"1","xy":[01,2]}"#, "none"),
        (r#"{"i":"1","xy":[1.,2]}"#, "none"),
        (r#"{"i":"1","xy":[1,2,]}"#, "none"),
        (r#"{"i":"1",}"#, "none"),
        (
            r#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
            "err",
        ),
    ] {
        let text = format!("{head}{node}]}}");
        let got = match read(text.as_bytes()) {
            None => "none",
            Some(Ok(_)) => "ok",
            Some(Err(_)) => "err",
        };
        assert_eq!(got, expected, "{text}");
    }
    let deep = |d: usize| {
        format!(
            r#"{{"url":"https://a.com/","query":"go","dom":"<a id=1>x</a>","x":{}1{}}}"#,
            "[".repeat(d),
            "]".repeat(d)
        )
    };
    // Nesting is no reason to refuse a field the server skips; a field it reads is held to
    // the JSON reader's depth.
    for d in [125, 126, 127, 128, 1000] {
        assert!(matches!(read(deep(d).as_bytes()), Some(Ok(_))), "{d}");
    }
    let read_field = deep(1000).replace(r#""x":"#, r#""domChanges":"#);
    assert!(!matches!(read(read_field.as_bytes()), Some(Ok(_))));
    assert!(matches!(
        read(deep(100).replace(r#""x":"#, r#""domChanges":"#).as_bytes()),
        Some(Err(_))
    ));
}

fn fields(body: Value) -> Vec<String> {
    match validate(&body) {
        Err(Error::Validation(p)) => p.into_iter().map(|x| x.field).collect(),
        other => panic!("expected validation error, got {other:?}"),
    }
}

#[test]
fn the_captured_first_step_validates() {
    let body = json!({"url": "http://127.0.0.1:3000/test-page", "query": "Click the Press me button", "tabId": 1123291683,
        "sessionId": "8131ab15-75ec-448e-80c7-8ef0a28fb1e3", "screenshot": null, "domMode": "semantic",
        "interactiveTree": [{"i": "1", "r": "inp", "n": "Search box", "xy": [97, 90], "box": [8, 80, 177, 21]},
                            {"i": "10", "r": "btn", "n": "Press me", "xy": [225, 90], "box": [189, 80, 72, 21]}],
        "viewport": {"width": 780, "height": 437}, "pageTitle": "Probe Page"});
    let r = validate(&body).expect("valid");
    assert_eq!(r.viewport, Some((780.0, 437.0)));
    let PageInput::Tree { nodes, sent } = &r.page else {
        panic!("tree")
    };
    assert_eq!(nodes.get(1).map(|n| n.i), Some("10"));
    assert_eq!(
        serde_json::from_str::<Value>(sent).expect("json"),
        body["interactiveTree"],
        "the tree is kept as sent"
    );
    assert_eq!(
        r.session_id.as_deref(),
        Some("8131ab15-75ec-448e-80c7-8ef0a28fb1e3")
    );
}

#[test]
fn every_bad_field_is_named() {
    let f = fields(
        json!({ "query": "", "taskId": "task-1", "lastActionStatus": "done", "domMode": "x", "dom": 5 }),
    );
    for want in [
        "url",
        "query",
        "taskId",
        "lastActionStatus",
        "domMode",
        "dom",
    ] {
        assert!(f.contains(&want.to_string()), "{want} missing from {f:?}");
    }
    for ok in [
        "about:blank",
        "data:text/html,<h1>hi</h1>",
        "chrome://newtab/",
        "file:///tmp/a.html",
    ] {
        assert_eq!(page_url(ok).as_deref(), Some(ok), "{ok}");
    }
    let long = format!("data:text/html;charset=utf-8,{}", "x".repeat(10_000));
    assert_eq!(
        page_url(&long).as_deref(),
        Some("data:text/html;charset=utf-8,…")
    );
    assert!(page_url(&format!("https://a.com/{}", "x".repeat(5000))).is_none());
    assert!(is_web_url("https://a.com/") && !is_web_url("about:blank") && !is_web_url("data:,x"));
    let f = fields(json!({ "url": "not a url", "query": "q", "interactiveTree": [] }));
    assert_eq!(f, vec!["url", "interactiveTree"]);
    let f = fields(
        json!({ "url": "https://a.com", "query": "q", "interactiveTree": [{"i": ""}, {"r": "btn"}, 7] }),
    );
    assert_eq!(
        f,
        vec![
            "interactiveTree[0].i",
            "interactiveTree[1].i",
            "interactiveTree[2]"
        ]
    );
    let f = fields(
        json!({ "url": "https://a.com", "query": "q", "dom": "x".repeat(MAX_DOM_CHARS + 1) }),
    );
    assert_eq!(f, vec!["dom"]);
    let f = fields(
        json!({ "url": "https://a.com", "query": "q".repeat(MAX_QUERY_CHARS + 1), "dom": "<a id=1>x</a>" }),
    );
    assert_eq!(f, vec!["query"]);
    // No node-count cap (the contract): a tree of more nodes than any page has is read whole;
    // only the body's size bounds it.
    let tree = |n: usize| {
        let nodes = vec![r#"{"i":"1"}"#; n].join(",");
        format!(r#"{{"url":"https://a.com/","query":"q","interactiveTree":[{nodes}]}}"#)
    };
    let big = read(tree(120_000).as_bytes())
        .expect("an object")
        .expect("valid");
    assert!(matches!(big.page, PageInput::Tree { ref nodes, .. } if nodes.len() == 120_000));
}

#[test]
fn client_reports_keep_known_fields_only_and_bounded() {
    let r = validate(&json!({ "url": "https://a.com/x", "query": "q", "dom": "<a id=1>x</a>",
        "lastActionStatus": "failure",
        "lastActionError": { "message": "m".repeat(4_000_000), "code": "ELEMENT_NOT_FOUND", "elementId": 12, "stack": "x".repeat(1000) },
        "lastActionResult": { "success": false, "actualState": { "blob": "y".repeat(5000) } },
        "domChanges": { "addedCount": 3, "dropdownOptions": vec!["o"; 500], "urlChanged": "yes" },
        "clientObservations": { "didUrlChange": true, "extra": 1 } }))
    .expect("valid");
    let stored = serde_json::to_string(&r.last_action).expect("json");
    assert!(stored.len() < 10_000, "{}", stored.len());
    let e = r.last_action.error.expect("error");
    assert_eq!(
        e["message"].as_str().map(|m| m.chars().count()),
        Some(1_000)
    );
    assert_eq!(
        (e["code"].as_str(), e["elementId"].as_str()),
        (Some("ELEMENT_NOT_FOUND"), Some("12"))
    );
    assert!(e.get("stack").is_none());
    let res = r.last_action.result.expect("result");
    assert!(res["actualState"]
        .as_str()
        .is_some_and(|s| s.chars().count() == 1_000));
    let ch = r.last_action.dom_changes.expect("changes");
    assert_eq!(ch["dropdownOptions"].as_array().map(Vec::len), Some(50));
    assert!(
        ch.get("urlChanged").is_none(),
        "wrong types are dropped, not refused"
    );
    assert_eq!(
        r.last_action.client_observations,
        Some(json!({ "didUrlChange": true }))
    );
}

#[test]
fn unknown_fields_are_ignored_and_long_names_cut() {
    let r = validate(
        &json!({ "url": "https://a.com/x", "query": " q ", "futureField": {"x": 1},
        "interactiveTree": [{"i": 5, "r": "btn", "n": "n".repeat(300)}] }),
    )
    .expect("valid");
    assert_eq!(r.query, "q");
    let PageInput::Tree { nodes, .. } = r.page else {
        panic!("tree")
    };
    assert_eq!(
        nodes.get(0).map(|n| (n.i, n.n.chars().count())),
        Some(("5", 100))
    );
    // An unknown field is never a reason to refuse: neither values no JSON value can hold
    // (a lone surrogate, a number past f64) nor nesting past the reader's depth.
    let head = r#"{"url":"https://a.com/","query":"q","dom":"<a id=1>x</a>","#;
    for unknown in [
        r#""later":"\ud800""#.to_owned(),
        r#""later":1e400"#.to_owned(),
        format!(r#""later":{}1{}"#, "[".repeat(1000), "]".repeat(1000)),
        format!(
            r#""later":{}"#,
            r#"{"a":"#.repeat(300) + "1" + &"}".repeat(300)
        ),
    ] {
        let body = format!("{head}{unknown}}}");
        assert!(matches!(read(body.as_bytes()), Some(Ok(_))), "{body}");
    }
    // A field the server reads is still held to its form.
    let deep = format!(
        r#"{head}"viewport":{}1{}}}"#,
        "[".repeat(1000),
        "]".repeat(1000)
    );
    assert!(!matches!(read(deep.as_bytes()), Some(Ok(_))));
}

#[test]
fn a_screenshot_is_kept_as_base64_of_an_image_within_its_bound() {
    let jpeg = "/9j/4AAQSkZJRgABAQAA";
    let with = |shot: Value| {
        validate(
            &json!({ "url": "https://a.com/x", "query": "q", "dom": "<a id=1>x</a>", "screenshot": shot }),
        )
    };
    assert_eq!(
        with(json!(jpeg)).expect("valid").screenshot.as_deref(),
        Some(jpeg)
    );
    let data_url = format!("data:image/jpeg;base64,{jpeg}");
    assert_eq!(
        with(json!(data_url)).expect("valid").screenshot.as_deref(),
        Some(jpeg)
    );
    assert_eq!(with(Value::Null).expect("valid").screenshot, None);
    let huge = "A".repeat(super::MAX_SCREENSHOT_CHARS + 4);
    assert_eq!(
        with(json!(huge)).expect("kept out, not refused").screenshot,
        None
    );
    for bad in [json!("not base64!"), json!("aGVsbG8gd29ybGQ="), json!(12)] {
        let e = format!("{:?}", with(bad.clone()).expect_err("refused"));
        assert!(e.contains("screenshot"), "{bad}: {e}");
    }
}

#[test]
fn a_client_says_what_it_runs_and_the_shipping_extension_says_nothing() {
    let body = |caps: Value| json!({ "url": "https://a.com/", "query": "q", "dom": "<a id=1>x</a>", "clientCapabilities": caps });
    // The captured extension request has no such field: nothing beyond its answers.
    let plain = validate(&json!({ "url": "https://a.com/", "query": "q", "dom": "<a id=1>x</a>" }))
        .expect("valid");
    assert_eq!(plain.capabilities, Capabilities::default());
    let all = validate(&body(json!(Capabilities::ALL))).expect("valid");
    assert!(all.capabilities.server_rounds && all.capabilities.chained_actions);
    // Names the server does not know are ignored; null is no field.
    let some = validate(&body(json!(["serverRounds", "voiceInput"]))).expect("valid");
    assert!(some.capabilities.server_rounds && !some.capabilities.chained_actions);
    assert_eq!(
        validate(&body(Value::Null)).expect("valid").capabilities,
        Capabilities::default()
    );
    assert_eq!(
        fields(body(json!("serverRounds"))),
        vec!["clientCapabilities"]
    );
    assert_eq!(
        fields(body(json!(["serverRounds", 5, "x".repeat(65)]))),
        vec!["clientCapabilities[1]", "clientCapabilities[2]"]
    );
    // Only the first 32 names are read.
    let mut many = vec!["a"; 32];
    many.push("serverRounds");
    let r = validate(&body(json!(many))).expect("valid");
    assert!(!r.capabilities.server_rounds);
    // Read the same from the raw body.
    let raw = body(json!(["chainedActions"])).to_string();
    let r = read(raw.as_bytes()).expect("an object").expect("valid");
    assert!(r.capabilities.chained_actions && !r.capabilities.server_rounds);
}
