use super::*;

fn tokens(html: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    tokenize(html, |t| out.push(t));
    out
}

fn start(name: &str, attrs: &[(&str, &str)], self_closing: bool) -> Token<'static> {
    Token::Start {
        name: name.into(),
        attrs: attrs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
        self_closing,
    }
}

#[test]
fn tags_attributes_and_text() {
    assert_eq!(
        tokens(r#"<A HREF="/x" id=3 data-x='y' disabled>Hi &amp; bye</a>"#),
        vec![
            start(
                "a",
                &[
                    ("href", "/x"),
                    ("id", "3"),
                    ("data-x", "y"),
                    ("disabled", "")
                ],
                false
            ),
            Token::Text("Hi &amp; bye"),
            Token::End("a".into()),
        ]
    );
    assert_eq!(
        tokens("<br/><p class='a/>b'/>"),
        vec![
            start("br", &[], true),
            start("p", &[("class", "a/>b")], true)
        ]
    );
}

#[test]
fn what_is_not_markup_is_text_and_declarations_are_skipped() {
    assert_eq!(
        tokens("a < b <3 <!-- <a id=1> --> c <!DOCTYPE html> <?x?> d </> e"),
        vec![
            Token::Text("a < b <3 "),
            Token::Text(" c "),
            Token::Text(" "),
            Token::Text(" d "),
            Token::Text(" e"),
        ]
    );
}

#[test]
fn raw_text_runs_to_its_end_tag() {
    assert_eq!(
        tokens("<script>if (a<b) x('</div>')</SCRIPT ><a>"),
        vec![
            start("script", &[], false),
            Token::Text("if (a<b) x('</div>')"),
            Token::End("script".into()),
            start("a", &[], false),
        ]
    );
    // A self-closed raw-text element has no content.
    assert_eq!(tokens("<textarea/><b>x</b>")[1], start("b", &[], false));
}

#[test]
fn comments_scripts_and_plaintext_end_where_browsers_end_them() {
    assert_eq!(
        tokens("<!--><a><!---><b><!-- x --!><i>")
            .into_iter()
            .filter(|t| matches!(t, Token::Start { .. }))
            .count(),
        3
    );
    // A self-closed script still opens one; its content is not markup.
    assert_eq!(
        tokens("<script/>x='<a id=\"e\">'</script>"),
        vec![
            start("script", &[], false),
            Token::Text("x='<a id=\"e\">'"),
            Token::End("script".into()),
        ]
    );
    assert_eq!(
        tokens("<plaintext>a</plaintext><b>"),
        vec![
            start("plaintext", &[], false),
            Token::Text("a</plaintext><b>")
        ]
    );
}

#[test]
fn a_tag_cut_off_by_the_end_is_dropped_and_nothing_is_scanned_twice() {
    assert_eq!(tokens("ok <a title=\"x"), vec![Token::Text("ok ")]);
    // Many tags that never close: one pass.
    let s = "<a x=\"".repeat(50_000);
    assert!(tokens(&s).len() <= 1);
    let s = "<!--".repeat(50_000);
    assert!(tokens(&s).is_empty());
}

#[test]
fn duplicate_attributes_keep_the_first_and_their_number_is_bounded() {
    let many: String = (0..1000).map(|i| format!(" a{i}=1")).collect();
    let html = format!("<p id=1 id=2{many}>");
    let Token::Start { attrs, .. } = &tokens(&html)[0] else {
        panic!("start")
    };
    assert_eq!(attrs[0], ("id".to_owned(), "1".to_owned()));
    assert_eq!(attrs.len(), MAX_ATTRS);
}
