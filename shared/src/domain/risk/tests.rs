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
        Some(RiskKind::Payment)
    );
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
        (
            "https://news.example/unsubscribe?u=5",
            Some(RiskKind::Deletion),
        ),
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
