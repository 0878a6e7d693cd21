//! Recipes in the step: a new task finds the tenant's recipe for its site and instruction
//! (Load), a step of it goes out without the model when the rules allow (Correct | Plan: after
//! the user's confirmations, blockers and waiting actions, before a correction), a replayed
//! action whose outcome the rules cannot decide is checked against the recorded run instead of
//! a verdict model (Verify), and a verified finish records the run (Persist). Every replayed
//! action passes the same guard as the model's — the risk gate asks the user whatever the
//! recipe says, and a step the recorded run confirmed is asked about again.

use super::guard::{ask_first, review, Facts, Review};
use super::{Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::output::ModelOutput;
use crate::agent::recipe as rules;
use crate::agent::step::StepPorts;
use crate::domain::facts::PageFacts;
use crate::domain::intervention::Intervention;
use crate::domain::recipe::book::{filled, RecipeUse, UseMode, FORMAT, MAX_PER_SITE};
use crate::domain::recipe::loose::bind_loose;
use crate::domain::recipe::run::{Acted, Decline, Healing, Last, Next, RecipeRun};
use crate::domain::recipe::{bind, locate, site_key, Located};
use crate::domain::risk::{Risk, RiskKind};
use crate::domain::verdict::MET_CONFIDENCE;
use crate::domain::{Step, StepKind, TaskStatus};
use crate::ports::recipes::Stored;

/// The tenant's recipe for a new task's instruction on `url`, ready to run: exact after
/// normalisation, with this instruction's values for its parameters. One indexed read of the
/// site's recipes; a store failure only means the model does the task.
pub async fn find(
    ctx: &StepPorts<'_>,
    tenant_id: &str,
    url: &str,
    query: &str,
) -> Option<RecipeRun> {
    if !ctx.agent.recipes.enabled {
        return None;
    }
    let site = site_key(url)?;
    let found = ctx
        .store
        .site_recipes(tenant_id, &site.domain, &site.path, MAX_PER_SITE)
        .await;
    let mut recipes = match found {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "could not read the tenant's recipes; the model does the task");
            return None;
        }
    };
    // The most literal template first: fewer parameters, more of the instruction as written.
    recipes.sort_by_key(|r| (r.params.len(), std::cmp::Reverse(r.template.len())));
    let loose = ctx.agent.recipes.approximate;
    recipes
        .iter()
        // Recorded before the recipes kept nothing of their user's own: not replayed.
        .filter(|r| r.format >= FORMAT)
        .find_map(|r| {
            let params = bind(&r.template, query)
                .or_else(|| loose.then(|| bind_loose(&r.template, query)).flatten())?;
            let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
            let shaped = r.shapes.len() == params.len()
                && params.iter().zip(&r.shapes).all(|((_, v), s)| s.fits(v));
            (shaped && names == r.params.iter().map(String::as_str).collect::<Vec<_>>())
                .then(|| RecipeRun::start(r, params))
        })
}

/// How the previous action turned out, by this step's verdict.
fn last_of(step: &StepContext) -> Last {
    match &step.verification {
        None => Last::Nothing,
        Some(v) if v.failed() => Last::Failed,
        Some(v) if v.unconfirmed => Last::Unconfirmed,
        Some(v) if v.confidence >= MET_CONFIDENCE => Last::Verified,
        Some(_) => Last::Likely,
    }
}

/// The model's browser actions for the step it was handed (`h`), in order: the records from
/// that request on marked as its heal (the answer's first action, the rest the server kept and
/// sent one per request, a confirmed one). The server's own in between (a cookie banner
/// closed) are not the model's.
fn model_records<'a>(history: &'a [Step], h: &Healing) -> Vec<&'a Step> {
    history
        .iter()
        .filter(|s| s.kind == StepKind::Dom && s.index >= h.at)
        .filter(|s| {
            s.recipe
                .as_ref()
                .and_then(|r| r.used.as_ref())
                .is_some_and(|u| u.mode == UseMode::Healed && u.step == h.step)
        })
        .collect()
}

/// A record's browser action as the run compares it with a recipe step.
fn action_of(
    prev: &Step,
) -> Option<(
    String,
    Option<crate::domain::recipe::TargetDescription>,
    Option<String>,
)> {
    let action = Action::parse(&prev.action).ok()?;
    let value = match &action {
        // A question to the user (the confirmation asked for the model's action) is not a
        // step on the page.
        Action::AskUser(_) | Action::Finish(_) | Action::Fail(_) => return None,
        Action::SetValue(_, v) | Action::SelectOption(_, v) => Some(v.clone()),
        _ => None,
    };
    let name = prev.action.split('(').next().unwrap_or("").to_owned();
    let target = prev.recipe.as_ref().and_then(|r| r.target.clone());
    Some((name, target, value))
}

/// The recipe's next step as this step's decision, when it may go out without the model;
/// otherwise the model gets the recipe's hint for it.
pub fn replay(step: &mut StepContext, facts: &Facts<'_>) -> Option<Decision> {
    let mut run = step.task.recipe.take()?;
    let decided = next(step, &mut run, facts);
    step.task.recipe = Some(run);
    decided
}

/// The user spoke (see `decide::rules`): the rest of the task is the model's.
pub fn leave_to_model(step: &mut StepContext) {
    if let Some(run) = step.task.recipe.as_mut() {
        run.stopped = true;
    }
}

fn next(step: &mut StepContext, run: &mut RecipeRun, facts: &Facts<'_>) -> Option<Decision> {
    // What the user said (a no, an unclear reply, a resume: a yes to a confirmation never gets
    // here) is the model's to read.
    if step.user_input.is_some() || step.task.resume_note.is_some() {
        run.stopped = true;
        return None;
    }
    let records = run
        .healing
        .as_ref()
        .map(|h| model_records(&step.history, h))
        .unwrap_or_default();
    let done: Vec<_> = records
        .iter()
        .filter_map(|r| {
            let confirmed = r.before_state.as_ref().is_some_and(|b| b.confirmed);
            Some((r.index, confirmed, action_of(r)?))
        })
        .collect();
    let acted: Vec<Acted> = done
        .iter()
        .map(|(index, confirmed, (action, target, value))| Acted {
            action,
            target: target.as_ref(),
            value: value.as_deref(),
            index: *index,
            confirmed: *confirmed,
        })
        .collect();
    // A failed verdict on any of the model's actions, though a later one of the server's (a
    // cookie banner closed) verified.
    let failed = step
        .history
        .iter()
        .filter_map(|s| s.verification.as_ref())
        .chain(step.verification.as_ref())
        .any(|v| v.failed() && acted.iter().any(|a| a.index == v.step_index));
    let last = if failed { Last::Failed } else { last_of(step) };
    let decided = run.next(facts.view, last, &acted);
    let (k, target) = match decided {
        Next::Off => return None,
        Next::Heal { step: k, why } => {
            heal(step, run, k, &why);
            return None;
        }
        Next::Act { step: k, target } => (k, target),
    };
    let Some((action, thought)) = rules::action(run, k, target.as_deref()) else {
        let why = Decline::Refused;
        let _ = run.refused(k);
        heal(step, run, k, &why);
        return None;
    };
    let recorded = &run.steps[k];
    if action == "finish()" {
        run.acted(k);
        used(step, run, k, UseMode::Replayed, None);
        return Some(Decision::new(thought, action, TaskStatus::Completed));
    }
    let confirm = recorded.confirm;
    let out = ModelOutput {
        thought,
        action: action.clone(),
        actions: vec![action.clone()],
        expect: recorded.expect.as_deref().map(|e| filled(e, &run.params)),
        ..ModelOutput::default()
    };
    match review(out, facts) {
        Review::Accept(p) => {
            let (decision, confirmation) = match (p.confirmation, confirm) {
                (Some(c), _) => (p.decision, Some(c)),
                // A step the recorded run confirmed is asked about again, whatever the gate
                // finds now.
                (None, true) => {
                    let risk = Risk {
                        kind: RiskKind::Flagged,
                        what: format!(
                            "{} (a user confirmed this step when this task last ran)",
                            run.intent_of(k)
                        ),
                    };
                    let (d, c) =
                        ask_first(&p.decision.thought, &action, &p.action.kind(), risk, facts);
                    (d, Some(c))
                }
                (None, false) => (p.decision, None),
            };
            if let Some(c) = confirmation {
                step.intervene(Intervention::Confirmation);
                step.task.confirmation = Some(c);
            }
            run.acted(k);
            used(step, run, k, UseMode::Replayed, None);
            Some(decision)
        }
        Review::Refuse(_) | Review::Loop(_) => {
            let why = Decline::Refused;
            let _ = run.refused(k);
            heal(step, run, k, &why);
            None
        }
    }
}

/// The model is asked for step `k` with the recipe's hint.
fn heal(step: &mut StepContext, run: &mut RecipeRun, k: usize, why: &Decline) {
    if run.stopped {
        return;
    }
    if let Some(h) = run.healing.as_mut() {
        h.at = step.first_index;
    }
    let hint = run.hint(k, why);
    // Carried from a round that ended without an answer: said once.
    if !step.notes.contains(&hint) {
        step.notes.push(hint);
    }
    used(step, run, k, UseMode::Healed, Some(why.describe()));
}

/// The rules sent the rest of the model's answer, or the action the user confirmed: while
/// the model has a recipe step, it is the model's action for that step.
pub fn still_healing(step: &mut StepContext) {
    let healed = step
        .task
        .recipe
        .as_ref()
        .filter(|r| !r.stopped)
        .and_then(|r| {
            let h = r.healing.as_ref()?;
            Some(use_of(r, h.step, UseMode::Healed, Some(h.why.describe())))
        });
    if healed.is_some() {
        step.recipe_use = healed;
    }
}

fn used(step: &mut StepContext, run: &RecipeRun, k: usize, mode: UseMode, reason: Option<String>) {
    step.recipe_use = Some(use_of(run, k, mode, reason));
}

/// How step `k` of `run` came to be this step's decision.
fn use_of(run: &RecipeRun, k: usize, mode: UseMode, reason: Option<String>) -> RecipeUse {
    RecipeUse {
        id: run.id.clone(),
        step: k,
        steps: run.steps.len(),
        mode,
        reason,
    }
}

/// For a replayed action whose outcome the rules could not decide: the page is the one the
/// recorded run reached after it (the next step's kind of page, its target there alone).
pub fn as_recorded(step: &StepContext, page: &dyn PageFacts) -> bool {
    let (Some(run), Some(prev)) = (step.task.recipe.as_ref(), step.history.last()) else {
        return false;
    };
    let replayed = prev
        .recipe
        .as_ref()
        .and_then(|r| r.used.as_ref())
        .is_some_and(|u| u.mode == UseMode::Replayed && u.id == run.id);
    // Something happened: the page is not the one the action was taken on.
    let changed = prev
        .before_state
        .as_ref()
        .is_some_and(|b| b.page_hash != page.hash());
    if !replayed || !changed || run.healing.is_some() {
        return false;
    }
    let k = run.cursor;
    let Some(next) = run.steps.get(k) else {
        return false;
    };
    let same_page =
        site_key(page.url()).is_some_and(|s| s.domain == run.domain && s.path == next.page);
    let target_alone = match run.target_of(k) {
        Some(t) => matches!(locate(page, &t), Located::Unique(_)),
        None => next.target.is_none(),
    };
    same_page && target_alone
}

/// After a verified finish: the run recorded as the tenant's recipe (replacing the one it
/// followed), or — when it needed the model too often in a row — that recipe dropped.
pub async fn record(ctx: &StepPorts<'_>, step: &StepContext, records: &[Step]) {
    let settings = ctx.agent.recipes;
    if !settings.enabled || !verified_finish(step) {
        return;
    }
    let all: Vec<&Step> = step.history.iter().chain(records.iter()).collect();
    let now = ctx.clock.now();
    let mut recipe = match rules::record(&step.task, &all, now, settings.ttl_days * 86_400) {
        Ok(r) => r,
        Err(why) => {
            tracing::info!(task = %step.task.id, reason = %why.describe(), "run not recorded as a recipe");
            return;
        }
    };
    if let Some(run) = &step.task.recipe {
        if run.id == recipe.id {
            recipe.replays = 1;
            recipe.healed_runs = if run.heals > 0 {
                run.healed_runs + 1
            } else {
                0
            };
        }
        if recipe.healed_runs >= settings.max_healed_runs {
            if let Err(e) = ctx.store.delete_recipe(&step.tenant_id, &run.id).await {
                tracing::warn!(error = %e, "could not drop a recipe that keeps healing");
            }
            tracing::info!(recipe = %run.id, "recipe dropped: healed in too many runs in a row");
            return;
        }
        if let Ok(Some(old)) = ctx.store.recipe(&step.tenant_id, &recipe.id).await {
            recipe.created_at = old.created_at;
            recipe.replays += old.replays;
        }
    }
    match ctx.store.put_recipe(&recipe, settings.per_tenant).await {
        Ok(Stored::Full) => {
            tracing::info!(tenant = %step.tenant_id, "recipes full: run not recorded")
        }
        Ok(_) => {
            tracing::info!(recipe = %recipe.id, steps = recipe.steps.len(), "run recorded as a recipe")
        }
        Err(e) => tracing::warn!(error = %e, "could not store the run's recipe"),
    }
}

/// The task completed with `finish()` on a verified last action, with no finish refused on
/// the way.
fn verified_finish(step: &StepContext) -> bool {
    let finished = step
        .decision
        .as_ref()
        .is_some_and(|d| d.status == TaskStatus::Completed && d.action == "finish()");
    let verified = step
        .verification
        .as_ref()
        .is_none_or(|v| v.success && !v.unconfirmed);
    finished
        && verified
        && !step.interventions.contains(&Intervention::FinishRefused)
        && step.task.task_type.as_deref() != Some("chat_only")
}
