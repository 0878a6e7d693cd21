//! What a recipe holds: the site and the task's template it answers, and per step the action
//! with its target described by what is stable (role, normalised name, position among equals,
//! the page's path pattern) — never by element id — what the step meant, what it was expected
//! to bring about, and whether it needed the user's confirmation. Values the user gave in the
//! instruction are parameters; a value typed into a secret field is never kept (the step is
//! marked `secret` and the model is asked for it on every run).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::TargetDescription;

/// Most steps a recipe keeps (a longer run is not recorded).
pub const MAX_STEPS: usize = 40;
/// The recipes' format: older ones (which kept more of the recording run, or a record's
/// number as a target's name) are not replayed.
pub const FORMAT: u32 = 3;
/// Largest recipe, serialised (a larger one is not recorded).
pub const MAX_BYTES: usize = 32 * 1024;
/// Most recipes of one site pattern of a tenant.
pub const MAX_PER_SITE: usize = 20;
/// Longest intent or expectation kept with a step.
pub const MAX_INTENT_CHARS: usize = 200;
/// Longest final answer kept.
pub const MAX_ANSWER_CHARS: usize = 1_000;

/// A tenant's recipe for one task on one site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recipe {
    /// Derived from the site and the template ([`recipe_id`]): one recipe per task and site.
    pub id: String,
    pub tenant_id: String,
    pub domain: String,
    /// The start page's path pattern.
    pub path: String,
    /// The normalised instruction with `{name}` for each parameter.
    pub template: String,
    pub params: Vec<String>,
    /// Each parameter's recorded shape: another run's value must have the same separators
    /// and about as many words (a split the recorded run would not have made binds nothing).
    #[serde(default)]
    pub shapes: Vec<ParamShape>,
    /// [`FORMAT`] when recorded.
    #[serde(default)]
    pub format: u32,
    pub steps: Vec<RecipeStep>,
    /// The task whose verified run recorded it (last).
    pub recorded_from: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Epoch seconds after which it is gone.
    pub expires_at: i64,
    /// Runs that replayed it.
    #[serde(default)]
    pub replays: u32,
    /// Runs in a row that needed the model to heal a step (reset by a clean replay).
    #[serde(default)]
    pub healed_runs: u32,
}

/// What a parameter's value looked like in the recorded run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamShape {
    /// Commas and semicolons in it.
    pub separators: u32,
    pub words: u32,
}

impl ParamShape {
    pub fn of(value: &str) -> Self {
        // Between words only: a trailing comma is the value's own punctuation.
        let inner = value.trim_end_matches(|c: char| !c.is_alphanumeric());
        Self {
            separators: inner.matches([',', ';']).count() as u32,
            words: value.split_whitespace().count() as u32,
        }
    }

    /// Whether `value` could be the same kind of value: the same separators and about as
    /// many words — one more for a value of one or two words, half as many more for a longer
    /// one (a trailing parameter does not swallow the rest of another instruction).
    pub fn fits(&self, value: &str) -> bool {
        let other = Self::of(value);
        other.separators == self.separators && other.words <= self.words + (self.words / 2).max(1)
    }
}

/// One step of a recipe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecipeStep {
    /// The action's name in the client's grammar (`click`, `setValue`, `finish`, ...).
    pub action: String,
    /// The action's text argument when it is the same on every run (a key, an address, a
    /// value that is not the user's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The parameter whose value the action types or chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_param: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescription>,
    /// The parameter that names the target (`Click on the "{button}" button`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_param: Option<String>,
    /// The path pattern of the page the step was taken on.
    pub page: String,
    /// What the step was for, as the run's decision said it (parameters as `{name}`).
    #[serde(default)]
    pub intent: String,
    /// What the action was expected to bring about, as verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// The run asked the user before this step: every replay asks again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
    /// It typed a value kept secret: the model is asked for it on every run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// A final answer read off the page (or the web): the model gives it on every run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answer_from_page: bool,
    /// It typed or chose a value the instruction does not give (read off the page, worked out
    /// by the model): the model gives it on every run, never the recorded run's value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub found_value: bool,
    /// Its target was named by the recording run's data (a record's number or code: "INV-1041",
    /// the newest order then): the model picks the target on every run. The name is not kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub found_target: bool,
    /// The model added it when something was in the way (a dialog): skipped when its target
    /// is not there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

impl RecipeStep {
    /// A step of `action` taken on a page of pattern `page`, nothing else known yet.
    pub fn new(action: &str, page: &str) -> Self {
        Self {
            action: action.to_owned(),
            value: None,
            value_param: None,
            target: None,
            target_param: None,
            page: page.to_owned(),
            intent: String::new(),
            expect: None,
            confirm: false,
            secret: false,
            answer_from_page: false,
            found_value: false,
            found_target: false,
            optional: false,
        }
    }
}

/// A step record's recipe facts, written when the step was decided (the page is gone after).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecipe {
    /// The action's target as it can be found again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescription>,
    /// The path pattern of the page.
    #[serde(default)]
    pub page: String,
    /// The step came from a recipe: replayed without the model, or healed by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<RecipeUse>,
}

/// How a step used a recipe (also the response's `metrics.recipe`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecipeUse {
    pub id: String,
    /// The recipe's step (from 0) and how many it has.
    pub step: usize,
    pub steps: usize,
    pub mode: UseMode,
    /// Why the model was asked (a healed step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UseMode {
    /// The action went out without a model call.
    Replayed,
    /// The model was asked with the recipe's step as a hint.
    Healed,
}

/// A recipe's id: its site and template, hashed (the same task on the same site is one recipe).
pub fn recipe_id(domain: &str, path: &str, template: &str) -> String {
    let mut h = Sha256::new();
    for part in [domain, path, template] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..12])
}

/// `text` with each parameter's value (as a whole word, any case) written `{name}`; braces in
/// the text itself are dropped so they cannot be read as parameters.
pub fn templated(text: &str, params: &[(String, String)]) -> String {
    let mut out = text.replace(['{', '}'], "");
    let mut by_length: Vec<&(String, String)> = params.iter().collect();
    by_length.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (name, value) in by_length {
        if value.is_empty() {
            continue;
        }
        // Lower-casing keeps byte offsets only for text whose case changes keep lengths.
        let Some(lower) = super::aligned_lower(&out) else {
            continue;
        };
        let mut at = 0;
        let mut rebuilt = String::new();
        while let Some(k) = lower[at..].find(value.as_str()).map(|k| at + k) {
            let end = k + value.len();
            let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
            let whole =
                !alnum(lower[..k].chars().next_back()) && !alnum(lower[end..].chars().next());
            rebuilt.push_str(&out[at..k]);
            if whole {
                rebuilt.push_str(&format!("{{{name}}}"));
            } else {
                rebuilt.push_str(&out[k..end]);
            }
            at = end;
        }
        rebuilt.push_str(&out[at..]);
        out = rebuilt;
    }
    out
}

/// `text` with each `{name}` replaced by its value (unknown names stay as written).
pub fn filled(text: &str, params: &[(String, String)]) -> String {
    let mut out = text.to_owned();
    for (name, value) in params {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn values_become_parameters_in_text_and_come_back() {
        let p = params(&[("quantity", "3"), ("sku", "sku-123")]);
        let t = templated("Ordered 3 of SKU-123 (not 33 or 3x).", &p);
        assert_eq!(t, "Ordered {quantity} of {sku} (not 33 or 3x).");
        let other = params(&[("quantity", "5"), ("sku", "sku-9")]);
        assert_eq!(filled(&t, &other), "Ordered 5 of sku-9 (not 33 or 3x).");
        // Braces of the text itself never become parameters.
        assert_eq!(templated("a {quantity} b", &p), "a quantity b");
    }

    #[test]
    fn the_id_names_site_and_template_together() {
        let a = recipe_id("shop.test", "/cart", "buy {item}");
        assert_eq!(a.len(), 24);
        assert_eq!(a, recipe_id("shop.test", "/cart", "buy {item}"));
        assert_ne!(a, recipe_id("shop.test", "/cart", "buy {thing}"));
        assert_ne!(a, recipe_id("shop.test", "/", "buy {item}"));
        assert_ne!(
            recipe_id("a", "bc", "d"),
            recipe_id("ab", "c", "d"),
            "parts are delimited"
        );
    }
}
