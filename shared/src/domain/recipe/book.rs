//! What a recipe holds (the model: `docs/recipes.md`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::TargetDescription;

/// Bounds: steps and bytes of a recipe, recipes of a site pattern, an intent's characters.
pub const MAX_STEPS: usize = 40;
pub const MAX_BYTES: usize = 32 * 1024;
pub const MAX_PER_SITE: usize = 20;
pub const MAX_INTENT_CHARS: usize = 200;
/// The recipes' format: older ones (the organisation's without promotion) are not replayed.
pub const FORMAT: u32 = 4;
/// Roles of a choice among options: which one is picked is the instruction's to name.
pub const CHOICES: &[&str] = &["radio", "opt", "option", "menuitemradio"];

/// A recipe for one task on one site, of one member or (promoted) of the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recipe {
    /// [`recipe_id`] of its site, template and owner (`""` for the organisation's).
    pub id: String,
    pub tenant_id: String,
    /// The member whose run recorded it (promoted: whose version was promoted).
    #[serde(default)]
    pub owner: String,
    /// The organisation's: replayed for every member.
    #[serde(default)]
    pub promoted: bool,
    /// The start page's site key.
    #[serde(default)]
    pub origin: String,
    pub path: String,
    /// The instruction's template, and each parameter's recorded shape.
    pub template: String,
    pub params: Vec<String>,
    #[serde(default)]
    pub shapes: Vec<ParamShape>,
    #[serde(default)]
    pub format: u32,
    pub steps: Vec<RecipeStep>,
    /// The task whose verified run recorded it (last).
    pub recorded_from: String,
    /// Verified runs that took exactly these steps (for promotion by agreement).
    #[serde(default)]
    pub runs: u32,
    /// An administrator demoted the organisation's recipe with these steps: no promotion by runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub demoted: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Epoch seconds after which it is gone.
    pub expires_at: i64,
}

impl Recipe {
    /// Its steps' hash: two runs agree step for step when they have the same.
    pub fn fingerprint(&self) -> String {
        let steps = serde_json::to_string(&self.steps).unwrap_or_default();
        recipe_id(&self.origin, &self.path, &self.template, &steps)
    }

    /// The organisation's copy of this member's recipe.
    pub fn promoted(&self, now: DateTime<Utc>) -> Recipe {
        Recipe {
            id: recipe_id(&self.origin, &self.path, &self.template, ""),
            promoted: true,
            updated_at: now,
            ..self.clone()
        }
    }
}

/// Whether `recipe` and the other members' recipes in `site` with its steps make `runs` runs
/// of two members or more, none demoted, and the organisation has no such recipe yet.
pub fn agreed(site: &[Recipe], recipe: &Recipe, runs: u32) -> bool {
    let print = recipe.fingerprint();
    let same: Vec<&Recipe> = (site.iter().filter(|r| r.id != recipe.id).chain([recipe]))
        .filter(|r| r.template == recipe.template && r.fingerprint() == print)
        .collect();
    let members = same.iter().filter(|r| !r.promoted && !r.demoted);
    let owners: std::collections::BTreeSet<&str> =
        members.clone().map(|r| r.owner.as_str()).collect();
    let total: u32 = members.map(|r| r.runs).sum();
    owners.len() >= 2 && total >= runs && !same.iter().any(|r| r.promoted)
}

/// A recorded value's shape: its commas and semicolons between words, and its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamShape {
    pub separators: u32,
    pub words: u32,
}

impl ParamShape {
    pub fn of(value: &str) -> Self {
        let inner = value.trim_end_matches(|c: char| !c.is_alphanumeric());
        Self {
            separators: inner.matches([',', ';']).count() as u32,
            words: value.split_whitespace().count() as u32,
        }
    }

    /// The same separators and about as many words (a trailing parameter does not swallow the
    /// rest of another instruction).
    pub fn fits(&self, value: &str) -> bool {
        let other = Self::of(value);
        other.separators == self.separators && other.words <= self.words + (self.words / 2).max(1)
    }
}

/// Why the model gives a step's value on every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnValue {
    Secret,
    Found,
    Answer,
}

/// One step of a recipe.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RecipeStep {
    /// The action's name in the client's grammar.
    pub action: String,
    /// The whole call of an action without a target (a key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The parameters it types, chooses or goes to, and naming its target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_param: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescription>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_param: Option<String>,
    /// The page's path pattern, the target's dialog or form and the page's title.
    pub page: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, in the server's words (parameters as `{name}`).
    pub intent: String,
    /// The recorded run asked the user before it: every run asks again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_value: Option<OwnValue>,
    /// The model picks its target on every run (its name is not kept).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub own_target: bool,
}

impl RecipeStep {
    pub fn new(action: &str, page: &str) -> Self {
        let (action, page) = (action.to_owned(), page.to_owned());
        Self {
            action,
            page,
            ..Self::default()
        }
    }

    /// The model gives part of it on every run: its own value or pick, anything typed, chosen
    /// or gone to that is not the instruction's, or text pressed that is not a key's name.
    pub fn owned(&self) -> bool {
        let typed = matches!(
            self.action.as_str(),
            "setValue" | "selectOption" | "navigate" | "findText"
        );
        let choice = (self.target.as_ref()).is_some_and(|t| CHOICES.contains(&t.role.as_str()));
        let key = |v: &str| {
            let name = v.split('"').nth(1).unwrap_or(v);
            name.split('+').all(|k| {
                k.len() >= 2
                    && k.starts_with(|c: char| c.is_ascii_uppercase())
                    && k.chars().all(|c| c.is_ascii_alphanumeric())
            })
        };
        let pressed = self.action == "press" && !self.value.as_deref().is_some_and(key);
        self.own_value.is_some()
            || self.own_target
            || typed && self.value_param.is_none()
            || choice && self.target_param.is_none()
            || pressed
    }
}

/// A step record's recipe facts, written when the step was decided (the page is gone after).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StepRecipe {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescription>,
    pub page: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The step came from a recipe: replayed without the model, or healed by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<RecipeUse>,
}

/// How a step used a recipe (the response's `metrics.recipe`); `reason`: why it healed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecipeUse {
    pub id: String,
    pub step: usize,
    pub steps: usize,
    pub mode: UseMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Replayed: the action went out without a model call; healed: the model was asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UseMode {
    Replayed,
    Healed,
}

/// A recipe's id: its site, template and owner hashed, each part delimited.
pub fn recipe_id(origin: &str, path: &str, template: &str, owner: &str) -> String {
    crate::text::hex_digest([origin, path, template, owner], 12)
}

/// `text` with each `{name}` replaced by its value (unknown names stay as written).
pub fn filled(text: &str, params: &[(String, String)]) -> String {
    params.iter().fold(text.to_owned(), |out, (name, value)| {
        out.replace(&format!("{{{name}}}"), value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(owner: &str, promoted: bool, steps: usize) -> Recipe {
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default();
        Recipe {
            id: recipe_id("https://a.test:443", "/", "buy {item}", owner),
            tenant_id: "t".into(),
            owner: owner.into(),
            promoted,
            origin: "https://a.test:443".into(),
            path: "/".into(),
            template: "buy {item}".into(),
            params: vec!["item".into()],
            shapes: Vec::new(),
            format: FORMAT,
            steps: vec![RecipeStep::new("click", "/"); steps],
            recorded_from: "task".into(),
            runs: 1,
            demoted: false,
            created_at: now,
            updated_at: now,
            expires_at: 0,
        }
    }

    /// Stored recipes are found by these ids: a change of the scheme (SHA-256 over each part
    /// and a NUL, the first 12 bytes in hex) would orphan every recipe a tenant has. The
    /// values were computed apart from this code (Python's hashlib).
    #[test]
    fn stored_recipes_keep_their_ids() {
        let site = ("https://shop.test:443", "/cart", "buy {item}");
        assert_eq!(
            recipe_id(site.0, site.1, site.2, "ada"),
            "bff0b5840a36c68730070b70"
        );
        assert_eq!(
            recipe_id(site.0, site.1, site.2, ""),
            "b62b1a8196b6e5b31978ad95"
        );
    }

    #[test]
    fn the_id_names_site_template_and_owner_each_delimited() {
        let a = recipe_id("https://shop.test:443", "/cart", "buy {item}", "ada");
        assert_eq!(a.len(), 24);
        assert_eq!(
            a,
            recipe_id("https://shop.test:443", "/cart", "buy {item}", "ada")
        );
        assert_ne!(
            a,
            recipe_id("https://shop.test:443", "/cart", "buy {item}", "bob")
        );
        assert_ne!(
            a,
            recipe_id("http://shop.test:80", "/cart", "buy {item}", "ada")
        );
        assert_ne!(recipe_id("a", "bc", "d", ""), recipe_id("ab", "c", "d", ""));
        assert_eq!(
            filled("buy {item} now", &[("item".into(), "a mug".into())]),
            "buy a mug now"
        );
    }

    #[test]
    fn runs_promote_when_two_members_agree_step_for_step_often_enough() {
        let (ada, bob, bob_other) = (
            recipe("ada", false, 2),
            recipe("bob", false, 2),
            recipe("bob", false, 3),
        );
        assert!(agreed(std::slice::from_ref(&ada), &bob, 2));
        assert!(
            !agreed(std::slice::from_ref(&ada), &bob, 3),
            "two runs in all"
        );
        assert!(!agreed(&[], &bob, 1), "one member");
        assert!(
            !agreed(std::slice::from_ref(&ada), &bob_other, 1),
            "other steps"
        );
        let org = ada.promoted(ada.created_at);
        assert!(org.promoted && org.id != ada.id && org.id == bob.promoted(bob.created_at).id);
        assert!(
            !agreed(&[ada, org], &bob, 2),
            "the organisation has it already"
        );
    }
}
