use super::*;

#[test]
fn typed_text_never_reaches_logs() {
    assert_eq!(
        redacted("setValue(4, 'hunter2 \"x\"')"),
        "setValue(4, \"[11 characters]\")"
    );
    assert_eq!(redacted("click(10)"), "click(10)");
    assert_eq!(redacted("setValue(4, unquoted secret"), "setValue(…)");
}

#[test]
fn every_action_parses_and_round_trips() {
    for s in [
        "click(10)",
        "setValue(1, \"hello, world\")",
        "navigate(\"https://example.com/a?b=1,2\")",
        "goBack()",
        "wait(2)",
        "wait(0.5)",
        "scroll(true, 1)",
        "scroll(false, 2.5)",
        "scroll_container(12, \"down\")",
        "findText(\"Total (incl. VAT)\")",
        "hover(3)",
        "press(\"Enter\")",
        "selectOption(4, \"Large\")",
        "check(5)",
        "uncheck(6)",
        "finish()",
        "fail()",
        "ask_user()",
        "remember(\"price\", \"42 EUR\")",
        "googleSearch(\"opening hours of the town hall\")",
        "verifySuccess(\"the order shows as paid\")",
    ] {
        let a = Action::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(
            a.to_client_string().expect("quotable"),
            s,
            "round trip of {s}"
        );
    }
}

#[test]
fn quotes_avoid_the_characters_in_the_value() {
    let cases = [
        ("say \"hi\"", "'say \"hi\"'"),
        ("it's \"x\"", "`it's \"x\"`"),
        ("plain", "\"plain\""),
    ];
    for (value, want) in cases {
        assert_eq!(quote(value).expect("quotable"), want);
        let s = Action::SetValue("1".into(), value.into())
            .to_client_string()
            .expect("ok");
        // What the client reads back is the value, unescaped.
        assert_eq!(
            Action::parse(&s).expect("parses"),
            Action::SetValue("1".into(), value.into())
        );
    }
    assert!(quote("\"'`").is_err());
}

#[test]
fn the_model_may_give_reasons_and_questions_that_the_client_never_sees() {
    assert_eq!(
        Action::parse("fail(\"no results\")").expect("ok"),
        Action::Fail(Some("no results".into()))
    );
    let ask = Action::parse("ask_user('Which size?')").expect("ok");
    assert_eq!(ask, Action::AskUser(Some("Which size?".into())));
    assert_eq!(ask.to_client_string().expect("ok"), "ask_user()");
}

#[test]
fn malformed_actions_are_refused_with_a_reason() {
    for (s, why) in [
        ("click", "not of the form"),
        ("click(1", "does not end"),
        ("click()", "takes 1 argument"),
        ("click(1, 2)", "takes 1 argument"),
        ("tap(1)", "not an action"),
        ("navigate(\"/relative\")", "absolute"),
        ("wait(999)", "at most 30"),
        ("scroll(maybe, 1)", "true or false"),
        ("scroll_container(1, \"sideways\")", "direction"),
        ("click(\"a b\")", "not an element id"),
        ("googleSearch(\"\")", "search query"),
        ("verifySuccess()", "takes 1 argument"),
    ] {
        let e = Action::parse(s).expect_err(s);
        assert!(e.contains(why), "{s}: {e}");
    }
}

#[test]
fn model_escapes_are_resolved_and_requoted_for_the_client() {
    let a = Action::parse_model(r#"setValue(1, "hello, \"world\"")"#).expect("ok");
    assert_eq!(a, Action::SetValue("1".into(), "hello, \"world\"".into()));
    assert_eq!(
        a.to_client_string().expect("ok"),
        r#"setValue(1, 'hello, "world"')"#
    );
    assert_eq!(
        Action::parse_model("click( 10 )").expect("ok"),
        Action::Click("10".into())
    );
    assert_eq!(
        Action::parse_model("setValue(2, '')").expect("ok"),
        Action::SetValue("2".into(), String::new())
    );
    assert_eq!(Action::parse_model("goBack()").expect("ok"), Action::GoBack);
    assert_eq!(
        Action::parse_model(r#"findText("a\\b")"#).expect("ok"),
        Action::FindText("a\\b".into())
    );
}

#[test]
fn element_ids_are_reported() {
    assert_eq!(
        Action::parse("setValue(7, \"x\")").expect("ok").element(),
        Some("7")
    );
    assert_eq!(
        Action::parse("scroll(true, 1)").expect("ok").element(),
        None
    );
}

#[test]
fn a_model_s_common_variants_of_the_grammar_are_read_as_meant() {
    let read = |raw: &str| Action::parse_model(raw).map(|a| a.to_client_string());
    assert_eq!(read("click([12])"), Ok(Ok("click(12)".into())));
    assert_eq!(
        read("setValue([3], \"a, b\")"),
        Ok(Ok("setValue(3, \"a, b\")".into()))
    );
    assert_eq!(read("scroll(\"down\")"), Ok(Ok("scroll(true, 1)".into())));
    assert_eq!(read("scroll('up', 2)"), Ok(Ok("scroll(false, 2)".into())));
    assert_eq!(read("scroll(down)"), Ok(Ok("scroll(true, 1)".into())));
    assert_eq!(read("wait(2000)"), Ok(Ok("wait(2)".into())));
    assert_eq!(read("wait(2)"), Ok(Ok("wait(2)".into())));
    // What stays wrong is still refused, with its reason.
    assert!(Action::parse_model("wait(45)").is_err());
    assert!(Action::parse_model("scroll(\"sideways\")").is_err());
    assert!(Action::parse_model("click([12] extra)").is_err());
}

#[test]
fn the_grammar_variants_hold_on_the_largest_and_strangest_answers() {
    // Deep brackets, huge counts, a million commas, unicode quotes: read or refused, never a
    // panic, and never longer work than one pass.
    let deep = format!("click({}12{})", "[".repeat(100_000), "]".repeat(100_000));
    assert!(Action::parse_model(&deep).is_err());
    let commas = format!("scroll(\"down\"{})", ",1".repeat(200_000));
    assert!(Action::parse_model(&commas).is_err());
    for odd in [
        "wait(1e308)",
        "wait(inf)",
        "wait(NaN)",
        "wait(-5000)",
        "scroll(“down”)",
        "scroll(\"ｄｏｗｎ\")",
        "click([])",
        "click([12)",
        "click([é])",
        "setValue([3] , \"x\")",
        "wait(２０００)",
    ] {
        let _ = Action::parse_model(odd);
    }
    assert!(Action::parse_model("wait(1e308)").is_err());
    assert_eq!(
        Action::parse_model("setValue([3] , \"x\")").map(|a| a.to_client_string()),
        Ok(Ok("setValue(3, \"x\")".into()))
    );
}
