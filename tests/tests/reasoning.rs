//! The reasoning step through local-api's router with a scripted model: the plan, verification
//! of every previous action (rules first, the verification model only when ambiguous),
//! self-correction, the loop guard, the finish check and the prompt's stable prefix.

use api_tests::flows::{failing, field, next, node, on_store, planned, sections, start};
use api_tests::harness::{harness, Harness};
use api_tests::scripted::Reply;
use serde_json::{json, Value};

const SHOP: &str = "https://shop.example.com/";

/// Plan steps' statuses.
fn statuses(r: &Value) -> Vec<&str> {
    r["plan"]["steps"]
        .as_array()
        .expect("plan")
        .iter()
        .filter_map(|s| s["status"].as_str())
        .collect()
}

async fn a_planned_task_is_verified_by_rules_and_completes_its_plan(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o).await;
    let plan = [
        "Type the product name",
        "Open the first result",
        "Read the price",
    ];
    h.llm.push([
        planned(&plan, 1, "I type the name.", "setValue(1, \"lamp\")"),
        sections(&[
            ("Thought", "Now search."),
            ("Step", "1"),
            ("Action", "click(2)"),
        ]),
        sections(&[
            ("Thought", "Open it."),
            ("Step", "2"),
            ("Action", "click(5)"),
        ]),
        sections(&[
            ("Thought", "The price is 20 EUR."),
            ("Step", "3"),
            ("Action", "finish()"),
        ]),
    ]);
    let page = || vec![node("1", "inp", "Search"), node("2", "btn", "Go")];
    let b1 = start("What does the lamp cost?", SHOP, page());
    let r1 = h.ok(&b1).await;
    assert_eq!(r1["status"], "executing");
    assert_eq!(
        (&r1["currentStep"], &r1["totalSteps"]),
        (&json!(0), &json!(3))
    );
    assert_eq!(r1["plan"]["steps"][0]["id"], "step_0");
    assert_eq!(r1["plan"]["steps"][2]["description"], "Read the price");
    assert_eq!(r1["plan"]["steps"][0]["toolType"], "DOM");
    assert!(r1["plan"]["createdAt"].is_string() && r1["plan"]["currentStepIndex"] == 0);
    assert!(
        r1["plan"]["steps"][0].get("attempts").is_none(),
        "no field beyond the contract"
    );
    assert_eq!(statuses(&r1), ["active", "pending", "pending"]);
    assert_eq!(r1["taskType"], "web_only");
    assert!(r1.get("verification").is_none(), "nothing to verify yet");
    let expected = &r1["expectedOutcome"];
    assert!(
        expected["description"]
            .as_str()
            .expect("d")
            .contains("Search"),
        "{expected}"
    );
    assert_eq!(
        expected["domExpectations"],
        json!([{ "type": "value_equals", "elementId": "1", "value": "lamp" }])
    );
    assert!(h
        .llm
        .user_prompt(0)
        .contains("start your answer with a <Plan>"));

    // The field holds the text: the rules confirm it, no model is asked.
    let mut filled = page();
    filled[0]["v"] = json!("lamp");
    let b2 = next(&b1, &r1, SHOP, filled);
    let r2 = h.ok(&b2).await;
    let v = &r2["verification"];
    assert_eq!(
        (&v["stepIndex"], &v["success"]),
        (&json!(0), &json!(true)),
        "{v}"
    );
    assert!(v["confidence"].as_f64().expect("c") >= 0.7);
    assert!(v.get("byModel").is_none() && v["timestamp"].is_string());
    assert!(v["expectedState"].is_string() && v["actualState"].is_string());
    assert_eq!(r2["currentStep"], 0, "still typing and searching");
    assert!(h
        .llm
        .user_prompt(1)
        .contains("Verdict on the last action: it worked"));
    assert!(!h
        .llm
        .user_prompt(1)
        .contains("start your answer with a <Plan>"));

    // The URL changed: the click worked; the model moves on to plan step 2.
    let results = format!("{SHOP}search?q=lamp");
    let b3 = next(
        &b2,
        &r2,
        &results,
        vec![node("5", "link", "Lamp X"), node("6", "link", "Lamp Y")],
    );
    let r3 = h.ok(&b3).await;
    assert_eq!(r3["verification"]["success"], true);
    assert_eq!(r3["currentStep"], 1);
    assert_eq!(statuses(&r3), ["completed", "active", "pending"]);

    let b4 = next(
        &b3,
        &r3,
        &format!("{SHOP}p/lamp-x"),
        vec![node("7", "btn", "Add to wishlist")],
    );
    let r4 = h.ok(&b4).await;
    assert_eq!(
        (r4["action"].as_str(), r4["status"].as_str()),
        (Some("finish()"), Some("completed"))
    );
    assert_eq!(statuses(&r4), ["completed", "completed", "completed"]);
    // Plan step 3 was still open when finish() came: checked (the scripted verifier agrees);
    // every action's verdict came from the rules.
    let asked = h.llm.verdict_requests();
    assert_eq!(asked.len(), 1);
    assert!(asked[0]["messages"][1]["content"]
        .as_str()
        .expect("q")
        .contains("is the task complete"));
    for r in [&r2, &r3, &r4] {
        assert!(r["verification"].get("byModel").is_none(), "{r}");
    }
    assert!(
        r4.get("expectedOutcome").is_none(),
        "finish() has no page outcome"
    );

    // The task's state was stored with its steps.
    let task_id = r1["taskId"].as_str().expect("id");
    let task = h.task(&r1).await;
    assert_eq!(task.goal.plan.as_ref().map(|p| p.steps.len()), Some(3));
    assert!(task.usage.prompt_tokens > 0 && task.usage.completion_tokens == 100);
    let steps = h.app.ctx.store.steps("acme", task_id).await.expect("steps");
    assert_eq!(
        steps[1].verification.as_ref().map(|v| v.step_index),
        Some(0)
    );
    assert!(steps[0].expected_outcome.is_some());
}

#[tokio::test]
async fn ambiguous_outcomes_go_to_the_verification_model() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Open the details.", "click(10)"),
        Reply::action("Try the other button.", "click(11)"),
        Reply::action("Done.", "finish()"),
    ]);
    h.llm.push_verdicts([
        Reply::verdict(false, 0.8, "nothing opened"),
        Reply::verdict(true, 0.6, "probably opened"),
    ]);
    let page = || vec![node("10", "btn", "Show details"), node("11", "btn", "More")];
    let mut b1 = start("Show the details", SHOP, page());
    b1["pageTitle"] = json!("Details");
    let r1 = h.ok(&b1).await;
    // Same page, no error: only a model can tell.
    let b2 = next(&b1, &r1, SHOP, page());
    let r2 = h.ok(&b2).await;
    let v = &r2["verification"];
    assert_eq!(
        (&v["success"], &v["byModel"], &v["reason"]),
        (&json!(false), &json!(true), &json!("nothing opened"))
    );
    let c = &r2["correction"];
    assert_eq!(c["strategy"], "ALTERNATIVE_SELECTOR");
    assert_eq!(
        (&c["attemptNumber"], &c["stepIndex"]),
        (&json!(1), &json!(0))
    );
    assert_eq!(
        (&c["originalStep"], &c["correctedStep"]),
        (&json!("click(10)"), &json!("click(11)"))
    );
    assert_eq!(r2["status"], "correcting");
    assert!(h
        .llm
        .user_prompt(1)
        .contains("Server note: The last action failed: nothing opened"));
    let asked = h.llm.verdict_requests();
    assert_eq!(
        asked[0]["model"], "scripted-verifier",
        "LLM_VERIFY_MODEL is used"
    );
    let q = asked[0]["messages"][1]["content"].as_str().expect("q");
    assert!(
        q.contains("Action taken: click(10)")
            && q.contains("<page")
            && q.contains("title=\"Details\""),
        "{q}"
    );

    // Below 0.70 a yes does not count, and is no failure either: unconfirmed, with no
    // correction, no attempt and no failed verdict among the step's interventions.
    let r3 = h.ok(&next(&b2, &r2, SHOP, page())).await;
    assert_eq!(
        (
            &r3["verification"]["success"],
            &r3["verification"]["unconfirmed"],
            &r3["verification"]["confidence"]
        ),
        (&json!(false), &json!(true), &json!(0.5))
    );
    assert!(r3.get("correction").is_none(), "{r3}");
    assert!(r3["metrics"].get("interventions").is_none(), "{r3}");
    assert!(h
        .llm
        .user_prompt(2)
        .contains("Verdict on the last action: unconfirmed"));
}

#[tokio::test]
async fn a_click_that_only_retitles_the_page_worked_without_a_judge() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Search.", "click(11)"),
        Reply::action("Open it.", "click(10)"),
    ]);
    let page = || vec![node("10", "inp", "Search"), node("11", "btn", "Search")];
    let mut b1 = start("Search for red shoes", SHOP, page());
    b1["pageTitle"] = json!("Shop");
    let r1 = h.ok(&b1).await;
    // The same elements, no mutation reported: only the title says the search ran.
    let mut b2 = next(&b1, &r1, SHOP, page());
    b2["pageTitle"] = json!("Results: red shoes");
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["verification"]["success"], true, "{r2}");
    assert!(r2.get("correction").is_none(), "{r2}");
    assert!(h.llm.verdict_requests().is_empty(), "no judge needed");
}

#[tokio::test]
async fn failures_get_their_strategy_three_times_then_the_task_stops() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Continue.", "click(10)"),
        Reply::action("Continue again.", "click(10)"),
        Reply::action("Something else.", "click(20)"),
    ]);
    let b1 = start(
        "Go on to the next page",
        SHOP,
        vec![node("10", "btn", "Continue")],
    );
    let r1 = h.ok(&b1).await;
    assert_eq!(
        r1["totalSteps"], 1,
        "no plan in the answer: the task is the plan"
    );
    assert_eq!(
        r1["plan"]["steps"][0]["description"],
        "Go on to the next page"
    );

    // A timeout: wait and retry, decided without the model.
    let b2 = failing(
        next(&b1, &r1, SHOP, vec![node("10", "btn", "Continue")]),
        "TIMEOUT",
        "timed out",
        "click(10)",
    );
    let r2 = h.ok(&b2).await;
    assert_eq!(
        (r2["action"].as_str(), r2["status"].as_str()),
        (Some("wait(2)"), Some("correcting"))
    );
    assert_eq!(r2["correction"]["strategy"], "RETRY_WITH_DELAY");
    assert_eq!(
        (&r2["verification"]["success"], &r2["metrics"]["llmCalls"]),
        (&json!(false), &json!(0))
    );

    let r3 = h
        .ok(&next(&b2, &r2, SHOP, vec![node("10", "btn", "Continue")]))
        .await;
    assert_eq!(r3["verification"]["success"], true, "the wait completed");
    assert_eq!(r3["action"], "click(10)");

    // The element is gone but a twin with the same role and name is there.
    let b4 = failing(
        next(&b2, &r3, SHOP, vec![node("20", "btn", "Continue")]),
        "ELEMENT_NOT_FOUND",
        "no element 10",
        "click(10)",
    );
    let r4 = h.ok(&b4).await;
    assert_eq!(r4["action"], "click(20)");
    assert_eq!(
        (
            &r4["correction"]["strategy"],
            &r4["correction"]["attemptNumber"]
        ),
        (&json!("ALTERNATIVE_SELECTOR"), &json!(2))
    );

    // The third failure on this plan step asks for a new plan.
    let b5 = failing(
        next(&b4, &r4, SHOP, vec![node("20", "btn", "Continue")]),
        "ACTION_FAILED",
        "not clickable",
        "click(20)",
    );
    let r5 = h.ok(&b5).await;
    assert_eq!(
        (
            &r5["correction"]["strategy"],
            &r5["correction"]["attemptNumber"]
        ),
        (&json!("UPDATE_PLAN"), &json!(3))
    );
    assert!(h
        .llm
        .user_prompt(2)
        .contains("start your answer with a new <Plan>"));
    assert_eq!(r5["status"], "correcting");

    // The model gave no new plan and the step fails a fourth time: the task stops.
    let b6 = failing(
        next(&b5, &r5, SHOP, vec![node("20", "btn", "Continue")]),
        "ACTION_FAILED",
        "not clickable",
        "click(20)",
    );
    let r6 = h.ok(&b6).await;
    assert_eq!(
        (r6["action"].as_str(), r6["status"].as_str()),
        (Some("fail()"), Some("failed"))
    );
    assert!(
        r6["thought"].as_str().expect("t").contains("could not get"),
        "{}",
        r6["thought"]
    );
    assert_eq!(statuses(&r6), ["failed"]);
    assert_eq!(
        h.llm.requests().len(),
        3,
        "three decisions were the rules' own"
    );
}

#[tokio::test]
async fn a_dead_submit_goes_back_to_the_model_and_a_lost_target_is_searched_for() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Search.", "click(2)"),
        Reply::action("Type the query first.", "setValue(1, \"lamps\")"),
        Reply::action("Next page.", "click(5)"),
    ]);
    h.llm
        .push_verdicts([Reply::verdict(false, 0.9, "the query was not sent")]);
    let page = || vec![node("1", "inp", "Query"), node("2", "btn", "Search")];
    let b1 = start("Find lamps", SHOP, page());
    let r1 = h.ok(&b1).await;
    let b2 = next(&b1, &r1, SHOP, page());
    let r2 = h.ok(&b2).await;
    // Not Enter (it submits nothing with the shipping client): the model is told why.
    assert_eq!(
        (r2["action"].as_str(), &r2["correction"]["strategy"]),
        (Some("setValue(1, \"lamps\")"), &json!("ALTERNATIVE_TOOL"))
    );
    assert!(h
        .llm
        .user_prompt(1)
        .contains("a required field may be empty or invalid"));
    let results = vec![
        node("5", "link", "Results page 2"),
        node("6", "link", "Lamp"),
    ];
    let b3 = next(&b2, &r2, &format!("{SHOP}?q=lamps"), results);
    let r3 = h.ok(&b3).await;
    assert_eq!(r3["verification"]["success"], true);
    let b4 = failing(
        next(
            &b3,
            &r3,
            &format!("{SHOP}?q=lamps"),
            vec![node("6", "link", "Lamp")],
        ),
        "ELEMENT_NOT_FOUND",
        "gone",
        "click(5)",
    );
    let r4 = h.ok(&b4).await;
    assert_eq!(
        (r4["action"].as_str(), &r4["correction"]["strategy"]),
        (
            Some("findText(\"Results page 2\")"),
            &json!("GATHER_INFORMATION")
        )
    );
}

/// A paged list: "Next" and "Back" keep their ids; the link names page `k`.
fn paged(k: usize) -> Vec<Value> {
    vec![
        node("10", "btn", "Next"),
        node("11", "btn", "Back"),
        node("12", "link", &format!("Page {k}")),
    ]
}

/// "Next" clicked on a first page that never changes: the model's third click(10) is refused
/// and its next answer, click(11), goes out. The last request and answer.
async fn stuck_on_the_first_page(h: &Harness) -> (Value, Value) {
    h.llm.push([
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Back then.", "click(11)"),
    ]);
    let b1 = start("Page through", SHOP, paged(0));
    let mut r = h.ok(&b1).await;
    let mut b = b1;
    for _ in 1..=2 {
        b = next(&b, &r, SHOP, paged(0));
        r = h.ok(&b).await;
    }
    (b, r)
}

#[tokio::test]
async fn a_next_button_that_keeps_its_id_pages_on_and_a_click_that_changes_nothing_loops() {
    let h = harness().await;
    // Competent: "Next" keeps its id and each click shows the next page — four in a row.
    h.llm.push([
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
    ]);
    let b1 = start("Page through", SHOP, paged(0));
    let mut r = h.ok(&b1).await;
    let mut b = b1;
    for k in 1..=3 {
        b = next(&b, &r, SHOP, paged(k));
        r = h.ok(&b).await;
        assert_eq!(r["action"], "click(10)", "click {k} went through");
    }
    assert!(r["metrics"].get("interventions").is_none(), "{r}");

    // Stuck: the same click changes nothing — the third is refused, the model told.
    let h = harness().await;
    let (mut b, mut r) = stuck_on_the_first_page(&h).await;
    h.llm.push([Reply::action("Next.", "click(10)")]);
    assert_eq!(
        r["action"], "click(11)",
        "the third click(10) on an unchanged page was not returned"
    );
    assert_eq!(r["metrics"]["interventions"], json!(["loop"]));
    let retry = h.llm.requests()[3]["messages"]
        .as_array()
        .expect("m")
        .clone();
    let note = retry
        .last()
        .and_then(|m| m["content"].as_str())
        .expect("note");
    assert!(
        note.contains("it would repeat a loop (the same action three times in a row)"),
        "{note}"
    );
    // Still nothing changes, and the model keeps going back to the same click: asked again
    // with notes that say more, each request without an accepted answer ends its round (the
    // task goes on), and only the third such request in a row ends the task.
    h.llm.push([
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
    ]);
    for round in 1..=2 {
        b = next(&b, &r, SHOP, paged(0));
        r = h.ok(&b).await;
        assert_eq!(
            r["status"], "executing",
            "round {round} without an accepted answer ends the round, not the task: {r}"
        );
    }
    b = next(&b, &r, SHOP, paged(0));
    r = h.ok(&b).await;
    let notes = h.llm.last_messages();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2 refused answers in a row")),
        "{notes:#?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("4 refused answers in a row")
                && n.contains("the task ends")
                && n.contains("fail(")),
        "{notes:#?}"
    );
    assert_eq!(
        (r["action"].as_str(), r["status"].as_str()),
        (Some("fail()"), Some("failed"))
    );
    assert!(r["thought"]
        .as_str()
        .expect("t")
        .contains("could not find a next step"));
}

#[tokio::test]
async fn a_model_that_finishes_again_after_the_check_is_taken_at_its_word() {
    let h = harness().await;
    let plan = ["Open the settings", "Turn on dark mode"];
    h.llm.push([
        planned(&plan, 1, "Open the settings.", "click(10)"),
        Reply::action("It is done.", "finish()"),
        Reply::action("It is on: the switch shows it.", "finish()"),
    ]);
    h.llm
        .push_verdicts([Reply::verdict(false, 0.9, "the page does not show it")]);
    let b1 = start(
        "Turn on dark mode",
        SHOP,
        vec![node("10", "link", "Settings")],
    );
    let r1 = h.ok(&b1).await;
    let b2 = next(
        &b1,
        &r1,
        SHOP,
        vec![field("20", "switch", "Dark mode", "", "checked")],
    );
    let r2 = h.ok(&b2).await;
    // Refused once (the model was told), then taken: never "Is the task complete?".
    assert_eq!(
        (r2["action"].as_str(), r2["status"].as_str()),
        (Some("finish()"), Some("completed")),
        "{r2}"
    );
    assert!(r2.get("userQuestion").is_none(), "{r2}");
    assert_eq!(r2["metrics"]["interventions"], json!(["finish_refused"]));
}

#[tokio::test]
async fn an_answer_read_from_page_text_is_judged_only_on_what_a_page_without_text_shows() {
    let h = harness().await;
    let plan = [
        "Search the shop",
        "Compare the prices",
        "Report the cheapest",
    ];
    h.llm.push([
        planned(&plan, 1, "Search.", "click(10)"),
        Reply::action(
            "The cheapest is Ridge 2.",
            "finish(\"The cheapest is Ridge 2 at $89\")",
        ),
    ]);
    let b1 = start(
        "Which tent is cheapest?",
        SHOP,
        vec![node("10", "btn", "Search")],
    );
    let r1 = h.ok(&b1).await;
    let b2 = next(&b1, &r1, SHOP, vec![node("10", "btn", "Search")]);
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["status"], "completed", "{r2}");
    assert!(
        r2["thought"].as_str().is_some_and(|t| t.contains("$89")),
        "{r2}"
    );
    // The prices are text the tree does not carry: the judge is asked about what the plan
    // left open, told that the answer's words cannot be on the page it sees.
    let finish_checks: Vec<String> = h
        .llm
        .verdict_requests()
        .iter()
        .filter_map(|r| r["messages"][1]["content"].as_str().map(str::to_owned))
        .filter(|q| q.contains("is the task complete?"))
        .collect();
    assert_eq!(finish_checks.len(), 1, "{finish_checks:?}");
    assert!(
        finish_checks[0].contains("interactive elements only, not its text"),
        "{}",
        finish_checks[0]
    );
}

#[tokio::test]
async fn an_answer_the_tree_cannot_show_stands_when_nothing_is_in_doubt() {
    let h = harness().await;
    h.llm.push([
        planned(&["Read the price"], 1, "Search.", "click(10)"),
        Reply::action(
            "The cheapest is Ridge 2.",
            "finish(\"The cheapest is Ridge 2 at $89\")",
        ),
    ]);
    let b1 = start(
        "Which tent is cheapest?",
        SHOP,
        vec![node("10", "btn", "Search")],
    );
    let r1 = h.ok(&b1).await;
    let b2 = next(
        &b1,
        &r1,
        &format!("{SHOP}tents"),
        vec![node("20", "link", "Ridge 2")],
    );
    let r2 = h.ok(&b2).await;
    assert_eq!(r2["status"], "completed", "{r2}");
    assert_eq!(
        h.llm.verdict_requests().len(),
        0,
        "nothing could confirm it"
    );
}

/// Issue 52: "something changed" is not "the right thing happened". A radio the instruction
/// does not name, chosen where it names another, is unconfirmed with the reason named; the
/// radio it names is worked.
#[tokio::test]
async fn a_choice_the_instruction_does_not_name_is_unconfirmed_and_the_named_one_worked() {
    let h = harness().await;
    h.llm.push([
        planned(&["Choose Lorem", "Submit"], 1, "Choose it.", "click(2)"),
        Reply::action("Choose the right one.", "click(1)"),
        Reply::action("Submit.", "click(3)"),
    ]);
    let page = |checked: &str| {
        vec![
            field(
                "1",
                "radio",
                "Lorem",
                "",
                if checked == "1" { "checked" } else { "" },
            ),
            field(
                "2",
                "radio",
                "Ipsum",
                "",
                if checked == "2" { "checked" } else { "" },
            ),
            node("3", "btn", "Submit"),
        ]
    };
    let b1 = start("Select Lorem and click Submit.", SHOP, page(""));
    let r1 = h.ok(&b1).await;
    let b2 = next(&b1, &r1, SHOP, page("2"));
    let r2 = h.ok(&b2).await;
    let v = &r2["verification"];
    assert_eq!(
        (&v["success"], &v["unconfirmed"]),
        (&json!(false), &json!(true)),
        "{r2}"
    );
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("\"Lorem\"") && r.contains("\"Ipsum\"")),
        "{r2}"
    );
    let r3 = h.ok(&next(&b2, &r2, SHOP, page("1"))).await;
    assert_eq!(r3["verification"]["success"], true, "{r3}");
    assert!(r3["verification"].get("unconfirmed").is_none(), "{r3}");
}

/// Issue 52: a finish is never taken on trust. With nothing the rules can see left to do, the
/// judge is still asked; its no sends the model back, and "Done" is no answer that would let a
/// finish stand unchecked on a page without text.
#[tokio::test]
async fn a_finish_with_nothing_in_doubt_is_still_judged_and_a_no_sends_the_model_back() {
    let h = harness().await;
    h.llm.push([
        planned(&["Open the settings"], 1, "Open the menu.", "click(10)"),
        Reply::action("It is done.", "finish(\"Done\")"),
        Reply::action("Open them.", "click(20)"),
    ]);
    h.llm
        .push_verdicts([Reply::verdict(false, 0.9, "the settings are not open")]);
    let b1 = start("Open the settings", SHOP, vec![node("10", "link", "Menu")]);
    let r1 = h.ok(&b1).await;
    let b2 = next(
        &b1,
        &r1,
        &format!("{SHOP}menu"),
        vec![node("20", "link", "Settings")],
    );
    let r2 = h.ok(&b2).await;
    assert_eq!(
        (r2["action"].as_str(), r2["status"].as_str()),
        (Some("click(20)"), Some("executing")),
        "{r2}"
    );
    assert_eq!(r2["metrics"]["interventions"], json!(["finish_refused"]));
    let asked: Vec<String> = h
        .llm
        .verdict_requests()
        .iter()
        .filter_map(|r| r["messages"][1]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("Question: is the task complete?"),
        "{}",
        asked[0]
    );
}

#[tokio::test]
async fn finish_with_open_plan_steps_is_checked_refused_and_later_accepted() {
    let h = harness().await;
    let plan = [
        "Open the settings",
        "Turn on dark mode",
        "Check that it is on",
    ];
    h.llm.push([
        planned(&plan, 1, "Open the settings.", "click(10)"),
        Reply::action("It is done.", "finish()"),
        sections(&[
            ("Thought", "Turn it on."),
            ("Step", "2"),
            ("Action", "click(20)"),
        ]),
        Reply::action("Dark mode is on.", "finish()"),
    ]);
    h.llm
        .push_verdicts([Reply::verdict(false, 0.9, "dark mode is still off")]);
    let b1 = start(
        "Turn on dark mode",
        SHOP,
        vec![node("10", "link", "Settings")],
    );
    let r1 = h.ok(&b1).await;
    let settings = format!("{SHOP}settings");
    let b2 = next(
        &b1,
        &r1,
        &settings,
        vec![field("20", "switch", "Dark mode", "", "")],
    );
    let r2 = h.ok(&b2).await;
    assert_eq!(
        (r2["action"].as_str(), r2["status"].as_str()),
        (Some("click(20)"), Some("executing"))
    );
    assert_eq!(
        r2["metrics"]["llmCalls"], 3,
        "decision, finish check, decision"
    );
    let retry = h.llm.requests()[2]["messages"]
        .as_array()
        .expect("m")
        .clone();
    assert!(retry
        .last()
        .and_then(|m| m["content"].as_str())
        .expect("note")
        .contains("not complete yet (dark mode is still off)"));
    let b3 = next(
        &b2,
        &r2,
        &settings,
        vec![field("20", "switch", "Dark mode", "", "checked")],
    );
    let r3 = h.ok(&b3).await;
    assert_eq!(
        r3["status"], "completed",
        "the check (scripted yes) accepts it"
    );
    assert_eq!(h.llm.verdict_requests().len(), 2);
    let q = h.llm.verdict_requests()[1]["messages"][1]["content"]
        .as_str()
        .expect("q")
        .to_owned();
    assert!(q.contains("Question: is the task complete?") && q.contains("Turn on dark mode"));
}

async fn the_plan_is_there_even_when_the_planner_answers_garbage(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o).await;
    h.llm.push([
        Reply::Content("I am not sure what to do here.".into()),
        Reply::Content("<Plan>\n\n</Plan> still nothing".into()),
    ]);
    let b = start("Book a table", SHOP, vec![node("1", "btn", "Reserve")]);
    let r = h.ok(&b).await;
    // Two answers refused: the round ends and the task goes on; three such rounds in a row
    // end it.
    assert_eq!(r["status"], "executing", "{r}");
    assert_eq!(r["plan"]["steps"][0]["description"], "Book a table");
    h.llm.push([
        Reply::Content("Still unsure.".into()),
        Reply::Content("No idea.".into()),
    ]);
    let r = h
        .ok(&next(&b, &r, SHOP, vec![node("1", "btn", "Reserve")]))
        .await;
    assert_eq!(r["status"], "executing", "{r}");
    h.llm.push([
        Reply::Content("Nothing.".into()),
        Reply::Content("Still nothing.".into()),
    ]);
    let r = h
        .ok(&next(&b, &r, SHOP, vec![node("1", "btn", "Reserve")]))
        .await;
    assert_eq!(
        (r["action"].as_str(), r["status"].as_str()),
        (Some("fail()"), Some("failed"))
    );
    assert_eq!(
        (&r["currentStep"], &r["totalSteps"]),
        (&json!(0), &json!(1))
    );
    assert_eq!(r["plan"]["steps"][0]["description"], "Book a table");
    assert_eq!(statuses(&r), ["failed"]);
}

#[tokio::test]
async fn the_prompt_keeps_a_stable_prefix_and_checks_progress_every_fifth_step() {
    let h = harness().await;
    h.llm
        .push([planned(&["Open every item"], 1, "Open it.", "click(1)")]);
    h.llm
        .push((2..=7).map(|k| Reply::action("Open the next one.", &format!("click({k})"))));
    let page = |k: usize| vec![node(&(k + 1).to_string(), "link", &format!("Item {k}"))];
    let b1 = start("Open every item", SHOP, page(0));
    let mut r = h.ok(&b1).await;
    let mut b = b1;
    for k in 1..=6 {
        b = next(&b, &r, SHOP, page(k));
        r = h.ok(&b).await;
    }
    let system = h.llm.requests()[0]["messages"][0].clone();
    for k in 1..6 {
        assert_eq!(
            h.llm.requests()[k]["messages"][0],
            system,
            "the system prompt is stable"
        );
        let (this, following) = (h.llm.user_prompt(k), h.llm.user_prompt(k + 1));
        // Everything before this prompt's last history line is where the next one starts.
        let last_line = this.find(&format!("\n{k}. ")).expect("history line");
        assert!(
            following.starts_with(&this[..last_line]),
            "prompt {k}:\n{this}\n---\n{following}"
        );
    }
    assert!(h
        .llm
        .user_prompt(5)
        .contains("Progress check after 5 steps"));
    assert!(!h.llm.user_prompt(4).contains("Progress check"));
}

api_tests::on_both_stores!(
    a_planned_task_is_verified_by_rules_and_completes_its_plan,
    the_plan_is_there_even_when_the_planner_answers_garbage,
);

#[tokio::test]
async fn a_loop_the_model_got_out_of_does_not_count_toward_ending_the_task() {
    let h = harness().await;
    // Stuck on page 0: the third click is refused (a first loop).
    let (mut b, mut r) = stuck_on_the_first_page(&h).await;
    h.llm.push([
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Next.", "click(10)"),
        Reply::action("Something else.", "click(12)"),
    ]);
    assert_eq!(r["action"], "click(11)");
    // "Back" shows another page: progress. Then stuck again on page 1.
    b = next(&b, &r, SHOP, paged(1));
    r = h.ok(&b).await;
    assert_eq!(r["verification"]["success"], true);
    for _ in 1..=2 {
        b = next(&b, &r, SHOP, paged(1));
        r = h.ok(&b).await;
    }
    // A second loop, after progress: refused and asked again, not the end of the task.
    assert_eq!(
        (r["action"].as_str(), r["status"].as_str()),
        (Some("click(12)"), Some("executing")),
        "{r}"
    );
}

#[tokio::test]
async fn suggestions_that_appear_are_marked_new_and_the_models_running_note_follows_it() {
    let h = harness().await;
    h.llm.push([
        sections(&[
            ("Thought", "Type the city."),
            ("Action", "setValue(1, \"Par\")"),
            (
                "Memory",
                "Looking for flights to Paris on 3 May; price seen: none yet",
            ),
        ]),
        Reply::action("Pick Paris.", "click(11)"),
    ]);
    let form = vec![
        field("1", "inp", "To", "", ""),
        node("2", "btn", "Search flights"),
        node("3", "link", "Home"),
    ];
    let b1 = start("Find a flight to Paris on 3 May", SHOP, form.clone());
    let r1 = h.ok(&b1).await;
    let mut suggested = form;
    suggested[0] = field("1", "inp", "To", "Par", "");
    suggested.push(node("10", "option", "Parma"));
    suggested.push(node("11", "option", "Paris"));
    let r2 = h.ok(&next(&b1, &r1, SHOP, suggested)).await;
    assert_eq!(r2["action"], "click(11)");
    let prompt = h.llm.user_prompt(1);
    assert!(
        prompt.contains("*[10] option \"Parma\"") && prompt.contains("*[11] option \"Paris\""),
        "{prompt}"
    );
    assert!(
        !prompt.contains("*[2]") && !prompt.contains("*[1]"),
        "only what appeared is marked: {prompt}"
    );
    assert!(
        prompt.contains("Your running note (<Memory>): Looking for flights to Paris on 3 May"),
        "{prompt}"
    );
    assert!(
        !h.llm.user_prompt(0).contains("*["),
        "the first page has nothing to compare with"
    );
}

#[tokio::test]
async fn on_a_big_page_the_names_around_the_last_click_stay_whole() {
    let h = harness().await;
    // 400 product cards, far more than the page budget holds with full names.
    let cards: Vec<Value> = (0..400)
        .flat_map(|k| {
            [
                node(
                    &format!("p{k}"),
                    "link",
                    &format!("Trail Runner model {k} in blue, waterproof, size range 36-47"),
                ),
                node(&format!("a{k}"), "btn", "Add to cart"),
            ]
        })
        .collect();
    h.llm.push([
        Reply::action("Open model 300.", "click(p300)"),
        Reply::action("Add it.", "click(a300)"),
    ]);
    let b1 = start(
        "Add the Trail Runner model 300 to the cart",
        SHOP,
        cards.clone(),
    );
    let r1 = h.ok(&b1).await;
    let r2 = h.ok(&next(&b1, &r1, SHOP, cards)).await;
    assert_eq!(r2["action"], "click(a300)");
    let first = h.llm.user_prompt(0);
    let second = h.llm.user_prompt(1);
    let named = |prompt: &str, k: u32| {
        prompt.contains(&format!("[p{k}] link \"Trail Runner model {k} in blue"))
    };
    assert!(!named(&first, 300), "the first prompt cuts the far names");
    assert!(named(&first, 0), "the start of the page keeps its names");
    assert!(
        named(&second, 300) && named(&second, 310),
        "around the last click the names stay"
    );
    assert!(
        second.contains("[a300] btn \"Add to cart\""),
        "each button sits under its product"
    );
}

#[tokio::test]
async fn new_elements_stay_marked_after_a_round_that_sent_nothing() {
    let h = harness().await;
    h.llm.push([
        Reply::action("Type the city.", "setValue(1, \"Par\")"),
        Reply::Content("hmm".into()),
        Reply::Content("still thinking".into()),
        Reply::action("Pick Paris.", "click(11)"),
    ]);
    let form = vec![
        field("1", "inp", "To", "", ""),
        node("2", "btn", "Search flights"),
    ];
    let b1 = start("Find a flight to Paris", SHOP, form.clone());
    let r1 = h.ok(&b1).await;
    let mut suggested = form;
    suggested[0] = field("1", "inp", "To", "Par", "");
    suggested.push(node("11", "option", "Paris"));
    let r2 = h.ok(&next(&b1, &r1, SHOP, suggested.clone())).await;
    assert_eq!(
        r2["status"], "executing",
        "two refusals end the round: {r2}"
    );
    let b3 = next(&b1, &r2, SHOP, suggested);
    let r3 = h.ok(&b3).await;
    assert_eq!(r3["action"], "click(11)");
    assert!(
        h.llm.user_prompt(3).contains("*[11] option \"Paris\""),
        "the suggestion is still new to the model: {}",
        h.llm.user_prompt(3)
    );
}
