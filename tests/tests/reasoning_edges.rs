//! Edges of the reasoning step found by attacking it: a yes given on another page, a footer
//! cookie link next to consequential buttons, another user's session without `taskId`, a
//! double-sent answer, finish() naming the last plan step, a refused answer with no time left,
//! a failed confirmed action, Enter pressed in a message box.

use std::time::Duration;

use api_tests::expect_error;
use api_tests::flows::{field, next, node, planned, reply, sections, start};
use api_tests::harness::{harness, harness_with, Harness, PW};
use api_tests::scripted::Reply;
use serde_json::{json, Value};

const SHOP: &str = "https://shop.example.com/cart";

#[tokio::test]
async fn a_yes_given_on_another_page_runs_nothing() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Pay.", "click(10)"),
        Reply::action("This is another site; I stop.", "finish()"),
    ]);
    let b1 = start("Pay my cart", SHOP, vec![node("10", "btn", "Pay now")]);
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "ask_user()");
    // The user switched tabs: id 10 exists there too, as something else.
    let bank = vec![node("10", "btn", "Transfer")];
    let r2 = h
        .ok(&reply(&b1, &r1, "https://bank.example/", bank, "yes"))
        .await;
    assert_ne!(r2["action"], "click(10)", "{r2}");
    // The model's answer, and the finish check (nothing was done on the page).
    assert_eq!(r2["metrics"]["llmCalls"], 2);
    assert_eq!(h.llm.verdict_requests().len(), 1);
    assert!(h
        .llm
        .user_prompt(1)
        .contains("the confirmed action cannot run on this page"));
}

#[tokio::test]
async fn cookie_banners_are_dismissed_but_a_cookie_link_makes_no_banner() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Open the menu.", "click(5)"),
        Reply::action("Accept it.", "click(1)"),
    ]);
    let banner = vec![
        node("5", "link", "Menu"),
        node("7", "link", "Cookie settings"),
        node("8", "btn", "Accept all cookies"),
        node("9", "btn", "Reject all"),
    ];
    let b1 = start(
        "Find the opening hours",
        "https://cafe.example.com/",
        banner,
    );
    let r1 = h.ok(&b1).await;
    assert_eq!(
        (&r1["action"], &r1["metrics"]["llmCalls"]),
        (&json!("click(9)"), &json!(0))
    );
    let r2 = h
        .ok(&next(
            &b1,
            &r1,
            "https://cafe.example.com/",
            vec![node("5", "link", "Menu")],
        ))
        .await;
    assert_eq!(r2["action"], "click(5)");

    let mut invitations = vec![node("1", "btn", "Accept"), node("2", "btn", "Decline")];
    invitations.extend((10..20).map(|i| node(&i.to_string(), "link", "Profile")));
    invitations.push(node("30", "link", "Cookie Policy"));
    let r = h
        .ok(&start(
            "Show my invitations",
            "https://social.example.com/",
            invitations,
        ))
        .await;
    assert_eq!(
        (&r["action"], &r["metrics"]["llmCalls"]),
        (&json!("click(1)"), &json!(1)),
        "the model decided"
    );
}

#[tokio::test]
async fn another_users_session_without_task_id_reaches_nothing() {
    let h = harness().await;
    h.llm
        .push([Reply::action("Which one?", "ask_user(\"Which colour?\")")]);
    let b1 = start("Pick a shirt", SHOP, vec![node("10", "btn", "Red")]);
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["status"], "needs_user_input");
    h.app.seed_user("acme", "eve@acme.com", PW).await;
    let eve = h.app.login("eve@acme.com", PW).await;
    let answer = json!({ "url": SHOP, "query": "Blue", "sessionId": r1["sessionId"], "interactiveTree": [node("10", "btn", "Red")] });
    expect_error(
        h.interact_with(&answer, &eve, None).await,
        404,
        "SESSION_NOT_FOUND",
    )
    .await;
    h.app.seed_user("other", "mallory@other.com", PW).await;
    let mallory = h.app.login("mallory@other.com", PW).await;
    expect_error(
        h.interact_with(&answer, &mallory, None).await,
        409,
        "SESSION_ID_TAKEN",
    )
    .await;
    let task = h.task(&r1).await;
    assert_eq!(
        (task.stored.step_count, task.status.asks_user()),
        (1, true),
        "the task still waits for its user"
    );
}

#[tokio::test]
async fn a_double_sent_answer_is_busy_not_a_second_task() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Which one?", "ask_user(\"Which colour?\")"),
        Reply::Slow(
            Duration::from_millis(800),
            "<Thought>Blue.</Thought><Action>click(11)</Action>".into(),
        ),
    ]);
    let page = vec![node("10", "btn", "Red"), node("11", "btn", "Blue")];
    let r1 = h.ok(&start("Pick a shirt", SHOP, page.clone())).await;
    let answer = json!({ "url": SHOP, "query": "Blue", "sessionId": r1["sessionId"], "interactiveTree": page });
    let (a, b) = tokio::join!(h.interact(&answer), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        h.interact(&answer).await
    });
    assert_eq!(a.status(), 200);
    expect_error(b, 409, "TASK_BUSY").await;
    assert_eq!(h.llm.requests().len(), 2, "the second copy asked no model");
}

/// "Turn on dark mode" started on a page with a Settings link, the finish judge scripted to
/// say no twice: the first request and its answer, and the settings page.
async fn dark_mode_judged_no_twice(h: &Harness) -> (Value, Value, Vec<Value>) {
    h.llm.push_verdicts([
        Reply::verdict(false, 0.9, "still off"),
        Reply::verdict(false, 0.9, "still off"),
    ]);
    let b1 = start(
        "Turn on dark mode",
        SHOP,
        vec![node("10", "link", "Settings")],
    );
    let r1 = h.ok(&b1).await;
    (b1, r1, vec![node("20", "switch", "Dark mode")])
}

#[tokio::test]
async fn finish_naming_the_last_plan_step_is_still_checked() {
    let h = harness().await;
    let again =
        |thought: &str| sections(&[("Thought", thought), ("Step", "2"), ("Action", "finish()")]);
    h.llm.push([
        planned(
            &["Open the settings", "Turn on dark mode"],
            1,
            "Open.",
            "click(10)",
        ),
        again("Done."),
        again("Really done."),
        again("Certainly done."),
    ]);
    let (b1, r1, settings) = dark_mode_judged_no_twice(&h).await;
    let b2 = next(
        &b1,
        &r1,
        "https://shop.example.com/settings",
        settings.clone(),
    );
    let r2 = h.ok(&b2).await;
    // Checked both times (naming the last step completed nothing); told twice, the model gets
    // a server round and the task goes on.
    assert_eq!(h.llm.verdict_requests().len(), 2);
    assert_eq!(
        (r2["action"].as_str(), r2["status"].as_str()),
        (Some("wait(1)"), Some("executing"))
    );
    assert_eq!(r2["metrics"]["interventions"], json!(["finish_refused"]));
    // Finishing a third time, its word stands: no "Is the task complete?" for the user, and no
    // third check.
    let r3 = h
        .ok(&next(
            &b2,
            &r2,
            "https://shop.example.com/settings",
            settings,
        ))
        .await;
    assert_eq!(
        (r3["action"].as_str(), r3["status"].as_str()),
        (Some("finish()"), Some("completed"))
    );
    assert_eq!(r3["thought"], "Certainly done.");
    assert_eq!(h.llm.verdict_requests().len(), 2);
}

#[tokio::test]
async fn a_server_tool_between_refused_finishes_does_not_start_their_count_again() {
    // Finish, refused; a note kept with remember(); finish, refused: two in a row still — the
    // third stands (else a judge that keeps saying no ends the task in a tool streak).
    let h = harness().await;
    h.llm.push([
        planned(
            &["Open the settings", "Turn on dark mode"],
            1,
            "Open.",
            "click(10)",
        ),
        Reply::action("Done.", "finish()"),
        Reply::action("I note it.", "remember(\"mode\", \"dark\")"),
        Reply::action("Really done.", "finish()"),
        Reply::action("Certainly done.", "finish()"),
    ]);
    let (b1, r1, settings) = dark_mode_judged_no_twice(&h).await;
    let url = "https://shop.example.com/settings";
    let b2 = next(&b1, &r1, url, settings.clone());
    let r2 = h.ok(&b2).await;
    assert_eq!(h.llm.verdict_requests().len(), 2, "{r2}");
    let r3 = h.ok(&next(&b2, &r2, url, settings)).await;
    assert_eq!(
        (r3["action"].as_str(), r3["status"].as_str()),
        (Some("finish()"), Some("completed")),
        "{r3}"
    );
    assert_eq!(h.llm.verdict_requests().len(), 2);
}

#[tokio::test]
async fn a_form_left_unsent_is_never_taken_as_done() {
    // The instruction names Submit, the page still shows it, nothing pressed it, and the last
    // action filled a field: the finish is refused every time, without asking a judge, and a
    // model that keeps finishing ends failed with Submit named, never "completed".
    let h = harness().await;
    h.llm.push([
        Reply::action("I type the name.", "setValue(1, \"Ada\")"),
        Reply::action("Done.", "finish()"),
        Reply::action("Done, really.", "finish()"),
        Reply::action("Done, I said.", "finish()"),
        Reply::action("Done!", "finish()"),
        Reply::action("Done, truly.", "finish()"),
        Reply::action("Done, at last.", "finish()"),
    ]);
    let form = |v: &str| vec![field("1", "inp", "Name", v, ""), node("2", "btn", "Submit")];
    let b1 = start("Enter Ada as the name and press Submit", SHOP, form(""));
    let r1 = h.ok(&b1).await;
    let b2 = next(&b1, &r1, SHOP, form("Ada"));
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["action"], "wait(1)", "{r2}");
    assert_eq!(r2["metrics"]["interventions"], json!(["finish_refused"]));
    // Three requests in a row without an accepted answer end the task.
    let b3 = next(&b2, &r2, SHOP, form("Ada"));
    let r3 = h.ok(&b3).await;
    assert_eq!(r3["status"], "executing", "{r3}");
    let r3 = h.ok(&next(&b3, &r3, SHOP, form("Ada"))).await;
    assert_eq!(r3["status"], "failed", "{r3}");
    assert!(
        r3["thought"].as_str().is_some_and(|t| t.contains("submit")),
        "{r3}"
    );
    assert_eq!(h.llm.verdict_requests().len(), 0, "the evidence settles it");
}

#[tokio::test]
async fn a_refused_answer_without_time_left_ends_in_a_server_round_and_keeps_the_resume_note() {
    let h = harness_with(|o| {
        o.set("STEP_DEADLINE_MS", "5000")
            .set("LLM_TIMEOUT_MS", "20000")
    })
    .await;
    let b1 = api_tests::flows::capable(start(
        "Search lamps",
        "https://shop.example.com/",
        vec![node("5", "frame", "reCAPTCHA"), node("1", "btn", "Search")],
    ));
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["status"], "awaiting_user");
    let (sid, tid) = (
        r1["sessionId"].as_str().expect("s"),
        r1["taskId"].as_str().expect("t"),
    );
    let resumed = h
        .resume(
            sid,
            tid,
            &json!({ "resolutionMethod": "provide_in_chat", "resolutionData": "I solved it" }),
        )
        .await;
    assert_eq!(resumed.status(), 200);
    h.llm.push([
        Reply::Slow(Duration::from_millis(1_200), "no action here".into()),
        Reply::action("Search.", "click(1)"),
    ]);
    let b2 = next(
        &b1,
        &r1,
        "https://shop.example.com/",
        vec![node("1", "btn", "Search")],
    );
    let r2 = h.ok(&b2).await;
    assert_eq!(
        (&r2["status"], &r2["toolAction"]["toolName"]),
        (&json!("executing"), &json!("continue"))
    );
    let r3 = h
        .ok(&next(
            &b2,
            &r2,
            "https://shop.example.com/",
            vec![node("1", "btn", "Search")],
        ))
        .await;
    assert_eq!(r3["action"], "click(1)");
    assert!(h.llm.user_prompt(1).contains(
        "The user resumed the task: the user provided what was needed in the chat: I solved it"
    ));
}

#[tokio::test]
async fn a_failed_confirmed_action_is_not_redone_without_asking() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Send it.", "click(7)"),
        Reply::action("Send again.", "click(7)"),
    ]);
    let page = || {
        vec![
            node("6", "inp", "Message"),
            node("7", "btn", "Send message"),
        ]
    };
    let b1 = start("Reply to Bob", "https://mail.example.com/", page());
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["action"], "ask_user()");
    let b2 = reply(&b1, &r1, "https://mail.example.com/", page(), "yes");
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["action"], "click(7)");
    let mut b3 = next(&b2, &r2, "https://mail.example.com/", page());
    b3["lastActionStatus"] = json!("failure");
    b3["lastActionError"] =
        json!({ "code": "ACTION_FAILED", "message": "not clickable", "action": "click(7)" });
    let r3 = h.ok(&b3).await;
    assert_eq!(r3["verification"]["success"], false);
    assert_ne!(
        r3["action"], "press(\"Enter\")",
        "no rule redoes a confirmed send"
    );
    assert_eq!(
        r3["action"], "ask_user()",
        "the model's retry is asked about again"
    );
}

#[tokio::test]
async fn enter_in_a_message_box_is_asked_about_like_its_send_button() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Type.", "setValue(6, \"Hi Bob\")"),
        Reply::action("Send with Enter.", "press(\"Enter\")"),
    ]);
    let page = |v: &str| {
        vec![
            api_tests::flows::field("6", "inp", "Message", v, ""),
            node("7", "btn", "Send"),
        ]
    };
    let b1 = start("Say hi to Bob", "https://mail.example.com/", page(""));
    let r1 = h.ok(&b1).await;
    let r2 = h
        .ok(&next(&b1, &r1, "https://mail.example.com/", page("Hi Bob")))
        .await;
    assert_eq!(r2["action"], "ask_user()");
    assert!(r2["userQuestion"]
        .as_str()
        .expect("q")
        .contains("press Enter, which would submit the form with \"Send\""));
}
