//! Recipes in a real browser: the shop's two-page checkout done once by the model, then again
//! with other values (no model call: the recipe replays every step, the purchase still
//! confirmed by the user), then on changed pages — fields moved behind a new block (still no
//! model call), a renamed button (one model call for the changed step, the rest replayed) and
//! back (one call again), a newsletter dialog the model closes instead of the step (the replay
//! ends, the model does the rest, and once more when the dialog is gone), then replayed again
//! with no model call. The scripted model knows only the steps it is expected to be asked for:
//! a call beyond them is an error, so every count below is exact. The table is printed
//! (`cargo test -p api-tests --test recipes -- --ignored --nocapture`).

use api_tests::browser::model::{BrowserModel, Intent};
use api_tests::browser::rig::Rig;
use api_tests::browser::run::{Options, Outcome};
use api_tests::browser::scenario::{Check, Scenario};
use api_tests::browser::shop::DEFAULT_CART_ITEM;
use api_tests::browser::site::CheckoutChange;
use api_tests::AppOptions;

struct Run {
    label: &'static str,
    change: Option<CheckoutChange>,
    who: (&'static str, &'static str, &'static str),
    /// What the model is asked for, in order (nothing else).
    script: Vec<Intent>,
}

fn scenario(run: &Run) -> Scenario {
    let (name, address, shipping) = run.who;
    let task = format!(
        "Check out my cart: ship to {name}, {address}, with {shipping} shipping, and place the order."
    );
    let placed = format!("placed for {name}, {address}, {shipping} delivery, left at the door.");
    Scenario {
        name: run.label,
        start: "http://shop.test/cart".into(),
        task: Box::leak(task.into_boxed_str()),
        replies: vec!["Yes, go ahead."],
        checks: vec![
            Check::Status("completed"),
            Check::Js("location.pathname === '/order/confirmed'"),
            Check::PageText(Box::leak(placed.into_boxed_str())),
            Check::Orders(1),
        ],
        script: run.script.clone(),
        javascript: true,
    }
}

fn whole_script(who: (&'static str, &'static str, &'static str)) -> Vec<Intent> {
    use Intent::*;
    vec![
        Click("Proceed to checkout"),
        SetValue("Full name", who.0),
        SetValue("Street address", who.1),
        Select("Shipping", who.2),
        Tick("Leave at the door"),
        Click("Continue to review"),
        Click("Place order"),
        Finish("Your order is placed."),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: scripts/test installs it"]
async fn a_task_done_once_replays_without_the_model_and_heals_a_changed_page() {
    let model = BrowserModel::start().await;
    let rig = Rig::start(AppOptions::with_llm(&model.base_url))
        .await
        .expect("start the rig");
    let grace = ("Grace Hopper", "1 Main Street, Arlington", "standard");
    let ada = ("Ada Lovelace", "12 St James's Square, London", "express");
    let runs = [
        Run {
            label: "first",
            change: None,
            who: ada,
            script: whole_script(ada),
        },
        Run {
            label: "second (other values)",
            change: None,
            who: grace,
            script: vec![],
        },
        Run {
            label: "moved elements",
            change: Some(CheckoutChange::MovedElements),
            who: ("Alan Turing", "2 Bletchley Park, Milton Keynes", "express"),
            script: vec![],
        },
        Run {
            label: "renamed button",
            change: Some(CheckoutChange::RenamedButton),
            who: grace,
            script: vec![Intent::Click("Review details")],
        },
        Run {
            label: "renamed back",
            change: None,
            who: grace,
            script: vec![Intent::Click("Continue to review")],
        },
        // A dialog in the way: the model closes it instead of doing the step, so the replay
        // ends there and the model does the rest (the run is recorded with the dialog's step).
        Run {
            label: "extra dialog",
            change: Some(CheckoutChange::ExtraDialog),
            who: grace,
            script: [Intent::Click("No thanks")]
                .into_iter()
                .chain(whole_script(grace).into_iter().skip(1))
                .collect(),
        },
        // Without the dialog its recorded step is missing: the model is asked for it, does the
        // next one instead, and carries on (recorded without the dialog again).
        Run {
            label: "dialog gone",
            change: None,
            who: ada,
            script: whole_script(ada).into_iter().skip(1).collect(),
        },
        Run {
            label: "recorded again",
            change: None,
            who: grace,
            script: vec![],
        },
    ];
    let mut table = format!(
        "{:<22} {:>6} {:>6} {:>8} {:>8} {:>8} {:>9}  status\n",
        "run", "steps", "calls", "prompt", "output", "replayed", "healed"
    );
    let mut outcomes: Vec<Outcome> = Vec::new();
    for run in &runs {
        {
            let mut s = rig.site.state.lock().expect("site");
            s.cart = vec![DEFAULT_CART_ITEM.to_owned()];
            s.checkout_change = run.change;
        }
        let scenario = scenario(run);
        let (out, failed) = rig
            .attempt(&scenario, Some(&model), Options::new(15))
            .await
            .expect("tab");
        let errors = model.errors();
        table.push_str(&format!(
            "{:<22} {:>6} {:>6} {:>8} {:>8} {:>8} {:>9}  {}\n",
            run.label,
            out.steps,
            out.llm_calls,
            out.usage.prompt_tokens,
            out.usage.completion_tokens,
            out.recipe.get("replayed").copied().unwrap_or(0),
            out.recipe.get("healed").copied().unwrap_or(0),
            out.status
        ));
        assert!(
            failed.is_empty() && errors.is_empty(),
            "{}: failed {failed:?}; model: {errors:?}; run: {out:#?}\n{table}",
            run.label
        );
        outcomes.push(out);
    }
    println!("{table}");
    let [first, second, moved, renamed, back, dialog, gone, again] = &outcomes[..] else {
        panic!("eight runs");
    };
    assert!(
        first.llm_calls >= 8,
        "the first run is the model's: {first:#?}"
    );
    assert!(first.recipe.is_empty());
    for out in [second, moved, again] {
        assert_eq!(out.llm_calls, 0, "{table}");
        assert_eq!(out.usage.prompt_tokens, 0, "{table}");
        assert_eq!(out.recipe.get("healed"), None, "{table}");
        assert_eq!(
            out.questions.len(),
            1,
            "the purchase is still confirmed by the user: {out:#?}"
        );
    }
    for out in [renamed, back] {
        assert_eq!(
            out.recipe.get("healed"),
            Some(&1),
            "one healed step: {table}"
        );
        assert_eq!(
            out.llm_calls, 1,
            "one model call for the changed step: {table}"
        );
        assert_eq!(out.questions.len(), 1);
    }
    for out in [dialog, gone] {
        assert_eq!(out.recipe.get("replayed"), Some(&1), "{table}");
        assert!(out.llm_calls >= 7, "the model carried on: {table}");
        assert_eq!(out.questions.len(), 1);
    }
    // Every run placed exactly its own order (the checks above), none twice.
    assert_eq!(rig.site.orders().len(), runs.len());
}
