//! Recipes over the action grammar: a decided step's recipe facts, a verified run made into
//! its member's recipe, a recipe step made into the client's action again (`docs/recipes.md`).

use chrono::{DateTime, Utc};

use crate::agent::action::{name_and_value, quote, Action};
use crate::domain::facts::PageFacts;
use crate::domain::recipe::book::{
    recipe_id, OwnValue, ParamShape, Recipe, RecipeStep, StepRecipe, CHOICES, FORMAT, MAX_BYTES,
    MAX_INTENT_CHARS, MAX_STEPS,
};
use crate::domain::recipe::run::RecipeRun;
use crate::domain::recipe::{
    context, describe, names_a_record, normalise, parameterise, site_key, specific,
    TargetDescription,
};
use crate::domain::secrets::HIDDEN;
use crate::domain::{Step, StepKind, Task};
use crate::text::{single_line, word_starts};

/// A decided step's recipe facts.
pub fn mark(page: &dyn PageFacts, url: &str, title: Option<&str>, action: &str) -> StepRecipe {
    let action = Action::parse(action).ok();
    let id = action.as_ref().and_then(|a| a.element());
    StepRecipe {
        target: id.and_then(|id| describe(page, id)),
        page: site_key(url).map(|s| s.path).unwrap_or_default(),
        context: id
            .and_then(|id| page.holder_text(id))
            .and_then(|t| context(&t)),
        title: title.and_then(context),
        used: None,
    }
}

/// Why a verified run was not made a recipe (logged): no web page; asked the user for more
/// than a confirmation; step N's target undescribed or several actions at once; no step,
/// too many or too large; an instruction mostly the user's values (or a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRecorded {
    NoSite,
    AskedUser,
    Undescribed(u32),
    Chain(u32),
    Empty,
    TooLong,
    TooLarge,
    TooGeneral,
}

/// Whether `name` is quoted in `query` (`"ok"`, `“ok”`): a target the user named as a value.
fn quoted_in(query: &str, name: &str) -> bool {
    let q = normalise(query);
    [('"', '"'), ('\'', '\''), ('“', '”'), ('‘', '’')]
        .iter()
        .any(|(open, close)| q.contains(&format!("{open}{name}{close}")))
}

/// Whether a target's name holds a value of the instruction's among other words ("Alice Ng
/// alice@corp.com"), of three letters or digits at least.
fn holds_value(name: &str, value: &str) -> bool {
    let value = normalise(value);
    value.chars().filter(|c| c.is_alphanumeric()).count() >= 3
        && word_starts(name, &value).next().is_some()
}

/// Openers of an instruction that asks for something to be found out.
const ASKING: &str = "what|which|how|when|where|who|whom|whose|why|is|are|was|were|does|do|did|\
    can|could|will|should|tell|find out|look up|lookup|check if|check whether|check the|\
    check my|check on|check that|check for|get me|show me|read|list|count|see if|see whether|\
    find the|verify|confirm if|confirm whether|confirm that|what's|summarise|summarize";

/// Whether a final answer carries what the run found (a number, an amount, a quoted text or a
/// name the instruction does not hold; a run that read with a tool; an instruction that asks).
fn answer_from_page(answer: &str, instruction: &str, read: bool) -> bool {
    let query = normalise(instruction);
    let found = |w: &str| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        !w.is_empty() && !query.contains(&w.to_lowercase())
    };
    let asks = instruction.trim().ends_with('?')
        || query
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "status")
        || ASKING.split('|').any(|o| {
            (query.strip_prefix(o))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ',', ':']))
        });
    let words: Vec<&str> = answer.split_whitespace().collect();
    let named = words.iter().enumerate().any(|(i, w)| {
        let starts_sentence = i == 0 || words[i - 1].ends_with(['.', '!', '?', ':']);
        !starts_sentence && w.chars().next().is_some_and(char::is_uppercase) && found(w)
    });
    let numbers = (words.iter())
        .any(|w| w.chars().any(|c| c.is_ascii_digit() || "$€£¥".contains(c)) && found(w));
    let mut quoted = answer.split(['"', '“', '”']).skip(1).step_by(2);
    read || asks || named || numbers || quoted.any(|q| !q.trim().is_empty() && found(q))
}

/// The browser actions a run is recorded from, in order, without those whose verdict failed,
/// each with whether the user confirmed it first.
fn kept<'a>(records: &[&'a Step]) -> Result<Vec<(&'a Step, Action, bool)>, NotRecorded> {
    let failed: Vec<u32> = (records.iter().filter_map(|s| s.verification.as_ref()))
        .filter(|v| v.failed())
        .map(|v| v.step_index)
        .collect();
    let dom: Vec<&Step> = (records.iter().copied())
        .filter(|s| s.kind == StepKind::Dom && !s.action.is_empty())
        .collect();
    let (mut out, mut confirm_next) = (Vec::new(), false);
    for (i, s) in dom.iter().enumerate() {
        if s.chain.len() > 1 {
            return Err(NotRecorded::Chain(s.index));
        }
        match Action::parse(&s.action) {
            Ok(Action::AskUser(_)) => {
                let next = dom.get(i + 1).and_then(|n| n.before_state.as_ref());
                if !next.is_some_and(|b| b.confirmed) {
                    return Err(NotRecorded::AskedUser);
                }
                confirm_next = true;
            }
            Ok(Action::Fail(_)) | Err(_) => {}
            Ok(_) if failed.contains(&s.index) => {}
            Ok(action) => {
                if action.element().is_some() && target(s).is_none() {
                    return Err(NotRecorded::Undescribed(s.index));
                }
                out.push((*s, action, std::mem::take(&mut confirm_next)));
            }
        }
    }
    match out.len() {
        0 => Err(NotRecorded::Empty),
        n if n > MAX_STEPS => Err(NotRecorded::TooLong),
        _ => Ok(out),
    }
}

fn target(s: &Step) -> Option<&TargetDescription> {
    s.recipe.as_ref().and_then(|r| r.target.as_ref())
}

/// A value a kept action typed or chose, with its field, or a choice by a name the instruction
/// holds (an option, a quoted name).
fn supplied<'a>(query: &str, s: &'a Step, action: &'a Action) -> Option<(&'a str, &'a str)> {
    match (action, target(s)) {
        (Action::SetValue(_, v) | Action::SelectOption(_, v), t) if !v.contains(HIDDEN) => {
            let field = t.map_or(
                "value",
                |t| if t.name.is_empty() { &t.role } else { &t.name },
            );
            Some((field, v))
        }
        (Action::Click(_) | Action::Check(_), Some(t))
            if CHOICES.contains(&t.role.as_str()) || quoted_in(query, &t.name) =>
        {
            Some((&t.role, &t.name))
        }
        _ => None,
    }
}

/// The recipe of `task`'s verified run for its member, from its records in order.
pub fn record(
    task: &Task,
    records: &[&Step],
    now: DateTime<Utc>,
    ttl_seconds: i64,
) -> Result<Recipe, NotRecorded> {
    let site = site_key(&task.goal.url).ok_or(NotRecorded::NoSite)?;
    let read = (records.iter()).any(|s| matches!(s.tool(), Some("readPage" | "googleSearch")));
    let kept = kept(records)?;
    let supplied: Vec<(&str, &str)> = (kept.iter())
        .filter_map(|(s, action, _)| supplied(&task.goal.query, s, action))
        .collect();
    let template = parameterise(&task.goal.query, &supplied);
    // A secret in the instruction (kept as its marker) would bind as a parameter of each run.
    if !specific(&template.text) || template.text.contains(&HIDDEN.to_lowercase()) {
        return Err(NotRecorded::TooGeneral);
    }
    let params = &template.params;
    let steps = (kept.iter())
        .map(|(s, action, confirm)| {
            let mut step = step_of(s, action, params);
            step.confirm = *confirm;
            if matches!(action, Action::Finish(_))
                && answer_from_page(&single_line(&s.thought, 1_000), &task.goal.query, read)
            {
                step.own_value = Some(OwnValue::Answer);
            }
            step.intent = intent_of(&step);
            step
        })
        .collect();
    let owner = task.user_id.clone();
    let recipe = Recipe {
        id: recipe_id(&site.origin, &site.path, &template.text, &owner),
        tenant_id: task.tenant_id.clone(),
        owner,
        promoted: false,
        origin: site.origin,
        path: site.path,
        template: template.text.clone(),
        params: params.iter().map(|(n, _)| n.clone()).collect(),
        shapes: params.iter().map(|(_, v)| ParamShape::of(v)).collect(),
        format: FORMAT,
        steps,
        recorded_from: task.id.clone(),
        runs: 1,
        demoted: false,
        created_at: now,
        updated_at: now,
        expires_at: now.timestamp() + ttl_seconds,
    };
    match serde_json::to_vec(&recipe).map_or(usize::MAX, |b| b.len()) {
        n if n > MAX_BYTES => Err(NotRecorded::TooLarge),
        _ => Ok(recipe),
    }
}

/// The recipe step of a kept action. A target named by a parameter is that parameter; one
/// named by the run's own data is the model's to pick (a list's name holds its options: not
/// that). A value is its parameter, a secret's marker or the model's; a key is kept whole
/// unless it holds a value of the instruction's.
fn step_of(s: &Step, action: &Action, params: &[(String, String)]) -> RecipeStep {
    let param_for = |v: &str| {
        let v = normalise(v);
        params.iter().find(|(_, p)| *p == v).map(|(n, _)| n.clone())
    };
    let mark = s.recipe.clone().unwrap_or_default();
    let mut step = RecipeStep {
        target: mark.target,
        context: mark.context,
        title: mark.title,
        ..RecipeStep::new(s.action.split('(').next().unwrap_or("").trim(), &mark.page)
    };
    let clicked = matches!(action, Action::Click(_) | Action::Check(_));
    if let Some(t) = step.target.as_mut() {
        step.target_param = param_for(&t.name).filter(|_| clicked);
        let list = matches!(action, Action::SelectOption(..));
        let own = names_a_record(&t.name)
            || t.name.contains(&HIDDEN.to_lowercase())
            || CHOICES.contains(&t.role.as_str())
            || !list && params.iter().any(|(_, v)| holds_value(&t.name, v));
        if let Some(p) = &step.target_param {
            (t.name, t.nth, t.of) = (format!("{{{p}}}"), 0, 1);
        } else if own {
            (t.name, t.nth, t.of) = (String::new(), 0, 1);
            step.own_target = true;
        }
    }
    let value = name_and_value(&s.action).and_then(|(_, v)| v);
    let whole =
        action.element().is_none() && !matches!(action, Action::Navigate(_) | Action::FindText(_));
    match value {
        Some(v) if whole => {
            let lower = v.to_lowercase();
            match params
                .iter()
                .any(|(_, p)| word_starts(&lower, p).next().is_some())
            {
                true => step.own_value = Some(OwnValue::Found),
                false => step.value = Some(v),
            }
        }
        Some(v) if v.contains(HIDDEN) => step.own_value = Some(OwnValue::Secret),
        Some(v) => match param_for(&v) {
            Some(p) => step.value_param = Some(p),
            None => step.own_value = Some(OwnValue::Found),
        },
        None => {}
    }
    step
}

/// What a step does, in the server's words (never the run's thought, which may speak of its
/// user): `setValue the inp "name" with {name}`.
fn intent_of(step: &RecipeStep) -> String {
    let target = match &step.target {
        Some(t) if step.own_target => format!(" the {} this task calls for", t.role),
        Some(t) if t.name.is_empty() => format!(" the {}", t.role),
        Some(t) => format!(" the {} \"{}\"", t.role, t.name),
        None => String::new(),
    };
    let value = match (&step.value_param, step.own_value) {
        (Some(p), _) => format!(" with {{{p}}}"),
        (None, Some(OwnValue::Found)) => " with the value this task calls for".into(),
        _ => String::new(),
    };
    single_line(&format!("{}{target}{value}", step.action), MAX_INTENT_CHARS)
}

/// Recipe step `k` of `run` as the client's action on `target`, and the decision's thought;
/// `None` when it does not parse as the grammar's.
pub fn action(run: &RecipeRun, k: usize, target: Option<&str>) -> Option<(String, String)> {
    let step = run.steps.get(k)?;
    let (n, of) = (k + 1, run.steps.len());
    let thought = format!(
        "Following this task's recipe (step {n} of {of}): {}",
        run.intent_of(k)
    );
    if step.action == "finish" {
        let done = "Done: the steps recorded for this task ran again, and each one showed its outcome on the page.";
        return Some(("finish()".into(), done.into()));
    }
    let value = run.value_of(k);
    let call = match (target, value) {
        // An action without a target but navigate and findText keeps its whole call.
        (None, Some(v)) if !matches!(step.action.as_str(), "navigate" | "findText") => v,
        (_, value) => {
            let quoted = value.map(|v| quote(&v)).transpose().ok()?;
            let args: Vec<&str> = target.into_iter().chain(quoted.as_deref()).collect();
            format!("{}({})", step.action, args.join(", "))
        }
    };
    let a = Action::parse(&call)
        .ok()
        .filter(|a| a.element() == target)?;
    Some((a.to_client_string().ok()?, thought))
}

#[cfg(test)]
#[path = "recipe_tests.rs"]
mod tests;
