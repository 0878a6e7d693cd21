//! A task following a recipe. A step goes out without the model only when the previous action
//! verified, the page is the step's kind of page (origin and path pattern), exactly one element
//! is its target by name, in the same dialog or form on a page of the same title, and nothing
//! of the step is the model's (a value or a pick of this run's). Otherwise the model is asked
//! for that step, and its answer is checked against the step before anything goes out: the
//! step, and the run goes on after it; anything else, and the model carries on alone. The run
//! only moves forward: each step goes out once at most.

use serde::{Deserialize, Serialize};

use super::book::{filled, OwnValue, Recipe, RecipeStep, MAX_INTENT_CHARS};
use super::{bind, context, locate, normalise, site_key, Located, TargetDescription};
use crate::domain::facts::PageFacts;
use crate::domain::secrets::HIDDEN;

/// Steps of one run the model may be asked for because the page changed; after that the
/// model carries on alone.
pub const MAX_HEALS_PER_RUN: u32 = 3;

/// A task's run of a recipe (kept with the task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecipeRun {
    pub id: String,
    #[serde(default)]
    pub origin: String,
    /// This task's values of the recipe's parameters.
    pub params: Vec<(String, String)>,
    pub steps: Vec<RecipeStep>,
    /// The first step not done yet.
    pub cursor: usize,
    /// Steps that went out without the model.
    pub replayed: u32,
    /// Steps the model was asked for because the page changed.
    pub heals: u32,
    /// The step the model was asked for: its answer is checked against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<Asked>,
    /// The model carries on alone.
    #[serde(default)]
    pub stopped: bool,
    /// The last step was the model's pick or value: whether the task is then done is the
    /// model's to say too.
    #[serde(default)]
    pub picked: bool,
}

/// The model was asked for step `step`, because of `why`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asked {
    pub step: usize,
    pub why: Decline,
}

/// Why a step does not go out without the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Decline {
    /// The previous action's outcome could not be confirmed (or a finish's was not shown).
    Unconfirmed,
    /// The page is not the kind the step was taken on.
    OtherPage,
    /// Its target is in another dialog or form, or the page has another title.
    OtherContext,
    /// No element is the target.
    Missing,
    /// Several elements could be the target.
    Ambiguous { count: usize },
    /// Only its position tells the target apart.
    Unnamed,
    /// Its value or its target is this run's to give (a secret, a value the instruction does
    /// not give, a pick among records or options, an answer read off the page).
    Owned,
    /// The server's rules would not let it through as recorded.
    Refused,
}

impl Decline {
    /// Asked of the model on every run by design: not a heal.
    pub fn planned(&self) -> bool {
        matches!(self, Decline::Owned | Decline::Unnamed)
    }

    pub fn describe(&self) -> String {
        match self {
            Decline::Unconfirmed => "the previous action's outcome was not confirmed".into(),
            Decline::OtherPage => "this is not the page it was taken on".into(),
            Decline::OtherContext => {
                "its dialog, form or page title is not the recorded one".into()
            }
            Decline::Missing => "its target is not on this page".into(),
            Decline::Ambiguous { count } => format!("{count} elements could be its target"),
            Decline::Unnamed => "only its position tells its target apart".into(),
            Decline::Owned => "its value or target is this run's to give".into(),
            Decline::Refused => "the server's rules stopped it as recorded".into(),
        }
    }
}

/// How the previous action turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// No previous action (or one with nothing to check).
    Nothing,
    /// Every expectation met on the page.
    Verified,
    /// Judged a success, less surely (enough to go on, not to finish).
    Likely,
    Failed,
    Unconfirmed,
}

/// The page a step would go out on, with its title.
#[derive(Clone, Copy)]
pub struct Here<'a> {
    pub page: &'a dyn PageFacts,
    pub title: Option<&'a str>,
}

/// An action of the model's as compared with a step: its name, target and value (what it
/// types or chooses, the address, or for an action without a target its whole call).
#[derive(Debug, Clone, Copy)]
pub struct Acted<'a> {
    pub action: &'a str,
    pub target: Option<&'a TargetDescription>,
    pub value: Option<&'a str>,
}

/// What happens with the run's next step.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Step `step` goes out on element `target` (when it has one), without the model.
    Act { step: usize, target: Option<String> },
    /// The model is asked for step `step`.
    Heal { step: usize, why: Decline },
    /// The model decides.
    Off,
}

/// The recipe a new task of `member` follows, with this instruction's values: the member's
/// own first, then the organisation's (a recipe another member recorded is followed only once
/// promoted); the most literal template first. `loose` binds an instruction worded a little
/// differently too.
pub fn pick(recipes: &[Recipe], member: &str, query: &str, loose: bool) -> Option<RecipeRun> {
    let mut usable: Vec<&Recipe> = recipes
        .iter()
        .filter(|r| r.format >= super::book::FORMAT && (r.promoted || r.owner == member))
        .collect();
    usable.sort_by_key(|r| {
        (
            r.promoted,
            r.params.len(),
            std::cmp::Reverse(r.template.len()),
        )
    });
    usable.into_iter().find_map(|r| {
        let params = bind(&r.template, query)
            .or_else(|| loose.then(|| super::loose::bind_loose(&r.template, query))?)?;
        let shaped = params.len() == r.params.len()
            && params.len() == r.shapes.len()
            && params
                .iter()
                .zip(r.params.iter().zip(&r.shapes))
                .all(|((n, v), (name, shape))| n == name && shape.fits(v));
        shaped.then(|| RecipeRun::start(r, params))
    })
}

impl RecipeRun {
    /// A run of `recipe` with this task's values.
    pub fn start(recipe: &Recipe, params: Vec<(String, String)>) -> Self {
        Self {
            id: recipe.id.clone(),
            origin: recipe.origin.clone(),
            params,
            steps: recipe.steps.clone(),
            cursor: 0,
            replayed: 0,
            heals: 0,
            asked: None,
            stopped: false,
            picked: false,
        }
    }

    /// The target of step `k` as it is on this run (a parameter's value as its name).
    pub fn target_of(&self, k: usize) -> Option<TargetDescription> {
        let step = self.steps.get(k)?;
        let mut target = step.target.clone()?;
        if let Some(name) = &step.target_param {
            let value = self.params.iter().find(|(n, _)| n == name)?;
            (target.name, target.nth, target.of) = (normalise(&value.1), 0, 1);
        }
        Some(target)
    }

    /// The value step `k` types, chooses or goes to on this run (for an action without a
    /// target, its whole call).
    pub fn value_of(&self, k: usize) -> Option<String> {
        let step = self.steps.get(k)?;
        match &step.value_param {
            Some(name) => self
                .params
                .iter()
                .find(|(n, _)| n == name)
                .map(|p| p.1.clone()),
            None => step.value.as_deref().map(|v| filled(v, &self.params)),
        }
    }

    /// What comes next `here` after an action that turned out `last`.
    pub fn next(&mut self, here: Here<'_>, last: Last) -> Next {
        if let Some(a) = self.asked.clone().filter(|_| !self.stopped) {
            // Not answered yet (a server tool's round): still the model's step.
            return Next::Heal {
                step: a.step,
                why: a.why,
            };
        }
        // A failed action is the model's to set right, and the rest of the task with it.
        if self.stopped || last == Last::Failed || self.cursor >= self.steps.len() {
            self.stopped = true;
            return Next::Off;
        }
        let k = self.cursor;
        match self.ready(here, last, k) {
            Ok(target) => Next::Act { step: k, target },
            Err(why) => self.ask(k, why),
        }
    }

    /// Step `k`'s target `here` when it may go out as recorded, or why not.
    fn ready(&self, here: Here<'_>, last: Last, k: usize) -> Result<Option<String>, Decline> {
        let step = &self.steps[k];
        let finishing = step.action == "finish";
        if last == Last::Unconfirmed || finishing && last != Last::Verified {
            return Err(Decline::Unconfirmed);
        }
        if !self.on_page(here.page, k) {
            return Err(Decline::OtherPage);
        }
        if step.owned() || finishing && self.picked {
            return Err(Decline::Owned);
        }
        if step.title != here.title.and_then(context) {
            return Err(Decline::OtherContext);
        }
        let Some(t) = self.target_of(k) else {
            return match step.target {
                Some(_) => Err(Decline::Missing),
                None => Ok(None),
            };
        };
        let id = match locate(here.page, &t) {
            Located::Unique(_) if t.of > 1 || t.name.is_empty() => return Err(Decline::Unnamed),
            Located::Unique(id) => id,
            Located::Missing => return Err(Decline::Missing),
            Located::Ambiguous(count) => return Err(Decline::Ambiguous { count }),
        };
        if step.context != here.page.holder_text(&id).and_then(|t| context(&t)) {
            return Err(Decline::OtherContext);
        }
        Ok(Some(id))
    }

    /// Step `k` went out without the model (or its confirmation was asked for).
    pub fn acted(&mut self, k: usize) {
        self.cursor = self.cursor.max(k + 1);
        self.replayed += 1;
        self.picked = false;
    }

    /// The server's rules stopped step `k` as recorded: the model is asked for it.
    pub fn refused(&mut self, k: usize) -> Next {
        self.ask(k, Decline::Refused)
    }

    fn ask(&mut self, k: usize, why: Decline) -> Next {
        if !why.planned() {
            self.heals += 1;
        }
        if self.heals > MAX_HEALS_PER_RUN {
            self.stopped = true;
            return Next::Off;
        }
        self.asked = Some(Asked {
            step: k,
            why: why.clone(),
        });
        Next::Heal { step: k, why }
    }

    /// The model's action for the step it was asked for, before it goes out: whether it is
    /// that step (the run goes on after it). Anything else ends the replay.
    pub fn answered(&mut self, acted: Acted<'_>) -> bool {
        let Some(asked) = self.asked.take().filter(|_| !self.stopped) else {
            return false;
        };
        let is_step = self.is_step(&asked, acted);
        match is_step {
            true => {
                self.cursor = asked.step + 1;
                self.picked = self.steps[asked.step].owned();
            }
            false => self.stopped = true,
        }
        is_step
    }

    /// Whether `a` is step `asked.step`: the same action on an element of the same role,
    /// named as recorded unless the target is the model's pick or went missing (renamed),
    /// with this run's value (or, for a value of the model's, any; a secret's marker for a
    /// secret).
    fn is_step(&self, asked: &Asked, a: Acted<'_>) -> bool {
        let Some(step) = self.steps.get(asked.step) else {
            return false;
        };
        let target = match (self.target_of(asked.step), a.target) {
            (Some(t), Some(d)) => {
                let renamed = asked.why == Decline::Missing;
                t.role == d.role && (step.own_target || renamed || t.name == d.name)
            }
            (None, None) => true,
            _ => false,
        };
        let value = match step.own_value {
            Some(OwnValue::Secret) => a.value.is_some_and(|v| v.contains(HIDDEN)),
            Some(_) => true,
            None => self.value_of(asked.step).map(|v| normalise(&v)) == a.value.map(normalise),
        };
        step.action == a.action && target && value
    }

    /// Whether `page` is the kind of page step `k` was taken on.
    pub fn on_page(&self, page: &dyn PageFacts, k: usize) -> bool {
        let step = self.steps.get(k);
        site_key(page.url()).is_some_and(|s| {
            s.origin == self.origin && step.is_some_and(|step| s.path == step.page)
        })
    }

    /// Step `k`'s intent with this run's values.
    pub fn intent_of(&self, k: usize) -> String {
        self.steps
            .get(k)
            .map(|s| crate::text::single_line(&filled(&s.intent, &self.params), MAX_INTENT_CHARS))
            .unwrap_or_default()
    }

    /// Step `k` as the model reads it (inside a data block: recorded words, not instructions):
    /// what it does, what it was expected to bring about, and why it was not done without it.
    pub fn described(&self, k: usize, why: &Decline) -> String {
        let Some(step) = self.steps.get(k) else {
            return String::new();
        };
        let value = match (step.own_value, self.value_of(k)) {
            (Some(OwnValue::Secret), _) => " (a value kept secret: ask the user for it)".into(),
            (Some(_), _) => " (with the value this task calls for)".into(),
            (None, Some(v)) => format!(" with \"{}\"", crate::text::single_line(&v, 80)),
            (None, None) => String::new(),
        };
        let expect = step.expect.as_deref().map(|e| {
            format!(
                " Expected: {}.",
                crate::text::single_line(&filled(e, &self.params), 160)
            )
        });
        let title = step
            .title
            .as_deref()
            .map(|t| format!(" on a page titled \"{t}\""));
        let held = step.context.as_deref().map(|c| format!(" in \"{c}\""));
        format!(
            "Step {} of {}: {}{value}{}{}.{} Not done without you because {}.",
            k + 1,
            self.steps.len(),
            self.intent_of(k),
            held.unwrap_or_default(),
            title.unwrap_or_default(),
            expect.unwrap_or_default(),
            why.describe()
        )
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
