//! A task following a recipe: a step goes out as recorded, or the model is asked for it and
//! its answer is checked against it (the model: `docs/recipes.md`).

use serde::{Deserialize, Serialize};

use super::book::{filled, OwnValue, Recipe, RecipeStep, FORMAT, MAX_INTENT_CHARS};
use super::{bind, context, locate, normalise, site_key, Located, TargetDescription};
use crate::domain::facts::PageFacts;
use crate::domain::secrets::HIDDEN;
use crate::text::single_line;

/// Steps of one run the model may be asked for because the page changed.
pub const MAX_HEALS_PER_RUN: u32 = 3;

/// A task's run of a recipe (kept with the task).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// Steps the model was asked for because the page changed.
    pub heals: u32,
    /// The step the model was asked for: its answer is checked against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<Asked>,
    /// The model carries on alone.
    #[serde(default)]
    pub stopped: bool,
    /// The last step was the model's pick or value: so is whether the task is done.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Decline {
    #[error("the previous action's outcome was not confirmed")]
    Unconfirmed,
    #[error("this is not the page it was taken on")]
    OtherPage,
    #[error("its dialog, form or page title is not the recorded one")]
    OtherContext,
    #[error("its target is not on this page")]
    Missing,
    #[error("{count} elements could be its target")]
    Ambiguous { count: usize },
    #[error("only its position tells its target apart")]
    Unnamed,
    #[error("its value or target is this run's to give")]
    Owned,
    #[error("the server's rules stopped it as recorded")]
    Refused,
}

impl Decline {
    /// Asked of the model on every run by design: not a heal.
    pub fn planned(&self) -> bool {
        matches!(self, Decline::Owned | Decline::Unnamed)
    }
}

/// How the previous action turned out (`Likely`: enough to go on, not to finish).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    Nothing,
    Verified,
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

/// An action of the model's as compared with a step (`value`: see [`RecipeRun::value_of`]).
#[derive(Debug, Clone, Copy)]
pub struct Acted<'a> {
    pub action: &'a str,
    pub target: Option<&'a TargetDescription>,
    pub value: Option<&'a str>,
}

/// The run's next step goes out on `target`, the model is asked for it, or the model decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    Act { step: usize, target: Option<String> },
    Heal { step: usize, why: Decline },
    Off,
}

/// The recipe a new task of `member` follows: its own, else the organisation's (promoted); the
/// most literal template first; each value shaped like the recorded one.
pub fn pick(recipes: &[Recipe], member: &str, query: &str, loose: bool) -> Option<RecipeRun> {
    let mut usable: Vec<&Recipe> = (recipes.iter())
        .filter(|r| r.format >= FORMAT && (r.promoted || r.owner == member))
        .collect();
    usable.sort_by_key(|r| {
        (
            r.promoted,
            r.params.len(),
            std::cmp::Reverse(r.template.len()),
        )
    });
    usable.into_iter().find_map(|r| {
        let params = bind(&r.template, query, loose)?;
        let names = params.iter().map(|(n, _)| n);
        let shaped = params.len() == r.shapes.len()
            && names.eq(r.params.iter())
            && (params.iter().zip(&r.shapes)).all(|((_, v), shape)| shape.fits(v));
        shaped.then(|| RecipeRun::start(r, params))
    })
}

impl RecipeRun {
    /// A run of `recipe` with this task's values.
    pub fn start(recipe: &Recipe, params: Vec<(String, String)>) -> Self {
        let (id, origin, steps) = (
            recipe.id.clone(),
            recipe.origin.clone(),
            recipe.steps.clone(),
        );
        Self {
            id,
            origin,
            params,
            steps,
            ..Self::default()
        }
    }

    fn param(&self, name: &str) -> Option<&String> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The target of step `k` as it is on this run (a parameter's value as its name).
    pub fn target_of(&self, k: usize) -> Option<TargetDescription> {
        let step = self.steps.get(k)?;
        let mut target = step.target.clone()?;
        if let Some(name) = &step.target_param {
            (target.name, target.nth, target.of) = (normalise(self.param(name)?), 0, 1);
        }
        Some(target)
    }

    /// What step `k` types, chooses or goes to on this run (without a target: its whole call).
    pub fn value_of(&self, k: usize) -> Option<String> {
        let step = self.steps.get(k)?;
        match &step.value_param {
            Some(name) => self.param(name).cloned(),
            None => step.value.as_deref().map(|v| filled(v, &self.params)),
        }
    }

    /// What comes next `here` after an action that turned out `last` (a failed one: the model).
    pub fn next(&mut self, here: Here<'_>, last: Last) -> Turn {
        if let Some(Asked { step, why }) = self.asked.clone().filter(|_| !self.stopped) {
            // Not answered yet (a server tool's round): still the model's step.
            return Turn::Heal { step, why };
        }
        if self.stopped || last == Last::Failed || self.cursor >= self.steps.len() {
            self.stopped = true;
            return Turn::Off;
        }
        let k = self.cursor;
        match self.ready(here, last, k) {
            Ok(target) => Turn::Act { step: k, target },
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
            return step
                .target
                .as_ref()
                .map_or(Ok(None), |_| Err(Decline::Missing));
        };
        let id = match locate(here.page, &t) {
            Located::Unique(_) if t.of > 1 || t.name.is_empty() => return Err(Decline::Unnamed),
            Located::Unique(id) => id,
            Located::Missing => return Err(Decline::Missing),
            Located::Ambiguous(count) => return Err(Decline::Ambiguous { count }),
        };
        match step.context == here.page.holder_text(&id).and_then(|t| context(&t)) {
            true => Ok(Some(id)),
            false => Err(Decline::OtherContext),
        }
    }

    /// Step `k` went out without the model (or its confirmation was asked for).
    pub fn acted(&mut self, k: usize) {
        self.cursor = self.cursor.max(k + 1);
        self.picked = false;
    }

    /// The model is asked for step `k`.
    pub fn ask(&mut self, k: usize, why: Decline) -> Turn {
        self.heals += u32::from(!why.planned());
        if self.heals > MAX_HEALS_PER_RUN {
            self.stopped = true;
            return Turn::Off;
        }
        self.asked = Some(Asked {
            step: k,
            why: why.clone(),
        });
        Turn::Heal { step: k, why }
    }

    /// Whether the model's action is the step it was asked for; anything else ends the replay.
    pub fn answered(&mut self, acted: Acted<'_>) -> bool {
        let Some(asked) = self.asked.take().filter(|_| !self.stopped) else {
            return false;
        };
        let is_step = self.is_step(&asked, acted);
        self.stopped = !is_step;
        if is_step {
            self.cursor = asked.step + 1;
            self.picked = self.steps[asked.step].owned();
        }
        is_step
    }

    /// The same action on an element of the same role, named as recorded unless the model's
    /// pick or missing (renamed), with this run's value (the model's own; a secret's marker).
    fn is_step(&self, asked: &Asked, a: Acted<'_>) -> bool {
        let Some(step) = self.steps.get(asked.step) else {
            return false;
        };
        let target = match (self.target_of(asked.step), a.target) {
            (Some(t), Some(d)) => {
                let renamed = asked.why == Decline::Missing;
                t.role == d.role && (step.own_target || renamed || t.name == d.name)
            }
            (t, d) => t.is_none() && d.is_none(),
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
        let (site, step) = (site_key(page.url()), self.steps.get(k));
        site.zip(step)
            .is_some_and(|(s, step)| s.origin == self.origin && s.path == step.page)
    }

    /// Step `k`'s intent with this run's values.
    pub fn intent_of(&self, k: usize) -> String {
        let intent = self.steps.get(k).map(|s| filled(&s.intent, &self.params));
        single_line(&intent.unwrap_or_default(), MAX_INTENT_CHARS)
    }

    /// Step `k` as the model reads it (inside a data block), and why it was not replayed.
    pub fn described(&self, k: usize, why: &Decline) -> String {
        let Some(step) = self.steps.get(k) else {
            return String::new();
        };
        let value = match (step.own_value, self.value_of(k)) {
            (Some(OwnValue::Secret), _) => " (a value kept secret: ask the user for it)".into(),
            (Some(_), _) => " (with the value this task calls for)".into(),
            (None, Some(v)) => format!(" with \"{}\"", single_line(&v, 80)),
            (None, None) => String::new(),
        };
        let quoted = |before: &str, t: &Option<String>| {
            t.as_deref()
                .map(|t| format!("{before} \"{t}\""))
                .unwrap_or_default()
        };
        format!(
            "Step {} of {}: {}{value}{}{}. Not done without you because {}.",
            k + 1,
            self.steps.len(),
            self.intent_of(k),
            quoted(" in", &step.context),
            quoted(" on a page titled", &step.title),
            why
        )
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
