//! The run's rules on examples, then its invariants over random recipes, pages, verdicts and
//! model answers (proptest): no step goes out twice, the position only moves forward, nothing
//! goes out on another site, nothing typed, chosen or gone to is not this run's instruction's,
//! and another member's recipe is followed only once promoted.

use proptest::prelude::*;

use super::*;
use crate::domain::facts::fake::{el, El, FakePage};
use crate::domain::recipe::book::{ParamShape, RecipeStep, CHOICES, FORMAT};

fn target(role: &str, name: &str) -> TargetDescription {
    TargetDescription {
        role: role.into(),
        name: name.into(),
        nth: 0,
        of: 1,
    }
}

fn step(action: &str, role: &str, name: &str, page: &str) -> RecipeStep {
    RecipeStep {
        target: (!role.is_empty()).then(|| target(role, name)),
        title: context("Shop"),
        intent: format!("{action} {name}"),
        ..RecipeStep::new(action, page)
    }
}

fn recipe(owner: &str, promoted: bool, steps: Vec<RecipeStep>) -> Recipe {
    let now = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default();
    Recipe {
        id: format!("{owner}-{promoted}"),
        tenant_id: "acme".into(),
        owner: owner.into(),
        promoted,
        origin: "https://shop.test:443".into(),
        path: "/cart".into(),
        template: "buy {item} now".into(),
        params: vec!["item".into()],
        shapes: vec![ParamShape::of("blue mug")],
        format: FORMAT,
        steps,
        recorded_from: "t".into(),
        runs: 1,
        demoted: false,
        created_at: now,
        updated_at: now,
        expires_at: 0,
    }
}

/// Pick the item the instruction names, type a note, Pay (confirmed), finish.
fn checkout() -> RecipeRun {
    let pick = RecipeStep {
        target_param: Some("item".into()),
        ..step("click", "link", "{item}", "/cart")
    };
    let note = RecipeStep {
        value_param: Some("item".into()),
        ..step("setValue", "inp", "note", "/cart")
    };
    let pay = RecipeStep {
        confirm: true,
        ..step("click", "btn", "pay", "/cart")
    };
    let steps = vec![pick, note, pay, step("finish", "", "", "/cart")];
    RecipeRun::start(
        &recipe("ada", false, steps),
        vec![("item".into(), "Blue mug".into())],
    )
}

fn cart(els: Vec<El>) -> FakePage {
    FakePage::new("https://shop.test/cart", els)
}

fn here<'a>(page: &'a FakePage, title: &'a str) -> Here<'a> {
    Here {
        page,
        title: Some(title),
    }
}

fn shop_page() -> FakePage {
    cart(vec![
        el("1", "link", "Red mug"),
        el("2", "link", "Blue mug"),
        el("3", "inp", "Note"),
        el("4", "btn", "Pay"),
    ])
}

#[test]
fn an_unchanged_page_replays_every_step_with_this_runs_values() {
    let mut run = checkout();
    let page = shop_page();
    let acts: Vec<Turn> = [
        Last::Nothing,
        Last::Verified,
        Last::Verified,
        Last::Verified,
    ]
    .into_iter()
    .map(|last| {
        let next = run.next(here(&page, "Shop"), last);
        if let Turn::Act { step, .. } = next {
            run.acted(step);
        }
        next
    })
    .collect();
    let want = |step: usize, id: Option<&str>| Turn::Act {
        step,
        target: id.map(str::to_owned),
    };
    assert_eq!(
        acts,
        vec![
            want(0, Some("2")),
            want(1, Some("3")),
            want(2, Some("4")),
            want(3, None)
        ]
    );
    assert_eq!(run.value_of(1).as_deref(), Some("Blue mug"));
    assert_eq!(run.next(here(&page, "Shop"), Last::Verified), Turn::Off);
}

#[test]
fn a_step_goes_to_the_model_on_any_doubt() {
    let why = |page: &FakePage, title: &str, last: Last| {
        let mut run = checkout();
        match run.next(here(page, title), last) {
            Turn::Heal { why, .. } => Some(why),
            _ => None,
        }
    };
    let page = shop_page();
    assert_eq!(
        why(&page, "Shop", Last::Unconfirmed),
        Some(Decline::Unconfirmed)
    );
    assert_eq!(
        why(&page, "Admin", Last::Nothing),
        Some(Decline::OtherContext)
    );
    let other = FakePage::new("http://shop.test/cart", page.els.clone());
    assert_eq!(why(&other, "Shop", Last::Nothing), Some(Decline::OtherPage));
    let renamed = cart(vec![el("2", "link", "Blue mug (new)")]);
    assert_eq!(why(&renamed, "Shop", Last::Nothing), Some(Decline::Missing));
    let twice = cart(vec![
        el("1", "link", "Blue mug"),
        el("2", "link", "Blue mug"),
    ]);
    assert_eq!(
        why(&twice, "Shop", Last::Nothing),
        Some(Decline::Ambiguous { count: 2 })
    );
    // A failed action ends the replay: the model sets it right and carries on.
    let mut run = checkout();
    assert_eq!(run.next(here(&page, "Shop"), Last::Failed), Turn::Off);
    assert!(run.stopped);
}

#[test]
fn a_step_in_another_dialog_is_the_models() {
    let confirm = RecipeStep {
        context: context("Clear all 12 notifications?"),
        ..step("click", "btn", "confirm", "/cart")
    };
    let mut run = RecipeRun::start(&recipe("ada", false, vec![confirm]), vec![]);
    let same = cart(vec![
        el("9", "btn", "Confirm").in_dialog("Clear all 4 notifications?")
    ]);
    assert!(matches!(
        run.clone().next(here(&same, "Shop"), Last::Nothing),
        Turn::Act { .. }
    ));
    let other = cart(vec![
        el("9", "btn", "Confirm").in_dialog("Delete your workspace and all its data?")
    ]);
    assert_eq!(
        run.next(here(&other, "Shop"), Last::Nothing),
        Turn::Heal {
            step: 0,
            why: Decline::OtherContext
        }
    );
}

#[test]
fn the_models_answer_is_the_step_or_the_end_of_the_replay() {
    let page = cart(vec![
        el("2", "link", "Blue mug – sale"),
        el("3", "inp", "Note"),
    ]);
    let mut run = checkout();
    assert!(matches!(
        run.next(here(&page, "Shop"), Last::Nothing),
        Turn::Heal {
            why: Decline::Missing,
            ..
        }
    ));
    // The renamed link, clicked: the step; the run goes on after it.
    let renamed = target("link", "blue mug – sale");
    let clicked = Acted {
        action: "click",
        target: Some(&renamed),
        value: None,
    };
    assert!(run.answered(clicked));
    assert_eq!((run.cursor, run.stopped), (1, false));
    assert!(matches!(
        run.next(here(&page, "Shop"), Last::Verified),
        Turn::Act { step: 1, .. }
    ));
    run.acted(1);
    // Asked for Pay (missing), the model types elsewhere: the model carries on alone.
    assert!(matches!(
        run.next(here(&page, "Shop"), Last::Verified),
        Turn::Heal { step: 2, .. }
    ));
    let note = target("inp", "note");
    let typed = Acted {
        action: "setValue",
        target: Some(&note),
        value: Some("x"),
    };
    assert!(!run.answered(typed));
    assert!(run.stopped);
    assert_eq!(run.next(here(&page, "Shop"), Last::Verified), Turn::Off);
}

#[test]
fn values_and_picks_that_are_not_the_instructions_are_the_models() {
    let mut typed = step("setValue", "inp", "note", "/cart");
    typed.value = Some("the recorded member's words".into());
    let chosen = step("click", "radio", "my manager", "/cart");
    for s in [typed, chosen] {
        let mut run = RecipeRun::start(&recipe("ada", false, vec![s]), vec![]);
        let page = cart(vec![el("3", "inp", "Note"), el("5", "radio", "My manager")]);
        assert_eq!(
            run.next(here(&page, "Shop"), Last::Nothing),
            Turn::Heal {
                step: 0,
                why: Decline::Owned
            }
        );
    }
}

#[test]
fn another_members_recipe_is_followed_only_once_promoted() {
    let mine = recipe("ada", false, vec![step("finish", "", "", "/cart")]);
    let theirs = recipe("bob", false, vec![step("finish", "", "", "/cart")]);
    let orgs = recipe("bob", true, vec![step("finish", "", "", "/cart")]);
    let picked =
        |list: &[Recipe], who: &str| pick(list, who, "Buy blue mug now", false).map(|r| r.id);
    assert_eq!(picked(std::slice::from_ref(&theirs), "ada"), None);
    assert_eq!(
        picked(&[theirs.clone(), orgs.clone()], "ada").as_deref(),
        Some("bob-true")
    );
    assert_eq!(
        picked(&[orgs, mine, theirs], "ada").as_deref(),
        Some("ada-false")
    );
}

#[test]
fn heals_are_bounded() {
    let mut run = checkout();
    let empty = cart(vec![]);
    for _ in 0..MAX_HEALS_PER_RUN {
        assert!(matches!(
            run.next(here(&empty, "Shop"), Last::Nothing),
            Turn::Heal { .. }
        ));
        run.asked = None;
    }
    assert_eq!(run.next(here(&empty, "Shop"), Last::Nothing), Turn::Off);
}

// The invariants.

const NAMES: &[&str] = &["pay", "blue mug", "note", "share", "my manager"];
const ROLES: &[&str] = &["btn", "link", "inp", "radio", "sel"];
const ACTIONS: &[&str] = &[
    "click",
    "setValue",
    "selectOption",
    "check",
    "navigate",
    "press",
    "finish",
];
const ORIGINS: &[&str] = &[
    "https://shop.test",
    "http://shop.test",
    "https://shop.test:8443",
    "https://evil.test",
];
const DIALOGS: &[&str] = &["", "Clear all notifications?", "Delete your workspace?"];

fn any_step() -> impl Strategy<Value = RecipeStep> {
    (
        (0..ACTIONS.len(), 0..ROLES.len(), 0..NAMES.len(), 0..2usize),
        (any::<bool>(), any::<bool>(), 0..3usize, 0..DIALOGS.len()),
    )
        .prop_map(|((a, r, n, p), (confirm, param, value, dialog))| {
            let action = ACTIONS[a];
            let element = !matches!(action, "navigate" | "press" | "finish");
            let mut s = step(
                action,
                if element { ROLES[r] } else { "" },
                NAMES[n],
                ["/cart", "/pay"][p],
            );
            s.confirm = confirm;
            s.context = context(DIALOGS[dialog]);
            if param && element {
                s.target_param = Some("item".into());
            }
            match value {
                0 => s.value_param = Some("item".into()),
                1 => s.value = Some(format!("{action}(\"recorded value\")")),
                _ => s.own_value = Some(OwnValue::Found),
            }
            s
        })
}

fn any_page() -> impl Strategy<Value = (FakePage, bool)> {
    (
        0..ORIGINS.len(),
        0..2usize,
        proptest::collection::vec((0..ROLES.len(), 0..NAMES.len(), 0..DIALOGS.len()), 0..6),
        any::<bool>(),
    )
        .prop_map(|(o, p, els, shop)| {
            let els = els
                .into_iter()
                .enumerate()
                .map(|(i, (r, n, d))| {
                    let e = el(&i.to_string(), ROLES[r], NAMES[n]);
                    match DIALOGS[d] {
                        "" => e,
                        text => e.in_dialog(text),
                    }
                })
                .collect::<Vec<_>>();
            let url = format!("{}{}", ORIGINS[o], ["/cart", "/pay"][p]);
            (FakePage::new(&url, els), shop)
        })
}

fn any_last() -> impl Strategy<Value = Last> {
    prop_oneof![
        Just(Last::Nothing),
        Just(Last::Verified),
        Just(Last::Likely),
        Just(Last::Failed),
        Just(Last::Unconfirmed)
    ]
}

/// The model's answer when asked: an action of its choice on an element of its choice.
fn any_answer() -> impl Strategy<Value = (usize, usize, usize, bool)> {
    (
        0..ACTIONS.len(),
        0..ROLES.len(),
        0..NAMES.len(),
        any::<bool>(),
    )
}

/// One request of a random run.
type Request = ((FakePage, bool), Last, (usize, usize, usize, bool), bool);

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_run_only_moves_forward_never_repeats_and_stays_on_its_site_with_this_runs_values(
        steps in proptest::collection::vec(any_step(), 1..7),
        value in 0..NAMES.len(),
        requests in proptest::collection::vec(
            (any_page(), any_last(), any_answer(), any::<bool>()), 1..14),
    ) {
        let params = vec![("item".to_owned(), NAMES[value].to_owned())];
        let mut run = RecipeRun::start(&recipe("ada", false, steps), params.clone());
        let mut done: Vec<usize> = Vec::new();
        let mut cursor = 0;
        let requests: Vec<Request> = requests;
        for ((page, shop), last, (a, r, n, typed), refuse) in &requests {
            let title = if *shop { "Shop" } else { "Admin" };
            match run.next(here(page, title), *last) {
                Turn::Act { step: k, target } => {
                    // On its site: the recipe's origin and the step's kind of page.
                    let site = site_key(page.url()).expect("an http page");
                    prop_assert_eq!(&site.origin, &run.origin);
                    prop_assert_eq!(&site.path, &run.steps[k].page);
                    // What it types, chooses or goes to is this run's instruction's; an action
                    // without a target otherwise (a key) carries no one's value.
                    let step = &run.steps[k];
                    let typed = matches!(
                        step.action.as_str(),
                        "setValue" | "selectOption" | "navigate" | "findText"
                    );
                    if typed {
                        let v = run.value_of(k);
                        prop_assert!(params.iter().any(|(_, p)| Some(p) == v.as_ref()), "{:?}", v);
                    }
                    // A choice is the one the instruction names.
                    if let Some(t) = target.as_deref().and_then(|id| page.element(id)) {
                        if CHOICES.contains(&t.role.as_ref()) {
                            prop_assert!(params.iter().any(|(_, p)| normalise(p) == normalise(&t.name)));
                        }
                    }
                    if *refuse {
                        run.ask(k, Decline::Refused);
                    } else {
                        run.acted(k);
                        done.push(k);
                    }
                }
                Turn::Heal { step: k, .. } => {
                    let role = target(ROLES[*r], NAMES[*n]);
                    let value = typed.then_some(NAMES[*n]);
                    let answer = Acted { action: ACTIONS[*a], target: Some(&role), value };
                    if run.answered(answer) {
                        done.push(k);
                    }
                }
                Turn::Off => {}
            }
            prop_assert!(run.cursor >= cursor, "the position moved back");
            cursor = run.cursor;
        }
        // No step went out twice, and each after the one before.
        prop_assert!(done.windows(2).all(|w| w[0] < w[1]), "steps out of order: {:?}", done);
    }

    #[test]
    fn a_member_follows_only_their_own_recipes_and_the_organisations(
        recipes in proptest::collection::vec((0..3usize, any::<bool>()), 0..6),
        member in 0..3usize,
    ) {
        let members = ["ada", "bob", "eve"];
        let list: Vec<Recipe> = recipes
            .iter()
            .map(|(owner, promoted)| recipe(members[*owner], *promoted, vec![step("finish", "", "", "/cart")]))
            .collect();
        if let Some(run) = pick(&list, members[member], "buy blue mug now", true) {
            let followed = list.iter().find(|r| r.id == run.id).expect("a listed recipe");
            prop_assert!(followed.promoted || followed.owner == members[member]);
        }
    }
}
