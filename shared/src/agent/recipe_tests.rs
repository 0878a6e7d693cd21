use chrono::{TimeZone, Utc};

use super::*;
use crate::domain::facts::fake::{el, FakePage};
use crate::domain::outcome::ExpectedOutcome;
use crate::domain::recipe::run::{Here, Last, Turn};
use crate::domain::recipe::TargetDescription;
use crate::domain::verdict::Verification;
use crate::domain::BeforeState;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap()
}

fn task(query: &str) -> Task {
    Task::new(
        "t1".into(),
        "acme".into(),
        "u1".into(),
        None,
        query.into(),
        "https://shop.test/".into(),
        now(),
        0,
    )
}

/// A record of `action` on `page`, its target described as `role`/`name`.
fn rec(index: u32, action: &str, target: Option<(&str, &str)>, page: &str) -> Step {
    let mut s = crate::domain::Step {
        before_state: Some(BeforeState {
            url: format!("https://shop.test{page}"),
            ..BeforeState::default()
        }),
        expected_outcome: Some(ExpectedOutcome {
            description: "the page changes".into(),
            dom_expectations: Vec::new(),
            target: None,
        }),
        recipe: Some(StepRecipe {
            target: target.map(|(role, name)| TargetDescription {
                role: role.into(),
                name: name.into(),
                nth: 0,
                of: 1,
            }),
            page: page.into(),
            ..StepRecipe::default()
        }),
        ..Step::new(
            "acme",
            "t1",
            index,
            (format!("thinking about {action}"), action.into()),
            now(),
            0,
        )
    };
    if action.starts_with("finish") {
        s.thought = "Ordered 3 mugs.".into();
    }
    s
}

fn verdict(on: u32, success: bool) -> Option<Verification> {
    Some(Verification::new(
        on,
        success,
        0.95,
        "checked".into(),
        now(),
    ))
}

#[test]
fn a_verified_run_becomes_a_recipe_without_its_failed_action_and_with_its_confirmation() {
    let t = task("Order 3 of the \"Blue mug\"");
    let mut steps = [
        rec(0, "click(2)", Some(("link", "red mug")), "/"),
        rec(1, "click(1)", Some(("link", "blue mug")), "/"),
        rec(
            2,
            "setValue(7, \"3\")",
            Some(("inp", "quantity")),
            "/item/*",
        ),
        rec(3, "ask_user()", None, "/item/*"),
        rec(4, "click(9)", Some(("btn", "buy now")), "/item/*"),
        rec(5, "finish()", None, "/done"),
    ];
    steps[1].verification = verdict(0, false);
    steps[2].verification = verdict(1, true);
    steps[4].before_state.as_mut().unwrap().confirmed = true;
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 3600).expect("recorded");
    assert_eq!(r.template, "order {quantity} of the \"{link}\"");
    assert_eq!(r.params, vec!["quantity", "link"]);
    let names: Vec<&str> = r.steps.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(
        names,
        ["click", "setValue", "click", "finish"],
        "the failed click is left out"
    );
    assert_eq!(r.steps[0].target_param.as_deref(), Some("link"));
    // The recorded user's choice is not kept: the target is named by the parameter.
    assert_eq!(
        r.steps[0].target.as_ref().map(|t| t.name.as_str()),
        Some("{link}")
    );
    assert!(!serde_json::to_string(&r).unwrap().contains("blue mug"));
    assert_eq!(r.shapes.len(), 2);
    assert!(r.shapes[1].fits("green mug") && !r.shapes[1].fits("green, red mug"));
    assert_eq!(r.steps[1].value_param.as_deref(), Some("quantity"));
    assert!(
        r.steps[2].confirm,
        "the confirmed purchase stays a confirmation"
    );
    assert!(!r.steps[1].confirm);
    // The recorded run's words are not kept: a replayed finish says what the server did.
    assert_eq!(r.steps[3].value, None);
    assert_eq!(r.steps[3].own_value, None);
    assert!(
        !serde_json::to_string(&r).unwrap().contains("thinking"),
        "no thought is kept"
    );
    assert_eq!(
        r.steps[1].intent,
        "setValue the inp \"quantity\" with {quantity}"
    );
    assert_eq!(r.expires_at, now().timestamp() + 3600);

    // Another run of the same task: other values, the same actions.
    let params = vec![
        ("quantity".to_owned(), "5".to_owned()),
        ("link".to_owned(), "green mug".to_owned()),
    ];
    let mut run = RecipeRun::start(&r, params);
    let home = FakePage {
        url: "https://shop.test/".into(),
        hash: "h".into(),
        els: vec![el("4", "link", "Blue mug"), el("5", "link", "Green mug")],
    };
    let Turn::Act { step: 0, target } = run.next(
        Here {
            page: &home,
            title: None,
        },
        Last::Nothing,
    ) else {
        panic!("replayed");
    };
    assert_eq!(
        action(&run, 0, target.as_deref()).map(|a| a.0).as_deref(),
        Some("click(5)")
    );
    assert_eq!(
        action(&run, 1, Some("8")).map(|a| a.0).as_deref(),
        Some("setValue(8, \"5\")")
    );
    let (finish, said) = action(&run, 3, None).expect("finish");
    assert_eq!(finish, "finish()");
    assert!(
        said.starts_with("Done: the steps recorded for this task"),
        "{said}"
    );
    assert!(
        action(&run, 1, Some("8")).is_some_and(|(_, t)| t.contains("with 5")),
        "the replay's thought names this run's value"
    );
}

#[test]
fn runs_that_cannot_be_replayed_safely_are_not_recorded() {
    let t = task("Sign in and download the invoice");
    // A question for the user's own answer.
    let steps = [
        rec(0, "ask_user()", None, "/"),
        rec(1, "setValue(3, \"4411\")", Some(("inp", "code")), "/"),
        rec(2, "finish()", None, "/"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    assert_eq!(record(&t, &refs, now(), 60), Err(NotRecorded::AskedUser));
    // An action whose target was not described.
    let steps = [rec(0, "click(3)", None, "/"), rec(1, "finish()", None, "/")];
    let refs: Vec<&Step> = steps.iter().collect();
    assert_eq!(
        record(&t, &refs, now(), 60),
        Err(NotRecorded::Undescribed(0))
    );
    // An instruction that is only the user's value would take any other task.
    let steps = [
        rec(
            0,
            "setValue(3, \"wireless headphones\")",
            Some(("inp", "search")),
            "/",
        ),
        rec(1, "finish()", None, "/"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    assert_eq!(
        record(&task("Wireless headphones"), &refs, now(), 60),
        Err(NotRecorded::TooGeneral)
    );
    // An instruction that held a secret (scrubbed to its marker) is not a template.
    let steps = [
        rec(0, "click(3)", Some(("btn", "go")), "/"),
        rec(1, "finish()", None, "/"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    assert_eq!(
        record(
            &task("Sign in with the code [secret] and go"),
            &refs,
            now(),
            60
        ),
        Err(NotRecorded::TooGeneral)
    );
    // Not a web page.
    let mut t2 = task("x");
    t2.goal.url = "about:blank".into();
    assert_eq!(record(&t2, &refs, now(), 60), Err(NotRecorded::NoSite));
}

#[test]
fn a_secret_is_never_kept_and_an_answer_read_off_the_page_is_asked_for_again() {
    let t = task("Look up my order status");
    let mut steps = [
        rec(
            0,
            "setValue(3, \"[secret]\")",
            Some(("inp", "password")),
            "/login",
        ),
        rec(1, "click(4)", Some(("btn", "sign in")), "/login"),
        rec(2, "finish()", None, "/orders"),
    ];
    steps[2].thought = "Order 4411 shipped on 3 March.".into();
    let named = |answer: &str| {
        let mut s = steps.clone();
        s[2].thought = answer.into();
        let refs: Vec<&Step> = s.iter().collect();
        let t = task("Sign in and open my orders");
        record(&t, &refs, now(), 60).expect("recorded").steps[2].own_value == Some(OwnValue::Answer)
    };
    assert!(
        named("The account belongs to Alice Smith."),
        "a name read off the page"
    );
    assert!(!named("Done. Your order status is shown."));
    // A question's answer is the run's finding, whatever its words.
    let question = task("Is the blue mug in stock?");
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&question, &refs, now(), 60).expect("recorded");
    assert!(r.steps[2].own_value == Some(OwnValue::Answer));
    // An address is kept only when it is wholly a value of the instruction.
    let nav = [
        rec(
            0,
            "navigate(\"https://shop.test/u/alice/orders\")",
            None,
            "/",
        ),
        rec(1, "finish()", None, "/orders"),
    ];
    let refs: Vec<&Step> = nav.iter().collect();
    let r = record(&task("Open my orders page"), &refs, now(), 60).expect("recorded");
    assert!(r.steps[0].own_value == Some(OwnValue::Found) && r.steps[0].value.is_none());
    assert!(!serde_json::to_string(&r).unwrap().contains("alice"));
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 60).expect("recorded");
    assert!(r.steps[0].own_value == Some(OwnValue::Secret));
    assert_eq!(r.steps[0].value, None);
    assert!(!serde_json::to_string(&r).unwrap().contains("[secret]"));
    assert!(
        r.steps[2].own_value == Some(OwnValue::Answer),
        "4411 is not in the instruction"
    );
    let run = RecipeRun::start(&r, Vec::new());
    assert_eq!(action(&run, 0, Some("3")), None, "nothing to type");

    // A value the instruction does not give (the model read it off the page) is not kept:
    // the next run's model gives its own.
    let t = task("Book the earliest free slot");
    let steps = [
        rec(
            0,
            "setValue(3, \"2026-12-01\")",
            Some(("inp", "date")),
            "/book",
        ),
        rec(1, "click(4)", Some(("btn", "book")), "/book"),
        rec(2, "finish()", None, "/booked"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 60).expect("recorded");
    assert!(r.steps[0].own_value == Some(OwnValue::Found));
    assert_eq!(r.steps[0].value, None);
    assert!(!serde_json::to_string(&r).unwrap().contains("2026-12-01"));
    let mut run = RecipeRun::start(&r, Vec::new());
    let page = FakePage {
        url: "https://shop.test/book".into(),
        hash: "h".into(),
        els: vec![el("9", "inp", "Date")],
    };
    assert_eq!(
        run.next(
            Here {
                page: &page,
                title: None
            },
            Last::Nothing
        ),
        Turn::Heal {
            step: 0,
            why: crate::domain::recipe::run::Decline::Owned
        }
    );
}

#[test]
fn a_step_is_marked_with_its_target_as_it_can_be_found_again() {
    let page = FakePage {
        url: "https://shop.test/item/42".into(),
        hash: "h".into(),
        els: vec![
            el("1", "btn", "Remove"),
            el("2", "btn", "Remove"),
            el("3", "btn", "Buy now"),
        ],
    };
    let m = mark(&page, "https://shop.test/item/42", None, "click(2)");
    assert_eq!(m.page, "/item/*");
    let t = m.target.expect("described");
    assert_eq!(
        (t.role.as_str(), t.name.as_str(), t.nth, t.of),
        ("btn", "remove", 1, 2)
    );
    assert_eq!(
        mark(&page, "https://shop.test/", None, "scroll(true, 1)").target,
        None
    );
}

#[test]
fn a_target_named_by_a_record_is_picked_by_the_model_on_every_run() {
    // "The latest invoice" was INV-1041 then; next month it is another one, while INV-1041
    // is still listed.
    let t = task("Open my latest invoice and download it");
    let steps = [
        rec(
            0,
            "click(3)",
            Some(("link", "invoice inv-1041")),
            "/invoices",
        ),
        rec(1, "click(7)", Some(("btn", "download pdf")), "/invoices/*"),
        rec(2, "finish()", None, "/invoices/*"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 60).expect("recorded");
    assert!(r.steps[0].own_target && !r.steps[1].own_target);
    assert!(!serde_json::to_string(&r).unwrap().contains("1041"));
    assert_eq!(r.steps[0].intent, "click the link this task calls for");
    let mut run = RecipeRun::start(&r, Vec::new());
    let page = FakePage {
        url: "https://shop.test/invoices".into(),
        hash: "h".into(),
        els: vec![
            el("3", "link", "Invoice INV-1042"),
            el("4", "link", "Invoice INV-1041"),
        ],
    };
    let why = crate::domain::recipe::run::Decline::Owned;
    assert_eq!(
        run.next(
            Here {
                page: &page,
                title: None
            },
            Last::Nothing
        ),
        Turn::Heal {
            step: 0,
            why: why.clone()
        }
    );
    let hint = run.described(0, &why);
    assert!(hint.contains("the link this task calls for"), "{hint}");
    // A lone digit names a place, not a record: "Tab 2" is replayed.
    let steps = [
        rec(0, "click(3)", Some(("link", "tab 2")), "/"),
        rec(1, "finish()", None, "/"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&task("Open the settings tab"), &refs, now(), 60).expect("recorded");
    assert!(!r.steps[0].own_target);
}

#[test]
fn an_instruction_that_asks_for_a_status_gets_the_models_answer() {
    let steps = [
        rec(0, "click(3)", Some(("link", "orders")), "/"),
        rec(1, "finish()", None, "/orders"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let answered = |query: &str| {
        let mut s = steps.clone();
        s[1].thought = "Your order has shipped.".into();
        let refs: Vec<&Step> = s.iter().collect();
        record(&task(query), &refs, now(), 60)
            .expect("recorded")
            .steps[1]
            .own_value
            == Some(OwnValue::Answer)
    };
    assert!(answered("Check my order status"));
    assert!(answered("Find my latest order's status"));
    assert!(answered("Verify that the order went through"));
    assert!(!answered("Open my orders page and cancel the last order"));
    // A question mark asks, whatever the words.
    assert!(answered("The phone number of my manager?"));
    // "Check out" is an act, not a question.
    assert!(!answered("Check out my cart and ship it to my office"));
    drop(refs);
}

#[test]
fn a_target_that_holds_a_value_of_the_instruction_is_not_replayed_for_another() {
    let t = task("Share the report with alice@corp.com");
    let steps = [
        rec(
            0,
            "setValue(3, \"alice@corp.com\")",
            Some(("inp", "people")),
            "/doc",
        ),
        rec(
            1,
            "click(8)",
            Some(("option", "alice ng alice@corp.com")),
            "/doc",
        ),
        rec(2, "click(9)", Some(("btn", "share")), "/doc"),
        rec(3, "finish()", None, "/doc"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 60).expect("recorded");
    assert_eq!(r.template, "share the report with {people}");
    assert!(r.steps[1].own_target && !r.steps[2].own_target);
    assert!(!serde_json::to_string(&r).unwrap().contains("alice"));
    // A short value is not looked for in names: "3" is in too many.
    assert!(!holds_value("add 3 to cart", "3"));
    assert!(holds_value("alice ng alice@corp.com", "Alice@corp.com"));
    assert!(!holds_value("malice@corp.community", "alice@corp.com"));
}

#[test]
fn a_list_named_by_its_options_is_replayed_with_this_runs_choice() {
    // A <select> is named by its options' text, the instruction's value among them. Which list
    // it is does not change with the choice: replayed.
    let t = task("Ship my order by express");
    let steps = [
        rec(
            0,
            "selectOption(4, \"express\")",
            Some(("select", "standard express overnight")),
            "/checkout",
        ),
        rec(1, "click(9)", Some(("btn", "continue")), "/checkout"),
        rec(2, "finish()", None, "/checkout"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 60).expect("recorded");
    assert!(!r.steps[0].own_target, "{:?}", r.steps[0]);
    let param = r.steps[0]
        .value_param
        .clone()
        .expect("the choice is the task's value");
    let mut run = RecipeRun::start(&r, vec![(param, "overnight".into())]);
    let page = FakePage {
        url: "https://shop.test/checkout".into(),
        hash: "h".into(),
        els: vec![
            el("4", "select", "Standard Express Overnight"),
            el("9", "btn", "Continue"),
        ],
    };
    assert_eq!(
        run.next(
            Here {
                page: &page,
                title: None
            },
            Last::Nothing
        ),
        Turn::Act {
            step: 0,
            target: Some("4".into())
        }
    );
    // A box or a field named by a record or by the instruction's value is another one on
    // another run: the model's.
    let t = task("Set the quantity of \"Blue mug\" to 3 and delete my latest invoice");
    let steps = [
        rec(
            0,
            "setValue(3, \"3\")",
            Some(("inp", "quantity blue mug")),
            "/cart",
        ),
        rec(
            1,
            "check(5)",
            Some(("chk", "select invoice inv-1041")),
            "/cart",
        ),
        rec(2, "click(9)", Some(("btn", "blue mug")), "/cart"),
        rec(3, "finish()", None, "/cart"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&t, &refs, now(), 60).expect("recorded");
    assert!(r.steps[0].own_target && r.steps[1].own_target, "{r:?}");
    // A list whose options carry numbers (prices, card endings) too.
    let steps = [
        rec(
            0,
            "selectOption(4, \"express\")",
            Some(("select", "standard $4.99 express $12.99")),
            "/checkout",
        ),
        rec(1, "finish()", None, "/checkout"),
    ];
    let refs: Vec<&Step> = steps.iter().collect();
    let r = record(&task("Ship my order by express"), &refs, now(), 60).expect("recorded");
    assert!(r.steps[0].own_target);
}
