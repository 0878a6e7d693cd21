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
    recipe_id, templated, Recipe, RecipeStep, StepRecipe, MAX_ANSWER_CHARS, MAX_BYTES,
    MAX_INTENT_CHARS, MAX_STEPS,
};
use crate::domain::recipe::run::RecipeRun;
use crate::domain::recipe::{describe, normalise, parameterise, site_key};
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

/// Whether a final answer carries what the run found rather than what it was told: a number,
/// an amount or a quoted text the instruction does not hold, or a run that read the page or the
/// web with a tool.
fn answer_from_page(answer: &str, query: &str, read: bool) -> bool {
    let query = normalise(query);
    let found = |w: &str| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        !w.is_empty() && !query.contains(&w.to_lowercase())
    };
    read || answer
        .split_whitespace()
        .any(|w| w.chars().any(|c| c.is_ascii_digit() || "$€£¥".contains(c)) && found(w))
        || answer
            .split(['"', '“', '”'])
            .skip(1)
            .step_by(2)
            .any(|q| !q.trim().is_empty() && found(q))
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
    let params = &template.params;
    let param_for = |v: &str| {
        let v = normalise(v);
        params.iter().find(|(_, p)| *p == v).map(|(n, _)| n.clone())
    };
    let steps = kept
        .iter()
        .map(|(s, action, confirm)| {
            let mark = s.recipe.clone().unwrap_or_default();
            let name = name_of(&s.action).to_owned();
            let mut step = RecipeStep {
                action: name,
                value: None,
                value_param: None,
                target: mark.target.clone(),
                target_param: None,
                page: mark.page.clone(),
                // A thought that named a secret keeps only its marker: it is left out.
                intent: if s.thought.contains(HIDDEN) {
                    String::new()
                } else {
                    single_line(&templated(&s.thought, params), MAX_INTENT_CHARS)
                },
                expect: s
                    .expected_outcome
                    .as_ref()
                    .map(|e| single_line(&templated(&e.description, params), MAX_INTENT_CHARS)),
                confirm: *confirm,
                secret: false,
                answer_from_page: false,
                optional: task
                    .recipe
                    .as_ref()
                    .is_some_and(|r| r.inserted.contains(&s.index)),
            };
            if let Some(t) = &mark.target {
                if matches!(action, Action::Click(_)) {
                    step.target_param = param_for(&t.name);
                }
            }
            match action {
                Action::Finish(_) => {
                    let answer = single_line(&s.thought, MAX_ANSWER_CHARS);
                    step.answer_from_page = answer_from_page(&answer, &task.query, read);
                    step.value = Some(templated(&answer, params));
                    step.intent = String::new();
                }
                a if a.element().is_none() => {
                    step.value = Some(templated(&s.action, params));
                }
                a => match typed(a) {
                    Some(v) if v.contains(HIDDEN) => step.secret = true,
                    Some(v) => match param_for(v) {
                        Some(p) => step.value_param = Some(p),
                        None => step.value = Some(v.to_owned()),
                    },
                    None => {}
                },
            }
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
        let answer = fill(step.value.as_deref().unwrap_or("Done."));
        return Some(("finish()".into(), answer));
    }
    let id = || target.map(str::to_owned);
    let a = match step.action.as_str() {
        "click" => Action::Click(id()?),
        "check" => Action::Check(id()?),
        "uncheck" => Action::Uncheck(id()?),
        "hover" => Action::Hover(id()?),
        "setValue" => Action::SetValue(id()?, run.value_of(k)?),
        "selectOption" => Action::SelectOption(id()?, run.value_of(k)?),
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
