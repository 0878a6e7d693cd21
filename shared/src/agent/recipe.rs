//! Recipes over the action grammar: a step's recipe facts taken when it is decided, a verified
//! run's records made into a recipe, and a recipe step made into the client's action again.
//!
//! What a run is recorded from: its browser actions in order, without those whose verdict
//! failed (the correction that followed stands in for them), the user's confirmations kept as
//! confirmations, and the final answer. A run is not recorded when it needed the user's own
//! information (a question that was not a confirmation: the next user would get this one's
//! answers), when an action's target cannot be described, or when it ran several actions in
//! one answer (a chain: its targets were not described one by one).

use chrono::{DateTime, Utc};

use crate::agent::action::Action;
use crate::domain::facts::PageFacts;
use crate::domain::recipe::book::{
    recipe_id, templated, ParamShape, Recipe, RecipeStep, StepRecipe, FORMAT, MAX_ANSWER_CHARS,
    MAX_BYTES, MAX_INTENT_CHARS, MAX_STEPS,
};
use crate::domain::recipe::run::RecipeRun;
use crate::domain::recipe::{
    describe, names_a_record, normalise, parameterise, site_key, TargetDescription,
};
use crate::domain::secrets::HIDDEN;
use crate::domain::{Step, StepKind, Task};
use crate::text::single_line;

/// A decided step's recipe facts: its target as it can be found again and the page's pattern.
pub fn mark(page: &dyn PageFacts, url: &str, action: &str) -> StepRecipe {
    let target = Action::parse(action)
        .ok()
        .and_then(|a| a.element().and_then(|id| describe(page, id)));
    StepRecipe {
        target,
        page: site_key(url).map(|s| s.path).unwrap_or_default(),
        used: None,
    }
}

/// Why a verified run was not made a recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRecorded {
    /// The task did not start on a web page.
    NoSite,
    /// The run asked the user for something other than a confirmation.
    AskedUser,
    /// An action's target has no description (recorded before recipes, or not described).
    Undescribed(u32),
    /// The run sent several actions in one answer.
    Chain(u32),
    /// No browser action and no final answer.
    Empty,
    TooLong,
    TooLarge,
    /// The instruction is mostly the user's values: its template would take other tasks.
    TooGeneral,
    /// The instruction held a value typed into a secret field.
    SecretInInstruction,
}

impl NotRecorded {
    pub fn describe(&self) -> String {
        match self {
            NotRecorded::NoSite => "the task did not start on a web page".into(),
            NotRecorded::AskedUser => "the run needed the user's own answers".into(),
            NotRecorded::Undescribed(i) => format!("step {i}'s target has no description"),
            NotRecorded::Chain(i) => format!("step {i} sent several actions at once"),
            NotRecorded::Empty => "the run has no step to keep".into(),
            NotRecorded::TooLong => format!("the run took more than {MAX_STEPS} steps"),
            NotRecorded::TooLarge => format!("the recipe would exceed {MAX_BYTES} bytes"),
            NotRecorded::TooGeneral => "the instruction is mostly the user's values".into(),
            NotRecorded::SecretInInstruction => "the instruction held a secret".into(),
        }
    }
}

/// The client action's name: `click`, `setValue`, `finish`, ...
fn name_of(client: &str) -> &str {
    client.split('(').next().unwrap_or("").trim()
}

/// The value an action types or chooses (`None` for others).
fn typed(a: &Action) -> Option<&str> {
    match a {
        Action::SetValue(_, v) | Action::SelectOption(_, v) => Some(v),
        _ => None,
    }
}

/// What a field is called as a parameter: the target's name, or its role.
fn field_of(step: &Step) -> String {
    step.recipe
        .as_ref()
        .and_then(|r| r.target.as_ref())
        .map(|t| {
            if t.name.is_empty() {
                role_word(&t.role).to_owned()
            } else {
                t.name.clone()
            }
        })
        .unwrap_or_else(|| "value".into())
}

fn role_word(role: &str) -> &str {
    match role {
        "btn" => "button",
        "inp" => "field",
        "sel" => "list",
        "chk" => "checkbox",
        other => other,
    }
}

/// Whether `name` is quoted in `query` (`"ok"`, `'ok'`, `“ok”`): a click target the user named
/// as a value, which another run may name differently.
fn quoted_in(query: &str, name: &str) -> bool {
    let q = normalise(query);
    [('"', '"'), ('\'', '\''), ('“', '”'), ('‘', '’')]
        .iter()
        .any(|(open, close)| q.contains(&format!("{open}{name}{close}")))
}

/// Whether a target's name holds one of the instruction's values among other words ("Alice Ng
/// alice@corp.com" for "share it with alice@corp.com"): another run's value names another
/// element, so the recorded one is never replayed. Short values (a quantity) are not looked
/// for: "3" is in too many names.
fn holds_value(name: &str, value: &str) -> bool {
    let value = normalise(value);
    if value.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
        return false;
    }
    let alnum_at = |i: usize| name[i..].chars().next().is_some_and(char::is_alphanumeric);
    name.match_indices(value.as_str()).any(|(at, _)| {
        let before = name[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        before && !alnum_at(at + value.len())
    })
}

/// Whether a final answer carries what the run found rather than what it was told: a number,
/// an amount, a quoted text or a name (a capitalised word inside a sentence) the instruction
/// does not hold, or a run that read the page or the web with a tool. Such an answer is the
/// model's to give on every run; another is replaced by the server's own words (the recorded
/// run's text, which may name its user, is never replayed).
fn answer_from_page(answer: &str, instruction: &str, read: bool) -> bool {
    let query = normalise(instruction);
    let found = |w: &str| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        !w.is_empty() && !query.contains(&w.to_lowercase())
    };
    let words: Vec<&str> = answer.split_whitespace().collect();
    let named = words.iter().enumerate().any(|(i, w)| {
        let starts_sentence = i == 0 || words[i - 1].ends_with(['.', '!', '?', ':']);
        !starts_sentence && w.chars().next().is_some_and(char::is_uppercase) && found(w)
    });
    read || named
        || asks(instruction)
        || words
            .iter()
            .any(|w| w.chars().any(|c| c.is_ascii_digit() || "$€£¥".contains(c)) && found(w))
        || answer
            .split(['"', '“', '”'])
            .skip(1)
            .step_by(2)
            .any(|q| !q.trim().is_empty() && found(q))
}

/// Whether an instruction asks for something to be found out (its answer is the run's
/// finding, whatever words it has).
fn asks(query: &str) -> bool {
    const OPENERS: &[&str] = &[
        "what",
        "which",
        "how",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "why",
        "is",
        "are",
        "was",
        "were",
        "does",
        "do",
        "did",
        "can",
        "could",
        "will",
        "should",
        "tell",
        "find out",
        "look up",
        "lookup",
        "check if",
        "check whether",
        "check the",
        "get me",
        "show me",
        "read",
        "list",
        "count",
        "see if",
        "see whether",
        "find the",
        "check my",
        "check on",
        "check that",
        "check for",
        "verify",
        "confirm if",
        "confirm whether",
        "confirm that",
        "what's",
        "summarise",
        "summarize",
    ];
    let q = query.trim().to_lowercase();
    // A status is looked up, whatever the verb ("open my order's status").
    let status = q
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "status");
    status
        || q.ends_with('?')
        || OPENERS.iter().any(|o| {
            q.strip_prefix(o)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ',', ':']))
        })
}

/// What a step does, in the server's words (never the recorded run's thought, which may speak
/// of its user): `click the btn "continue to review"`, `setValue … with {full_name}`.
fn intent_of(name: &str, target: Option<&TargetDescription>, param: Option<&str>) -> String {
    let target = target
        .map(|t| match t.name.is_empty() {
            true => format!(" the {}", t.role),
            false => format!(" the {} \"{}\"", t.role, t.name),
        })
        .unwrap_or_default();
    let value = param.map(|p| format!(" with {{{p}}}")).unwrap_or_default();
    single_line(&format!("{name}{target}{value}"), MAX_INTENT_CHARS)
}

/// The recipe of `task`'s verified run, from its records in order (those stored and this
/// request's).
pub fn record(
    task: &Task,
    records: &[&Step],
    now: DateTime<Utc>,
    ttl_seconds: i64,
) -> Result<Recipe, NotRecorded> {
    let site = site_key(&task.url).ok_or(NotRecorded::NoSite)?;
    let failed: Vec<u32> = records
        .iter()
        .filter_map(|s| s.verification.as_ref())
        .filter(|v| v.failed())
        .map(|v| v.step_index)
        .collect();
    let read = records
        .iter()
        .any(|s| matches!(s.tool(), Some("readPage" | "googleSearch")));
    let dom: Vec<&Step> = records
        .iter()
        .copied()
        .filter(|s| s.kind == StepKind::Dom && !s.action.is_empty())
        .collect();
    // The run's values, with the fields they went into.
    let mut supplied: Vec<(String, String)> = Vec::new();
    let mut kept: Vec<(&Step, Action, bool)> = Vec::new();
    let mut confirm_next = false;
    for (i, s) in dom.iter().enumerate() {
        if s.chain.len() > 1 {
            return Err(NotRecorded::Chain(s.index));
        }
        let Ok(action) = Action::parse(&s.action) else {
            continue;
        };
        match action {
            Action::AskUser(_) => {
                let confirmed = dom
                    .get(i + 1)
                    .and_then(|n| n.before_state.as_ref())
                    .is_some_and(|b| b.confirmed);
                if !confirmed {
                    return Err(NotRecorded::AskedUser);
                }
                confirm_next = true;
                continue;
            }
            Action::Fail(_) => continue,
            _ => {}
        }
        if failed.contains(&s.index) {
            continue;
        }
        let target = s.recipe.as_ref().and_then(|r| r.target.as_ref());
        if action.element().is_some() && target.is_none() {
            return Err(NotRecorded::Undescribed(s.index));
        }
        if let Some(v) = typed(&action).filter(|v| !v.contains(HIDDEN)) {
            supplied.push((field_of(s), v.to_owned()));
        }
        if let (Action::Click(_), Some(t)) = (&action, target) {
            if quoted_in(&task.query, &t.name) {
                supplied.push((role_word(&t.role).to_owned(), t.name.clone()));
            }
        }
        kept.push((s, action, std::mem::take(&mut confirm_next)));
    }
    if kept.is_empty() {
        return Err(NotRecorded::Empty);
    }
    if kept.len() > MAX_STEPS {
        return Err(NotRecorded::TooLong);
    }
    let refs: Vec<(&str, &str)> = supplied
        .iter()
        .map(|(f, v)| (f.as_str(), v.as_str()))
        .collect();
    let template = parameterise(&task.query, &refs);
    if !crate::domain::recipe::specific(&template.text) {
        return Err(NotRecorded::TooGeneral);
    }
    // The instruction held a secret (kept as its marker): no later instruction would match it,
    // and the recipe it would replace binds the value as a parameter of each run.
    if template.text.contains(&HIDDEN.to_lowercase()) {
        return Err(NotRecorded::SecretInInstruction);
    }
    let params = &template.params;
    let param_for = |v: &str| {
        let v = normalise(v);
        params.iter().find(|(_, p)| *p == v).map(|(n, _)| n.clone())
    };
    let steps =
        kept.iter()
            .map(|(s, action, confirm)| {
                let mark = s.recipe.clone().unwrap_or_default();
                let mut step = RecipeStep {
                    target: mark.target.clone(),
                    confirm: *confirm,
                    optional: task
                        .recipe
                        .as_ref()
                        .is_some_and(|r| r.inserted.contains(&s.index)),
                    ..RecipeStep::new(name_of(&s.action), &mark.page)
                };
                if let Some(t) = &mark.target {
                    if matches!(action, Action::Click(_)) {
                        step.target_param = param_for(&t.name);
                    }
                }
                // A target named by a parameter keeps the parameter, not the recorded value.
                if let (Some(p), Some(t)) = (&step.target_param, step.target.as_mut()) {
                    t.name = format!("{{{p}}}");
                    (t.nth, t.of) = (0, 1);
                }
                // A target named by the recorded run's data (a record's number, a value of the
                // instruction among other words, a hidden secret) is the model's to pick on
                // every run; its name is not kept. A list is named by its options' text, which
                // holds the value it offers: that value does not make it another list.
                let list = matches!(action, Action::SelectOption(..));
                if let Some(t) = step.target.as_mut().filter(|t| {
                    names_a_record(&t.name)
                        || t.name.contains(&HIDDEN.to_lowercase())
                        || !list && params.iter().any(|(_, v)| holds_value(&t.name, v))
                }) {
                    if step.target_param.is_none() {
                        t.name.clear();
                        (t.nth, t.of) = (0, 1);
                        step.found_target = true;
                    }
                }
                match action {
                    Action::Finish(_) => {
                        // A replayed finish is the server's own words (and was replayed because
                        // the recorded answer told nothing of the page).
                        let replayed = mark.used.as_ref().is_some_and(|u| {
                            u.mode == crate::domain::recipe::book::UseMode::Replayed
                        });
                        let answer = single_line(&s.thought, MAX_ANSWER_CHARS);
                        step.answer_from_page =
                            !replayed && answer_from_page(&answer, &task.query, read);
                    }
                    // An address or a text to find is kept only when it is wholly one of the
                    // instruction's values; anything else may hold what the run came across
                    // (a user's page, an order's number): the model gives it on every run.
                    Action::Navigate(v) | Action::FindText(v) => match param_for(v) {
                        Some(p) => step.value_param = Some(p),
                        None => step.found_value = true,
                    },
                    a if a.element().is_none() => {
                        step.value = Some(templated(&s.action, params));
                    }
                    a => match typed(a) {
                        Some(v) if v.contains(HIDDEN) => step.secret = true,
                        Some(v) => match param_for(v) {
                            Some(p) => step.value_param = Some(p),
                            // Not given by the instruction: the recorded run's value is not kept.
                            None => step.found_value = true,
                        },
                        None => {}
                    },
                }
                step.intent = intent_of(
                    &step.action,
                    step.target.as_ref(),
                    step.value_param.as_deref().or(step.target_param.as_deref()),
                );
                step
            })
            .collect();
    let recipe = Recipe {
        id: recipe_id(&site.domain, &site.path, &template.text),
        tenant_id: task.tenant_id.clone(),
        domain: site.domain,
        path: site.path,
        template: template.text,
        params: params.iter().map(|(n, _)| n.clone()).collect(),
        shapes: params.iter().map(|(_, v)| ParamShape::of(v)).collect(),
        format: FORMAT,
        steps,
        recorded_from: task.id.clone(),
        created_at: now,
        updated_at: now,
        expires_at: now.timestamp() + ttl_seconds,
        replays: 0,
        healed_runs: 0,
    };
    let size = serde_json::to_vec(&recipe).map_or(usize::MAX, |b| b.len());
    if size > MAX_BYTES {
        return Err(NotRecorded::TooLarge);
    }
    Ok(recipe)
}

/// Recipe step `k` of `run` as the client's action on element `target`, and the decision's
/// thought; `None` when it cannot be written (a value that no longer parses).
pub fn action(run: &RecipeRun, k: usize, target: Option<&str>) -> Option<(String, String)> {
    let step = run.steps.get(k)?;
    let thought = |what: &str| {
        let intent = run.intent_of(k);
        let intent = if intent.is_empty() {
            what.to_owned()
        } else {
            intent
        };
        format!(
            "Following this task's recipe (step {} of {}): {intent}",
            k + 1,
            run.steps.len()
        )
    };
    let fill = |v: &str| crate::domain::recipe::book::filled(v, &run.params);
    if step.action == "finish" {
        return Some((
            "finish()".into(),
            "Done: the steps recorded for this task ran again, and each one showed its outcome on the page."
                .into(),
        ));
    }
    let id = || target.map(str::to_owned);
    let a = match step.action.as_str() {
        "click" => Action::Click(id()?),
        "check" => Action::Check(id()?),
        "uncheck" => Action::Uncheck(id()?),
        "hover" => Action::Hover(id()?),
        "setValue" => Action::SetValue(id()?, run.value_of(k)?),
        "selectOption" => Action::SelectOption(id()?, run.value_of(k)?),
        "navigate" => Action::Navigate(run.value_of(k)?),
        "findText" => Action::FindText(run.value_of(k)?),
        // Actions without a target keep their whole call.
        _ if target.is_none() => Action::parse(&fill(step.value.as_deref()?)).ok()?,
        _ => return None,
    };
    let client = a.to_client_string().ok()?;
    Some((client.clone(), thought(&client)))
}

#[cfg(test)]
#[path = "recipe_tests.rs"]
mod tests;
