//! A task following a recipe: which step comes next, and whether it may go out without the
//! model. A step is replayed only when the previous action verified, the page is the kind of
//! page the step was taken on and exactly one element is its target; otherwise the model is
//! asked for that step with the recipe's intent as a hint (a heal). After a heal the run finds
//! its place again: when the model did something else first (closed a dialog) and the step's
//! target is now there, the step is tried again; otherwise the model did the step its own way
//! and the run goes on with the next one.

use serde::{Deserialize, Serialize};

use super::book::{filled, Recipe, RecipeStep, MAX_INTENT_CHARS};
use super::{locate, site_key, Located, TargetDescription};
use crate::domain::facts::PageFacts;

/// Heals one run may make; after that the model carries on alone.
pub const MAX_HEALS_PER_RUN: u32 = 3;

/// A task's run of a recipe (kept with the task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecipeRun {
    pub id: String,
    pub domain: String,
    /// This task's values of the recipe's parameters.
    pub params: Vec<(String, String)>,
    pub steps: Vec<RecipeStep>,
    /// The first step not done yet.
    pub cursor: usize,
    /// Steps the model was asked for.
    pub heals: u32,
    /// Steps that went out without the model.
    pub replayed: u32,
    /// The recipe's runs in a row that healed before this one.
    #[serde(default)]
    pub healed_runs: u32,
    /// The last step was the model's, for this recipe step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healing: Option<Healing>,
    /// The run gave the recipe up (too many heals).
    #[serde(default)]
    pub stopped: bool,
    /// The task's records (by index) that the model added before a step it was asked for (a
    /// dialog closed first): optional when the run is recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inserted: Vec<u32>,
    /// Steps handed to the model that it answered with something else (a dialog closed
    /// first): after [`MAX_HEALS_PER_RUN`] the model carries on alone.
    #[serde(default)]
    pub stalls: u32,
}

/// The model was asked for step `step`, because of `why`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Healing {
    pub step: usize,
    pub why: Decline,
    /// The task's first record of the request that handed the step over: the model's records
    /// for it are this one and later.
    #[serde(default)]
    pub at: u32,
}

/// Why a step does not go out without the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Decline {
    /// No element is the target.
    Missing,
    /// Several elements could be the target.
    Ambiguous { count: usize },
    /// The target has no name of its own, or shares it: only its position tells it apart.
    Unnamed,
    /// The page is not the kind the step was taken on.
    OtherPage,
    /// The previous action failed.
    Failed,
    /// The model's own action for the step did not work.
    ModelFailed,
    /// The previous action's outcome could not be confirmed.
    Unconfirmed,
    /// The step types a value kept secret.
    Secret,
    /// The final answer is read off the page.
    AnswerFromPage,
    /// The value it types is not one the instruction gives.
    FoundValue,
    /// Its target was named by a record of the recorded run's (a number, a code).
    FoundTarget,
    /// The server's rules would not let the action through as it is.
    Refused,
    /// The model's last answer went on past the recipe's steps (actions it does not have).
    WentOn,
    /// The finish after a step whose target the model picked (one named by a record): whether
    /// the task is done is the model's to say.
    ModelsPick,
}

impl Decline {
    /// A step the model gives on every run by design (not a sign the page changed): it does
    /// not count as a heal.
    pub fn planned(&self) -> bool {
        matches!(
            self,
            Decline::Secret
                | Decline::FoundValue
                | Decline::FoundTarget
                | Decline::AnswerFromPage
                | Decline::Unnamed
                | Decline::ModelsPick
        )
    }

    pub fn describe(&self) -> String {
        match self {
            Decline::Missing => "its target is not on this page".into(),
            Decline::Ambiguous { count } => {
                format!("{count} elements could be its target")
            }
            Decline::OtherPage => "this is not the page it was taken on".into(),
            Decline::Unnamed => {
                "its target has no name of its own (only its position tells it apart)".into()
            }
            Decline::Failed => "the previous action did not work".into(),
            Decline::ModelFailed => "the action taken for it did not work".into(),
            Decline::Unconfirmed => "the previous action's outcome could not be confirmed".into(),
            Decline::Secret => "it types a value that is kept secret".into(),
            Decline::AnswerFromPage => "its answer is read off the page".into(),
            Decline::FoundValue => {
                "the value it types was found during the recorded run, not given by this task"
                    .into()
            }
            Decline::FoundTarget => {
                "its target was named by a record of the recorded run's (a number or a code), which this task may need to be another"
                    .into()
            }
            Decline::Refused => "the server's rules stopped it as recorded".into(),
            Decline::ModelsPick => {
                "the step before it was done on the element you picked, so whether the task is done is yours to say"
                    .into()
            }
            Decline::WentOn => {
                "your last answer ended with actions the recorded run did not take, so the recipe cannot tell where this page stands (if that answer already did this step, do not repeat it)"
                    .into()
            }
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

/// What the model did when asked for a step: its action's name, target and value, and the
/// task's record of it.
#[derive(Debug, Clone, Copy)]
pub struct Acted<'a> {
    pub action: &'a str,
    pub target: Option<&'a TargetDescription>,
    pub value: Option<&'a str>,
    pub index: u32,
    /// The user confirmed it.
    pub confirmed: bool,
}

/// What happens with the run's next step.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Recipe step `step` goes out on element `target` (when it has one), without the model.
    Act { step: usize, target: Option<String> },
    /// The model is asked for step `step`.
    Heal { step: usize, why: Decline },
    /// The recipe has nothing more to say: the model decides.
    Off,
}

impl RecipeRun {
    /// A run of `recipe` with this task's values.
    pub fn start(recipe: &Recipe, params: Vec<(String, String)>) -> Self {
        Self {
            id: recipe.id.clone(),
            domain: recipe.domain.clone(),
            params,
            steps: recipe.steps.clone(),
            cursor: 0,
            heals: 0,
            replayed: 0,
            healed_runs: recipe.healed_runs,
            healing: None,
            stopped: false,
            inserted: Vec::new(),
            stalls: 0,
        }
    }

    /// The target of step `k` as it is on this run (a parameter's value as its name).
    pub fn target_of(&self, k: usize) -> Option<TargetDescription> {
        let step = self.steps.get(k)?;
        let mut target = step.target.clone()?;
        if let Some(name) = &step.target_param {
            // Named by this run's value: only an element that is the only one so named will do.
            let value = self.params.iter().find(|(n, _)| n == name)?;
            target.name = super::normalise(&value.1);
            target.nth = 0;
            target.of = 1;
        }
        Some(target)
    }

    /// What comes next on `page` after an action that turned out `last`; `acted` is what the
    /// model did (in order) since it was handed the last step, when it was.
    pub fn next(&mut self, page: &dyn PageFacts, last: Last, acted: &[Acted<'_>]) -> Next {
        if self.stopped {
            return Next::Off;
        }
        let healing = self.healing.take();
        let mut went_on = None;
        if let Some(h) = &healing {
            if acted.is_empty() {
                // Nothing on the page yet (a server tool's round): still the model's step, not
                // another heal.
                self.healing = Some(h.clone());
                return Next::Heal {
                    step: h.step,
                    why: h.why.clone(),
                };
            }
            went_on = self.find_place(page, h, last, acted);
            if self.stopped {
                return Next::Off;
            }
        }
        let decided = self.decide(page, last, healing.is_some(), went_on);
        // The model's steps went before the one it was asked for, which now goes out (a dialog
        // closed revealed it) or is handed to it again: kept as optional steps when the run is
        // recorded.
        if let Some(h) = healing.filter(|h| h.why != Decline::Failed) {
            let again = match &decided {
                Next::Act { step, .. } => *step == h.step,
                Next::Heal { step, why } => *step == h.step && why.planned(),
                Next::Off => false,
            };
            if again {
                self.inserted.extend(acted.iter().map(|a| a.index));
            }
        }
        decided
    }

    /// The step at the cursor: out without the model, or handed to it.
    fn decide(
        &mut self,
        page: &dyn PageFacts,
        last: Last,
        healed_before: bool,
        went_on: Option<Decline>,
    ) -> Next {
        // A step the model once added for an obstacle that is not here is skipped.
        while self.steps.get(self.cursor).is_some_and(|s| s.optional)
            && self
                .target_of(self.cursor)
                .is_some_and(|t| locate(page, &t) == Located::Missing)
        {
            self.cursor += 1;
        }
        let k = self.cursor;
        let Some(step) = self.steps.get(k) else {
            return Next::Off;
        };
        let finishing = step.action == "finish";
        let why = match last {
            Last::Failed if healed_before => Some(Decline::ModelFailed),
            Last::Failed => Some(Decline::Failed),
            Last::Unconfirmed => Some(Decline::Unconfirmed),
            // A task is finished without the model only on a page that showed every
            // expectation of the last action met.
            Last::Likely | Last::Nothing if finishing => Some(Decline::Unconfirmed),
            Last::Nothing | Last::Verified | Last::Likely => None,
        }
        .or_else(|| (!self.on_page(page, k)).then_some(Decline::OtherPage))
        .or_else(|| step.secret.then_some(Decline::Secret))
        .or_else(|| step.answer_from_page.then_some(Decline::AnswerFromPage))
        .or_else(|| step.found_value.then_some(Decline::FoundValue))
        .or_else(|| step.found_target.then_some(Decline::FoundTarget))
        .or(went_on);
        if let Some(why) = why {
            return self.heal(k, why);
        }
        let target = match self.target_of(k) {
            None if step.target.is_some() => return self.heal(k, Decline::Missing),
            None => None,
            Some(t) => match locate(page, &t) {
                // An element the page does not name, or one of several with the same name,
                // is told apart by its position only: never acted on (the second "Remove" of
                // a list may be another item's; unnamed fields may come in another order).
                Located::Unique(_) if t.of > 1 || t.name.is_empty() => {
                    return self.heal(k, Decline::Unnamed)
                }
                Located::Unique(id) => Some(id),
                Located::Missing => return self.heal(k, Decline::Missing),
                Located::Ambiguous(count) => return self.heal(k, Decline::Ambiguous { count }),
            },
        };
        Next::Act { step: k, target }
    }

    /// Step `k` went out (or its confirmation was asked for).
    pub fn acted(&mut self, k: usize) {
        self.cursor = k + 1;
        self.replayed += 1;
    }

    /// The server's rules stopped step `k`: the model is asked for it.
    pub fn refused(&mut self, k: usize) -> Next {
        self.heal(k, Decline::Refused)
    }

    fn heal(&mut self, k: usize, why: Decline) -> Next {
        if !why.planned() {
            self.heals += 1;
        }
        if self.heals > MAX_HEALS_PER_RUN {
            self.stopped = true;
            return Next::Off;
        }
        self.healing = Some(Healing {
            step: k,
            why: why.clone(),
            at: 0,
        });
        Next::Heal { step: k, why }
    }

    /// Where the run is after the model's steps for `h` (its answer's actions in order: those
    /// the server kept and sent one per request, and a confirmed one, included). When the
    /// next step is the model's too, why: the answer ended with actions the recipe does not
    /// have (the page is not one the recipe knows), or the step was a record the model picked
    /// and the next is the finish (whether the task is done is the model's to say).
    fn find_place(
        &mut self,
        page: &dyn PageFacts,
        h: &Healing,
        last: Last,
        acted: &[Acted<'_>],
    ) -> Option<Decline> {
        // A heal that itself failed leaves the step to do.
        if last == Last::Failed {
            return None;
        }
        // A failed verdict was about the replayed step before `h.step`: the model was asked to
        // redo that one (and its answer may go on with `h.step`).
        let redo = h.why == Decline::Failed;
        let k = if redo {
            h.step.saturating_sub(1)
        } else {
            h.step
        };
        // The model was asked for the step itself (a hand-off, or an outcome only it could
        // judge): the model's action that is that kind of action on that kind of element
        // (named so, when the step's target has a name) did it. Anything else (a dialog closed
        // first, the step before redone) leaves the step to do.
        let handed = !matches!(
            h.why,
            Decline::Missing | Decline::Ambiguous { .. } | Decline::OtherPage
        );
        // The model's own action for the step failed its verdict: it may have worked all the
        // same (the verdict misread it), so the step is never replayed after it.
        let retried = h.why == Decline::ModelFailed;
        let as_asked = handed
            .then(|| acted.iter().position(|a| self.done_as_asked(k, *a)))
            .flatten();
        let exact = || acted.iter().position(|a| self.same_as(k, *a));
        let its_way = (0..acted.len()).find(|&i| self.done_its_way(page, k, &acted[i..]));
        let done = as_asked
            .or_else(exact)
            .or(its_way)
            .map(|i| (k, i))
            // Not done again (the failed verdict may have missed that it worked): the answer
            // may have gone on with the next step itself, exactly as recorded.
            .or_else(|| {
                let next = if redo {
                    h.step
                } else if retried {
                    k + 1
                } else {
                    return None;
                };
                Some((next, acted.iter().position(|a| self.same_as(next, *a))?))
            });
        let Some((k, i)) = done else {
            if redo || retried {
                // Something else: the page is not one the recipe knows.
                return (!acted.is_empty()).then_some(Decline::WentOn);
            } else if self.steps.get(k).is_some_and(|s| s.action == "finish") {
                // Asked to finish, the model went on instead: the rest is the model's.
                self.stopped = true;
            } else if handed {
                self.stalls += 1;
                self.stopped = self.stalls > MAX_HEALS_PER_RUN;
            }
            return None;
        };
        // A record the model picked by its own reading (the invoice this task calls for): a
        // like action on another element of that kind (a "Review" first) would pass too, so
        // whether the task is then done is the model's to say. (An unnamed element that is
        // there on every run, "the textbox", is not a pick among records.)
        // So too a step taken as done the model's way (another name, another place).
        let loose = as_asked == Some(i) && self.steps.get(k).is_some_and(|s| s.found_target)
            || its_way == Some(i) && as_asked.is_none() && exact().is_none();
        // What the model did before the step were steps of its own (a dialog closed).
        self.inserted.extend(acted[..i].iter().map(|a| a.index));
        self.cursor = k + 1;
        // The rest of its answer may have done the recipe's next steps too (a form filled):
        // each exactly as recorded; actions of its own in between are passed over.
        let mut own: Vec<Acted<'_>> = acted[..i].to_vec();
        let mut own_last = false;
        for a in &acted[i + 1..] {
            own_last = !self.same_as(self.cursor, *a);
            if own_last {
                own.push(*a);
            } else {
                self.cursor += 1;
            }
        }
        // An action of its own that is a later step of the recipe: the steps were done in
        // another order, and replaying the rest could do one twice.
        if own
            .iter()
            .any(|a| (self.cursor..self.steps.len()).any(|j| self.same_as(j, *a)))
        {
            self.stopped = true;
            return None;
        }
        let finish_next = self
            .steps
            .get(self.cursor)
            .is_some_and(|s| s.action == "finish");
        if own_last {
            Some(Decline::WentOn)
        } else if loose && finish_next && self.cursor == k + 1 {
            Some(Decline::ModelsPick)
        } else {
            None
        }
    }

    /// Done the model's way (a renamed button, a moved field) by the first of `acted`: the
    /// same kind of action on the same kind of element, the step's own target still not here,
    /// and the page now where the next step starts (or the model's next action that step).
    /// Anything else was a step of its own (a dialog closed, a sign-in on the way): the
    /// recipe's step is still to do.
    fn done_its_way(&self, page: &dyn PageFacts, k: usize, acted: &[Acted<'_>]) -> bool {
        let Some(a) = acted.first() else {
            return false;
        };
        // Only a named target can be missing from the page, and a step the recorded run
        // confirmed is done only by an action the user confirmed.
        let like = self.steps.get(k).is_some_and(|s| {
            s.action == a.action
                && (!s.confirm || a.confirmed)
                && match (&s.target, a.target) {
                    (Some(t), Some(d)) => t.role == d.role && !t.name.is_empty(),
                    (None, None) => true,
                    _ => false,
                }
        });
        // Alone, the action is taken for the step only when the page moved on to where the
        // next step starts, or it was on an element named much like the step's target ("Save
        // changes" for "Save"): a dialog's "No thanks" on the same page is not the step.
        let akin = match (self.target_of(k), a.target) {
            (Some(t), Some(d)) => shares_word(&t.name, &d.name),
            _ => false,
        };
        like && !self.ready(page, k)
            && match acted.get(1) {
                None => self.ready(page, k + 1) && (!self.on_page(page, k) || akin),
                Some(b) => self.same_as(k + 1, *b),
            }
    }

    /// Whether step `k` could go out on `page`: its kind of page, its target here alone.
    fn ready(&self, page: &dyn PageFacts, k: usize) -> bool {
        let Some(step) = self.steps.get(k) else {
            return false;
        };
        self.on_page(page, k)
            && match self.target_of(k) {
                Some(t) => matches!(locate(page, &t), Located::Unique(_)),
                None => step.target.is_none(),
            }
    }

    /// Whether the model's action, asked for step `k`, is that step: the same action on an
    /// element of the same role, named as the step's target when that has a name — or, for
    /// one of a row of like controls ("Odd"/"Even" per number), on one of such a row too.
    fn done_as_asked(&self, k: usize, a: Acted<'_>) -> bool {
        let Some(step) = self.steps.get(k) else {
            return false;
        };
        // A step the recorded run confirmed is done only by an action the user confirmed.
        step.action == a.action
            && (!step.confirm || a.confirmed)
            && match (self.target_of(k), a.target) {
                (Some(t), Some(d)) => {
                    // A secret typed is the secret step, whatever the field is called now.
                    let secret = step.secret
                        && a.value
                            .is_some_and(|v| v.contains(crate::domain::secrets::HIDDEN));
                    t.role == d.role
                        && (t.name.is_empty()
                            || t.name == d.name
                            || (t.of > 1 && d.of > 1)
                            || secret)
                }
                (None, None) => true,
                _ => false,
            }
    }

    /// Whether the model's action is recipe step `k` as recorded.
    fn same_as(&self, k: usize, a: Acted<'_>) -> bool {
        let Some(step) = self.steps.get(k) else {
            return false;
        };
        if step.action != a.action {
            return false;
        }
        if step.confirm && !a.confirmed {
            return false;
        }
        let same_value = match (self.value_of(k), a.value) {
            (Some(v), Some(w)) => super::normalise(&v) == super::normalise(w),
            (None, None) => true,
            _ => false,
        };
        match (self.target_of(k), a.target) {
            // An unnamed field is told apart by what goes into it: this run's value, or — for
            // a value the model gives on every run — its kind of field, in the recipe's order.
            // An unnamed element clicked is not told apart at all.
            (Some(t), Some(d)) if t.name.is_empty() => {
                let secret = a
                    .value
                    .is_some_and(|v| v.contains(crate::domain::secrets::HIDDEN));
                // A kind of field only: an unnamed one (a named one is some other field), and
                // never a record the model picks.
                let by_kind = d.name.is_empty()
                    && !step.found_target
                    && ((step.secret && secret) || (step.found_value && !secret));
                t.role == d.role && a.value.is_some() && (by_kind || same_value)
            }
            (Some(t), Some(d)) => t.role == d.role && t.name == d.name,
            (None, None) => true,
            _ => step.target.is_none() && same_value,
        }
    }

    /// The value step `k` types or chooses on this run.
    pub fn value_of(&self, k: usize) -> Option<String> {
        let step = self.steps.get(k)?;
        match &step.value_param {
            Some(name) => self
                .params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone()),
            None => step.value.clone(),
        }
    }

    /// Whether `page` is the kind of page step `k` was taken on.
    fn on_page(&self, page: &dyn PageFacts, k: usize) -> bool {
        let Some(step) = self.steps.get(k) else {
            return false;
        };
        site_key(page.url()).is_some_and(|s| s.domain == self.domain && s.path == step.page)
    }

    /// Step `k`'s intent with this run's values.
    pub fn intent_of(&self, k: usize) -> String {
        self.steps
            .get(k)
            .map(|s| filled(&s.intent, &self.params))
            .map(|s| crate::text::single_line(&s, MAX_INTENT_CHARS))
            .unwrap_or_default()
    }

    /// The note the model gets when it is asked for step `k`: what the recorded run did there
    /// and why it is not done without it.
    pub fn hint(&self, k: usize, why: &Decline) -> String {
        let (what, k) = match why {
            // The failed action was the recipe's step before.
            Decline::Failed => ("redo", k.saturating_sub(1)),
            _ => ("do", k),
        };
        let Some(step) = self.steps.get(k) else {
            return String::new();
        };
        let target = self
            .target_of(k)
            .map(|t| match step.found_target {
                true => format!(" on the {} this task calls for", t.role),
                false => format!(" on the {} named \"{}\"", t.role, t.name),
            })
            .unwrap_or_default();
        let value = if step.secret {
            " (a value kept secret: ask the user for it if you do not have it)".to_owned()
        } else if step.found_value {
            " (with the value this task calls for)".to_owned()
        } else {
            self.value_of(k)
                .map(|v| format!(" with \"{}\"", crate::text::single_line(&v, 80)))
                .unwrap_or_default()
        };
        let expect = step
            .expect
            .as_deref()
            .map(|e| {
                format!(
                    " Expected: {}.",
                    crate::text::single_line(&filled(e, &self.params), 160)
                )
            })
            .unwrap_or_default();
        let intent = self.intent_of(k);
        let intent = if intent.is_empty() {
            String::new()
        } else {
            format!(" (\"{intent}\")")
        };
        format!(
            "A recipe recorded from an earlier successful run of this task says to {what} step {} of {}: {}{target}{value}{intent}.{expect} It was not done without you because {}. Do what that step was for on this page (the page may have changed: another name, another place, a dialog in the way).",
            k + 1,
            self.steps.len(),
            step.action,
            why.describe()
        )
    }
}

/// Whether two normalised names share a word of three letters or more.
fn shares_word(a: &str, b: &str) -> bool {
    a.split_whitespace()
        .filter(|w| w.chars().count() >= 3)
        .any(|w| b.split_whitespace().any(|v| v == w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};
    use crate::domain::recipe::book::RecipeStep;

    fn desc(role: &str, name: &str) -> TargetDescription {
        TargetDescription {
            role: role.into(),
            name: name.into(),
            nth: 0,
            of: 1,
        }
    }

    fn clicked_by<'a>(action: &'a str, target: &'a TargetDescription) -> Acted<'a> {
        Acted {
            action,
            target: Some(target),
            value: None,
            index: 0,
            confirmed: false,
        }
    }

    /// The checkout's run at "buy now", handed to the model on `page`.
    fn healing_at_buy(page: &FakePage) -> RecipeRun {
        let mut r = checkout();
        r.cursor = 1;
        assert!(matches!(
            r.next(page, Last::Verified, &[]),
            Next::Heal { step: 1, .. }
        ));
        r
    }

    fn page(url: &str, els: Vec<crate::domain::facts::fake::El>) -> FakePage {
        FakePage {
            url: url.into(),
            hash: "h".into(),
            els,
        }
    }

    fn step(action: &str, role: &str, name: &str, path: &str) -> RecipeStep {
        RecipeStep {
            target: (!role.is_empty()).then(|| TargetDescription {
                role: role.into(),
                name: name.into(),
                nth: 0,
                of: 1,
            }),
            intent: format!("{action} {name}"),
            ..RecipeStep::new(action, path)
        }
    }

    fn run(steps: Vec<RecipeStep>) -> RecipeRun {
        RecipeRun {
            id: "r".into(),
            domain: "shop.test".into(),
            params: vec![("item".into(), "blue mug".into())],
            steps,
            cursor: 0,
            heals: 0,
            replayed: 0,
            healed_runs: 0,
            healing: None,
            stopped: false,
            inserted: Vec::new(),
            stalls: 0,
        }
    }

    /// A date the task calls for (the model's on every run), Save, Share, the finish.
    fn date_save_share() -> RecipeRun {
        run(vec![
            RecipeStep {
                found_value: true,
                ..step("setValue", "inp", "date", "/form")
            },
            step("click", "btn", "save", "/form"),
            step("click", "btn", "share", "/form"),
            step("finish", "", "", "/form"),
        ])
    }

    fn share_form() -> FakePage {
        page(
            "http://shop.test/form",
            vec![
                el("1", "inp", "Date"),
                el("2", "btn", "Save"),
                el("3", "chk", "Remind me"),
                el("4", "btn", "Share"),
            ],
        )
    }

    fn checkout() -> RecipeRun {
        let mut pick = step("click", "link", "{item}", "/");
        if let Some(t) = pick.target.as_mut() {
            t.name = "red mug".into();
        }
        pick.target_param = Some("item".into());
        run(vec![
            pick,
            step("click", "btn", "buy now", "/item/*"),
            step("finish", "", "", "/done"),
        ])
    }

    #[test]
    fn an_unchanged_page_replays_every_step_with_this_runs_values() {
        let mut r = checkout();
        let home = page(
            "http://shop.test/",
            vec![el("1", "link", "Red mug"), el("2", "link", "Blue mug")],
        );
        assert_eq!(
            r.next(&home, Last::Nothing, &[]),
            Next::Act {
                step: 0,
                target: Some("2".into())
            },
            "the parameter names the link: this run's value, not the recorded one"
        );
        r.acted(0);
        let item = page("http://shop.test/item/7", vec![el("9", "btn", "Buy now")]);
        assert_eq!(
            r.next(&item, Last::Verified, &[]),
            Next::Act {
                step: 1,
                target: Some("9".into())
            }
        );
        r.acted(1);
        let done = page("http://shop.test/done", vec![]);
        assert_eq!(
            r.next(&done, Last::Verified, &[]),
            Next::Act {
                step: 2,
                target: None
            }
        );
        r.acted(2);
        assert_eq!(r.next(&done, Last::Verified, &[]), Next::Off);
        assert_eq!((r.replayed, r.heals), (3, 0));
    }

    #[test]
    fn a_step_is_never_replayed_on_doubt() {
        let item = |els| page("http://shop.test/item/7", els);
        let at_buy = || {
            let mut r = checkout();
            r.cursor = 1;
            r
        };
        // The previous action failed or is unconfirmed.
        for (last, why) in [
            (Last::Failed, Decline::Failed),
            (Last::Unconfirmed, Decline::Unconfirmed),
        ] {
            let mut r = at_buy();
            assert_eq!(
                r.next(&item(vec![el("9", "btn", "Buy now")]), last, &[]),
                Next::Heal { step: 1, why }
            );
        }
        // Renamed, doubled, or another page.
        let mut r = at_buy();
        assert_eq!(
            r.next(&item(vec![el("9", "btn", "Purchase")]), Last::Verified, &[]),
            Next::Heal {
                step: 1,
                why: Decline::Missing
            }
        );
        let mut r = at_buy();
        assert_eq!(
            r.next(
                &item(vec![el("9", "btn", "Buy now"), el("10", "btn", "Buy now")]),
                Last::Verified,
                &[]
            ),
            Next::Heal {
                step: 1,
                why: Decline::Ambiguous { count: 2 }
            }
        );
        let mut r = at_buy();
        assert_eq!(
            r.next(
                &page("http://shop.test/login", vec![el("9", "btn", "Buy now")]),
                Last::Verified,
                &[]
            ),
            Next::Heal {
                step: 1,
                why: Decline::OtherPage
            }
        );
        // Another parameter value needs an element that is the only one so named.
        let mut r = checkout();
        let two_blue = page(
            "http://shop.test/",
            vec![el("1", "link", "Blue mug"), el("2", "link", "Blue mug")],
        );
        assert_eq!(
            r.next(&two_blue, Last::Nothing, &[]),
            Next::Heal {
                step: 0,
                why: Decline::Ambiguous { count: 2 }
            }
        );
    }

    #[test]
    fn after_a_heal_the_run_finds_its_place() {
        // Renamed button: the model clicked the new name and the page moved on; the run goes
        // on with the next step (the finish: the model's to give after a step done its way).
        let renamed = page("http://shop.test/item/7", vec![el("9", "btn", "Purchase")]);
        let mut r = healing_at_buy(&renamed);
        let new = desc("btn", "purchase");
        let done = page("http://shop.test/done", vec![]);
        let acted = clicked_by("click", &new);
        assert_eq!(
            r.next(&done, Last::Verified, &[acted]),
            Next::Heal {
                step: 2,
                why: Decline::ModelsPick
            }
        );

        // A dialog in the way: the model closed it, the target is there again, the step is
        // replayed.
        let dialog = page("http://shop.test/item/7", vec![el("5", "btn", "Close")]);
        let mut r = healing_at_buy(&dialog);
        let close = desc("btn", "close");
        let acted = clicked_by("click", &close);
        let item = page("http://shop.test/item/7", vec![el("9", "btn", "Buy now")]);
        assert_eq!(
            r.next(&item, Last::Verified, &[acted]),
            Next::Act {
                step: 1,
                target: Some("9".into())
            }
        );

        // The model did the step itself and its target is still there: not done twice.
        let mut r = checkout();
        r.cursor = 1;
        let _ = r.next(&item, Last::Unconfirmed, &[]);
        let buy = desc("btn", "buy now");
        let acted = clicked_by("click", &buy);
        assert_eq!(r.cursor, 1);
        assert_eq!(
            r.next(&item, Last::Verified, &[acted]),
            Next::Heal {
                step: 2,
                why: Decline::OtherPage
            },
            "step 1 is not replayed after the model did it"
        );
    }

    #[test]
    fn nothing_is_replayed_on_an_element_told_apart_by_position_only() {
        let two = |action: &str| {
            let mut s = step(action, "btn", "remove", "/cart");
            if let Some(t) = s.target.as_mut() {
                (t.nth, t.of) = (1, 2);
            }
            run(vec![s])
        };
        let cart = page(
            "http://shop.test/cart",
            vec![el("1", "btn", "Remove"), el("2", "btn", "Remove")],
        );
        for action in ["click", "setValue"] {
            assert_eq!(
                two(action).next(&cart, Last::Nothing, &[]),
                Next::Heal {
                    step: 0,
                    why: Decline::Unnamed
                }
            );
        }
        // Unnamed fields (MiniWoB's multi-orderings shuffles them between runs).
        let mut r = run(vec![step("setValue", "inp", "", "/form")]);
        let form = page("http://shop.test/form", vec![el("1", "inp", "")]);
        assert_eq!(
            r.next(&form, Last::Nothing, &[]),
            Next::Heal {
                step: 0,
                why: Decline::Unnamed
            }
        );
    }

    #[test]
    fn a_finish_needs_an_action_whose_expectations_the_page_showed_met() {
        let done = page("http://shop.test/done", vec![]);
        for (last, replayed) in [
            (Last::Verified, true),
            (Last::Likely, false),
            (Last::Nothing, false),
        ] {
            let mut r = checkout();
            r.cursor = 2;
            let next = r.next(&done, last, &[]);
            assert_eq!(
                matches!(next, Next::Act { step: 2, .. }),
                replayed,
                "{last:?}"
            );
        }
    }

    #[test]
    fn the_model_is_asked_again_for_a_step_its_own_action_failed() {
        let renamed = page("http://shop.test/item/7", vec![el("9", "btn", "Purchase")]);
        let mut r = healing_at_buy(&renamed);
        let new = desc("btn", "purchase");
        let acted = clicked_by("click", &new);
        assert_eq!(
            r.next(&renamed, Last::Failed, &[acted]),
            Next::Heal {
                step: 1,
                why: Decline::ModelFailed
            }
        );
        let hint = r.hint(1, &Decline::ModelFailed);
        assert!(hint.contains("to do step 2 of 3"), "{hint}");
    }

    #[test]
    fn after_a_heal_for_a_missing_target_something_else_keeps_the_step_to_do() {
        // The model signed in on the way (another page, another action): the step is not done
        // and is asked for again, never skipped.
        let mut r = checkout();
        r.cursor = 1;
        let login = page("http://shop.test/login", vec![el("3", "inp", "Email")]);
        assert!(matches!(
            r.next(&login, Last::Verified, &[]),
            Next::Heal {
                step: 1,
                why: Decline::OtherPage
            }
        ));
        let email = desc("inp", "email");
        let acted = Acted {
            action: "setValue",
            target: Some(&email),
            value: Some("a@b.c"),
            index: 0,
            confirmed: false,
        };
        assert!(matches!(
            r.next(&login, Last::Verified, &[acted]),
            Next::Heal { step: 1, .. }
        ));
        // A hand-off (a secret, a found value) is the model's step: the run goes on after it.
        let mut r = run(vec![
            RecipeStep {
                secret: true,
                ..step("setValue", "inp", "password", "/")
            },
            step("click", "btn", "sign in", "/"),
        ]);
        let p = page(
            "http://shop.test/",
            vec![el("1", "inp", "Password"), el("2", "btn", "Sign in")],
        );
        assert!(matches!(
            r.next(&p, Last::Nothing, &[]),
            Next::Heal {
                step: 0,
                why: Decline::Secret
            }
        ));
        assert_eq!(r.heals, 0, "a hand-off is not a heal");
        let password = desc("inp", "password");
        let acted = clicked_by("setValue", &password);
        assert_eq!(
            r.next(&p, Last::Verified, &[acted]),
            Next::Act {
                step: 1,
                target: Some("2".into())
            }
        );
    }

    #[test]
    fn heals_are_bounded_and_secrets_always_go_to_the_model() {
        // A secret is the model's on every run, never counted as a heal.
        let mut r = run(vec![RecipeStep {
            secret: true,
            ..step("setValue", "inp", "password", "/")
        }]);
        let p = page("http://shop.test/", vec![el("1", "inp", "Password")]);
        for _ in 0..=MAX_HEALS_PER_RUN {
            assert_eq!(
                r.next(&p, Last::Nothing, &[]),
                Next::Heal {
                    step: 0,
                    why: Decline::Secret
                }
            );
            r.healing = None;
        }
        let hint = r.hint(0, &Decline::Secret);
        assert!(
            hint.contains("kept secret") && hint.contains("step 1 of 1"),
            "{hint}"
        );
        // A step whose target keeps missing: three heals, then the model carries on alone.
        let mut r = run(vec![step("click", "btn", "buy now", "/")]);
        for _ in 0..MAX_HEALS_PER_RUN {
            assert!(matches!(r.next(&p, Last::Nothing, &[]), Next::Heal { .. }));
            r.healing = None;
        }
        assert_eq!(r.next(&p, Last::Nothing, &[]), Next::Off);
        assert!(r.stopped);
    }

    #[test]
    fn a_step_handed_to_the_model_is_done_only_when_the_model_did_it() {
        // The second of two "Remove" buttons is told apart by position only: handed to the
        // model. A newsletter dialog is in the way, and the model closes it first.
        let mut remove = step("click", "btn", "remove", "/cart");
        if let Some(t) = remove.target.as_mut() {
            (t.nth, t.of) = (1, 2);
        }
        let mut r = run(vec![
            remove,
            step("click", "btn", "checkout", "/cart"),
            step("finish", "", "", "/cart"),
        ]);
        let cart = |extra: Vec<crate::domain::facts::fake::El>| {
            let mut els = vec![
                el("1", "btn", "Remove"),
                el("2", "btn", "Remove"),
                el("3", "btn", "Checkout"),
            ];
            els.extend(extra);
            page("http://shop.test/cart", els)
        };
        let handed = Next::Heal {
            step: 0,
            why: Decline::Unnamed,
        };
        assert_eq!(
            r.next(&cart(vec![el("9", "btn", "Close")]), Last::Nothing, &[]),
            handed
        );
        let close = desc("btn", "close");
        let closed = clicked_by("click", &close);
        // The dialog is gone, the item is still in the cart: the step is still to do, and
        // Checkout is not replayed.
        assert_eq!(r.next(&cart(vec![]), Last::Verified, &[closed]), handed);
        let second = TargetDescription {
            nth: 1,
            of: 2,
            ..desc("btn", "remove")
        };
        let removed = clicked_by("click", &second);
        // The model removed it: Checkout goes out.
        assert_eq!(
            r.next(&cart(vec![]), Last::Verified, &[removed]),
            Next::Act {
                step: 1,
                target: Some("3".into())
            }
        );
        // One of a row of like controls ("Odd"/"Even" per number): the model's choice in the
        // row is the step, whatever its name.
        let mut odd = step("click", "btn", "odd", "/");
        if let Some(t) = odd.target.as_mut() {
            (t.nth, t.of) = (0, 3);
        }
        let mut r = run(vec![odd, step("click", "btn", "submit", "/")]);
        let row = page(
            "http://shop.test/",
            vec![
                el("1", "btn", "Odd"),
                el("2", "btn", "Even"),
                el("3", "btn", "Odd"),
                el("4", "btn", "Even"),
                el("5", "btn", "Odd"),
                el("6", "btn", "Even"),
                el("7", "btn", "Submit"),
            ],
        );
        assert!(matches!(
            r.next(&row, Last::Nothing, &[]),
            Next::Heal { step: 0, .. }
        ));
        let even = TargetDescription {
            of: 3,
            ..desc("btn", "even")
        };
        let chose = clicked_by("click", &even);
        assert_eq!(
            r.next(&row, Last::Verified, &[chose]),
            Next::Act {
                step: 1,
                target: Some("7".into())
            }
        );
        // A model that keeps doing something else ends the run after a few tries.
        let mut r = run(vec![RecipeStep {
            found_value: true,
            ..step("setValue", "inp", "date", "/")
        }]);
        let p = page("http://shop.test/", vec![el("1", "inp", "Date")]);
        for _ in 0..=MAX_HEALS_PER_RUN {
            assert!(matches!(
                r.next(&p, Last::Verified, &[closed]),
                Next::Heal { .. }
            ));
        }
        assert_eq!(r.next(&p, Last::Verified, &[closed]), Next::Off);
    }

    #[test]
    fn every_action_of_the_models_answer_counts_for_the_step_it_was_handed() {
        // A date the task calls for (handed over every run), then Submit and the finish. The
        // model's answer fills the date and clicks Submit (the server sends the click on the
        // next request): both are its, and the run goes on after them.
        let form = || {
            run(vec![
                RecipeStep {
                    found_value: true,
                    ..step("setValue", "inp", "date", "/form")
                },
                step("click", "btn", "submit", "/form"),
                step("finish", "", "", "/done"),
            ])
        };
        let p = page(
            "http://shop.test/form",
            vec![el("1", "inp", "Date"), el("2", "btn", "Submit")],
        );
        let done = page("http://shop.test/done", vec![]);
        let date = desc("inp", "date");
        let submit = desc("btn", "submit");
        let typed = Acted {
            value: Some("2026-12-01"),
            index: 4,
            ..clicked_by("setValue", &date)
        };
        let clicked = Acted {
            index: 5,
            ..clicked_by("click", &submit)
        };
        let mut r = form();
        assert!(matches!(
            r.next(&p, Last::Nothing, &[]),
            Next::Heal { step: 0, .. }
        ));
        assert_eq!(
            r.next(&done, Last::Verified, &[typed, clicked]),
            Next::Act {
                step: 2,
                target: None
            },
            "Submit is not clicked again, nor the date handed over again"
        );
        assert_eq!((r.stalls, r.inserted.len()), (0, 0));

        // A dialog closed first, in the same answer: an optional step of its own.
        let close = desc("btn", "close");
        let closed = Acted {
            index: 3,
            ..clicked_by("click", &close)
        };
        let mut r = form();
        let _ = r.next(&p, Last::Nothing, &[]);
        assert_eq!(
            r.next(&p, Last::Verified, &[closed, typed]),
            Next::Act {
                step: 1,
                target: Some("2".into())
            }
        );
        assert_eq!(r.inserted, vec![3]);

        // A server tool's round: nothing on the page yet, not a stall.
        let mut r = form();
        let _ = r.next(&p, Last::Nothing, &[]);
        assert!(matches!(
            r.next(&p, Last::Nothing, &[]),
            Next::Heal { step: 0, .. }
        ));
        assert_eq!(r.stalls, 0);
    }

    #[test]
    fn a_finish_handed_to_the_model_is_never_replayed_after_it_went_on() {
        // The finish needed the model (the last outcome unconfirmed); the model looked
        // further instead of finishing, and its action verified: the recorded finish does not
        // go out on the strength of an action the recipe never had.
        let done = page(
            "http://shop.test/done",
            vec![el("4", "link", "Order details")],
        );
        let mut r = checkout();
        r.cursor = 2;
        assert_eq!(
            r.next(&done, Last::Unconfirmed, &[]),
            Next::Heal {
                step: 2,
                why: Decline::Unconfirmed
            }
        );
        let details = desc("link", "order details");
        let looked = clicked_by("click", &details);
        assert_eq!(r.next(&done, Last::Verified, &[looked]), Next::Off);
        assert!(r.stopped);
    }

    #[test]
    fn only_what_the_recipe_has_counts_from_the_rest_of_the_answer() {
        // An amount the task calls for, then the invoice this task calls for (the model's on
        // every run, confirmed), then the finish. The model's answer sets the amount and
        // opens "Review": that is no payment, and the finish is not replayed after it.
        let mut pay = step("click", "btn", "", "/bills");
        pay.found_target = true;
        pay.confirm = true;
        let mut r = run(vec![
            RecipeStep {
                found_value: true,
                ..step("setValue", "inp", "amount", "/bills")
            },
            pay,
            step("finish", "", "", "/bills"),
        ]);
        let bills = page(
            "http://shop.test/bills",
            vec![el("1", "inp", "Amount"), el("2", "btn", "Review")],
        );
        let amount = desc("inp", "amount");
        let review = desc("btn", "review");
        let typed = Acted {
            value: Some("40"),
            index: 2,
            ..clicked_by("setValue", &amount)
        };
        let reviewed = Acted {
            index: 3,
            ..clicked_by("click", &review)
        };
        let _ = r.next(&bills, Last::Nothing, &[]);
        assert_eq!(
            r.next(&bills, Last::Verified, &[typed, reviewed]),
            Next::Heal {
                step: 1,
                why: Decline::FoundTarget
            }
        );
        // Handed the payment itself, the model opens "Review" first: no payment (the user
        // confirmed nothing), the step is still to do.
        assert_eq!(
            r.next(&bills, Last::Verified, &[reviewed]),
            Next::Heal {
                step: 1,
                why: Decline::FoundTarget
            }
        );
        assert_eq!((r.cursor, r.stalls), (1, 1));
        let paid = Acted {
            confirmed: true,
            index: 5,
            ..clicked_by("click", &review)
        };
        assert_eq!(
            r.next(&bills, Last::Verified, &[paid]),
            Next::Heal {
                step: 2,
                why: Decline::ModelsPick
            },
            "a confirmed click on the button it picked is the payment; the model says whether it is done"
        );
        // An answer that ticks a box the recipe does not have between its two steps goes on
        // with the recipe; one that ends with it leaves the next step to the model.
        let form = date_save_share;
        let p = share_form();
        let date = desc("inp", "date");
        let save = desc("btn", "save");
        let remind = desc("chk", "remind me");
        let d = Acted {
            value: Some("2026-12-01"),
            ..clicked_by("setValue", &date)
        };
        let ticked = clicked_by("check", &remind);
        let saved = clicked_by("click", &save);
        let mut r = form();
        let _ = r.next(&p, Last::Nothing, &[]);
        assert_eq!(
            r.next(&p, Last::Verified, &[d, ticked, saved]),
            Next::Act {
                step: 2,
                target: Some("4".into())
            },
            "Save is not clicked twice"
        );
        let mut r = form();
        let _ = r.next(&p, Last::Nothing, &[]);
        assert_eq!(
            r.next(&p, Last::Verified, &[d, saved, ticked]),
            Next::Heal {
                step: 2,
                why: Decline::WentOn
            }
        );
    }

    #[test]
    fn a_step_done_its_way_after_a_dialog_closed_in_the_same_answer_is_done() {
        // "Buy now" renamed "Purchase" behind a dialog: the model's answer closes the dialog
        // and clicks "Purchase". The purchase is not asked for again.
        let dialog = page(
            "http://shop.test/item/7",
            vec![el("5", "btn", "Close"), el("9", "btn", "Purchase")],
        );
        let mut r = healing_at_buy(&dialog);
        let close = desc("btn", "close");
        let purchase = desc("btn", "purchase");
        let closed = Acted {
            index: 6,
            ..clicked_by("click", &close)
        };
        let bought = Acted {
            index: 7,
            ..clicked_by("click", &purchase)
        };
        let done = page("http://shop.test/done", vec![]);
        assert_eq!(
            r.next(&done, Last::Verified, &[closed, bought]),
            Next::Heal {
                step: 2,
                why: Decline::ModelsPick
            }
        );
        assert_eq!(r.inserted, vec![6]);
    }

    #[test]
    fn steps_done_in_another_order_end_the_replay() {
        // Date, Save, Share: the model's answer sets the date and shares, without saving.
        // Replaying Save then Share would share twice.
        let mut r = date_save_share();
        let p = share_form();
        let date = desc("inp", "date");
        let share = desc("btn", "share");
        let d = Acted {
            value: Some("2026-12-01"),
            ..clicked_by("setValue", &date)
        };
        let shared = clicked_by("click", &share);
        let _ = r.next(&p, Last::Nothing, &[]);
        assert_eq!(r.next(&p, Last::Verified, &[d, shared]), Next::Off);
        assert!(r.stopped);
    }

    #[test]
    fn a_handed_step_done_on_a_renamed_field_is_done() {
        // The password field is now "Passcode": the model types into it and signs in.
        let mut r = run(vec![
            RecipeStep {
                secret: true,
                ..step("setValue", "inp", "password", "/")
            },
            step("click", "btn", "sign in", "/"),
            step("finish", "", "", "/home"),
        ]);
        let p = page(
            "http://shop.test/",
            vec![el("1", "inp", "Passcode"), el("2", "btn", "Sign in")],
        );
        let passcode = desc("inp", "passcode");
        let typed = Acted {
            value: Some("[secret]"),
            ..clicked_by("setValue", &passcode)
        };
        let _ = r.next(&p, Last::Nothing, &[]);
        assert_eq!(
            r.next(&p, Last::Verified, &[typed]),
            Next::Act {
                step: 1,
                target: Some("2".into())
            }
        );
        assert_eq!(r.stalls, 0);
    }

    #[test]
    fn after_a_record_the_model_picked_the_finish_is_the_models() {
        // "Open my latest invoice": the invoice is the model's pick on every run. This month
        // the model opens the "Filters" link first — a link too, so it passes as the step;
        // the recorded finish is not replayed on that ("Done" with no invoice open).
        let mut pick = step("click", "link", "", "/invoices");
        pick.found_target = true;
        let mut r = run(vec![pick, step("finish", "", "", "/invoices")]);
        let list = page(
            "http://shop.test/invoices",
            vec![
                el("1", "link", "Filters"),
                el("2", "link", "Invoice INV-1042"),
            ],
        );
        let _ = r.next(&list, Last::Nothing, &[]);
        let filters = desc("link", "filters");
        let opened = clicked_by("click", &filters);
        assert_eq!(
            r.next(&list, Last::Verified, &[opened]),
            Next::Heal {
                step: 1,
                why: Decline::ModelsPick
            }
        );
        assert_eq!(r.heals, 0, "by design on every run: not a heal");
    }

    #[test]
    fn a_replayed_step_the_model_redid_is_not_replayed_again_after_it() {
        // The replayed title did not verify; the model, asked to redo it, types it and clicks
        // "Add to cart" in one answer. "Add to cart" is not clicked a second time.
        let mut title = step("setValue", "inp", "title", "/item/*");
        title.value_param = Some("item".into());
        let mut r = run(vec![
            title,
            step("click", "btn", "add to cart", "/item/*"),
            step("finish", "", "", "/item/*"),
        ]);
        r.acted(0);
        let item = page(
            "http://shop.test/item/7",
            vec![el("1", "inp", "Title"), el("2", "btn", "Add to cart")],
        );
        assert_eq!(
            r.next(&item, Last::Failed, &[]),
            Next::Heal {
                step: 1,
                why: Decline::Failed
            }
        );
        let field = desc("inp", "title");
        let button = desc("btn", "add to cart");
        let typed = Acted {
            value: Some("blue mug"),
            ..clicked_by("setValue", &field)
        };
        let added = clicked_by("click", &button);
        assert_eq!(
            r.next(&item, Last::Verified, &[typed, added]),
            Next::Act {
                step: 2,
                target: None
            }
        );
    }

    #[test]
    fn unnamed_fields_are_told_apart_by_what_goes_into_them() {
        // Two unnamed fields (user, a secret password), now three on the page: handed over as
        // ambiguous. The model's answer fills both and signs in: the run goes on after it.
        let unnamed = |action: &str, nth: usize| {
            let mut s = step(action, "inp", "", "/");
            if let Some(t) = s.target.as_mut() {
                (t.nth, t.of) = (nth, 2);
            }
            s
        };
        let mut user = unnamed("setValue", 0);
        user.value_param = Some("item".into());
        let mut r = run(vec![
            user,
            RecipeStep {
                secret: true,
                ..unnamed("setValue", 1)
            },
            step("click", "btn", "sign in", "/"),
            step("finish", "", "", "/home"),
        ]);
        let login = page(
            "http://shop.test/",
            vec![
                el("1", "inp", ""),
                el("2", "inp", ""),
                el("3", "inp", ""),
                el("4", "btn", "Sign in"),
            ],
        );
        assert_eq!(
            r.next(&login, Last::Nothing, &[]),
            Next::Heal {
                step: 0,
                why: Decline::Ambiguous { count: 3 }
            }
        );
        let field = desc("inp", "");
        let sign_in = desc("btn", "sign in");
        let name = Acted {
            value: Some("blue mug"),
            ..clicked_by("setValue", &field)
        };
        let password = Acted {
            value: Some("[secret]"),
            ..clicked_by("setValue", &field)
        };
        let signed_in = clicked_by("click", &sign_in);
        let home = page("http://shop.test/home", vec![]);
        assert_eq!(
            r.next(&home, Last::Verified, &[name, password, signed_in]),
            Next::Act {
                step: 3,
                target: None
            }
        );
        // A click on an unnamed element is never taken for the step.
        let click = clicked_by("click", &field);
        assert!(!r.same_as(0, click));
    }

    #[test]
    fn a_failed_verdict_the_model_saw_through_is_not_replayed_over() {
        // The replayed comment did not verify (a rich editor the check could not read), but it
        // was there: the model posts without retyping it. "Post" is not replayed again; an
        // answer that is neither the redo nor the next step leaves the next step to the model.
        let mut comment = step("setValue", "inp", "comment", "/post/*");
        comment.value_param = Some("item".into());
        let fresh = || {
            let mut r = run(vec![
                comment.clone(),
                step("click", "btn", "post", "/post/*"),
                step("finish", "", "", "/post/*"),
            ]);
            r.acted(0);
            r
        };
        let post = page(
            "http://shop.test/post/7",
            vec![
                el("1", "inp", "Comment"),
                el("2", "btn", "Post"),
                el("3", "link", "Share"),
            ],
        );
        let mut r = fresh();
        assert!(matches!(
            r.next(&post, Last::Failed, &[]),
            Next::Heal { step: 1, .. }
        ));
        let button = desc("btn", "post");
        let posted = clicked_by("click", &button);
        assert_eq!(
            r.next(&post, Last::Verified, &[posted]),
            Next::Act {
                step: 2,
                target: None
            }
        );
        let mut r = fresh();
        let _ = r.next(&post, Last::Failed, &[]);
        let link = desc("link", "share");
        let other = clicked_by("click", &link);
        assert_eq!(
            r.next(&post, Last::Verified, &[other]),
            Next::Heal {
                step: 1,
                why: Decline::WentOn
            }
        );
    }

    #[test]
    fn a_field_the_model_fills_on_every_run_is_not_any_field() {
        // A note for the order this task calls for (the field named by the order, the note
        // the model's): the model first types the order's number into the Search box. That is
        // not the note, and the finish is not replayed after it.
        let mut note = step("setValue", "inp", "", "/orders");
        note.found_target = true;
        note.found_value = true;
        let mut r = run(vec![note, step("finish", "", "", "/orders")]);
        let orders = page(
            "http://shop.test/orders",
            vec![
                el("1", "inp", "Search"),
                el("2", "inp", "Note for order 5530"),
            ],
        );
        let _ = r.next(&orders, Last::Nothing, &[]);
        let search = desc("inp", "search");
        let searched = Acted {
            value: Some("5530"),
            ..clicked_by("setValue", &search)
        };
        assert!(!r.same_as(0, searched));
        assert_eq!(
            r.next(&orders, Last::Verified, &[searched]),
            Next::Heal {
                step: 1,
                why: Decline::ModelsPick
            }
        );
        // A password typed into an unnamed field is the secret step only when it was the
        // secret (scrubbed in the record), and only into an unnamed field.
        let mut pw = step("setValue", "inp", "", "/");
        pw.secret = true;
        let r = run(vec![pw]);
        let field = desc("inp", "");
        let typed = |value| Acted {
            value: Some(value),
            ..clicked_by("setValue", &field)
        };
        assert!(r.same_as(0, typed("[secret]")));
        assert!(!r.same_as(0, typed("apartment 4")));
    }

    #[test]
    fn a_like_click_on_the_same_page_is_not_a_renamed_step() {
        // "Save" renamed "Store" behind a dialog, all on one page: the model's "No thanks"
        // closes the dialog. That is no save: the step is still to do, the finish not replayed.
        let mut r = run(vec![
            step("click", "btn", "save", "/form"),
            step("finish", "", "", "/form"),
        ]);
        let form = |els| page("http://shop.test/form", els);
        let with_dialog = form(vec![el("5", "btn", "No thanks"), el("2", "btn", "Store")]);
        assert!(matches!(
            r.next(&with_dialog, Last::Nothing, &[]),
            Next::Heal { step: 0, .. }
        ));
        let no = desc("btn", "no thanks");
        let closed = clicked_by("click", &no);
        let after = form(vec![el("2", "btn", "Store")]);
        assert_eq!(
            r.next(&after, Last::Verified, &[closed]),
            Next::Heal {
                step: 0,
                why: Decline::Missing
            }
        );
        // "Save changes" for "Save" on the same page is the step.
        let mut r = run(vec![
            step("click", "btn", "save", "/form"),
            step("finish", "", "", "/form"),
        ]);
        let renamed = form(vec![el("2", "btn", "Save changes")]);
        let _ = r.next(&renamed, Last::Nothing, &[]);
        let new = desc("btn", "save changes");
        let saved = clicked_by("click", &new);
        assert_eq!(
            r.next(&renamed, Last::Verified, &[saved]),
            Next::Heal {
                step: 1,
                why: Decline::ModelsPick
            }
        );
    }

    #[test]
    fn a_step_whose_own_action_misread_as_failed_is_never_replayed_after_it() {
        // "Add to cart" handed over (the last outcome unconfirmed); the model's click worked
        // but its verdict failed. Asked again, the model sees the cart holds it and closes the
        // popup instead: "Add to cart" is not replayed (a second item).
        let mut r = run(vec![
            step("click", "btn", "add to cart", "/item/*"),
            step("finish", "", "", "/item/*"),
        ]);
        let item = page(
            "http://shop.test/item/7",
            vec![el("2", "btn", "Add to cart"), el("5", "btn", "Close")],
        );
        assert!(matches!(
            r.next(&item, Last::Unconfirmed, &[]),
            Next::Heal { step: 0, .. }
        ));
        let add = desc("btn", "add to cart");
        let added = clicked_by("click", &add);
        assert_eq!(
            r.next(&item, Last::Failed, &[added]),
            Next::Heal {
                step: 0,
                why: Decline::ModelFailed
            }
        );
        let close = desc("btn", "close");
        let closed = clicked_by("click", &close);
        assert_eq!(
            r.next(&item, Last::Verified, &[closed]),
            Next::Heal {
                step: 0,
                why: Decline::WentOn
            }
        );
    }
}
