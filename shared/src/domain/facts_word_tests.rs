use super::{mentions_any, WordSet};

static WORDS: WordSet = WordSet::new(&[
    "captcha",
    "recaptcha",
    "i'm not a robot",
    "cookies",
    "Log In",
    "não sou um robô",
]);

#[test]
fn a_word_set_matches_as_mentions_any_does() {
    for text in [
        "reCAPTCHA",
        "Change the CAPTCHA code",
        "captchas",
        "I'm not a robot",
        "We use COOKIES.",
        "cookie",
        "log in",
        "blog in",
        "Über captcha-Prüfung",
        "NÃO SOU UM ROBÔ",
        "Não sou um robô!",
        "nao sou um robo",
        "",
    ] {
        assert_eq!(
            WORDS.in_text(text),
            mentions_any(
                text,
                &[
                    "captcha",
                    "recaptcha",
                    "i'm not a robot",
                    "cookies",
                    "Log In",
                    "não sou um robô"
                ]
            ),
            "{text}"
        );
    }
    assert!(WORDS.in_text("reCAPTCHA") && !WORDS.in_text("captchas"));
    assert!(WORDS.in_text("NÃO SOU UM ROBÔ") && !WORDS.in_text("nao sou um robo"));
}

/// A page that has its whole text in lower case, as a tree page has.
struct Whole(Vec<String>, String);

impl super::PageFacts for Whole {
    fn url(&self) -> &str {
        "https://a.com/"
    }
    fn hash(&self) -> &str {
        "h"
    }
    fn element_count(&self) -> usize {
        self.0.len()
    }
    fn element(&self, _: &str) -> Option<super::ElementFacts<'_>> {
        None
    }
    fn elements(&self) -> Box<dyn Iterator<Item = super::ElementFacts<'_>> + '_> {
        Box::new(std::iter::empty())
    }
    fn lower_text(&self) -> Option<&str> {
        Some(&self.1)
    }
}

#[test]
fn a_page_without_the_words_anywhere_has_them_on_no_element() {
    let names = [
        "Über captcha-Prüfung",
        "NÃO SOU UM ROBÔ",
        "We use COOKIES.",
        "İstanbul LOG IN",
        "Product 12 - a fairly long name",
        "ΣΟΦΟΣ Log\u{a0}In",
        "",
    ];
    // Every pair of names as a page: whenever an element's name holds a word, the
    // whole page's text does (the look over the page never hides an element's word).
    for a in names {
        for b in names {
            let text = format!("1link{a}2btn{b}");
            let page = Whole(vec![a.into(), b.into()], super::lowered(&text));
            let named = WORDS.in_text(a) || WORDS.in_text(b);
            assert!(!named || WORDS.on_page(&page), "{a:?} {b:?}");
        }
    }
    let plain = Whole(
        vec!["Products".into()],
        super::lowered("1linkProducts and prices"),
    );
    assert!(
        !WORDS.on_page(&plain),
        "a page without the words is passed over"
    );
    let shouting = Whole(vec![], super::lowered("1btnACCEPT ALL COOKIES"));
    assert!(WORDS.on_page(&shouting));
}
