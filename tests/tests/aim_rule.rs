//! The aim rule (`shared::domain::aim`: was an action aimed where the instruction says?) on
//! its held-out set, `tests/fixtures/aim/heldout.jsonl`: 622 actions on small pages, labelled
//! right or wrong by someone who had not read the rule, in 20 languages, never tuned on. A
//! case is run as the step runs it: the page is read from an interactive tree, the target
//! snapshotted before the action, and the page the action left (the value in its field, the
//! box in its new state) is the one the rule reads.
//!
//! The rule is judged by two numbers: how many wrong actions it catches, and how many right
//! ones it holds up (each costs a model call re-reading its own action). It gives no opinion
//! wherever it cannot read the instruction's words, so the first matters less than the second:
//! the test holds the first run's figures as floors (`--nocapture` prints them).

use std::collections::BTreeMap;

use serde::Deserialize;
use shared::agent::page::{Nodes, Page, PageView, TreeNode};
use shared::domain::aim::misdirected;
use shared::domain::facts::PageFacts;
use shared::domain::outcome::ActionKind;

#[derive(Deserialize)]
struct Case {
    id: String,
    lang: String,
    instruction: String,
    page: Vec<Element>,
    action: Action,
    moved: bool,
    expect: String,
}

#[derive(Deserialize, Clone)]
struct Element {
    id: String,
    role: String,
    name: String,
    value: Option<String>,
    states: Option<String>,
}

#[derive(Deserialize)]
struct Action {
    kind: String,
    id: String,
    value: Option<String>,
}

fn page(elements: &[Element]) -> Page {
    let nodes: Nodes = elements
        .iter()
        .map(|e| TreeNode {
            v: e.value.as_deref(),
            s: e.states.as_deref(),
            ..TreeNode::new(&e.id, &e.role, &e.name)
        })
        .collect();
    Page::from_tree(nodes, None)
}

/// The page after the action: a typed value in its field, a ticked box checked.
fn after(case: &Case) -> Vec<Element> {
    let mut elements = case.page.clone();
    if let Some(e) = elements.iter_mut().find(|e| e.id == case.action.id) {
        let states = e.states.clone().unwrap_or_default();
        let others = states
            .split(',')
            .filter(|s| !s.is_empty() && *s != "checked");
        match case.action.kind.as_str() {
            "type" => e.value = case.action.value.clone(),
            "check" => e.states = Some(others.chain(["checked"]).collect::<Vec<_>>().join(",")),
            "uncheck" => e.states = Some(others.collect::<Vec<_>>().join(",")),
            _ => {}
        }
    }
    elements
}

/// Whether the rule holds the case's action misdirected.
fn held(case: &Case) -> Result<bool, String> {
    let before = page(&case.page);
    let before = PageView {
        page: &before,
        url: "https://site.example/",
    };
    let target = before
        .element(&case.action.id)
        .ok_or(format!("{}: no element {}", case.id, case.action.id))?
        .snapshot();
    let id = case.action.id.as_str();
    let value = case.action.value.as_deref().unwrap_or_default();
    let kind = match (case.action.kind.as_str(), target.role.as_str()) {
        // A value for a list is chosen, as the model would.
        ("type", "sel") => ActionKind::SelectOption(id, value),
        ("type", _) => ActionKind::SetValue(id, value),
        ("click", _) => ActionKind::Click(id),
        ("check", _) => ActionKind::Check(id),
        ("uncheck", _) => ActionKind::Uncheck(id),
        (other, _) => return Err(format!("{}: action {other}", case.id)),
    };
    let left = page(&after(case));
    let left = PageView {
        page: &left,
        url: "https://site.example/",
    };
    Ok(misdirected(&case.instruction, &kind, &target, &left, case.moved).is_some())
}

/// Counts of one group: wrong actions, those caught; right actions, those held up.
#[derive(Default)]
struct Tally {
    wrong: usize,
    caught: usize,
    right: usize,
    held_up: usize,
}

impl Tally {
    fn add(&mut self, wrong: bool, flagged: bool) {
        if wrong {
            self.wrong += 1;
            self.caught += usize::from(flagged);
        } else {
            self.right += 1;
            self.held_up += usize::from(flagged);
        }
    }

    fn line(&self, label: &str) -> String {
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        format!(
            "{label:<16} wrong caught {:>3}/{:<3} ({:>5.1} %)   right held up {:>3}/{:<3} ({:>4.1} %)",
            self.caught,
            self.wrong,
            pct(self.caught, self.wrong),
            self.held_up,
            self.right,
            pct(self.held_up, self.right)
        )
    }
}

/// The first run's figures (2026-11-29: 77 of 278 wrong actions caught, 27.7 %; 4 of 344 right
/// ones held up, 1.2 %), below which the rule must not fall: at least this share of wrong
/// actions caught, at most this share of right ones held up.
const FIRST_RUN: (f64, f64) = (0.275, 0.012);

#[test]
fn on_actions_nobody_tuned_it_to_the_rule_rarely_holds_up_a_right_one() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/aim/heldout.jsonl");
    let text = std::fs::read_to_string(path).expect("held-out set");
    let cases: Vec<Case> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a case"))
        .collect();
    assert!(cases.len() >= 600, "{} cases", cases.len());
    let (mut all, mut by_kind, mut by_lang) = (Tally::default(), BTreeMap::new(), BTreeMap::new());
    let mut held_up = Vec::new();
    for case in &cases {
        let flagged = held(case).unwrap_or_else(|e| panic!("{e}"));
        let wrong = match case.expect.as_str() {
            "wrong" => true,
            "right" => false,
            other => panic!("{}: expect {other}", case.id),
        };
        all.add(wrong, flagged);
        let lang = if case.lang == "en" {
            "English"
        } else {
            "other languages"
        };
        by_lang
            .entry(lang)
            .or_insert_with(Tally::default)
            .add(wrong, flagged);
        let kind = case.action.kind.as_str();
        by_kind
            .entry(kind)
            .or_insert_with(Tally::default)
            .add(wrong, flagged);
        if flagged && !wrong {
            held_up.push(format!("{} {:?}", case.id, case.instruction));
        }
    }
    println!("{}", all.line("all"));
    for (label, t) in by_kind.iter().chain(&by_lang) {
        println!("{}", t.line(label));
    }
    println!("right actions held up:\n{}", held_up.join("\n"));
    let caught = all.caught as f64 / all.wrong as f64;
    let false_alarms = all.held_up as f64 / all.right as f64;
    assert!(caught >= FIRST_RUN.0, "caught {:.1} %", 100.0 * caught);
    assert!(
        false_alarms <= FIRST_RUN.1,
        "right actions held up {:.1} %",
        100.0 * false_alarms
    );
}
