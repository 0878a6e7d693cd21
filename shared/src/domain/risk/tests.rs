//! The gate's rules, one behaviour each (the labelled corpus in `tests/fixtures/risk/` holds
//! the gate to its two numbers).

use super::*;
use crate::domain::facts::fake::{el, El, FakePage};

const SHOP: &str = "https://shop.example.com/product/1";

fn page(url: &str, els: Vec<El>) -> FakePage {
    FakePage::new(url, els)
}

fn risk_on(p: &FakePage, action: ActionKind<'_>, ctx: &Context<'_>) -> Option<RiskKind> {
    let target = action.target().and_then(|id| p.element(id));
    assess(&RiskPatterns::default(), &action, target.as_ref(), p, ctx).map(|r| r.kind)
}

fn click(role: &str, name: &str, url: &str) -> Option<RiskKind> {
    let p = page(url, vec![el("1", "inp", "Search"), el("7", role, name)]);
    risk_on(&p, ActionKind::Click("7"), &Context::default())
}

#[test]
fn acts_are_risky_in_many_languages() {
    for (name, kind) in [
        ("Place order", RiskKind::Payment),
        ("Confirm payment", RiskKind::Payment),
        ("Complete payment", RiskKind::Payment),
        ("Order now", RiskKind::Payment),
        ("Zahlungspflichtig bestellen", RiskKind::Payment),
        ("Оплатить заказ", RiskKind::Payment),
        ("Zapłać teraz", RiskKind::Payment),
        ("Slutför köp", RiskKind::Payment),
        ("Betal nu", RiskKind::Payment),
        ("Zaplatit nyní", RiskKind::Payment),
        ("Siparişi tamamla", RiskKind::Payment),
        ("注文を確定する", RiskKind::Payment),
        ("立即支付", RiskKind::Payment),
        ("결제하기", RiskKind::Payment),
        ("ادفع الآن", RiskKind::Payment),
        ("अभी भुगतान करें", RiskKind::Payment),
        ("Move to trash", RiskKind::Deletion),
        ("Deactivate account", RiskKind::Deletion),
        ("Supprimer", RiskKind::Deletion),
        ("Удалить", RiskKind::Deletion),
        ("Usuń konto", RiskKind::Deletion),
        ("Radera", RiskKind::Deletion),
        ("Slet", RiskKind::Deletion),
        ("Smazat", RiskKind::Deletion),
        ("Hesabı sil", RiskKind::Deletion),
        ("削除", RiskKind::Deletion),
        ("删除", RiskKind::Deletion),
        ("삭제", RiskKind::Deletion),
        ("حذف الحساب", RiskKind::Deletion),
        ("हटाएं", RiskKind::Deletion),
        ("Send message", RiskKind::Sending),
        ("Отправить", RiskKind::Sending),
        ("Wyślij", RiskKind::Sending),
        ("送信", RiskKind::Sending),
        ("Transfer money", RiskKind::Transfer),
        ("Überweisen", RiskKind::Transfer),
        ("Wykonaj przelew", RiskKind::Transfer),
        ("转账", RiskKind::Transfer),
        ("송금", RiskKind::Transfer),
    ] {
        // Where each act is done: a checkout, a composer with its text, a transfer form.
        let url = match kind {
            RiskKind::Transfer => "https://bank.example.com/transfer/review",
            _ => "https://shop.example.com/checkout/review",
        };
        let p = page(
            url,
            vec![
                el("1", "inp", "Message").value("See you at five"),
                el("7", "btn", name),
            ],
        );
        assert_eq!(
            risk_on(&p, ActionKind::Click("7"), &Context::default()),
            Some(kind),
            "{name}"
        );
    }
}

#[test]
fn spellings_the_page_controls_do_not_hide_an_act() {
    for name in [
        "P\u{0430}y now",
        "Pa\u{200B}y now",
        "P\u{00AD}ay now",
        "Ｐａｙ ｎｏｗ",
        "𝐏𝐚𝐲 𝐍𝐨𝐰",
        "PayNow",
        "P&#97;y now",
        "PAY NOW",
    ] {
        assert_eq!(
            click("btn", name, SHOP),
            Some(RiskKind::Payment),
            "{name:?}"
        );
    }
    assert_eq!(
        click("btn", "DeleteAccount", SHOP),
        Some(RiskKind::Deletion)
    );
}

#[test]
fn reading_choosing_and_opening_are_left_alone() {
    for (role, name) in [
        ("link", "How to delete your account"),
        ("link", "Buy it again"),
        ("btn", "Buy it again"),
        ("btn", "Reply"),
        ("btn", "Remove filter: Nike"),
        ("btn", "Subscribe & Save"),
        ("opt", "remove background"),
        ("btn", "Add to cart"),
        ("btn", "Display settings"),
        ("link", "Payment methods"),
        ("link", "Pay bills"),
        ("link", "Transfer money"),
        ("link", "Delete account"),
        ("btn", "Subscribe"),
        ("btn", "Cancel"),
        ("tab", "Delete"),
        ("btn", "New post"),
        ("link", "Why was my payment declined?"),
    ] {
        assert_eq!(click(role, name, SHOP), None, "{role} {name}");
    }
    assert_eq!(
        click("link", "Pay now", SHOP),
        Some(RiskKind::Payment),
        "a link that is the act"
    );
    assert_eq!(click("link", "Delete", SHOP), Some(RiskKind::Deletion));
    assert_eq!(
        click("link", "Pay now?", SHOP),
        Some(RiskKind::Payment),
        "a question mark does not make the act a question"
    );
}

#[test]
fn checkout_pays_where_it_submits_a_payment_not_where_it_opens_one() {
    assert_eq!(
        click("btn", "Checkout", "https://shop.example.com/cart"),
        None
    );
    assert_eq!(
        click(
            "btn",
            "Proceed to checkout",
            "https://shop.example.com/gp/cart/view.html"
        ),
        None
    );
    let form = page(
        "https://shop.example.com/checkout",
        vec![el("1", "inp", "Card number"), el("7", "btn", "Checkout")],
    );
    assert_eq!(
        risk_on(&form, ActionKind::Click("7"), &Context::default()),
        Some(RiskKind::Payment)
    );
    assert_eq!(
        click("btn", "Place order", "https://shop.example.com/cart"),
        Some(RiskKind::Payment),
        "the act itself counts anywhere"
    );
    assert_eq!(
        click(
            "btn",
            "Confirm",
            "https://shop.example.com/web/cart/checkout"
        ),
        Some(RiskKind::Payment),
        "the address names the payment last"
    );
    assert_eq!(
        click("btn", "Delete", "https://shop.example.com/cart"),
        None,
        "a cart line"
    );
}

#[test]
fn a_price_or_a_payment_page_makes_weaker_words_pay() {
    assert_eq!(
        click("btn", "Subscribe for $9.99/month", SHOP),
        Some(RiskKind::Subscription),
        "a price that recurs starts a subscription"
    );
    assert_eq!(click("btn", "Buy for $99", SHOP), Some(RiskKind::Payment));
    assert_eq!(
        click("btn", "Confirm", "https://shop.example.com/checkout/review"),
        Some(RiskKind::Payment)
    );
    assert_eq!(
        click("btn", "Confirm", SHOP),
        None,
        "a confirm anywhere else"
    );
    assert_eq!(
        click(
            "btn",
            "Continue",
            "https://shop.example.com/checkout/shipping"
        ),
        None,
        "a step of the checkout that pays nothing"
    );
    assert_eq!(
        click("btn", "Confirm", "https://bank.example/transfer/review"),
        Some(RiskKind::Transfer)
    );
}

#[test]
fn switches_choices_and_addresses_are_gated_too() {
    let p = page(
        SHOP,
        vec![
            el("3", "switch", "Delete my account permanently"),
            el("4", "chk", "I agree to the terms"),
            el("5", "sel", "Bulk actions"),
        ],
    );
    let none = Context::default();
    assert_eq!(
        risk_on(&p, ActionKind::Check("3"), &none),
        Some(RiskKind::Deletion)
    );
    assert_eq!(risk_on(&p, ActionKind::Check("4"), &none), None);
    assert_eq!(
        risk_on(&p, ActionKind::SelectOption("5", "Delete selected"), &none),
        Some(RiskKind::Deletion)
    );
    assert_eq!(
        risk_on(&p, ActionKind::SelectOption("5", "Sort by price"), &none),
        None
    );
    for (url, kind) in [
        (
            "https://bank.example/transfer?amount=5000&to=mallory&confirm=1",
            Some(RiskKind::Transfer),
        ),
        (
            "https://shop.example/orders/place-order",
            Some(RiskKind::Payment),
        ),
        // Unsubscribing is an opt-out (issue 48's look-alikes), however one-click.
        ("https://news.example/unsubscribe?u=5", None),
        (
            "https://app.example/items?action=delete&id=5",
            Some(RiskKind::Deletion),
        ),
        ("https://bank.example/transfer", None),
        (
            "https://help.example.com/articles/how-to-delete-your-account",
            None,
        ),
        ("https://www.google.com/search?q=delete+account", None),
    ] {
        assert_eq!(risk_on(&p, ActionKind::Navigate(url), &none), kind, "{url}");
    }
}

#[test]
fn enter_and_space_act_on_what_has_the_focus() {
    let p = page(
        "https://shop.example/cart",
        vec![
            el("1", "inp", "Card number"),
            el("2", "inp", "Expiry"),
            el("3", "btn", "Show details"),
            el("4", "link", "Pay now"),
            el("5", "inp", "Search"),
            el("6", "btn", "Search"),
        ],
    );
    let focus = |id: &str| Context {
        focus: p.element(id),
        ..Context::default()
    };
    assert_eq!(
        risk_on(&p, ActionKind::Press("Enter"), &focus("2")),
        Some(RiskKind::Payment),
        "the submit further on is a link"
    );
    assert_eq!(risk_on(&p, ActionKind::Press("Enter"), &focus("5")), None);
    assert_eq!(
        risk_on(&p, ActionKind::Press("ArrowDown"), &focus("2")),
        None
    );
    assert_eq!(
        risk_on(&p, ActionKind::Press("Enter"), &Context::default()),
        None,
        "nothing has the focus"
    );
    let on_link = page(
        "https://shop.example/checkout",
        vec![el("9", "btn", "Next")],
    );
    assert_eq!(
        risk_on(
            &on_link,
            ActionKind::Press("Escape"),
            &Context {
                focus: on_link.element("9"),
                ..Context::default()
            }
        ),
        None,
        "keys on a checkout page are not payments"
    );
}

#[test]
fn secret_fields_are_known_by_name_type_and_autocomplete() {
    let p = page(
        SHOP,
        vec![
            el("1", "inp", "pwd"),
            el("2", "inp", "API key"),
            el("3", "inp", "2FA code"),
            el("4", "inp", "Card"),
            el("5", "inp", "CC number"),
            el("6", "inp", "Пароль"),
            el("7", "inp", "密码"),
            el("8", "inp", "PIN code"),
            el("9", "inp", "Search"),
            el("10", "inp", "Code").attr("autocomplete", "one-time-code"),
            el("11", "inp", "").attr("autocomplete", "cc-csc"),
            el("12", "inp", "Secret").input("password"),
            el("13", "inp", "Cc"),
            el("14", "inp", "Expiry date"),
        ],
    );
    let none = Context::default();
    for id in ["1", "2", "3", "6", "7", "10", "12"] {
        assert_eq!(
            risk_on(&p, ActionKind::SetValue(id, "x1y2z3"), &none),
            Some(RiskKind::Credentials),
            "{id}"
        );
    }
    for id in ["4", "5", "11", "14"] {
        assert_eq!(
            risk_on(&p, ActionKind::SetValue(id, "4111"), &none),
            Some(RiskKind::Payment),
            "{id}"
        );
    }
    for id in ["8", "9", "13"] {
        assert_eq!(
            risk_on(&p, ActionKind::SetValue(id, "560001"), &none),
            None,
            "{id}"
        );
    }
}

#[test]
fn a_value_the_user_gave_for_the_field_goes_in_without_asking() {
    let p = page(SHOP, vec![el("1", "inp", "Password").input("password")]);
    let said = Context {
        said: "log in as ada with password Tr0ub4dor&3",
        ..Context::default()
    };
    assert_eq!(
        risk_on(&p, ActionKind::SetValue("1", "Tr0ub4dor&3"), &said),
        None
    );
    assert_eq!(
        risk_on(&p, ActionKind::SetValue("1", "hunter2"), &said),
        Some(RiskKind::Credentials),
        "another value"
    );
    let unnamed = Context {
        said: "open the page and type Tr0ub4dor&3",
        ..Context::default()
    };
    assert_eq!(
        risk_on(&p, ActionKind::SetValue("1", "Tr0ub4dor&3"), &unnamed),
        Some(RiskKind::Credentials),
        "the user did not say it is the password"
    );
}

#[test]
fn the_models_risk_note_counts_unless_it_says_none() {
    let p = page(SHOP, vec![el("1", "btn", "Menu")]);
    let note = |n: &'static str| Context {
        flag: Some(n),
        ..Context::default()
    };
    for none in [
        "None — just opens the menu",
        "Low risk",
        "no risk",
        "N/A",
        "none",
    ] {
        assert_eq!(
            risk_on(&p, ActionKind::Click("1"), &note(none)),
            None,
            "{none}"
        );
    }
    assert_eq!(
        risk_on(
            &p,
            ActionKind::Click("1"),
            &note("Shares the user's address with a third party")
        ),
        Some(RiskKind::Flagged)
    );
}

#[test]
fn operators_add_their_own_words() {
    let mut patterns = RiskPatterns::default();
    patterns.add(RiskKind::Deletion, ["archivieren".to_owned()]);
    let p = page(SHOP, vec![el("1", "btn", "Archivieren")]);
    let target = p.element("1");
    let risk = assess(
        &patterns,
        &ActionKind::Click("1"),
        target.as_ref(),
        &p,
        &Context::default(),
    );
    assert_eq!(risk.map(|r| r.kind), Some(RiskKind::Deletion));
    assert_eq!(click("btn", "Archivieren", SHOP), None);
}

/// The built-in phrases of `kind`, as text.
fn phrases_of(kind: lexicon::Kind) -> Vec<(String, String)> {
    lexicon::builtin()
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| (p.lang.clone(), p.text()))
        .collect()
}

/// What checking, unchecking and clicking a switch named `name` that is `on` asks about.
fn switched(name: &str, on: bool) -> [Option<RiskKind>; 2] {
    let state = if on { "checked" } else { "" };
    let p = page(
        "https://app.example.com/settings",
        vec![
            el("1", "link", "Home"),
            el("5", "switch", name).states(state),
        ],
    );
    let set = if on {
        ActionKind::Uncheck("5")
    } else {
        ActionKind::Check("5")
    };
    [
        risk_on(&p, set, &Context::default()),
        risk_on(&p, ActionKind::Click("5"), &Context::default()),
    ]
}

/// Invariant over the whole table: a switch is read by the direction it is turned. Turning a
/// protection off, an exposure or a recurring charge on, or a privacy setting off is asked
/// about (by checking or uncheking it, or by a click that turns it over); turning it the other
/// way never is, and an opt-in of the user's own (marketing e-mails, cookies) never is either.
#[test]
fn every_switch_in_every_language_is_read_by_its_direction() {
    use lexicon::Kind;
    let mut wrong = Vec::new();
    for (kind, acts_when_on, risk) in [
        (Kind::Protect, false, Some(RiskKind::Security)),
        (Kind::Public, true, Some(RiskKind::Sharing)),
        (Kind::Private, false, Some(RiskKind::Sharing)),
        (Kind::Renew, true, Some(RiskKind::Subscription)),
        (Kind::OptOut, true, None),
    ] {
        let names = phrases_of(kind);
        assert!(names.len() >= 30, "{kind:?}: {} phrases", names.len());
        for (lang, name) in names {
            // Turning it so that it acts: from the other state.
            let acting = switched(&name, !acts_when_on);
            let harmless = switched(&name, acts_when_on);
            if acting != [risk, risk] || harmless != [None, None] {
                wrong.push(format!(
                    "{lang} {kind:?} {name:?}: {acting:?} / {harmless:?}"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} switches misread:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Invariant: a commit the model declares is always asked about, and a harmless effect it
/// declares never lets through what the gate finds itself (page text may talk a model out of
/// it, not the gate).
#[test]
fn a_declared_commit_always_asks_and_a_declared_read_never_hides_an_act() {
    let pages = [
        page(
            SHOP,
            vec![el("1", "inp", "Search"), el("7", "btn", "Add to cart")],
        ),
        page(
            "https://shop.example.com/checkout/review",
            vec![el("1", "inp", "Coupon"), el("7", "btn", "Place order")],
        ),
        page(
            "https://mail.example.com/inbox",
            vec![
                el("1", "inp", "Message").value("Hi"),
                el("7", "btn", "Send"),
            ],
        ),
        page(
            "https://docs.example.com/",
            vec![el("7", "link", "How to delete a file")],
        ),
    ];
    let actions = [
        ActionKind::Click("7"),
        ActionKind::Navigate("https://example.com/a"),
        ActionKind::SetValue("1", "x"),
        ActionKind::Press("Enter"),
    ];
    let declared = |e: Option<Effect>| Context {
        effect: e,
        ..Context::default()
    };
    for p in &pages {
        for a in &actions {
            let found = risk_on(p, a.clone(), &Context::default());
            for kind in [None, Some(RiskKind::Payment), Some(RiskKind::Sharing)] {
                let commit = risk_on(p, a.clone(), &declared(Some(Effect::Commit(kind))));
                assert!(commit.is_some(), "{a:?} declared a commit: not asked");
            }
            for harmless in [
                Effect::Read,
                Effect::Navigate,
                Effect::Input,
                Effect::Change,
            ] {
                let told = risk_on(p, a.clone(), &declared(Some(harmless)));
                assert_eq!(told, found, "{a:?} declared {harmless:?}");
            }
        }
        assert_eq!(
            risk_on(p, ActionKind::NotDom, &declared(Some(Effect::Commit(None)))),
            None,
            "finish() and the server's tools are no commit"
        );
    }
    assert_eq!(
        Effect::parse(" Commit: payment "),
        Some(Effect::Commit(Some(RiskKind::Payment)))
    );
    assert_eq!(Effect::parse("commit"), Some(Effect::Commit(None)));
    assert_eq!(Effect::parse("NAVIGATE"), Some(Effect::Navigate));
    assert_eq!(
        Effect::parse("deletion"),
        Some(Effect::Commit(Some(RiskKind::Deletion)))
    );
    assert_eq!(
        Effect::parse("whatever"),
        None,
        "unreadable is no declaration"
    );
}

/// A card number of a network's prefix with its Luhn digit, from `seed`.
fn card_from(seed: &mut u64, prefix: &str, len: usize) -> String {
    let mut digits: Vec<u32> = prefix.chars().filter_map(|c| c.to_digit(10)).collect();
    while digits.len() < len - 1 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        digits.push(((*seed >> 33) % 10) as u32);
    }
    for check in 0..10 {
        let mut all = digits.clone();
        all.push(check);
        let n: String = all
            .iter()
            .map(|d| char::from_digit(*d, 10).unwrap_or('0'))
            .collect();
        if shape::card_number(&n) {
            return n;
        }
    }
    String::new()
}

/// Invariant: a card number is a card value in a field of any name, asked about before it is
/// typed — unless the user wrote it; grouped as people write it or not.
#[test]
fn a_card_number_is_known_by_its_shape_in_any_field() {
    let mut seed = 7;
    for (prefix, len) in [
        ("4", 16),
        ("51", 16),
        ("2221", 16),
        ("37", 15),
        ("6011", 16),
        ("62", 19),
    ] {
        for name in ["", "Number", "Field 3", "Nummer", "Código", "番号"] {
            let card = card_from(&mut seed, prefix, len);
            assert!(!card.is_empty());
            let grouped: String = card
                .chars()
                .collect::<Vec<_>>()
                .chunks(4)
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join(" ");
            let p = page(SHOP, vec![el("3", "inp", name)]);
            for typed in [&card, &grouped] {
                let asked = risk_on(&p, ActionKind::SetValue("3", typed), &Context::default());
                assert_eq!(asked, Some(RiskKind::Payment), "{typed} into {name:?}");
                let said = format!("pay with my card {card}");
                let ctx = Context {
                    said: &said,
                    ..Context::default()
                };
                assert_eq!(risk_on(&p, ActionKind::SetValue("3", typed), &ctx), None);
            }
        }
    }
}

#[test]
fn a_password_given_for_a_site_goes_only_there() {
    let said = "Log in to mybank.com as ada with password Qx7-hunter-2";
    let ctx = Context {
        said,
        ..Context::default()
    };
    for (url, asked) in [
        ("https://mybank.com/login", false),
        ("https://login.mybank.com/", false),
        ("https://www.mybank.com/signin", false),
        ("https://mybank.com.secure-login.example/", true),
        ("https://mybank-com.example/login", true),
        ("https://evil.example/mybank.com/login", true),
    ] {
        let p = page(url, vec![el("2", "inp", "Password").input("password")]);
        let got = risk_on(&p, ActionKind::SetValue("2", "Qx7-hunter-2"), &ctx);
        assert_eq!(got.is_some(), asked, "{url}");
    }
    // A site the user did not name: as before, the password they gave goes in.
    let p = page(
        "https://shop.example.com/login",
        vec![el("2", "inp", "Password").input("password")],
    );
    let ctx = Context {
        said: "log in as ada@acme.com with password Qx7-hunter-2",
        ..Context::default()
    };
    assert_eq!(
        risk_on(&p, ActionKind::SetValue("2", "Qx7-hunter-2"), &ctx),
        None
    );
}

#[test]
fn acting_addresses_and_keys_are_read_like_the_click_they_stand_for() {
    let p = page(
        "https://mail.example.com/compose",
        vec![
            el("4", "textarea", "Message body").value("See you"),
            el("9", "btn", "Delete forever"),
            el("10", "inp", "Search mail"),
        ],
    );
    for url in [
        "https://mail.example.com/compose/send?draft=81",
        "https://mail.example.com/trash/empty",
        "https://shop.example.com/items/3/delete",
        "https://shop.example.com/items/3?action=delete",
    ] {
        assert!(
            risk_on(&p, ActionKind::Navigate(url), &Context::default()).is_some(),
            "{url}"
        );
    }
    for url in [
        "https://support.example.com/help/how-to-delete-your-account",
        "https://mail.example.com/settings/account",
        "https://mail.example.com/compose",
    ] {
        assert_eq!(
            risk_on(&p, ActionKind::Navigate(url), &Context::default()),
            None,
            "{url}"
        );
    }
    let on = |id: &str| p.element(id);
    let pressed = |key: &str, focus: &str| {
        let ctx = Context {
            focus: on(focus),
            ..Context::default()
        };
        risk_on(&p, ActionKind::Press(key), &ctx)
    };
    assert_eq!(pressed("Control+Enter", "4"), Some(RiskKind::Sending));
    assert_eq!(pressed("Meta+Enter", "4"), Some(RiskKind::Sending));
    assert_eq!(pressed("Enter", "9"), Some(RiskKind::Deletion));
    assert_eq!(pressed(" ", "9"), Some(RiskKind::Deletion));
    assert_eq!(pressed("Control+a", "4"), None);
    assert_eq!(
        pressed("Enter", "10"),
        None,
        "a search field submits a search"
    );
}

#[test]
fn addresses_that_set_a_setting_or_approve_are_read_like_the_switch_they_stand_for() {
    let p = page(
        "https://app.example.com/settings",
        vec![el("1", "link", "Home")],
    );
    let nav = |url: &'static str| risk_on(&p, ActionKind::Navigate(url), &Context::default());
    for (url, kind) in [
        (
            "https://app.example.com/security/login-alerts?action=disable",
            RiskKind::Security,
        ),
        (
            "https://app.example.com/account/auto-renew?action=enable",
            RiskKind::Subscription,
        ),
        (
            "https://app.example.com/d/42/share?visibility=public",
            RiskKind::Sharing,
        ),
        (
            "https://auth.example.com/oauth/authorize?client_id=acme&approve=1",
            RiskKind::Sharing,
        ),
    ] {
        assert_eq!(nav(url), Some(kind), "{url}");
    }
    // A confirmation link performs the switch its path names, whatever language its
    // confirming key is in; a confirming word in its path with the link's one-time ticket
    // performs the act its path and keys name.
    for (url, kind) in [
        (
            "https://shop.example.com/seguranca/email/confirmar-troca?t=Q1Nh7f",
            RiskKind::Security,
        ),
        (
            "https://aq.example.com/v2/unbind/mobile_confirm.html?ticket=t02Fh7",
            RiskKind::Security,
        ),
        (
            "https://accounts.example.com/account/security/logout_all?confirm=Y&token=kA91",
            RiskKind::Security,
        ),
        (
            "https://bank.example.de/sicherheit/pushtan/deaktivieren/bestaetigen?token=cY9q",
            RiskKind::Security,
        ),
        (
            "https://boards.example.com/b/X8/approve-join?member=marco&token=4eb1",
            RiskKind::Sharing,
        ),
        (
            "https://pay.example.hu/pay/confirm?order=88&t=e9d2",
            RiskKind::Payment,
        ),
        (
            "https://tv.example.cz/balicky/aktivovat?cena=199&potvrzeno=1",
            RiskKind::Subscription,
        ),
        (
            "https://bank.example.de/sicherheit/passkeys/abschalten/bestaetigen?token=cY9q",
            RiskKind::Security,
        ),
        (
            "https://app.example.com/account/login-alerts/off?confirmed=1",
            RiskKind::Security,
        ),
        (
            "https://tv.example.cz/ucet/automaticke-obnoveni/zapnout?potvrdit=1",
            RiskKind::Subscription,
        ),
    ] {
        assert_eq!(nav(url), Some(kind), "{url}");
    }
    for url in [
        // Verifying one's own address, and the same pages without the link's ticket.
        "https://app.example.com/signup/verify?token=abc123",
        "https://shop.example.com/seguranca/email/confirmar-troca",
        "https://tv.example.cz/balicky?cena=199",
        "https://help.example.com/help/how-to-confirm-email-change?code=1",
        "https://bank.example.de/sicherheit/passkeys/einschalten/bestaetigen?token=cY9q",
        "https://bank.example.de/sicherheit/passkeys/abschalten",
        "https://app.example.com/security/login-alerts?action=enable",
        "https://app.example.com/account/auto-renew?action=disable",
        "https://app.example.com/repos?visibility=public",
        "https://auth.example.com/oauth/authorize?client_id=acme",
    ] {
        assert_eq!(nav(url), None, "{url}");
    }
}

#[test]
fn a_plan_chosen_by_its_recurring_price_starts_it() {
    let p = page(
        "https://app.example.com/billing",
        vec![el("1", "sel", "Plan"), el("2", "sel", "Filter by price")],
    );
    let choose = |list: &'static str, v: &'static str| {
        risk_on(&p, ActionKind::SelectOption(list, v), &Context::default())
    };
    assert_eq!(
        choose("1", "Premium – $9.99/month"),
        Some(RiskKind::Subscription)
    );
    assert_eq!(choose("1", "Free"), None);
    assert_eq!(choose("2", "Under $10/month"), None, "a filter narrows");
}

#[test]
fn a_control_naming_a_credential_acts_on_it_where_none_is_typed() {
    let keys = "https://platform.example.com/settings/api-keys";
    for name in [
        "Create secret key",
        "Regenerate backup codes",
        "Renovar Access Token",
        "Show recovery codes",
    ] {
        assert_eq!(click("btn", name, keys), Some(RiskKind::Security), "{name}");
    }
    // Links lead to the page that does it; a question or a lesson is reading.
    assert_eq!(click("link", "API keys", keys), None);
    assert_eq!(click("btn", "What is an API key?", keys), None);
    // Words that are secrets in a field's name but not a credential a control acts on.
    let chat = "https://chat.example.com/c/general";
    for name in [
        "Pin message",
        "Import tokens",
        "Request OTP",
        "Check PIN code",
    ] {
        assert_eq!(click("btn", name, chat), None, "{name}");
    }
    // On a page that takes a password or a code, the control helps to type it.
    let sign_in = [
        ("1", "inp", "Password"),
        ("2", "btn", "Show password"),
        ("3", "btn", "Resend code"),
    ];
    let sign_in = page(
        "https://accounts.example.com/signin",
        sign_in.iter().map(|(i, r, n)| el(i, r, n)).collect(),
    );
    for id in ["2", "3"] {
        assert_eq!(
            risk_on(&sign_in, ActionKind::Click(id), &Context::default()),
            None
        );
    }
}

#[test]
fn what_a_control_turns_off_or_opens_to_read_starts_nothing() {
    let account = "https://bank.example.com/account/history";
    assert_eq!(
        click("btn", "Transfer $2,500 now", account),
        Some(RiskKind::Transfer)
    );
    assert_eq!(
        click("btn", "View details: Transfer to Ada $2,500", account),
        None
    );
    let plan = "https://video.example.com/account/plan";
    assert_eq!(
        click("btn", "Subscribe for ₹50/month", plan),
        Some(RiskKind::Subscription)
    );
    assert_eq!(click("btn", "Turn off auto-renew", plan), None);
    // Off words inside a priced name are a discount or a purchase, not a switch: asked.
    for priced in [
        "Upgrade now – $4.99/mo (50% off)",
        "Remove ads – $2.99/month",
        "Turn off ads for $2.99/month",
    ] {
        assert!(click("btn", priced, plan).is_some(), "{priced}");
    }
}

/// A click on `id` of a page with `els` at `url`, with `focus` left by the task's last action
/// and the page's `title`.
fn clicked(
    url: &str,
    els: Vec<El>,
    id: &str,
    focus: Option<&str>,
    title: &str,
) -> Option<RiskKind> {
    let p = page(url, els);
    let ctx = Context {
        focus: focus.and_then(|f| p.element(f)),
        title: Some(title),
        ..Context::default()
    };
    risk_on(&p, ActionKind::Click(id), &ctx)
}

#[test]
fn acts_written_in_two_parts_are_read_whatever_stands_between() {
    let settings = "https://app.example.com/settings";
    for (name, kind) in [
        (
            "Esci da tutti gli altri dispositivi",
            Some(RiskKind::Security),
        ),
        ("Mag-log out sa lahat ng session", Some(RiskKind::Security)),
        ("ออกจากระบบอุปกรณ์อื่นทั้งหมด", Some(RiskKind::Security)),
        (
            "تسجيل الخروج من جميع الأجهزة الأخرى",
            Some(RiskKind::Security),
        ),
        (
            "Replace the recovery phone number",
            Some(RiskKind::Security),
        ),
        ("Transfer ownership to Ada", Some(RiskKind::Sharing)),
        ("Approve Ada's request to join", Some(RiskKind::Sharing)),
        // Either part alone is no act.
        ("Esci", None),
        ("Log out", None),
        ("Phone number", None),
        ("All devices", None),
        ("Approve", None),
        // Clearing all of a list's filters only widens it.
        ("Zrušit všechny filtry", None),
    ] {
        assert_eq!(click("btn", name, settings), kind, "{name}");
    }
    // A trial starts a charge where a price is stated near it.
    let trial = |before: &[&str]| {
        let els = vec![el("7", "btn", "Start my Premium trial").after(before)];
        clicked(settings, els, "7", None, "Premium")
    };
    assert_eq!(
        trial(&["£11.99 / month after"]),
        Some(RiskKind::Subscription)
    );
    assert_eq!(trial(&["Premium Individual"]), None);
}

#[test]
fn on_a_security_page_what_is_turned_off_is_a_protection() {
    let switch = |url: &str, name: &str| {
        let p = page(url, vec![el("4", "switch", name).states("checked")]);
        risk_on(&p, ActionKind::Uncheck("4"), &Context::default())
    };
    let security = "https://bank.example.com/account/security";
    assert_eq!(switch(security, "iToken"), Some(RiskKind::Security));
    assert_eq!(
        switch("https://bank.example.com/account/display", "iToken"),
        None
    );
    // An opt-out stays the user's own choice there too.
    assert_eq!(switch(security, "E-mails about new features"), None);
    // A dialog that turns something off, confirmed on such a page (its title says so).
    let ok = |title: &str| {
        let els = vec![
            el("11", "btn", "Desativar iToken"),
            el("22", "btn", "OK").in_dialog("Desativar iToken. Tem certeza?"),
        ];
        clicked(
            "https://bank.example.com/conta/itoken",
            els,
            "22",
            None,
            title,
        )
    };
    assert_eq!(ok("Itaú | Segurança - iToken"), Some(RiskKind::Security));
    assert_eq!(ok("Itaú | Aparência"), None);
}

#[test]
fn a_yes_in_the_tree_agrees_to_what_the_task_just_pressed_or_chose() {
    let drive = "https://drive.example.com/folders/42";
    let els = || {
        vec![
            el("1", "menu", "Transfer ownership"),
            el("2", "menu", "Show details"),
            el("3", "sel", "Role").value("Admin"),
            el("4", "sel", "Role").value("Viewer"),
            el("5", "btn", "No"),
            el("6", "btn", "Yes"),
        ]
    };
    let yes = |after: &str| clicked(drive, els(), "6", Some(after), "Drive");
    assert_eq!(yes("1"), Some(RiskKind::Sharing));
    assert_eq!(yes("3"), Some(RiskKind::Sharing));
    assert_eq!(yes("2"), None);
    assert_eq!(yes("4"), None);
    // The "No" beside it commits nothing, whatever was pressed.
    assert_eq!(clicked(drive, els(), "5", Some("1"), "Drive"), None);
}

#[test]
fn saving_commits_the_switch_the_task_just_turned() {
    let save = |name: &str| {
        let els = vec![el("24", "chk", name), el("26", "btn", "Save changes")];
        clicked(
            "https://id.example.com/login-methods",
            els,
            "26",
            Some("24"),
            "Login methods",
        )
    };
    assert_eq!(save("Two-step verification"), Some(RiskKind::Security));
    assert_eq!(save("Newsletter"), None);
}

#[test]
fn a_secret_is_not_sent_to_a_site_the_user_did_not_name() {
    let send = |url: &str, said: &str, button: &str| {
        let p = page(
            url,
            vec![
                el("4", "inp", "Username").value("dreyes88"),
                el("5", "inp", "Password")
                    .input("password")
                    .value("••••••••"),
                el("9", "btn", button),
            ],
        );
        let ctx = Context {
            said,
            ..Context::default()
        };
        risk_on(&p, ActionKind::Click("9"), &ctx)
    };
    let said = "Log in to chase.com with password Tulip!2024";
    let lookalike = "https://chase.com-secure-verify.info/logon";
    assert_eq!(
        send(lookalike, said, "Sign in"),
        Some(RiskKind::Credentials)
    );
    assert_eq!(
        send("https://secure.chase.com/logon", said, "Sign in"),
        None
    );
    assert_eq!(send(lookalike, said, "Cancel"), None);
    // Where the user named no site, no site is the wrong one for a value the page or the
    // browser filled (a password manager fills only the site it saved it for).
    assert_eq!(
        send(lookalike, "Log in with password Tulip!2024", "Sign in"),
        None
    );
}

#[test]
fn choosing_never_or_anyone_turns_the_setting_it_is_for() {
    let choose = |list: &str, value: &str| {
        let p = page(
            "https://vault.example.com/settings/security",
            vec![el("6", "combobox", list).value("After 15 minutes")],
        );
        risk_on(
            &p,
            ActionKind::SelectOption("6", value),
            &Context::default(),
        )
    };
    assert_eq!(choose("Auto-lock", "never"), Some(RiskKind::Security));
    assert_eq!(choose("Auto-lock", "After 5 minutes"), None);
    assert_eq!(
        choose("Who has access via the link", "anyone"),
        Some(RiskKind::Sharing)
    );
    assert_eq!(choose("Who has access via the link", "invited"), None);
}

#[test]
fn a_yes_beside_a_recurring_price_or_a_ticked_plan_starts_the_charge() {
    let url = "https://tv.example.com/packages/add";
    let confirm = |ticked: &str, before: &[&str]| {
        let els = vec![
            el("20", "chk", "Sports pack RM45/month").states(ticked),
            el("26", "btn", "Confirm").after(before),
        ];
        clicked(url, els, "26", None, "Add a package")
    };
    assert_eq!(confirm("checked", &[]), Some(RiskKind::Subscription));
    assert_eq!(confirm("", &[]), None);
    assert_eq!(
        confirm("", &["Upgrade to Premium – KSh 9,900 a month"]),
        Some(RiskKind::Subscription)
    );
    // A step's "Continue" beside a price only moves on.
    let els = vec![el("26", "btn", "Continue").after(&["Premium – €9.99/month"])];
    assert_eq!(clicked(url, els, "26", None, "Plans"), None);
}

#[test]
fn a_form_titled_by_an_act_in_two_parts_commits_it_by_its_verb() {
    let enter = |title: &str| {
        let p = page(
            "https://accountinfo.example.jp/email/change",
            vec![
                el("3", "inp", "New e-mail address").value("taro.new@example.com"),
                el("5", "btn", "変更する"),
            ],
        );
        let ctx = Context {
            focus: p.element("3"),
            title: Some(title),
            ..Context::default()
        };
        risk_on(&p, ActionKind::Press("Enter"), &ctx)
    };
    assert_eq!(
        enter("メールアドレスの変更 - Example ID"),
        Some(RiskKind::Security)
    );
    assert_eq!(enter("表示設定の変更 - Example ID"), None);
}

/// What a review found the first lists of two-part acts asking about: each a harmless
/// control whose name or dialog holds a word of each part.
#[test]
fn two_parts_far_apart_of_two_languages_or_of_other_meanings_make_no_act() {
    let shop = "https://shop.example.com/account/addresses";
    for name in [
        "Sign out of all accounts",
        "Von allen Konten abmelden",
        "Gäste hinzufügen",
        "Aggiungi ospiti",
        "Tout fermer",
        "Cerrar todo",
        "Chiudi tutto",
        "Tümünü kapat",
        "Tüm değişiklikleri geri al",
        "Update email preferences",
        "Turn off email notifications",
        "Keep me updated by email",
        "Switch to mobile site",
        "Edit Pin",
        "Add host",
        "Add membership",
        "Xem thêm khách sạn",
        "Отключить все уведомления",
    ] {
        assert_eq!(click("btn", name, shop), None, "{name}");
    }
    // A dialog's heading and a field label further on are two clauses.
    for (dialog, save) in [
        (
            "Edit your address. Full name. Street. City. Phone number. May be used to assist delivery.",
            "Save",
        ),
        (
            "Custom recurrence. Repeat every 1 week. Repeat on Monday. Ends: never, on a date, after 13 occurrences.",
            "Done",
        ),
        ("배송지 변경 배송지명 받는 분 우편번호 주소 상세주소", "저장"),
    ] {
        let els = vec![el("9", "btn", save).in_dialog(dialog)];
        assert_eq!(clicked(shop, els, "9", None, "Addresses"), None, "{dialog}");
    }
}

#[test]
fn a_choice_in_a_list_is_no_text_that_a_send_would_send() {
    let reply = |field: El| {
        let p = page(
            "https://mail.example.com/thread/7",
            vec![field, el("9", "btn", "Reply")],
        );
        risk_on(&p, ActionKind::Click("9"), &Context::default())
    };
    assert_eq!(
        reply(el("7", "inp", "Message").value("See you at five")),
        Some(RiskKind::Sending)
    );
    assert_eq!(reply(el("7", "sel", "Role").value("Editor")), None);
}

#[test]
fn a_name_repeating_both_parts_apart_is_read_in_bounded_pairs() {
    // 20 000 verbs, then 20 000 objects far from them: no pair stands close enough, and at
    // most MAX_PART_HITS of each are paired.
    let name = format!(
        "{} {} {}",
        "sign out ".repeat(20_000),
        "word ".repeat(10),
        "all devices ".repeat(20_000)
    );
    assert_eq!(click("btn", &name, SHOP), None);
    assert_eq!(
        click("btn", "Sign out of all devices", SHOP),
        Some(RiskKind::Security)
    );
}

/// A control whose whole name is a harmless phrase does not take on the act its dialog's words
/// name by repeating them: "Allow all" under a cookie notice that says "you can allow all"
/// consents to cookies; under a call's "Allow 3 people to join?" it admits them, and "Allow"
/// under an app's request for access still grants it.
#[test]
fn a_harmless_name_repeated_by_its_dialog_stays_harmless() {
    let shop = "https://www.shop.example.co.uk/boots/p1";
    for (name, dialog) in [
        (
            "Allow all",
            "Our cookies. We use cookies to show you personalised content. You can allow all or manage them individually.",
        ),
        ("Alle zulassen", "Wir verwenden Cookies. Sie können alle zulassen oder einzeln verwalten."),
        ("Tout autoriser", "Ce site utilise des cookies. Vous pouvez tout autoriser ou les gérer."),
    ] {
        let els = vec![el("9", "btn", name).in_dialog(dialog)];
        assert_eq!(clicked(shop, els, "9", None, "Boots"), None, "{name}");
    }
    // The same name under a dialog that lets people in admits them.
    let lobby = "https://meet.example.com/abc-defg-hij";
    let els = vec![el("9", "btn", "Allow all").in_dialog("Allow 3 people to join the call?")];
    assert!(clicked(lobby, els, "9", None, "Meet").is_some());
    let oauth = "https://accounts.example.com/o/oauth2/consent";
    let els =
        vec![el("9", "btn", "Allow").in_dialog("Allow Acme Notes to see and edit your files")];
    assert_eq!(
        clicked(oauth, els, "9", None, "Sign in"),
        Some(RiskKind::Sharing)
    );
}

/// `value` typed into element 3 of `p` after the user said `said`.
fn typed_after(p: &FakePage, value: &str, said: &str) -> Option<RiskKind> {
    let ctx = Context {
        said,
        ..Context::default()
    };
    risk_on(p, ActionKind::SetValue("3", value), &ctx)
}

/// A postal or PIN code is no secret in any language the table has ("kode pos", "cod
/// poștal", "पिन कोड"); a code field's number the user did not give still asks.
#[test]
fn postal_codes_are_no_secret_and_codes_still_are() {
    let typed = |field: &str, value: &str| {
        let p = page(
            "https://www.jne.co.id/cek-tarif",
            vec![el("3", "inp", field)],
        );
        typed_after(&p, value, "Berapa ongkir ke Bandung?")
    };
    for field in ["Kode pos tujuan", "Cod poștal destinatar", "पिन कोड दर्ज करें"]
    {
        assert_eq!(typed(field, "40115"), None, "{field}");
    }
    for field in ["Kode verifikasi", "Cod de verificare", "Code"] {
        assert_eq!(
            typed(field, "40115"),
            Some(RiskKind::Credentials),
            "{field}"
        );
    }
}

/// A secret the user gave goes to the site they named, found in any script's punctuation
/// ("bkash.com-এ", "（rakuten-card.co.jp）に"), or — where they named a service and no
/// address — not to a host that spells that name as a domain before another site's.
#[test]
fn a_secret_given_for_a_named_service_does_not_go_to_a_host_posing_as_it() {
    let typed = |url: &str, said: &str| {
        let p = page(url, vec![el("3", "inp", "PIN").attr("type", "password")]);
        typed_after(&p, "4417", said)
    };
    let glued = "আমার বিকাশ পিন 4417 দিয়ে bkash.com-এ ব্যালেন্স দেখো";
    assert_eq!(typed("https://www.bkash.com/login", glued), None);
    assert_eq!(
        typed("https://bkash-bonus.com-bd.xyz/verify", glued),
        Some(RiskKind::Credentials)
    );
    let bracketed = "楽天カードの e-NAVI（rakuten-card.co.jp）に PIN 4417 でログインして";
    assert_eq!(
        typed("https://www.rakuten-card.co.jp/e-navi/", bracketed),
        None
    );
    assert_eq!(
        typed("https://rakuten-card.co.jp-secure.info/login", bracketed),
        Some(RiskKind::Credentials)
    );
    for host in ["paypal.com.secure-login.example", "paypal.com-verify.info"] {
        let url = format!("https://{host}/");
        let said = "Pay with PayPal, PIN 4417";
        assert_eq!(typed(&url, said), Some(RiskKind::Credentials), "{host}");
    }
    // A password with the marks of an address is no site named.
    let p = page(
        "https://www.example.org/login",
        vec![el("3", "inp", "Password").attr("type", "password")],
    );
    let said = "Log in with password movie.night!42";
    assert_eq!(typed_after(&p, "movie.night!42", said), None);
    // Sites that host their customers under their own domain pose as nothing, nor does a
    // host where the user named the site.
    for (url, said) in [
        (
            "https://www.phonepe.com/login",
            "PhonePe balance, UPI PIN 4417",
        ),
        (
            "https://moodle.ucl.ac.uk/login",
            "Log in to Moodle with PIN 4417",
        ),
        ("https://acme.okta.com/", "Sign in to Acme with PIN 4417"),
        (
            "https://banking.dkb.de/login",
            "Melde dich bei der DKB mit PIN 4417 an",
        ),
        ("https://secure-login.chase.com/", "Log in with PIN 4417"),
        (
            "https://www.paypal.com/signin",
            "Log in to paypal.com, PIN 4417",
        ),
        (
            "https://account.bbc.com/signin",
            "Sign in to my BBC Account with PIN 4417",
        ),
        (
            "https://www.paypal.com./signin",
            "Log in to paypal.com, PIN 4417",
        ),
    ] {
        assert_eq!(typed(url, said), None, "{url}");
    }
}

/// State is not an act: a terse apply beside a filled recovery e-mail or a checked exposure
/// the page shows commits nothing asked about (a settings form shows what is set, and a
/// default is no choice of the task's); the same apply right after the task chose the exposure
/// commits it.
#[test]
fn a_terse_apply_commits_the_choice_the_task_made_not_the_state_it_finds() {
    let security = "https://id.example.com/account/security";
    let contact = el("1", "inp", "Recovery e-mail").value("me.backup@mail.test");
    let save = el("3", "btn", "Save");
    assert_eq!(
        clicked(security, vec![contact, save], "3", None, "Account security"),
        None
    );
    let docs = "https://docs.example.com/doc/7";
    let access = || {
        vec![
            el("4", "radio", "Only me"),
            el("5", "radio", "Anyone with the link can edit").states("checked"),
            el("6", "btn", "OK"),
        ]
    };
    assert_eq!(clicked(docs, access(), "6", None, "Roster"), None);
    assert_eq!(
        clicked(docs, access(), "6", Some("5"), "Roster"),
        Some(RiskKind::Sharing)
    );
    // A radio is not read for a role: its name as often names a person ("Dana Lee (my
    // manager)" picked as the approver of a timesheet) as a role.
    let approver = vec![
        el("5", "radio", "Dana Lee (my manager)").states("checked"),
        el("6", "radio", "Sam Ortiz"),
        el("7", "btn", "Save timesheet"),
    ];
    let sheet = "https://hr.example.com/timesheet";
    assert_eq!(clicked(sheet, approver, "7", Some("5"), "Timesheet"), None);
}

/// A short control that starts something ("Aktivovat", "Try for €0") right after a recurring
/// price starts the recurring charge; the same control after a one-time price, or with no
/// price before it, does not subscribe.
#[test]
fn an_activation_right_after_a_recurring_price_subscribes() {
    let url = "https://www.example.cz/premium";
    let after = |texts: &[&str]| {
        let els = vec![el("8", "btn", "Aktivovat").after(texts)];
        clicked(url, els, "8", None, "Premium")
    };
    assert_eq!(
        after(&["89 Kč měsíčně", "Email Profi"]),
        Some(RiskKind::Subscription)
    );
    assert_eq!(after(&["Email Profi", "Jednorázově 89 Kč"]), None);
    assert_eq!(after(&["Email Profi"]), None);
    // The tree's text node holding the price is the offer's own; a price of nothing charges
    // nothing; a switch's "Enable" is a setting.
    let tree = vec![
        el("7", "text", "89 Kč měsíčně"),
        el("8", "btn", "Aktivovat").after(&["89 Kč měsíčně"]),
    ];
    assert_eq!(
        clicked(url, tree, "8", None, "Premium"),
        Some(RiskKind::Subscription)
    );
    assert_eq!(after(&["0 Kč měsíčně", "Email Free"]), None);
    let enable = vec![el("9", "btn", "Enable 2FA").after(&["Pro – $19/month"])];
    assert_ne!(
        clicked(url, enable, "9", None, "Welcome to Pro"),
        Some(RiskKind::Subscription)
    );
    // A price another control names is that control's offer.
    let plans = vec![
        el("12", "btn", "Try Plus – 24.99 SAR/month"),
        el("14", "btn", "Start free").after(&["Try Plus – 24.99 SAR/month"]),
    ];
    assert_eq!(clicked(url, plans, "14", None, "Plans"), None);
    let try_it =
        vec![el("3", "btn", "Try for €0")
            .after(&["1 month free, then €34.57/month", "Premium Career"])];
    assert_eq!(
        clicked(
            "https://www.example.com/premium",
            try_it,
            "3",
            None,
            "Premium"
        ),
        Some(RiskKind::Subscription)
    );
}

/// Where the user named a service but no address, a secret they gave goes nowhere that is a
/// look-alike by its own name, whatever script they named it in: a host that spells a domain
/// with a generic suffix before its own (`amazon.co.jp.member-update.top`), or a registrable
/// name dressed in a look-alike's words (`-sicherheit-verifizierung`, `-rewards-claim`), or a
/// page on a platform anyone publishes on named with a word the user did not write
/// (`sparkasse-online.wixsite.com`). The
/// sites a service signs its users in on are neither: a region or a service of the site
/// spelled in its subdomain (`tenant.eu.auth0.com`, `signin.aws.amazon.com`) and a hyphened
/// name of the brand's own (`credit-agricole.fr`, `sparkasse-hannover.de`), a sign-in service's
/// tenant (`….amazoncognito.com`) and a deployment named as the user names the service.
#[test]
fn a_secret_given_for_a_service_goes_to_no_site_that_is_a_look_alike_by_its_own_name() {
    let typed = |url: &str, said: &str| {
        let p = page(url, vec![el("3", "inp", "PIN").attr("type", "password")]);
        typed_after(&p, "4417", said)
    };
    for (url, said) in [
        (
            "https://amazon.co.jp.member-update.top/ap/signin",
            "アマゾンにログインして、PINは4417",
        ),
        (
            "https://bkash.com.offer-bd.net/pin",
            "আমার বিকাশ পিন 4417 দিয়ে লগইন করো",
        ),
        (
            "https://impots.gouv.fr.remboursement.example/",
            "PIN 4417 pour les impôts",
        ),
        (
            "https://privatbank.ua.dopomoga-vyplata.org/login",
            "зайди в Приват24, PIN 4417",
        ),
        (
            "https://sparkasse-sicherheit-verifizierung.de/login",
            "melde dich bei meiner Sparkasse an, PIN 4417",
        ),
        (
            "https://gcash-rewards-claim.com/login",
            "mag-log in sa GCash, MPIN 4417",
        ),
        ("https://kerry.delivery-fee.net/pay", "ใส่ PIN 4417 ของกสิกร"),
        (
            "https://vietcombank.xac-thuc.info/ibk",
            "đăng nhập, mật khẩu 4417",
        ),
        (
            "https://sparkasse-online.wixsite.com/login",
            "melde dich bei meiner Sparkasse an, PIN 4417",
        ),
        (
            "https://intesa-prijava.vercel.app/",
            "Uloguj se u Banca Intesa, PIN 4417",
        ),
    ] {
        assert_eq!(typed(url, said), Some(RiskKind::Credentials), "{url}");
    }
    for (url, said) in [
        (
            "https://tenant.eu.auth0.com/u/login",
            "Log in with PIN 4417",
        ),
        (
            "https://signin.aws.amazon.com/signin",
            "Sign in to AWS, PIN 4417",
        ),
        (
            "https://accounts.google.com/signin",
            "Log in to Gmail with PIN 4417",
        ),
        (
            "https://www.credit-agricole.fr/",
            "Connecte-toi au Crédit Agricole, PIN 4417",
        ),
        (
            "https://www.sparkasse-hannover.de/",
            "melde dich bei meiner Sparkasse an, PIN 4417",
        ),
        ("https://www.sncf-connect.com/", "connecte-toi, PIN 4417"),
        (
            "https://mydomain.auth.us-east-1.amazoncognito.com/login",
            "Sign in, PIN 4417",
        ),
        ("https://www.de-mail.de/login", "Melde mich an, PIN 4417"),
        (
            "https://www.bankhapoalim.co.il/",
            "תיכנס לפועלים עם PIN 4417",
        ),
        ("https://www.net-a-porter.com/signin", "Sign in, PIN 4417"),
        (
            "https://northwind.eu.auth0.com/u/login",
            "Log in to Northwind, PIN 4417",
        ),
        (
            "https://www.toll-collect.de/login",
            "Bei Toll Collect anmelden, PIN 4417",
        ),
        (
            "https://login.f-secure.com/",
            "Log in to F-Secure with PIN 4417",
        ),
        (
            "https://acme-dashboard.vercel.app/login",
            "Log in to the Acme Dashboard, PIN 4417",
        ),
    ] {
        assert_eq!(typed(url, said), None, "{url}");
    }
}

proptest::proptest! {
    /// A host made of plain names (no hyphen, no generic suffix spelled inside it) under any
    /// registrable domain is no look-alike: a secret the user gave naming no address is typed
    /// there unasked.
    #[test]
    fn plain_hosts_are_no_look_alikes(
        labels in proptest::collection::vec("[a-z][a-z0-9]{3,9}", 1..4),
        suffix in proptest::sample::select(vec!["com", "de", "co.uk", "com.br", "io", "eu"]),
    ) {
        let url = format!("https://{}.{suffix}/login", labels.join("."));
        let p = page(&url, vec![el("3", "inp", "PIN").attr("type", "password")]);
        proptest::prop_assert_eq!(typed_after(&p, "4417", "PIN 4417"), None, "{}", url);
    }
}

/// An option that is the exposure itself ("Anyone with the link") shares as it is picked in a
/// dialog or on a page about sharing, like the same choice in a list; the restricted option, one
/// that only tells of it, or the same words in a filter do not. A form's reset button only
/// clears the form; one outside a form is read by its name.
#[test]
fn an_option_that_is_the_exposure_shares_and_a_reset_clears() {
    let drive = "https://drive.google.com/drive/folders/1Ppq";
    let share = "Condividi \"Contratti fornitori\" Accesso generale";
    for (role, name, kind) in [
        ("opt", "Chiunque abbia il link", Some(RiskKind::Sharing)),
        ("radio", "Każda osoba mająca link", Some(RiskKind::Sharing)),
        (
            "opt",
            "Anyone with the link · Anyone on the internet with the link can view",
            Some(RiskKind::Sharing),
        ),
        ("opt", "Con restrizioni", None),
        (
            "opt",
            "Only people with access can open with the link",
            None,
        ),
    ] {
        let els = vec![el("9", role, name).in_dialog(share)];
        assert_eq!(clicked(drive, els, "9", None, "Drive"), kind, "{name}");
    }
    // The same words filtering a list of repositories or files.
    let els = vec![el("9", "opt", "Public").in_dialog("Type: All, Public, Private, Sources")];
    assert_eq!(
        clicked(
            "https://github.com/ada?tab=repositories",
            els,
            "9",
            None,
            "Ada"
        ),
        None
    );
    let form = "https://www.shop.example.es/contacto";
    let reset = || el("19", "btn", "Borrar").attr("type", "reset");
    let els = vec![reset().in_form("Formulario de contacto")];
    assert_eq!(clicked(form, els, "19", None, "Contacto"), None);
    let els = vec![el("19", "btn", "Borrar").in_form("Formulario de contacto")];
    assert_eq!(
        clicked(form, els, "19", None, "Contacto"),
        Some(RiskKind::Deletion)
    );
    assert_eq!(
        clicked(form, vec![reset()], "19", None, "Contacto"),
        Some(RiskKind::Deletion)
    );
    // A reset that names another act is read by it.
    let buy = el("21", "btn", "Buy now")
        .attr("type", "reset")
        .in_form("Checkout");
    assert!(clicked(form, vec![buy], "21", None, "Checkout").is_some());
}

/// What the user can undo by doing it again is no act: taking an item off their favourites or
/// wish list, as off a cart. A link offering a plan without its price shows the plans first; one
/// with its price, or a button, subscribes.
#[test]
fn undoable_marks_and_links_to_plans_are_left_alone() {
    let ad = "https://birmingham.example.org/grd/d/garage/7221815683.html";
    let unmark = el("88", "btn", "favorite").attr("title", "remove from favorites");
    assert_eq!(clicked(ad, vec![unmark], "88", None, "Garage"), None);
    for name in [
        "Aus Favoriten entfernen",
        "Retirer des favoris",
        "Remove from wishlist",
    ] {
        assert_eq!(click("btn", name, SHOP), None, "{name}");
    }
    assert_eq!(click("btn", "Delete list", SHOP), Some(RiskKind::Deletion));
    let news = "https://www.news.example.com/2016/07/25/business/dealbook.html";
    assert_eq!(click("link", "SUBSCRIBE NOW", news), None);
    assert_eq!(
        click("link", "Subscribe now – $9.99/month", news),
        Some(RiskKind::Subscription)
    );
    assert_eq!(
        click(
            "btn",
            "Subscribe now",
            "https://www.news.example.com/subscription/checkout"
        ),
        Some(RiskKind::Subscription)
    );
}

/// Where access is given (a page, dialog or menu about roles), a box ticked or a menu item
/// chosen whose name is a role gives that role; a person named with a role among other words,
/// a role in a filter, a radio, a box turned off and a role word elsewhere do not.
#[test]
fn a_control_named_as_a_role_gives_it_and_a_filter_or_a_person_does_not() {
    let roles = "https://admin.example.com/users/88/roles";
    let boxes = |name: &str| {
        vec![
            el("1", "link", "Users"),
            el("14", "chk", name),
            el("16", "btn", "Save"),
        ]
    };
    for name in ["Super Admin", "Διαχειριστής", "Owner"] {
        let p = page(roles, boxes(name));
        let ticked = risk_on(&p, ActionKind::Check("14"), &Context::default());
        assert_eq!(ticked, Some(RiskKind::Sharing), "{name}");
        let cleared = risk_on(&p, ActionKind::Uncheck("14"), &Context::default());
        assert_eq!(cleared, None, "{name} turned off gives nothing");
    }
    let p = page(roles, boxes("Dana Lee, reports to the office manager"));
    assert_eq!(
        risk_on(&p, ActionKind::Check("14"), &Context::default()),
        None
    );
    let filter = page(
        "https://admin.example.com/users",
        vec![
            el("3", "btn", "Filter by role"),
            el("14", "chk", "Admin").after(&["Filter by role"]),
            el("15", "chk", "Member"),
        ],
    );
    assert_eq!(
        risk_on(&filter, ActionKind::Check("14"), &Context::default()),
        None
    );
    let team = "https://teams.example.com/team/7/members";
    let menu = |role: &str| vec![el("21", "btn", "Role"), el("24", role, "Ägare")];
    // A role picked by radio where access is given is asked about at its "Save"; a role
    // before its description counts.
    let dialog = vec![
        el("31", "radio", "Mitglied"),
        el("33", "radio", "Administrator").states("checked"),
        el("36", "btn", "Speichern"),
    ];
    let got = clicked(team, dialog, "36", Some("33"), "Mitglieder");
    assert_eq!(got, Some(RiskKind::Sharing));
    for name in [
        "Administrateur — peut gérer les membres",
        "Может редактировать настройки группы",
    ] {
        let p = page(roles, boxes(name));
        let ticked = risk_on(&p, ActionKind::Check("14"), &Context::default());
        assert_eq!(ticked, Some(RiskKind::Sharing), "{name}");
    }
    // A switch named only by its row gives the role the row names.
    let row = vec![el("14", "switch", "Etkinleştir").after(&["Yönetici yetkisi"])];
    let p = page(roles, row);
    let on = risk_on(&p, ActionKind::Check("14"), &Context::default());
    assert_eq!(on, Some(RiskKind::Sharing));
    // The extension's role for a menu item is "menu".
    for role in ["menuitem", "menu"] {
        let got = clicked(team, menu(role), "24", None, "Team");
        assert_eq!(got, Some(RiskKind::Sharing), "{role}");
    }
    // A role word where no access is given is a tool's name or a job title.
    for (url, els) in [
        (
            "https://www.example.com/",
            vec![
                el("12", "menuitem", "Ads Manager"),
                el("5", "menuitem", "Pages"),
            ],
        ),
        (
            "https://jobs.example.com/",
            vec![
                el("4", "inp", "Job title"),
                el("5", "option", "Sales manager"),
            ],
        ),
    ] {
        let target = if url.contains("jobs") { "5" } else { "12" };
        assert_eq!(clicked(url, els, target, None, "Home"), None, "{url}");
    }
    assert_eq!(clicked(team, menu("radio"), "24", None, "Team"), None);
}

/// A "Buy" that names no price, where the plan picked names a recurring one, buys that plan;
/// a step's "Continue" there (it may only lead on to the payment details), and a "Buy" beside
/// a one-time price or a free plan, are not read as a subscription.
#[test]
fn a_buy_beside_the_plan_picked_by_its_recurring_price_subscribes() {
    let url = "https://www.example.com/premium";
    let plans = |price: &str, button: &str| {
        vec![
            el("3", "radio", &format!("Individual — {price}")).states("checked"),
            el("4", "radio", "Family — 159,99 TL/ay"),
            el("5", "btn", button),
        ]
    };
    let on = |price: &str, button: &str| clicked(url, plans(price, button), "5", None, "Premium");
    assert_eq!(on("79,99 TL/ay", "Satın al"), Some(RiskKind::Subscription));
    assert_eq!(on("79,99 TL/ay", "Subscribe"), Some(RiskKind::Subscription));
    assert_eq!(on("79,99 TL/ay", "Continue"), None);
    assert_ne!(on("79,99 TL", "Satın al"), Some(RiskKind::Subscription));
    assert_eq!(on("0 TL/ay", "Satın al"), None);
}

/// Ticking a box sends nothing (a listing's "Verzenden" delivery filter, "Send me a copy"):
/// the form's own send does; the same word on a button sends.
#[test]
fn a_box_sends_nothing_and_a_button_does() {
    let filters = ["Ophalen", "Verzenden"].map(|n| el(n, "chk", n));
    let els: Vec<El> = filters
        .into_iter()
        .chain([el("send", "btn", "Verzenden")])
        .collect();
    let p = page("https://www.example.nl/l/fietsen/", els);
    let none = Context::default();
    assert_eq!(risk_on(&p, ActionKind::Check("Verzenden"), &none), None);
    let sent = risk_on(&p, ActionKind::Click("send"), &none);
    assert_eq!(sent, Some(RiskKind::Sending));
}

/// A bare "Save" right after the task typed into the e-mail or phone field of the user's own
/// account page (named, labelled or given an address) changes its sign-in contact; saving a
/// name, a contact the user wrote themselves, a contact in an address book, an address, and a
/// checkout's or a sign-in page's e-mail does not.
#[test]
fn saving_a_new_sign_in_contact_is_a_security_change_and_a_name_is_not() {
    let profile = "https://www.example.de/kundenkonto/persoenliche-daten";
    let form = |field: &str, value: &str, button: &str| {
        vec![
            el("11", "inp", field).value(value),
            el("20", "btn", "Abbrechen"),
            el("21", "btn", button),
        ]
    };
    let saved = |url: &str, field: &str, value: &str| {
        let els = form(field, value, "Speichern");
        clicked(url, els, "21", Some("11"), "Persönliche Daten")
    };
    let security = Some(RiskKind::Security);
    assert_eq!(saved(profile, "E-Mail-Adresse", "j.k@mail.test"), security);
    assert_eq!(saved(profile, "Mobilnummer", "+49 151 2290"), security);
    assert_eq!(saved(profile, "Kontakt", "j.k@mail.test"), security);
    assert_eq!(saved(profile, "Nachname", "Krüger"), None);
    let labelled = vec![
        el("19", "inp", "")
            .value("98100 44721")
            .after(&["मोबाइल नंबर"]),
        el("23", "btn", "अपडेट करें"),
    ];
    let paytm = "https://paytm.example/myaccount/profile";
    assert_eq!(
        clicked(paytm, labelled, "23", Some("19"), "प्रोफ़ाइल"),
        security
    );
    let checkout = "https://www.example.de/checkout/address";
    assert_eq!(saved(checkout, "E-Mail-Adresse", "j.k@mail.test"), None);
    assert_eq!(
        saved(
            "https://www.example.de/login",
            "E-Mail-Adresse",
            "j.k@mail.test"
        ),
        None
    );
    // A bare "Ändern" applies it as "Speichern" does; on the account's own page a field called
    // just "Phone" is its contact.
    let changed = form("E-Mail-Adresse", "j.k@mail.test", "Ändern");
    let settings = "https://www.example.de/m-einstellungen.html";
    assert_eq!(
        clicked(settings, changed, "21", Some("11"), "Einstellungen"),
        security
    );
    let phone = form("Phone", "+1 404 555 0192", "Save");
    let account = "https://www.example.com/myprofile/personal-details";
    assert_eq!(
        clicked(account, phone, "21", Some("11"), "Account Details"),
        security
    );
    // On the page of the contact itself, its "Next" goes on to change it; elsewhere a "Next"
    // after an e-mail typed is a step of a form.
    let next = |url: &str| {
        let els = form("Email mới", "hotro@mail.test", "Tiếp theo");
        clicked(url, els, "21", Some("11"), "Hồ Sơ Của Tôi")
    };
    assert_eq!(next("https://shop.example.vn/user/account/email"), security);
    assert_eq!(next("https://shop.example.vn/user/account/profile"), None);
    // A contact the user wrote themselves is the change they asked for.
    let asked_for = form("Mobilnummer", "+49 151 2290", "Speichern");
    let p = page(profile, asked_for);
    let ctx = Context {
        focus: p.element("11"),
        said: "Setz meine Mobilnummer auf +49 151 2290 und speichere",
        title: Some("Persönliche Daten"),
        ..Context::default()
    };
    assert_eq!(risk_on(&p, ActionKind::Click("21"), &ctx), None);
    let book = form("E-Mail-Adresse", "lea@mail.test", "Speichern");
    let contacts = "https://contacts.example.com/new";
    assert_eq!(clicked(contacts, book, "21", Some("11"), "Kontakte"), None);
    let address = form("Telefonnummer", "+49 151 2290", "Adresse speichern");
    assert_eq!(
        clicked(profile, address, "21", Some("11"), "Mein Konto"),
        None
    );
}

/// Plain Enter in a field whose suggestions are open picks one (a recipient in "To"); with its
/// list closed it submits the form like any field's, and a composer's Enter and any field's
/// Ctrl+Enter send.
#[test]
fn enter_in_an_open_list_picks_and_in_a_composer_sends() {
    let compose = |to: El| {
        page(
            "https://mail.example.com/compose",
            vec![
                to,
                el("14", "inp", "Write a message"),
                el("15", "btn", "Send"),
            ],
        )
    };
    let press = |p: &FakePage, key: &str, id: &str| {
        let ctx = Context {
            focus: p.element(id),
            ..Context::default()
        };
        risk_on(p, ActionKind::Press(key), &ctx)
    };
    let open = compose(el("11", "combobox", "To").states("expanded"));
    assert_eq!(press(&open, "Enter", "11"), None);
    assert_eq!(press(&open, "Control+Enter", "11"), Some(RiskKind::Sending));
    assert_eq!(press(&open, "Enter", "14"), Some(RiskKind::Sending));
    let closed = compose(el("11", "combobox", "To"));
    assert_eq!(press(&closed, "Enter", "11"), Some(RiskKind::Sending));
}

/// A password field and the user's own words in a language the act table does not cover yet
/// (Lithuanian): the secret is known as one, and the one the user gave goes only to the site
/// they named.
#[test]
fn a_password_in_a_language_without_acts_is_still_bound_to_the_site_named() {
    let said = "Prisijunk prie Swedbank (swedbank.lt), ID 34455812, slaptažodis Nemunas!9";
    let ctx = Context {
        said,
        ..Context::default()
    };
    for (url, asked) in [
        ("https://www.swedbank.lt/prisijungti", false),
        ("https://swedbank-lt.vercel.app/prisijungti", true),
    ] {
        let p = page(url, vec![el("5", "inp", "Slaptažodį įveskite čia")]);
        let got = risk_on(&p, ActionKind::SetValue("5", "Nemunas!9"), &ctx);
        assert_eq!(got.is_some(), asked, "{url}");
    }
}

/// A yes on an app's consent page grants the app what it asks for; "Cancel" there, the sign-in
/// step before it (a field to type in) and the same yes on any other page do not.
#[test]
fn a_yes_on_an_apps_consent_page_grants_it_access() {
    let consent =
        "https://accounts.example.com/signin/oauth/consent?client_id=55120-pdf.apps&scope=mail";
    let grants = vec![
        el("1", "inp", "Search"),
        el("2", "combobox", "Langue").value("Français (France)"),
        el("5", "chk", "Read, compose and send your e-mails").states("checked"),
        el("8", "btn", "Annuler"),
        el("9", "btn", "Continuer"),
    ];
    let on = |url: &str, els: Vec<El>, id: &str| clicked(url, els, id, None, "Se connecter");
    assert_eq!(on(consent, grants.clone(), "9"), Some(RiskKind::Sharing));
    assert_eq!(on(consent, grants.clone(), "8"), None);
    assert_eq!(on("https://app.example.com/export", grants, "9"), None);
    let sign_in = vec![
        el("14", "inp", "User ID").value("yuki_o88"),
        el("16", "btn", "Next"),
    ];
    let sso = "https://login.example.com/sso/authorize?client_id=card_web";
    assert_eq!(on(sso, sign_in, "16"), None);
}

/// Invariant over the whole table: a box named by any role phrase of any language is asked
/// about only when it is ticked where access is given — never turned off, never on a page
/// that names no roles or permissions — and ticked there it gives the role (the few phrases
/// that are also a setting's name are read as that setting).
#[test]
fn every_role_in_every_language_is_given_only_where_access_is_given() {
    let roles = phrases_of(lexicon::Kind::Role);
    assert!(roles.len() > 300, "{}", roles.len());
    let mut given = 0;
    for (lang, name) in &roles {
        let on = |url: &str, title: &str, action: ActionKind<'_>| {
            let els = vec![
                el("1", "link", "Home"),
                el("14", "chk", name),
                el("16", "btn", "OK"),
            ];
            let p = page(url, els);
            let ctx = Context {
                title: Some(title),
                ..Context::default()
            };
            risk_on(&p, action, &ctx)
        };
        let roles_page = "https://admin.example.com/users/88/roles";
        let sharing = Some(RiskKind::Sharing);
        let cleared = on(roles_page, "Roles", ActionKind::Uncheck("14"));
        assert_ne!(cleared, sharing, "{lang} {name}");
        let survey = "https://events.example.com/register";
        let answered = on(survey, "Register", ActionKind::Check("14"));
        assert_ne!(answered, sharing, "{lang} {name}");
        given += usize::from(
            on(roles_page, "Roles", ActionKind::Check("14")) == Some(RiskKind::Sharing),
        );
    }
    assert!(given * 10 >= roles.len() * 9, "{given} of {}", roles.len());
}

/// The largest page the round's rules read (2 000 elements, names at the tree's 100
/// characters, a 4 000-character word): a role menu item, a consent page's yes and a contact
/// saved are answered as on a small page.
#[test]
fn the_rounds_rules_answer_on_the_largest_pages() {
    let long = "Ä".repeat(4_000);
    let mut els: Vec<El> = (0..2_000)
        .map(|i| {
            el(
                &format!("n{i}"),
                "menu",
                &format!("{} {i}", "Bereich ".repeat(11)),
            )
        })
        .collect();
    els.push(el("r", "btn", "Role"));
    els.push(el("owner", "menu", "Owner"));
    els.push(el("long", "inp", &long).value(&long));
    els.push(el("mail", "inp", "E-mail").value("ada@mail.test"));
    els.push(el("save", "btn", "Save"));
    let members = "https://app.example.com/settings/account?client_id=x&oauth=1";
    let got = |id: &str, focus: Option<&str>| clicked(members, els.clone(), id, focus, "Members");
    assert_eq!(got("owner", None), Some(RiskKind::Sharing));
    assert_eq!(got("save", Some("mail")), Some(RiskKind::Security));
    assert_eq!(got("save", Some("long")), None);
}

#[test]
fn a_yes_in_the_dialog_an_act_opened_confirms_that_act_unless_the_dialog_names_its_own() {
    let security = "https://id.example.com/security";
    let els = |dialog: &str| {
        vec![
            el("17", "btn", "Sign out of all other devices"),
            el("20", "btn", "Clear all"),
            el("32", "btn", "No").in_dialog(dialog),
            el("33", "btn", "Yes").in_dialog(dialog),
        ]
    };
    let yes =
        |dialog: &str, after: &str| clicked(security, els(dialog), "33", Some(after), "Security");
    let sure = "Are you sure? This cannot be undone.";
    assert_eq!(yes(sure, "17"), Some(RiskKind::Security));
    // The dialog says what it does, and what it does is harmless.
    assert_eq!(yes("Clear all notifications?", "20"), None);
    // Nothing was clicked before it, or its "No".
    assert_eq!(clicked(security, els(sure), "33", None, "Security"), None);
    assert_eq!(
        clicked(security, els(sure), "32", Some("17"), "Security"),
        None
    );
    // A form around the yes is not a dialog the control opened.
    let form = vec![
        el("17", "btn", "Sign out of all other devices"),
        el("33", "btn", "OK").in_form(sure),
    ];
    assert_eq!(clicked(security, form, "33", Some("17"), "Security"), None);
}

#[test]
fn none_or_never_picked_for_a_protection_turns_it_off_at_the_save() {
    let url = "https://account.example.com/settings";
    let save = |option: &str, before: &[&str], title: &str| {
        let els = vec![
            el("7", "radio", option).states("checked").after(before),
            el("9", "btn", "Save changes"),
        ];
        clicked(url, els, "9", Some("7"), title)
    };
    let code = ["Require a verification code"];
    assert_eq!(save("Never", &code, "Settings"), Some(RiskKind::Security));
    let without = save("Without two-step verification", &[], "Settings");
    assert_eq!(without, Some(RiskKind::Security));
    let twofa = ["Two-factor authentication"];
    let disabled = save("Disabled (not recommended)", &twofa, "Settings");
    assert_eq!(disabled, Some(RiskKind::Security));
    // On a page about a protection, "None" for one of its exceptions tightens it.
    assert_eq!(
        save("None", &["Grace period"], "Two-factor authentication"),
        None
    );
    // Turned on, or "never" for what is no protection.
    assert_eq!(save("Always", &code, "Settings"), None);
    assert_eq!(save("Never", &["Marketing e-mails"], "Settings"), None);
    assert_eq!(save("Never", &["Sort by"], "Settings"), None);
}

#[test]
fn a_role_word_in_a_list_grants_access_only_where_access_is_given() {
    let choose = |url: &str, list: El, value: &str| {
        let p = page(url, vec![list, el("12", "btn", "Save as draft")]);
        risk_on(
            &p,
            ActionKind::SelectOption("8", value),
            &Context::default(),
        )
    };
    let jobs = "https://jobs.example.com/employer/new-ad";
    let level = el("8", "sel", "Position level").value("Specialist");
    assert_eq!(choose(jobs, level, "Administrator"), None);
    let title = el("8", "sel", "Job title").value("Developer");
    assert_eq!(choose(jobs, title, "Owner"), None);
    let role = el("8", "sel", "Role").value("Member");
    assert_eq!(choose(jobs, role, "Administrator"), Some(RiskKind::Sharing));
    let headed = el("8", "sel", "").value("Member").after(&["Peter", "Role"]);
    assert_eq!(choose(jobs, headed, "Owner"), Some(RiskKind::Sharing));
    let named = el("8", "sel", "").value("Member").attr("name", "user_role");
    assert_eq!(choose(jobs, named, "Owner"), Some(RiskKind::Sharing));
}

#[test]
fn a_role_picked_by_tab_is_asked_about_at_the_apply() {
    const PERMISSIONS: &str = "Kadri Tamm – permissions";
    let users = "https://crm.example.com/settings/users/5521";
    let els = || {
        vec![
            el("31", "tab", "Regular user").in_dialog(PERMISSIONS),
            el("32", "tab", "Administrator")
                .states("selected")
                .in_dialog(PERMISSIONS),
            el("38", "btn", "Done").in_dialog(PERMISSIONS),
        ]
    };
    assert_eq!(
        clicked(users, els(), "38", Some("32"), "Users – CRM"),
        Some(RiskKind::Sharing)
    );
    assert_eq!(clicked(users, els(), "38", Some("31"), "Users – CRM"), None);
}

#[test]
fn text_written_in_a_box_of_lines_and_submitted_is_sent() {
    let review = "https://shop.example.com/product/7/review/new";
    let submit = |body: El| {
        let els = vec![
            el("21", "inp", "Title").value("Good"),
            body,
            el("31", "btn", "Submit"),
        ];
        clicked(review, els, "31", None, "Write a review")
    };
    let text = "Good battery, average camera at night.";
    assert_eq!(
        submit(el("25", "textarea", "Your opinion").value(text)),
        Some(RiskKind::Sending)
    );
    let editable = el("25", "inp", "Your opinion")
        .value(text)
        .input("textarea");
    assert_eq!(submit(editable), Some(RiskKind::Sending));
    // One-line fields and an empty box send nothing of the user's.
    assert_eq!(submit(el("25", "inp", "Nickname").value("ada")), None);
    assert_eq!(submit(el("25", "textarea", "Your opinion")), None);
}

#[test]
fn a_plan_shown_pressed_or_listed_is_the_plan_a_buy_or_a_yes_starts() {
    let plans = "https://tv.example.com/plans";
    let order = |card: El, button: &str| {
        let els = vec![
            card,
            el("2", "btn", "Plan M · $29.90/mo"),
            el("9", "btn", button),
        ];
        clicked(plans, els, "9", None, "Plans")
    };
    let pressed = || el("1", "btn", "Plan S · $19.90/mo").states("pressed");
    // Bought as a payment or a subscription: asked about either way.
    assert!(order(pressed(), "Order now").is_some());
    assert_eq!(order(pressed(), "Confirm"), Some(RiskKind::Subscription));
    let listed = el("1", "sel", "Choose your plan").value("Plan S · $19.90/mo");
    assert_eq!(order(listed, "Confirm"), Some(RiskKind::Subscription));
    // Nothing picked: the plans are only shown.
    assert_eq!(order(el("1", "btn", "Plan S · $19.90/mo"), "Confirm"), None);
}

#[test]
fn a_switch_is_read_by_its_longest_phrase_and_a_filter_chip_only_filters() {
    let bucket = "https://console.example.com/storage/buckets/invoices?tab=permissions";
    let tick = |name: &str| {
        let p = page(
            bucket,
            vec![el("17", "chk", name), el("24", "btn", "Save changes")],
        );
        risk_on(&p, ActionKind::Check("17"), &Context::default())
    };
    assert_eq!(tick("Block all public access"), None);
    assert_eq!(tick("Public access"), Some(RiskKind::Sharing));
    let studio = "https://studio.example.com/channel/videos";
    // A filter bar is told by the words before the chip or by a filter control beside it
    // (three before, one after); a "Filter" field further away is another part of the page.
    let chip = |before: &[&str], between: usize| {
        let mut els = vec![el("3", "inp", "Filter")];
        els.extend((0..between).map(|i| el(&format!("v{i}"), "link", "Video")));
        els.push(el("4", "btn", "Visibility: Public").after(before));
        clicked(studio, els, "4", None, "Channel content")
    };
    assert_eq!(chip(&["Filter"], 5), None);
    assert_eq!(chip(&["Video details"], 0), None);
    assert_eq!(chip(&["Video details"], 3), Some(RiskKind::Sharing));
}

#[test]
fn a_single_page_apps_route_names_its_page() {
    let confirm = |url: &str| {
        let els = vec![el("17", "btn", "Edit"), el("18", "btn", "Confirm")];
        clicked(url, els, "18", None, "Review")
    };
    assert_eq!(
        confirm("https://bank.example.com/#/transfer/review"),
        Some(RiskKind::Transfer)
    );
    assert_eq!(confirm("https://bank.example.com/#/profile/review"), None);
}

/// Round 11's paths on the largest pages: a 40 000-character dialog that asks, 1 900 filled
/// boxes of lines before a submit (elements are read up to the 2 000th), 2 000 tabs, a
/// 10 000-character route. Each answers as on a small page.
#[test]
fn round_elevens_rules_answer_on_the_largest_inputs() {
    let huge = format!("{}?", "Sind Sie sicher ".repeat(2_500));
    let mut els = vec![el("17", "btn", "Sign out of all other devices")];
    els.extend((0..1_900).map(|i| el(&format!("b{i}"), "textarea", "Note").value("Hello there")));
    els.push(el("31", "btn", "Submit"));
    els.extend((0..2_000).map(|i| el(&format!("t{i}"), "tab", "Administrator")));
    els.push(el("33", "btn", "Yes").in_dialog(&huge));
    let route = format!("https://app.example.com/#/{}", "threads/".repeat(1_250));
    let got = |id: &str, focus: Option<&str>| clicked(&route, els.clone(), id, focus, "App");
    assert_eq!(got("33", Some("17")), Some(RiskKind::Security));
    assert!(got("31", None).is_some());
    assert_eq!(got("31", Some("t5")), got("31", None));
}

/// Round 12: a dialog confirms the control before it when it asks about nothing else — a
/// harmless phrase in its description ("order history will be lost") is no question of its
/// own, and a dialog that offers another act ("Sign out") asks about that.
#[test]
fn a_dialog_asks_about_what_its_question_names() {
    let confirm = |dialog: &str, other: &str| {
        let els = vec![
            el("40", "btn", "Delete account"),
            el("61", "btn", other).in_dialog(dialog),
            el("62", "btn", "Yes").in_dialog(dialog),
        ];
        clicked(
            "https://shop.example.com/account",
            els,
            "62",
            Some("40"),
            "Account",
        )
    };
    let sure = "Are you sure? Your order history and saved addresses will be lost.";
    assert_eq!(confirm(sure, "No, keep it"), Some(RiskKind::Deletion));
    let session = "Your session expires in 2 minutes. Do you want to stay signed in?";
    assert_eq!(confirm(session, "Sign out"), None);
    assert_eq!(confirm("Clear all notifications?", "No"), None);
    // Review-12: a question about something else names it ("SMS updates about this order");
    // a confirmation may offer another way beside its way out.
    let sms = "Order placed. Want SMS updates about this order?";
    assert_eq!(confirm(sms, "No thanks"), None);
    let streak = "Are you sure? Your progress will be gone. Need a break instead?";
    let els = vec![
        el("40", "btn", "Delete my account"),
        el("61", "btn", "Log out instead").in_dialog(streak),
        el("62", "btn", "Keep my account").in_dialog(streak),
        el("63", "btn", "Yes").in_dialog(streak),
    ];
    let lingo = "https://www.example-lingo.com/settings/account";
    assert_eq!(
        clicked(lingo, els, "63", Some("40"), "Account"),
        Some(RiskKind::Deletion)
    );
}

/// Round 12: a role is given where access is given — a dialog that shares ("Share") is such
/// a place; a link to a "Permissions" page is not (it leads there).
#[test]
fn a_share_dialog_gives_roles_and_a_link_to_permissions_does_not() {
    let pick = |dialog: &str| {
        let p = page(
            "https://notes.example.com/Roadmap-8f2a",
            vec![
                el("10", "inp", "Email or group"),
                el("21", "sel", "").value("Can view").in_dialog(dialog),
            ],
        );
        risk_on(
            &p,
            ActionKind::SelectOption("21", "Can edit"),
            &Context::default(),
        )
    };
    assert_eq!(
        pick("Share Ben Okafor ben@example.com"),
        Some(RiskKind::Sharing)
    );
    assert_eq!(pick("Edit note Ben Okafor"), None);
    // A short word of another language past a form's first word ("del": Spanish "of the",
    // Danish "share") names nothing.
    assert_eq!(pick("Datos del candidato"), None);
    assert_eq!(pick("Del Roadmap"), Some(RiskKind::Sharing));
    // Named by sharing, not mentioning it further on.
    assert_eq!(
        pick("Edit note Ben Okafor. Only the owner can share it."),
        None
    );
    let els = vec![
        el("3", "tab", "Editor").states("selected"),
        el("4", "tab", "Preview"),
        el("6", "link", "Permissions"),
        el("8", "btn", "Save draft"),
    ];
    let cms = "https://cms.example.com/posts/1182/edit";
    assert_eq!(clicked(cms, els, "8", Some("3"), "Edit post"), None);
}

/// Round 12: a page is what its address names last, a single-page app's `#/route` included
/// (`#/checkout/review` pays, `#/transfers/history` lists records).
#[test]
fn a_page_is_what_its_address_names_last() {
    let confirm = |url: &str, name: &str| {
        let els = vec![el("29", "btn", "Edit"), el("30", "btn", name)];
        clicked(url, els, "30", None, "Example")
    };
    assert_eq!(
        confirm("https://shop.example.com/#/checkout/review", "Confirm"),
        Some(RiskKind::Payment)
    );
    assert_eq!(
        confirm("https://bank.example.com/app/#/transfers/new", "OK"),
        Some(RiskKind::Transfer)
    );
    assert_eq!(
        confirm("https://bank.example.com/app/#/transfers/history", "OK"),
        None
    );
    assert_eq!(
        confirm("https://online.example.ru/#/perevod/istoriya", "Да"),
        None
    );
    assert_eq!(
        confirm("https://shop.example.com/payments/history", "Confirm"),
        None
    );
}

/// Round 12: a dialog is a filter by the name it leads with or a filter control beside the
/// chip, not by a "Tags" line it shows; a question before a control is what it answers.
#[test]
fn a_settings_dialog_that_shows_tags_is_no_filter() {
    let public = |dialog: &str, before: &[&str]| {
        let els = vec![
            el("5", "btn", "Edit"),
            el("42", "btn", "Friends").in_dialog(dialog),
            el("43", "btn", "Public").in_dialog(dialog).after(before),
        ];
        clicked(
            "https://photos.example.com/photos/ana/5581",
            els,
            "43",
            None,
            "Sunset",
        )
    };
    let settings = "Photo settings Title: Sunset Tags: beach, latvia Who can see this photo?";
    let asked = ["Friends", "Who can see this photo?", "Tags: beach, latvia"];
    assert_eq!(public(settings, &asked), Some(RiskKind::Sharing));
    assert_eq!(
        public("Filters Visibility Friends Public", &["Filters"]),
        None
    );
    assert_eq!(public(settings, &["Friends", "Tags: beach, latvia"]), None);
    assert_eq!(public("All filters Date Format Public", &["Format"]), None);
}

/// Round 12: text in a box is sent by a submit of its form, except on a page of the user's
/// own account (a courier's note kept with an address); a control that names filtering
/// applies filters, whatever price the list beside it shows.
#[test]
fn an_account_forms_note_is_kept_and_a_filter_button_buys_nothing() {
    let submit = |url: &str| {
        let form = "Add a new address";
        let els = vec![
            el("11", "inp", "Street").value("14 Elm Row").in_form(form),
            el("17", "textarea", "Delivery instructions")
                .value("Leave it with the concierge")
                .in_form(form),
            el("21", "btn", "Confirm").in_form(form),
        ];
        clicked(url, els, "21", None, "Example")
    };
    assert_eq!(
        submit("https://shop.example.com/account/addresses/new"),
        None
    );
    assert_eq!(
        submit("https://shop.example.com/products/42/reviews/new"),
        Some(RiskKind::Sending)
    );
    let apply = |name: &str| {
        let els = vec![
            el("12", "sel", "Max rent").value("€ 1.500 per maand"),
            el("20", "btn", name),
        ];
        clicked(
            "https://www.example-huur.nl/huren",
            els,
            "20",
            None,
            "Huurwoningen",
        )
    };
    assert_eq!(apply("Confirm filters"), None);
    assert_eq!(apply("Confirm"), Some(RiskKind::Subscription));
}

/// Round 12: keeping only the password turns the second step off; connecting an app on an
/// authorisation page answers its request; a link drawn as a control, then a yes, does what
/// the link does; an option named by an act, then a yes, does that act.
#[test]
fn round_twelves_words_and_choices_commit_what_they_name() {
    let second = |option: &str| {
        let els = vec![
            el("22", "radio", "Authenticator app"),
            el("23", "radio", option)
                .states("checked")
                .after(&["How should we check it's you?", "2-Step Verification"]),
            el("30", "btn", "Save"),
        ];
        let url = "https://myaccount.example.com/signinoptions/two-step-verification";
        clicked(url, els, "30", Some("23"), "2-Step Verification")
    };
    assert_eq!(second("Just my password"), Some(RiskKind::Security));
    assert_eq!(second("Text message code"), None);
    let consent = |name: &str| {
        let url =
            "https://connect.example-pay.com/oauth/authorize?client_id=ca_82&scope=read_write";
        let els = vec![el("21", "btn", "Cancel"), el("22", "btn", name)];
        clicked(url, els, "22", None, "Connect your account")
    };
    assert_eq!(consent("Connect my account"), Some(RiskKind::Sharing));
    assert_eq!(consent("Learn more"), None);
    let yes = |link: El| {
        let els = vec![link, el("40", "btn", "Non"), el("41", "btn", "Oui")];
        clicked(
            "https://account.example.com/proofs",
            els,
            "41",
            Some("30"),
            "Sécurité",
        )
    };
    let off = "Désactiver la vérification en deux étapes";
    assert_eq!(yes(el("30", "link", off)), Some(RiskKind::Security));
    assert_eq!(yes(el("30", "link", off).href("/help/2sv")), None);
    let cont = |picked: &str| {
        let els = vec![
            el("30", "radio", "Deactivate account"),
            el("31", "radio", picked).states("checked"),
            el("33", "btn", "Continue"),
        ];
        clicked(
            "https://accounts.example.com/ownership",
            els,
            "33",
            Some("31"),
            "Account",
        )
    };
    assert_eq!(cont("Delete account"), Some(RiskKind::Deletion));
    assert_eq!(cont("Keep my account"), None);
    assert_eq!(
        cont("Delete account — This is permanent. Your posts and messages go for good."),
        Some(RiskKind::Deletion)
    );
    // A way to pay or send, picked, is a method: the act is done elsewhere.
    assert_eq!(cont("Pay at the property"), None);
    assert_eq!(cont("Send by post"), None);
}

/// Round 12: a secret written into a message, a comment or a search goes to people —
/// by its shape (an access key, a card number in groups) or because the user gave it as a
/// password or a one-time code; a promo code or a product's size is no secret. Given as a
/// secret, a value is one in a field of any name, and goes only where it was given.
#[test]
fn a_secret_written_into_text_is_asked_about() {
    let write = |role: &str, name: &str, value: &str, said: &str| {
        let p = page("https://chat.example.com/t/1", vec![el("30", role, name)]);
        let ctx = Context {
            said,
            ..Context::default()
        };
        risk_on(&p, ActionKind::SetValue("30", value), &ctx)
    };
    let key = "my deploy fails with OPENAI_API_KEY=sk-proj-7fQ2xLmA9vT3kR8wZp1cYh4N";
    assert_eq!(
        write("textarea", "Message", key, ""),
        Some(RiskKind::Credentials)
    );
    let card = "Can I pay with 5162 9201 0234 5677 in 3 parts?";
    assert_eq!(
        write("textarea", "Your question", card, card),
        Some(RiskKind::Credentials)
    );
    let said = "Log into my router (admin / Xk92!mqLp), google it if it fails";
    let query = "nighthawk admin password Xk92!mqLp not working";
    assert_eq!(
        write("searchbox", "Search", query, said),
        Some(RiskKind::Credentials)
    );
    assert_eq!(
        write(
            "textarea",
            "Message",
            "Kodenya 739201",
            "kode OTP aku 739201"
        ),
        Some(RiskKind::Credentials)
    );
    assert_eq!(
        write("textarea", "Message", "I'll be there at 7", said),
        None
    );
    assert_eq!(
        write(
            "searchbox",
            "Search",
            "rice 210g 24",
            "log in and search rice 210g 24"
        ),
        None
    );
    assert_eq!(
        write("inp", "Promo", "VERANO15", "use the promo code VERANO15"),
        None
    );
    // Review-12: a year, a booking's reference, the user's own IBAN, a playlist's id are no
    // secrets; a token in an address's user part is one.
    let photos = "Sign in to Example Photos and find my pictures from Lisbon in 2024";
    assert_eq!(write("searchbox", "Search", "Lisbon 2024", photos), None);
    let booking = "sign in to booking.com, my reference is HX7K29QD";
    assert_eq!(
        write("textarea", "Message", "Booking HX7K29QD", booking),
        None
    );
    let iban = "DE89 3704 0044 0532 0130 00";
    let rent = format!("Tell the landlord my IBAN is {iban}");
    let told = format!("My IBAN: {iban}");
    assert_eq!(write("textarea", "Message", &told, &rent), None);
    assert_eq!(
        write("textarea", "Message", &told, ""),
        Some(RiskKind::Credentials)
    );
    let playlist = "https://www.youtube.com/playlist?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf";
    assert_eq!(write("textarea", "Message", playlist, ""), None);
    let remote =
        "git remote add https://ghp_Q8r2TnV5xK0wLm7ZcA3sB9dYf1uJ6pHe4Ri@github.com/acme/app";
    assert_eq!(
        write("textarea", "Comment", remote, ""),
        Some(RiskKind::Credentials)
    );
    // A code is one beside the word for it, not a postcode further on.
    let pin = "My bank PIN is 4821, never share it. Then find the shops near my flat in Paris, \
               the postcode there is 75011";
    assert_eq!(
        write("textarea", "Message", "PIN 4821", pin),
        Some(RiskKind::Credentials)
    );
    assert_eq!(write("searchbox", "Search", "shops 75011", pin), None);
    // A sign-in's "Login" field is no message: the name the user gave goes in.
    let said = "log in as ana2024x with password Qx7-hunter-2";
    assert_eq!(write("inp", "Login", "ana2024x", said), None);
    // Nor the client number the user gave.
    let p = page(
        "https://www.example-bank.pl/logowanie",
        vec![el("21", "inp", "Numer klienta lub login")],
    );
    let ctx = Context {
        said: "Zaloguj się: numer klienta 48213579",
        ..Context::default()
    };
    assert_eq!(
        risk_on(&p, ActionKind::SetValue("21", "48213579"), &ctx),
        None
    );
    // An unnamed field on a look-alike of the bank the code was given for.
    let otp = |url: &str| {
        let p = page(url, vec![el("21", "inp", "")]);
        let ctx = Context {
            said: "Đăng nhập VCB, mã OTP là 604118",
            ..Context::default()
        };
        risk_on(&p, ActionKind::SetValue("21", "604118"), &ctx)
    };
    assert_eq!(
        otp("https://vietcombank-xacthuc.example/otp"),
        Some(RiskKind::Credentials)
    );
    assert_eq!(otp("https://vcbdigibank.vietcombank.com.vn/otp"), None);
}

/// Round 12's paths on the largest inputs: a typed text of 200 000 digit groups in one run
/// (read up to its 512th group), a user's instruction of 100 000 words (read up to the fold's
/// bound), a dialog of 1 900 controls before its way out (elements are read up to the 2 000th),
/// a 40 000-character form name. Each answers as on a small input (16 s in a debug build).
#[test]
fn round_twelves_rules_answer_on_the_largest_inputs() {
    let digits = "1234 ".repeat(200_000);
    // The instruction is read up to the fold's bound: the PIN stands before the padding.
    let said = format!("my PIN is 4821 {}", "word ".repeat(100_000));
    let p = page(
        "https://chat.example.com/t/1",
        vec![el("30", "textarea", "Message")],
    );
    let ctx = Context {
        said: &said,
        ..Context::default()
    };
    assert_eq!(risk_on(&p, ActionKind::SetValue("30", &digits), &ctx), None);
    let card = format!("{digits}5162 9201 0234 5677");
    // Past the 512th group of a run, nothing more is read.
    assert_eq!(risk_on(&p, ActionKind::SetValue("30", &card), &ctx), None);
    assert_eq!(
        risk_on(&p, ActionKind::SetValue("30", "PIN 4821"), &ctx),
        Some(RiskKind::Credentials)
    );
    let dialog = format!("{}?", "Are you sure ".repeat(3_000));
    let mut els = vec![el("40", "btn", "Delete account")];
    els.extend((0..1_900).map(|i| el(&format!("o{i}"), "btn", "Sign out").in_dialog(&dialog)));
    els.push(el("61", "btn", "Keep my account").in_dialog(&dialog));
    els.push(el("62", "btn", "Yes").in_dialog(&dialog));
    let url = "https://shop.example.com/account";
    assert_eq!(
        clicked(url, els, "62", Some("40"), "Account"),
        Some(RiskKind::Deletion)
    );
    let form = format!("Share {}", "x".repeat(40_000));
    let p = page(
        "https://notes.example.com/a",
        vec![el("21", "sel", "").value("Can view").in_dialog(&form)],
    );
    let got = risk_on(
        &p,
        ActionKind::SelectOption("21", "Can edit"),
        &Context::default(),
    );
    assert_eq!(got, Some(RiskKind::Sharing));
}

/// Round 13's look-alikes by their own name: a part glued of several words is read by its
/// last one, as compounds are (`sicherheits|update`, `veron|palautus`), and a lure the user
/// wrote alone ("zawadi") is still the lure's own word; only the whole name as the user wrote
/// it (`toll-collect.de` for "Toll Collect") is the brand's. A compound whose head is no lure
/// is no look-alike.
#[test]
fn a_look_alike_is_dressed_in_a_compounds_head_or_a_lure_the_user_wrote() {
    let typed = |url: &str, said: &str| {
        let p = page(url, vec![el("3", "inp", "PIN").attr("type", "password")]);
        typed_after(&p, "4417", said)
    };
    for (url, said) in [
        (
            "https://sparkasse-sicherheitsupdate.example/pushtan",
            "pushTAN aktualisieren bei der Sparkasse, PIN 4417",
        ),
        (
            "https://omavero-veronpalautus.example/tunnistaudu",
            "hoida veronpalautus, PIN 4417",
        ),
        (
            "https://mpesa-zawadi-safaricom.example/pokea",
            "nimeshinda zawadi ya M-Pesa, PIN 4417",
        ),
        (
            "https://klikbca-verifikasi-akun.example/login",
            "BCA suruh verifikasi akun, PIN 4417",
        ),
    ] {
        assert_eq!(typed(url, said), Some(RiskKind::Credentials), "{url}");
    }
    for (url, said) in [
        (
            "https://stadtwerke-energieversorgung.de/login",
            "bei den Stadtwerken anmelden, PIN 4417",
        ),
        (
            "https://www.toll-collect.de/login",
            "Bei Toll Collect anmelden, PIN 4417",
        ),
    ] {
        assert_eq!(typed(url, said), None, "{url}");
    }
}

/// A sign-in handed over as a pair ("(1087762219 / Najd@1445)") gives its second word for the
/// sign-in, in any language: typed on the service's own site unasked, on a look-alike asked.
/// Written alone, with no word for a password, it is not given.
#[test]
fn a_pair_hands_over_a_sign_in() {
    let typed = |url: &str, said: &str| {
        let p = page(url, vec![el("3", "inp", "كلمة المرور").input("password")]);
        typed_after(&p, "Najd@1445", said)
    };
    let pair = "ادخل أبشر (1087762219 / Najd@1445) وشوف الموعد";
    assert_eq!(typed("https://www.absher.sa/wps/portal/login", pair), None);
    assert_eq!(
        typed("https://absher-tahdeeth.example/login", pair),
        Some(RiskKind::Credentials)
    );
    assert_eq!(
        typed(
            "https://www.absher.sa/wps/portal/login",
            "ادخل أبشر Najd@1445"
        ),
        Some(RiskKind::Credentials)
    );
}

/// A name the user shortened ("impots.gouv") is no site of its own: what they gave for it goes
/// into the service's sign-in, wherever its registry's suffix puts it; a site named whole
/// still binds the secret to itself.
#[test]
fn a_shortened_name_is_no_site() {
    let typed = |url: &str, said: &str| {
        let p = page(url, vec![el("3", "inp", "Mot de passe").input("password")]);
        typed_after(&p, "Hirondelle*2023", said)
    };
    let said = "Connecte-toi à impots.gouv (mdp Hirondelle*2023)";
    assert_eq!(
        typed("https://cfspart.impots.gouv.fr/LoginAccess", said),
        None
    );
    assert_eq!(
        typed(
            "https://cfspart.impots.gouv.fr/LoginAccess",
            "Connecte-toi à impots.gouv.fr.example (mdp Hirondelle*2023)"
        ),
        Some(RiskKind::Credentials)
    );
}

/// A form service's form is nobody's sign-in: a password the user gave for their mail, typed
/// into one, goes to whoever wrote the form. The service's own sign-in is another page.
#[test]
fn a_form_service_is_nobodys_sign_in() {
    let typed = |url: &str| {
        let p = page(url, vec![el("3", "inp", "Current password *")]);
        typed_after(
            &p,
            "Spring-Harbor-77",
            "My email password is Spring-Harbor-77",
        )
    };
    assert_eq!(
        typed("https://docs.google.com/forms/d/e/1FAIpQLSe/viewform"),
        Some(RiskKind::Credentials)
    );
    assert_eq!(
        typed("https://accounts.google.com/v3/signin/challenge/pwd"),
        None
    );
}

/// A review page names its act in its title and shows the amount beside its yes: the yes
/// transfers ("Överföring", "Belopp: 4 500,00 kr", "Godkänn"), a bank's signing verb too
/// ("Ondertekenen"). Without an amount shown, or on a list of records, it does not.
#[test]
fn a_review_pages_title_and_amount_make_its_yes_commit() {
    let yes = |url: &str, amount: &str, button: &str| {
        let p = page(
            url,
            vec![
                el("41", "link", "Till: Erik Lindqvist"),
                el("42", "link", amount),
                el("98", "btn", "Avbryt"),
                el("99", "btn", button),
            ],
        );
        let ctx = Context {
            title: Some("Överföring – Handelsbanken"),
            ..Context::default()
        };
        risk_on(&p, ActionKind::Click("99"), &ctx)
    };
    let bank = "https://secure.handelsbanken.se/bb/seip/servlet/ipko";
    assert_eq!(
        yes(bank, "Belopp: 4 500,00 kr", "Godkänn"),
        Some(RiskKind::Transfer)
    );
    assert_eq!(
        yes(bank, "Belopp: 4 500,00 kr", "Ondertekenen"),
        Some(RiskKind::Transfer)
    );
    assert_eq!(yes(bank, "Meddelande: Stugan juli", "Godkänn"), None);
    assert_eq!(
        yes(
            "https://bank.example.se/transfers/history",
            "Belopp: 4 500,00 kr",
            "Godkänn"
        ),
        None
    );
}

/// A question has two answers: in a dialog that asks about an act by its verb and whose other
/// controls all dismiss it, the one that does not does the act, whatever its own word
/// ("Удалить все данные?" – "Очистить"). A question that names no act by its verb ("Clear all
/// notifications?"), or a dialog with another way on, is left alone.
#[test]
fn the_one_answer_to_a_question_does_its_act() {
    let answer = |question: &str, others: &[&str]| {
        let mut els: Vec<El> = (others.iter().enumerate())
            .map(|(i, n)| el(&format!("5{i}"), "btn", n).in_dialog(question))
            .collect();
        els.push(el("60", "btn", "Очистить").in_dialog(question));
        let p = page("https://www.google.com/android/find/", els);
        risk_on(&p, ActionKind::Click("60"), &Context::default())
    };
    let wipe = "Удалить все данные? Будут удалены все данные на устройстве.";
    assert_eq!(answer(wipe, &["Отмена"]), Some(RiskKind::Deletion));
    assert_eq!(answer("Очистить все уведомления?", &["Отмена"]), None);
    assert_eq!(answer(wipe, &["Отмена", "Заблокировать"]), None);
}

/// A dialog's yes may be named as the dialog begins ("Tambah" in "Tambah pengguna"): it
/// commits the choice just made in it, as a "Save" would (a full administrator's role).
#[test]
fn a_dialogs_own_verb_commits_the_choice_before_it() {
    let dialog = "Tambah pengguna E-mel Peranan";
    let p = page(
        "https://sellercenter.lazada.com.my/account/subaccount",
        vec![
            el("220", "inp", "E-mel")
                .value("hafiz.packing@gmail.com")
                .in_dialog(dialog),
            el("222", "sel", "Peranan")
                .value("Pentadbir (akses penuh termasuk kewangan)")
                .in_dialog(dialog),
            el("232", "btn", "Batal").in_dialog(dialog),
            el("233", "btn", "Tambah").in_dialog(dialog),
        ],
    );
    let chosen = |id: &str| Context {
        focus: p.element(id),
        ..Context::default()
    };
    assert_eq!(
        risk_on(&p, ActionKind::Click("233"), &chosen("222")),
        Some(RiskKind::Sharing)
    );
    let q = page(
        "https://sellercenter.lazada.com.my/account/subaccount",
        vec![
            el("222", "sel", "Peranan")
                .value("Pembungkus pesanan")
                .in_dialog(dialog),
            el("233", "btn", "Tambah").in_dialog(dialog),
        ],
    );
    let packer = Context {
        focus: q.element("222"),
        ..Context::default()
    };
    assert_eq!(risk_on(&q, ActionKind::Click("233"), &packer), None);
}
