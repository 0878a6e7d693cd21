//! Phase 6 (Guard): a model answer is accepted only if the client can execute it on this page
//! and the server's rules allow it — pure rules over the answer and plain facts about the task:
//! grammar and element, the loop guard, the risk gate (a risky action becomes a question to the
//! user), chained form fills, the expected outcome.

use super::Decision;
use crate::agent::action::Action;
use crate::agent::output::{parse_model_output, ModelOutput};
use crate::agent::page::{Page, PageView};
use crate::domain::blocker::{BlockerInfo, BlockerKind};
use crate::domain::chain::chain;
use crate::domain::confirm::{page_of, PendingConfirmation};
use crate::domain::facts::PageFacts;
use crate::domain::fit::cannot_type_into;
use crate::domain::loops::{detect, LoopKind};
use crate::domain::outcome::predict;
use crate::domain::outcome::ActionKind;
use crate::domain::queue::{self, ActionQueue};
use crate::domain::risk::{assess, Context, RiskPatterns};
use crate::domain::secrets::Finder;
use crate::domain::web::leaks_secret;
use crate::domain::TaskStatus;
use crate::text::truncate_chars;

/// Longest thought and question kept from a model answer.
const MAX_THOUGHT_CHARS: usize = 2_000;
const MAX_QUESTION_CHARS: usize = 1_000;

/// What the rules know besides the answer.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    pub page: &'a Page,
    pub view: &'a PageView<'a>,
    pub patterns: &'a RiskPatterns,
    /// The task's earlier browser actions, oldest first.
    pub actions: &'a [&'a str],
    /// The page hash before each of them, then the current page's.
    pub hashes: &'a [&'a str],
    /// The same with element positions (see `Page::view`).
    pub views: &'a [&'a str],
    pub step_index: u32,
    /// What the user wrote: the task and their answers (a value in it may be typed into the
    /// field it names without asking again).
    pub said: &'a str,
    /// The task's typed secrets: no search, address or other field may carry them.
    pub secrets: &'a Finder,
    /// Form fills may go out as `chainedActions` (`CHAINED_ACTIONS=on`).
    pub chains: bool,
    /// The page's title (`pageTitle`).
    pub title: Option<&'a str>,
}

/// An accepted answer: the decision and what else the model said.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub decision: Decision,
    pub action: Action,
    pub plan: Option<Vec<String>>,
    /// The plan step (0-based) the action works on.
    pub plan_step: Option<usize>,
    pub task_type: Option<String>,
    /// Set when the risk gate turned the action into a question.
    pub confirmation: Option<PendingConfirmation>,
    /// The answer's further actions the server keeps, to send one per request.
    pub queue: Option<ActionQueue>,
    /// The answer's further actions that will not run: each, and why (for the model).
    pub dropped: Vec<(String, String)>,
    /// The model's new running note.
    pub memory: Option<String>,
}

/// The guard's verdict on an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Review {
    Accept(Box<Proposal>),
    /// Not executable: why, for the model.
    Refuse(String),
    /// The action would repeat a loop.
    Loop(LoopKind),
}

/// A parsed action the client can execute on this page, in its client form: its element is
/// on the page, and typed text goes into something that takes it ([`cannot_type_into`]).
fn executable(raw: &str, view: &PageView<'_>) -> Result<(Action, String), String> {
    let action = Action::parse_model(raw)?;
    if let Some(id) = action.element() {
        if !view.page.has_id(id) {
            return Err(format!(
                "element {} is not on the current page",
                crate::text::single_line(id, 64)
            ));
        }
    }
    if let Action::SetValue(id, _) = &action {
        if let Some(why) = cannot_type_into(view, id) {
            return Err(why);
        }
    }
    let client = action.to_client_string()?;
    Ok((action, client))
}

/// The model's thought with a `fail` reason or a `finish` answer folded in, never empty.
fn thought_of(out: &ModelOutput, action: &Action, client: &str) -> String {
    let mut thought = out.thought.trim().to_owned();
    if let Action::Fail(Some(r)) | Action::Finish(Some(r)) = action {
        if !thought.contains(r.as_str()) {
            thought = format!("{thought} {r}").trim().to_owned();
        }
    }
    // A server tool's own message stands in for a missing thought.
    if thought.is_empty() && !action.is_server_tool() {
        thought = format!("Next: {client}");
    }
    truncate_chars(&thought, MAX_THOUGHT_CHARS)
}

/// The guard's review of a model answer.
pub fn guard(answer: &str, facts: &Facts<'_>) -> Review {
    match parse_model_output(answer) {
        Ok(out) => review(out, facts),
        Err(e) => Review::Refuse(e),
    }
}

/// The review of an action the server's own rules chose (a correction, a banner).
pub fn review_own(thought: &str, action: &str, facts: &Facts<'_>) -> Review {
    review(
        ModelOutput {
            thought: thought.to_owned(),
            action: action.to_owned(),
            actions: vec![action.to_owned()],
            ..ModelOutput::default()
        },
        facts,
    )
}

/// The rules over what the model (or the server) proposes.
pub fn review(out: ModelOutput, facts: &Facts<'_>) -> Review {
    let (action, client) = match executable(&out.action, facts.view) {
        Ok(a) => a,
        Err(e) => return Review::Refuse(e),
    };
    let thought = thought_of(&out, &action, &client);
    let mut decision = Decision::new(thought.clone(), client.clone(), TaskStatus::Executing);
    decision.effect = out.effect;
    let mut confirmation = None;
    let mut rest = Rest::default();
    match &action {
        Action::Finish(_) => decision.status = TaskStatus::Completed,
        Action::Fail(_) => decision.status = TaskStatus::Failed,
        Action::AskUser(q) => {
            let question = q
                .clone()
                .filter(|q| !q.trim().is_empty())
                .unwrap_or_else(|| out.thought.trim().to_owned());
            if question.is_empty() {
                return Review::Refuse("ask_user needs a question".into());
            }
            let question = truncate_chars(&question, MAX_QUESTION_CHARS);
            decision.status = TaskStatus::NeedsUserInput;
            if !out.missing.is_empty() {
                decision.status = TaskStatus::AwaitingUser;
                decision.missing_information = out.missing.clone();
                decision.blocker = Some(BlockerInfo {
                    kind: BlockerKind::MissingInformation,
                    description: format!("Needed to go on: {}", out.missing.join("; ")),
                    user_message: Some(question.clone()),
                    resolution_methods: vec!["provide_in_chat".into()],
                });
            }
            decision.user_question = Some(question);
        }
        Action::GoogleSearch(q) => {
            if let Some(field) = leaks_secret(facts.patterns, facts.view, q) {
                return Review::Refuse(format!(
                    "a search query must not contain what is typed into the field {field}"
                ));
            }
            if facts.secrets.in_text(q) {
                return Review::Refuse(
                    "a search query must not contain what was typed into a password, code or card field".into(),
                );
            }
        }
        a if a.is_server_tool() => {}
        a => {
            if let Some(problem) = carries_secret(a, facts) {
                return Review::Refuse(problem);
            }
            let kind = a.kind();
            if let Some(l) = detect(facts.actions, facts.hashes, facts.views, &client) {
                return Review::Loop(l);
            }
            let target = kind.target().and_then(|id| facts.view.element(id));
            let risk = assess(
                facts.patterns,
                &kind,
                target.as_ref(),
                facts.view,
                &Context {
                    // A key acts on the focus, a click may agree to the choice left there
                    // (finding it may read the whole page: other actions do not look).
                    focus: matches!(kind, ActionKind::Press(_) | ActionKind::Click(_))
                        .then(|| focus(facts))
                        .flatten(),
                    said: facts.said,
                    flag: out.risk.as_deref(),
                    effect: out.effect,
                    title: facts.title,
                },
            );
            if let Some(risk) = risk {
                let (d, c) = ask_first(&thought, &client, &kind, risk, facts);
                decision = Decision {
                    effect: out.effect,
                    ..d
                };
                confirmation = Some(c);
            } else {
                decision.expected_outcome = predict(&kind, facts.view, out.expect.as_deref());
                decision.target = target.map(|t| t.snapshot());
                if out.actions.len() > 1 {
                    rest = add_rest(&mut decision, &kind, &out, facts);
                }
            }
        }
    }
    Review::Accept(Box::new(Proposal {
        decision,
        action,
        plan: out.plan,
        plan_step: out.step.and_then(|s| s.checked_sub(1)),
        task_type: out.task_type,
        confirmation,
        queue: rest.queue,
        dropped: rest.dropped,
        memory: out.memory,
    }))
}

/// `client` (of kind `kind`) turned into a question for the user, and what a yes confirms.
pub fn ask_first(
    thought: &str,
    client: &str,
    kind: &ActionKind<'_>,
    risk: crate::domain::risk::Risk,
    facts: &Facts<'_>,
) -> (Decision, PendingConfirmation) {
    let url = facts.view.url();
    let target = kind.target().and_then(|id| facts.view.element(id));
    let question = format!(
        "Shall I {}? Reply yes to go ahead, or no to stop.",
        risk.what
    );
    let confirmation = PendingConfirmation {
        action: client.to_owned(),
        element_id: kind.target().map(str::to_owned),
        step_index: facts.step_index,
        kind: risk.kind,
        question: question.clone(),
        target: target.as_ref().map(|t| t.snapshot()),
        page: page_of(url),
        url: url.to_owned(),
        page_hash: facts.view.hash().to_owned(),
        asked_again: false,
    };
    let decision = Decision::ask(
        truncate_chars(
            &format!("{thought} This needs your confirmation first."),
            MAX_THOUGHT_CHARS,
        ),
        question,
    );
    (decision, confirmation)
}

/// Why `action` would carry a typed secret somewhere it does not belong: in an address, or
/// typed into a field that is not for secrets.
fn carries_secret(action: &Action, facts: &Facts<'_>) -> Option<String> {
    match action {
        Action::Navigate(url) if facts.secrets.in_text(url) => Some(
            "an address must not contain what was typed into a password, code or card field".into(),
        ),
        Action::SetValue(id, value) if facts.secrets.in_text(value) => {
            let field = facts.view.element(id)?;
            let secret_field =
                crate::domain::risk::Secrets::new(facts.patterns, facts.view).typed(&field, value);
            (!secret_field).then(|| {
                "what was typed into a password, code or card field may only go into such a field"
                    .into()
            })
        }
        _ => None,
    }
}

/// The element that has the focus, if it is on this page: the node the client reports
/// `focused`; else where the task's latest action on an element left it (a key other than Tab,
/// a wait, a scroll or a hover does not move it); else — after a new page, a Tab, or when the
/// element is gone — where the page put it (`autofocus`).
fn focus<'a>(facts: &Facts<'a>) -> Option<crate::domain::facts::ElementFacts<'a>> {
    if let Some(reported) = facts.view.elements().find(|e| e.has_state("focused")) {
        return Some(reported);
    }
    for raw in facts.actions.iter().rev() {
        match Action::parse(raw) {
            Ok(Action::Navigate(_) | Action::GoBack) => break,
            Ok(Action::Press(key)) if key.to_ascii_lowercase().contains("tab") => break,
            Ok(Action::Hover(_)) => {}
            Ok(a) => {
                if let Some(on_page) = a.element().and_then(|id| facts.view.element(id)) {
                    return Some(on_page);
                }
                if a.element().is_some() {
                    break;
                }
            }
            Err(_) => {}
        }
    }
    (facts.view.elements()).find(|e| e.attr("autofocus").is_some())
}

/// An action that will not run, as the model is told of it: its name and target, never the
/// value it would have typed (which may be a secret that was never fingerprinted).
fn label(raw: &str) -> String {
    match Action::parse_model(raw) {
        Ok(Action::SetValue(id, _)) => {
            format!("setValue({}, …)", crate::text::single_line(&id, 40))
        }
        Ok(Action::SelectOption(id, _)) => {
            format!("selectOption({}, …)", crate::text::single_line(&id, 40))
        }
        Ok(_) => crate::text::single_line(raw, 120),
        Err(_) => {
            let name = raw.split('(').next().unwrap_or("");
            format!("{}(…)", crate::text::single_line(name, 40))
        }
    }
}

/// Whether `action` types or navigates with one of the task's typed secrets.
fn typed_secret(action: &Action, facts: &Facts<'_>) -> bool {
    match action {
        Action::SetValue(_, v) | Action::SelectOption(_, v) | Action::Navigate(v) => {
            facts.secrets.in_text(v) || v.contains(crate::domain::secrets::HIDDEN)
        }
        _ => false,
    }
}

/// What becomes of an answer's further actions.
#[derive(Default)]
struct Rest {
    queue: Option<ActionQueue>,
    dropped: Vec<(String, String)>,
}

/// An answer's further actions: with chains on, a safe form fill goes out as a chain; otherwise
/// the fills and one final click wait on the server ([`crate::domain::queue`]), and the rest is
/// dropped with a reason for the model.
fn add_rest(
    decision: &mut Decision,
    first: &ActionKind<'_>,
    out: &ModelOutput,
    facts: &Facts<'_>,
) -> Rest {
    let mut dropped = Vec::new();
    let mut parsed: Vec<(Action, String)> = Vec::new();
    for raw in &out.actions[1..] {
        // What follows an action that does not run was meant to follow it.
        if !dropped.is_empty() {
            dropped.push((
                label(raw),
                queue::Dropped::AfterDropped.describe().to_owned(),
            ));
            continue;
        }
        match executable(raw, facts.view) {
            // What was typed into a secret field never waits in the task record.
            Ok((a, _)) if typed_secret(&a, facts) => dropped.push((
                label(raw),
                "it holds what was typed into a password, code or card field: send it alone"
                    .to_owned(),
            )),
            Ok(a) => parsed.push(a),
            Err(e) => dropped.push((label(raw), e)),
        }
    }
    if facts.chains && dropped.is_empty() {
        let mut all = vec![(first.clone(), decision.action.clone())];
        all.extend(parsed.iter().map(|(a, c)| (a.kind(), c.clone())));
        if let Ok((items, meta)) = chain(&all, facts.view, facts.patterns) {
            decision.chain = items;
            decision.chain_metadata = Some(meta);
            return Rest::default();
        }
    }
    let kinds: Vec<_> = parsed.iter().map(|(a, c)| (a.kind(), c.clone())).collect();
    let (kept, refused) = queue::plan(first, &kinds, facts.view, facts.patterns);
    dropped.extend(
        refused
            .into_iter()
            .map(|(a, why)| (label(&a), why.describe().to_owned())),
    );
    Rest {
        queue: ActionQueue::new(kept, facts.view.url(), &decision.thought),
        dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::page::TreeNode;

    fn page(nodes: &[(&str, &str, &str)]) -> Page {
        let nodes = nodes
            .iter()
            .map(|(i, r, n)| TreeNode::new(i, r, n))
            .collect();
        Page::from_tree(nodes, None)
    }

    fn review_on(answer: &str, page: &Page, actions: &[&str]) -> Review {
        review_with(answer, page, actions, true)
    }

    /// What the gate asks the user about for `answer` after `actions`, if anything.
    fn asked_kind(
        answer: &str,
        page: &Page,
        actions: &[&str],
    ) -> Option<crate::domain::risk::RiskKind> {
        accepted(review_on(answer, page, actions))
            .confirmation
            .map(|c| c.kind)
    }

    fn review_with(answer: &str, page: &Page, actions: &[&str], chains: bool) -> Review {
        let view = PageView {
            page,
            url: "https://shop.example.com/",
        };
        let patterns = RiskPatterns::default();
        let secrets = crate::domain::secrets::SecretKey::derive(b"k").finder(&[]);
        // The earlier actions changed nothing on this page.
        let mut hashes: Vec<&str> = actions.iter().map(|_| "now").collect();
        hashes.push("now");
        guard(
            answer,
            &Facts {
                page,
                view: &view,
                patterns: &patterns,
                actions,
                hashes: &hashes,
                views: &hashes,
                step_index: 4,
                said: "",
                secrets: &secrets,
                chains,
                title: None,
            },
        )
    }

    fn accepted(r: Review) -> Proposal {
        match r {
            Review::Accept(p) => *p,
            other => panic!("refused: {other:?}"),
        }
    }

    #[test]
    fn answers_are_refused_when_the_client_could_not_execute_them() {
        let p = page(&[("1", "btn", "Go")]);
        assert!(matches!(
            review_on("no action here", &p, &[]),
            Review::Refuse(_)
        ));
        let missing = review_on("<Action>click(9)</Action>", &p, &[]);
        assert_eq!(
            missing,
            Review::Refuse("element 9 is not on the current page".into())
        );
        assert!(matches!(
            review_on("<Action>ask_user()</Action>", &p, &[]),
            Review::Refuse(_)
        ));
        let ok = accepted(review_on(
            "<Thought>Go.</Thought><Step>2</Step><Action>click(1)</Action>",
            &p,
            &[],
        ));
        assert_eq!(
            (ok.decision.action.as_str(), ok.plan_step),
            ("click(1)", Some(1))
        );
        assert!(ok.decision.expected_outcome.is_some() && ok.decision.target.is_some());
    }

    #[test]
    fn a_key_acts_where_the_last_action_on_an_element_left_the_focus_or_where_the_page_put_it() {
        let chat = |search_autofocus: bool| {
            let (s, m) = match search_autofocus {
                true => (" autofocus", ""),
                false => ("", " autofocus"),
            };
            Page::from_dom(&format!(
                r#"<h1>#team</h1><input id="1" type="search" aria-label="Search messages"{s}>
                <div id="2" role="textbox" contenteditable="true" aria-label="Message #team"{m}></div>
                <button id="3">Attach a file</button>"#
            ))
            .expect("page")
        };
        let asked = |page: &Page, actions: &[&str]| {
            asked_kind("<Action>press(\"Enter\")</Action>", page, actions)
        };
        let sending = Some(crate::domain::risk::RiskKind::Sending);
        let composer_first = chat(false);
        assert_eq!(asked(&composer_first, &[]), sending, "the page's own focus");
        assert_eq!(
            asked(&composer_first, &["click(1)"]),
            None,
            "Enter in the search box"
        );
        assert_eq!(asked(&composer_first, &["click(2)", "hover(3)"]), sending);
        let reloaded = ["click(1)", "navigate(\"https://chat.example.com/team\")"];
        assert_eq!(asked(&composer_first, &reloaded), sending);
        // A page that puts the focus in its search box: Enter there searches.
        let search_first = chat(true);
        assert_eq!(asked(&search_first, &[]), None);
        assert_eq!(asked(&search_first, &["scroll(true, 1)"]), None);
        assert_eq!(asked(&search_first, &["click(2)", "wait(1)"]), sending);
        // What the last action clicked is gone (a menu closed): the page's focus.
        assert_eq!(asked(&composer_first, &["click(99)"]), sending);
        // The client's report of the focus wins over the task's guess.
        let reported = [
            TreeNode::new("1", "inp", "Search messages"),
            TreeNode {
                s: Some("focused"),
                ..TreeNode::new("2", "textarea", "Message #team")
            },
        ];
        let reported = Page::from_tree(reported.into_iter().collect(), None);
        assert_eq!(asked(&reported, &["click(1)"]), sending);
    }

    #[test]
    fn an_off_control_turns_off_what_the_words_before_it_name() {
        let asked =
            |page: &Page, id: &str| asked_kind(&format!("<Action>click({id})</Action>"), page, &[]);
        let security = Some(crate::domain::risk::RiskKind::Security);
        let rows = page(&[
            ("1", "link", "Change password"),
            ("2", "text", "Two-step verification: on"),
            ("3", "btn", "Turn off"),
            ("4", "text", "Marketing emails: on"),
            ("5", "btn", "Turn off"),
        ]);
        assert_eq!(asked(&rows, "3"), security);
        assert_eq!(asked(&rows, "5"), None, "an opt-out");
        let dom = Page::from_dom(
            r#"<h1>Account</h1><section><h2>Two-step verification</h2><p>On since May.</p>
            <button id="a">Help</button><button id="b">Turn off</button></section>
            <section><h2>Newsletter</h2><button id="c">Turn off</button></section>"#,
        )
        .expect("page");
        assert_eq!(asked(&dom, "b"), security, "under its heading");
        assert_eq!(asked(&dom, "c"), None);
        // A lone question word of one language is a plain word of another: Czech "Ano" (yes)
        // is Filipino "what", and the terse yes of a deletion dialog stays one.
        let dialog = page(&[
            ("20", "dialog", "Odebrat člena?"),
            ("21", "btn", "Zrušit"),
            ("22", "btn", "Ano"),
        ]);
        let deletion = Some(crate::domain::risk::RiskKind::Deletion);
        assert_eq!(asked(&dialog, "22"), deletion);
    }

    #[test]
    fn a_switch_or_list_naming_no_setting_is_the_one_its_row_or_section_names() {
        let asked = |page: &Page, answer: &str| asked_kind(answer, page, &[]);
        let security = Some(crate::domain::risk::RiskKind::Security);
        let dom = Page::from_dom(
            r#"<h1>Account</h1><section><h2>Two-step verification</h2>
            <label for="m">Method</label><select id="m"><option value="app" selected>App</option>
            <option value="sms">Text message</option><option value="off">Off</option></select>
            <label><input type="checkbox" role="switch" id="s" checked> Enabled</label></section>
            <section><h2>Newsletter</h2>
            <label><input type="checkbox" role="switch" id="n" checked> Enabled</label></section>"#,
        )
        .expect("page");
        assert_eq!(
            asked(&dom, r#"<Action>selectOption(m, "off")</Action>"#),
            security
        );
        assert_eq!(asked(&dom, "<Action>uncheck(s)</Action>"), security);
        // Another method, the protection left on, or an opt-out turned off: nothing asked.
        assert_eq!(
            asked(&dom, r#"<Action>selectOption(m, "sms")</Action>"#),
            None
        );
        assert_eq!(asked(&dom, "<Action>uncheck(n)</Action>"), None);
        // In the extension's tree the switch before is a setting of its own, not a label.
        let tree = page(&[
            ("7", "switch", "Two-step verification"),
            ("9", "chk", "Emails about new features"),
        ]);
        assert_eq!(asked(&tree, "<Action>uncheck(7)</Action>"), security);
        assert_eq!(asked(&tree, "<Action>uncheck(9)</Action>"), None);
    }

    #[test]
    fn a_terse_continue_agrees_to_the_choice_the_task_just_made() {
        let asked =
            |page: &Page, actions: &[&str]| asked_kind("<Action>click(9)</Action>", page, actions);
        let plans = page(&[
            ("1", "radio", "Basic – free"),
            ("2", "radio", "Standard – 13,99 €/Monat"),
            ("3", "radio", "Premium – 19,99 €/Monat"),
            ("8", "btn", "Abbrechen"),
            ("9", "btn", "Weiter"),
        ]);
        let subscription = Some(crate::domain::risk::RiskKind::Subscription);
        assert_eq!(asked(&plans, &["click(3)"]), subscription);
        assert_eq!(
            asked(&plans, &["click(2)", "scroll(true, 1)"]),
            subscription
        );
        // A free plan, no choice made, or a choice on another page: nothing asked.
        assert_eq!(asked(&plans, &["click(1)"]), None);
        assert_eq!(asked(&plans, &[]), None);
        assert_eq!(
            asked(
                &plans,
                &["click(3)", "navigate(\"https://shop.example.com/\")"]
            ),
            None
        );
        let access = page(&[
            ("4", "radio", "Only people invited"),
            ("5", "radio", "Anyone with the link"),
            ("9", "btn", "Done"),
        ]);
        let sharing = Some(crate::domain::risk::RiskKind::Sharing);
        assert_eq!(asked(&access, &["click(5)"]), sharing);
        assert_eq!(asked(&access, &["click(4)"]), None);
    }

    #[test]
    fn a_box_or_option_sets_a_value_and_is_read_by_its_label() {
        let asked = |page: &Page, answer: &str, actions: &[&str]| asked_kind(answer, page, actions);
        use crate::domain::risk::RiskKind;
        let dom = Page::from_dom(
            r#"<h1>Premium</h1><label><input type="checkbox" role="switch" id="r"> Auto-renew</label>
            <div role="dialog" aria-modal="true"><h2>Billing period</h2>
            <label><input type="radio" name="p" id="y"> Pay yearly – $99/year</label>
            <label><input type="radio" name="p" id="m" checked> Pay monthly – $9/month</label>
            <button id="c">Continue</button></div>
            <form><h2>Pay by card</h2><label>Card number <input id="n"></label>
            <label><input type="checkbox" id="k" checked> Save my card</label>
            <button id="p">Confirm payment</button></form>"#,
        )
        .expect("page");
        // A switch wrapped in its label is named by it.
        assert_eq!(
            asked(&dom, "<Action>check(r)</Action>", &[]),
            Some(RiskKind::Subscription)
        );
        assert_eq!(asked(&dom, "<Action>uncheck(r)</Action>", &[]), None);
        // Picking a billing period, or unticking "Save my card" on a payment form, sets a
        // value; the button that applies it commits.
        assert_eq!(asked(&dom, "<Action>check(y)</Action>", &[]), None);
        assert_eq!(asked(&dom, "<Action>uncheck(k)</Action>", &[]), None);
        assert_eq!(
            asked(&dom, "<Action>click(c)</Action>", &["check(y)"]),
            Some(RiskKind::Subscription)
        );
        assert_eq!(
            asked(&dom, "<Action>click(p)</Action>", &["uncheck(k)"]),
            Some(RiskKind::Payment)
        );
    }

    #[test]
    fn typing_into_what_takes_no_text_is_refused_naming_the_fields_nearby() {
        let p = page(&[
            ("1", "btn", "Save"),
            ("2", "inp", "Name"),
            ("3", "link", "Help"),
        ]);
        let Review::Refuse(why) = review_on("<Action>setValue(1, \"Ada\")</Action>", &p, &[])
        else {
            panic!("a value typed into a button went out");
        };
        assert!(why.contains("[2] inp \"Name\""), "{why}");
        let fill = accepted(review_on("<Action>setValue(2, \"Ada\")</Action>", &p, &[]));
        assert_eq!(fill.decision.action, "setValue(2, \"Ada\")");
        // Nor does such a value wait among an answer's further actions.
        let more = accepted(review_with(
            "<Action>setValue(2, \"Ada\")</Action><Action>setValue(3, \"x\")</Action>",
            &p,
            &[],
            false,
        ));
        assert!(more.queue.is_none(), "{:?}", more.queue);
        assert!(
            more.dropped.iter().any(|(a, _)| a == "setValue(3, …)"),
            "{:?}",
            more.dropped
        );
    }

    #[test]
    fn loops_risks_and_chains_are_the_servers_call() {
        let p = page(&[
            ("1", "btn", "Next"),
            ("2", "btn", "Delete account"),
            ("3", "inp", "Name"),
            ("4", "inp", "City"),
        ]);
        assert_eq!(
            review_on("<Action>click(1)</Action>", &p, &["click(1)", "click(1)"]),
            Review::Loop(LoopKind::Repeated)
        );
        let gated = accepted(review_on(
            "<Thought>Delete it.</Thought><Action>click(2)</Action>",
            &p,
            &[],
        ));
        assert_eq!(gated.decision.action, "ask_user()");
        assert_eq!(gated.decision.status, TaskStatus::NeedsUserInput);
        let pending = gated.confirmation.expect("confirmation");
        assert_eq!(
            (pending.action.as_str(), pending.step_index),
            ("click(2)", 4)
        );
        assert!(gated
            .decision
            .user_question
            .expect("q")
            .contains("\"Delete account\""));
        let flagged = accepted(review_on(
            "<Action>click(1)</Action><Risk>sends the form to a stranger</Risk>",
            &p,
            &[],
        ));
        assert!(
            flagged.confirmation.is_some(),
            "the model's own warning gates too"
        );
        let chain = accepted(review_on(
            "<Action>setValue(3, \"Ada\")</Action><Action>setValue(4, \"Paris\")</Action>",
            &p,
            &[],
        ));
        assert_eq!(chain.decision.chain.len(), 2);
        let not_chain = accepted(review_on(
            "<Action>setValue(3, \"Ada\")</Action><Action>setValue(9, \"x\")</Action>",
            &p,
            &[],
        ));
        assert!(
            not_chain.decision.chain.is_empty(),
            "a chain with a missing field is not sent"
        );
        let p = page(&[
            ("3", "inp", "Name"),
            ("5", "switch", "Delete my data permanently"),
        ]);
        let risky_item = accepted(review_on(
            "<Action>setValue(3, \"Ada\")</Action><Action>check(5)</Action>",
            &p,
            &[],
        ));
        assert!(
            risky_item.decision.chain.is_empty() && risky_item.confirmation.is_none(),
            "a chain with a risky item is not sent: its first action goes alone"
        );
        assert_eq!(risky_item.decision.action, "setValue(3, \"Ada\")");
        assert_eq!(not_chain.decision.action, "setValue(3, \"Ada\")");
    }

    #[test]
    fn without_chains_a_fill_and_its_submit_wait_on_the_server_and_the_rest_is_named() {
        let p = page(&[
            ("3", "inp", "Name"),
            ("4", "inp", "City"),
            ("5", "btn", "Save"),
            ("6", "link", "Home"),
        ]);
        let answer = "<Thought>Fill and save.</Thought><Action>setValue(3, \"Ada\")</Action>\
            <Action>setValue(4, \"Paris\")</Action><Action>click(5)</Action>\
            <Action>click(6)</Action><Action>click(99)</Action>";
        let got = accepted(review_with(answer, &p, &[], false));
        assert!(got.decision.chain.is_empty(), "no chainedActions");
        assert_eq!(got.decision.action, "setValue(3, \"Ada\")");
        let q = got.queue.expect("queue");
        let waiting: Vec<&str> = q.items.iter().map(|i| i.action.as_str()).collect();
        assert_eq!(waiting, ["setValue(4, \"Paris\")", "click(5)"]);
        assert_eq!(
            (q.done, q.total, q.url.as_str()),
            (1, 3, "https://shop.example.com/")
        );
        let dropped: Vec<&str> = got.dropped.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(dropped, ["click(99)", "click(6)"]);
        // With chains on, the same fills go out together.
        let fills = "<Action>setValue(3, \"Ada\")</Action><Action>setValue(4, \"Paris\")</Action>";
        let on = accepted(review_with(fills, &p, &[], true));
        assert_eq!((on.decision.chain.len(), on.queue.is_none()), (2, true));
        let off = accepted(review_with(fills, &p, &[], false));
        assert_eq!(
            (off.decision.chain.len(), off.queue.map(|q| q.items.len())),
            (0, Some(1))
        );
    }

    #[test]
    fn further_actions_never_keep_a_secret_and_are_named_without_their_values() {
        let p = page(&[
            ("3", "inp", "Name"),
            ("4", "inp", "Password"),
            ("5", "btn", "Sign in"),
        ]);
        let view = PageView {
            page: &p,
            url: "https://shop.example.com/",
        };
        let patterns = RiskPatterns::default();
        let key = crate::domain::secrets::SecretKey::derive(b"k");
        let marks: Vec<_> = key.mark("hunter2").into_iter().collect();
        let secrets = key.finder(&marks);
        let hashes = ["now"];
        let facts = Facts {
            page: &p,
            view: &view,
            patterns: &patterns,
            actions: &[],
            hashes: &hashes,
            views: &hashes,
            step_index: 1,
            said: "",
            secrets: &secrets,
            chains: false,
            title: None,
        };
        let answer =
            "<Action>setValue(3, \"Ada\")</Action><Action>setValue(4, \"hunter2\")</Action>\
            <Action>click(5)</Action><Action>setValue(99, \"sesame\")</Action>";
        let got = accepted(guard(answer, &facts));
        assert!(got.queue.is_none(), "{:?}", got.queue);
        let said: String = got
            .dropped
            .iter()
            .map(|(a, why)| format!("{a} {why}; "))
            .collect();
        assert!(
            said.contains("setValue(4, …)") && said.contains("setValue(99"),
            "{said}"
        );
        assert!(
            !said.contains("hunter2") && !said.contains("sesame"),
            "{said}"
        );
    }
}
