//! The prompt-only policy's error mode: the mistakes real models make, injected into its
//! otherwise competent answers at a rate per kind, to measure how the server copes with an
//! imperfect model (issue 50). `POLICY_ERRORS=kind:rate,…` (or [`Errors::parse`]) sets the
//! rates, each a fraction of the decisions (of the verification requests for `verifier_no`);
//! `all:rate` sets every kind. Whether a mistake is made is drawn from `POLICY_SEED` (0 by
//! default), the kind and the prompt as the model sees it (its task, history, page and how
//! many messages the request holds — a re-ask after a refusal is a new draw), never from the
//! clock or the order of requests: the same prompt always gets the same mistakes. (A run can
//! still differ a little from the last: what the client reports about a page — a change seen
//! or not, elements added — depends on timing, and a different prompt is a different draw.)
//!
//! The kinds:
//! - `fence`: the answer inside a code fence, after a chatty sentence, or as a JSON object
//!   `{"thought":…,"action":…}`;
//! - `bad_id`: the action on an element id the page does not have;
//! - `scroll`: a window scroll, or the previous click again, instead of the action;
//! - `verifier_no`: the verifier says no although the page shows yes;
//! - `spelling`: the same action spelled differently (`Click(5)`, `click(id=5)`,
//!   `click([5])`, `click(#5)`, `CLICK(5)`, `click("5")`, a trailing `;`, single quotes);
//! - `other_click`: a click on another element of the page;
//! - `other_field`: a value typed into another field of the page than the one it is for;
//! - `into_label`: a value typed into what is next to its field and takes no text (the
//!   field's label, a heading, a button);
//! - `finish`: `finish()` or `finish("Done")` before the task is done.
//!
//! At most one of the mistakes that replace the action (`finish`, `other_click`,
//! `other_field`, `bad_id`, `scroll`) is made in one answer; `spelling` and `fence` can come
//! on top.
//!
//! `sticky:rate` is not a mistake of its own but a trait of the model (issue 52): asked again
//! after the server refused its answer, it gives the refused answer once more at that rate.

use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest, Sha256};

use super::judge::Verdict;
use super::solve::{El, Prompt};

/// One kind of mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Fence,
    BadId,
    Scroll,
    VerifierNo,
    Spelling,
    OtherClick,
    OtherField,
    IntoLabel,
    Finish,
    /// A refused answer given again (see [`Errors::sticky`]).
    Repeated,
}

impl Kind {
    /// The mistakes `all:rate` sets (a repeat is the model's trait, set with `sticky`).
    pub const ALL: [Kind; 9] = [
        Kind::Fence,
        Kind::BadId,
        Kind::Scroll,
        Kind::VerifierNo,
        Kind::Spelling,
        Kind::OtherClick,
        Kind::OtherField,
        Kind::IntoLabel,
        Kind::Finish,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Fence => "fence",
            Kind::BadId => "bad_id",
            Kind::Scroll => "scroll",
            Kind::VerifierNo => "verifier_no",
            Kind::Spelling => "spelling",
            Kind::OtherClick => "other_click",
            Kind::OtherField => "other_field",
            Kind::IntoLabel => "into_label",
            Kind::Finish => "finish",
            Kind::Repeated => "repeated",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name.trim())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error mode: a rate per kind and the seed of the draws. The default makes no mistake.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Errors {
    pub rates: BTreeMap<Kind, f64>,
    /// How often a re-asked model gives its refused answer again (`sticky:rate`).
    pub sticky: f64,
    pub seed: u64,
}

impl Errors {
    /// No mistakes: the competent policy.
    pub fn none() -> Self {
        Self::default()
    }

    /// `kind:rate,…` (`all:rate` for every kind; a later entry overrides an earlier one);
    /// an empty spec makes no mistake.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut rates = BTreeMap::new();
        let mut sticky = 0.0;
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (kind, rate) = item
                .split_once(':')
                .ok_or_else(|| format!("{item:?}: expected kind:rate"))?;
            let rate: f64 = rate
                .trim()
                .parse()
                .ok()
                .filter(|r: &f64| (0.0..=1.0).contains(r))
                .ok_or_else(|| format!("{item:?}: the rate must be a number from 0 to 1"))?;
            if kind.trim() == "all" {
                for k in Kind::ALL {
                    rates.insert(k, rate);
                }
                continue;
            }
            if kind.trim() == "sticky" {
                sticky = rate;
                continue;
            }
            let k = Kind::parse(kind).ok_or_else(|| {
                format!(
                    "unknown mistake {kind:?} (one of {}, all, or sticky)",
                    Kind::ALL.map(Kind::name).join(", ")
                )
            })?;
            rates.insert(k, rate);
        }
        rates.retain(|k, r| *r > 0.0 && Kind::ALL.contains(k));
        Ok(Self {
            rates,
            sticky,
            seed: 0,
        })
    }

    /// `POLICY_ERRORS` and `POLICY_SEED` (none set: no mistakes).
    pub fn from_env() -> Result<Self, String> {
        let mut e = match std::env::var("POLICY_ERRORS") {
            Ok(spec) => Self::parse(&spec).map_err(|e| format!("POLICY_ERRORS: {e}"))?,
            Err(_) => Self::none(),
        };
        if let Ok(seed) = std::env::var("POLICY_SEED") {
            e.seed = seed
                .trim()
                .parse()
                .map_err(|_| format!("POLICY_SEED: not a number: {seed:?}"))?;
        }
        Ok(e)
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// This mode's rate for `kind` alone (a run per kind).
    pub fn only(&self, kind: Kind) -> Self {
        Self {
            rates: self
                .rates
                .iter()
                .filter(|(k, _)| **k == kind)
                .map(|(k, r)| (*k, *r))
                .collect(),
            sticky: self.sticky,
            seed: self.seed,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rates.is_empty() && self.sticky <= 0.0
    }

    /// Whether the model, asked again after `refused` was refused, gives it once more.
    pub fn repeats(&self, key: &str) -> bool {
        self.sticky > 0.0 && self.draw("sticky", key) < self.sticky
    }

    pub fn rate(&self, kind: Kind) -> f64 {
        self.rates.get(&kind).copied().unwrap_or(0.0)
    }

    /// A number in [0, 1) drawn from the seed, a salt and the prompt's key.
    fn draw(&self, salt: &str, key: &str) -> f64 {
        let mut h = Sha256::new();
        h.update(self.seed.to_le_bytes());
        h.update(salt.as_bytes());
        h.update([0]);
        h.update(key.as_bytes());
        let d = h.finalize();
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[..8]);
        (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn fires(&self, kind: Kind, key: &str) -> bool {
        let r = self.rate(kind);
        r > 0.0 && self.draw(kind.name(), key) < r
    }

    /// One of `n` choices, drawn.
    fn pick(&self, salt: &str, key: &str, n: usize) -> usize {
        ((self.draw(salt, key) * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// The verdict the verifier gives: `honest`, or a wrong no.
    pub fn verdict(&self, honest: Verdict, key: &str) -> (Verdict, Vec<Kind>) {
        if honest.yes && self.fires(Kind::VerifierNo, key) {
            let wrong = Verdict {
                yes: false,
                confidence: 0.8,
                reason: "the page does not show that yet".into(),
            };
            return (wrong, vec![Kind::VerifierNo]);
        }
        (honest, Vec::new())
    }

    /// The competent `answer` to the decision prompt `p` (keyed `key`), with the mistakes
    /// drawn for it, and the kinds made.
    pub fn mislead(&self, answer: &str, p: &Prompt, key: &str) -> (String, Vec<Kind>) {
        let (text, made, _) = self.mislead_action(answer, p, key);
        (text, made)
    }

    /// [`Errors::mislead`], with the action a replacing mistake put in the answer (as written
    /// before any respelling).
    pub fn mislead_action(
        &self,
        answer: &str,
        p: &Prompt,
        key: &str,
    ) -> (String, Vec<Kind>, Option<(Kind, String)>) {
        let Some(parts) = Parts::read(answer) else {
            return (answer.to_owned(), Vec::new(), None);
        };
        let mut replacement = None;
        let mut made = Vec::new();
        let mut parts = parts;
        // The mistakes that replace the action: those drawn, one of them made.
        let replacing: Vec<Kind> = [
            Kind::Finish,
            Kind::OtherClick,
            Kind::OtherField,
            Kind::IntoLabel,
            Kind::BadId,
            Kind::Scroll,
        ]
        .into_iter()
        .filter(|k| self.fires(*k, key))
        .filter_map(|k| replaced(k, &parts.action, p, self, key).map(|_| k))
        .collect();
        if !replacing.is_empty() {
            let k = replacing[self.pick("replace", key, replacing.len())];
            if let Some((thought, action)) = replaced(k, &parts.action, p, self, key) {
                parts.thought = thought.to_owned();
                replacement = Some((k, action.clone()));
                parts.action = action;
                made.push(k);
            }
        }
        if self.fires(Kind::Spelling, key) {
            if let Some(a) = respell(&parts.action, self.pick("spelling", key, 8)) {
                parts.action = a;
                made.push(Kind::Spelling);
            }
        }
        let text = if self.fires(Kind::Fence, key) {
            made.push(Kind::Fence);
            parts.fenced(self.pick("fence", key, 4))
        } else {
            parts.tagged()
        };
        (text, made, replacement)
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.rates.values().next().copied().unwrap_or(0.0);
        let mut all: Vec<String> = if self.rates.is_empty() {
            Vec::new()
        } else if self.rates.len() == Kind::ALL.len() && self.rates.values().all(|r| *r == first) {
            vec![format!("all:{first}")]
        } else {
            self.rates.iter().map(|(k, r)| format!("{k}:{r}")).collect()
        };
        if self.sticky > 0.0 {
            all.push(format!("sticky:{}", self.sticky));
        }
        if all.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&all.join(","))
    }
}

/// A competent answer's parts.
struct Parts {
    /// The plan (and step) before the thought, as written.
    before: String,
    thought: String,
    action: String,
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<(usize, &'a str)> {
    let at = s.find(open)?;
    let rest = &s[at + open.len()..];
    Some((at, &rest[..rest.find(close)?]))
}

impl Parts {
    fn read(answer: &str) -> Option<Self> {
        let (at, thought) = between(answer, "<Thought>", "</Thought>")?;
        let (_, action) = between(answer, "<Action>", "</Action>")?;
        Some(Self {
            before: answer[..at].to_owned(),
            thought: thought.to_owned(),
            action: action.to_owned(),
        })
    }

    fn tagged(&self) -> String {
        format!(
            "{}<Thought>{}</Thought>\n<Action>{}</Action>",
            self.before, self.thought, self.action
        )
    }

    /// The answer as models also write it: fenced, after a sentence, or as JSON.
    fn fenced(&self, variant: usize) -> String {
        let json = || {
            let mut o = serde_json::json!({ "thought": self.thought, "action": self.action });
            let plan: Vec<String> = self
                .before
                .lines()
                .filter_map(|l| l.split_once(". ").map(|(_, s)| s.trim().to_owned()))
                .collect();
            if !plan.is_empty() {
                o["plan"] = serde_json::json!(plan);
            }
            o.to_string()
        };
        match variant {
            0 => format!("```\n{}\n```", self.tagged()),
            1 => format!(
                "Sure! I looked at the page and here is what I will do next.\n\n{}",
                self.tagged()
            ),
            2 => json(),
            _ => format!("```json\n{}\n```", json()),
        }
    }
}

/// An action's name, its element id (a first argument of digits) and the rest of its
/// arguments (with the comma).
fn split(action: &str) -> Option<(&str, Option<&str>, &str)> {
    let (name, rest) = action.split_once('(')?;
    let inner = rest.strip_suffix(')')?;
    let (first, more) = match inner.find(',') {
        Some(k) => (&inner[..k], &inner[k..]),
        None => (inner, ""),
    };
    // Only an element action's first argument is an element id (`wait(1)` waits a second).
    let on_element = matches!(
        name,
        "click" | "setValue" | "selectOption" | "check" | "uncheck" | "hover" | "scroll_container"
    );
    let id = Some(first.trim())
        .filter(|f| on_element && !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()));
    Some((name, id, if id.is_some() { more } else { inner }))
}

/// Elements a model would click by mistake: what looks clickable, else anything.
fn clickable(e: &El) -> bool {
    e.is_button()
        || e.is_field()
        || e.is_toggle()
        || matches!(
            e.kind.as_str(),
            "link" | "a" | "tab" | "span" | "li" | "label" | "select" | "sel" | "td"
        )
}

/// The thought and action of a replacing mistake, or `None` when it cannot be made here.
fn replaced(
    kind: Kind,
    action: &str,
    p: &Prompt,
    errors: &Errors,
    key: &str,
) -> Option<(&'static str, String)> {
    let (name, id, rest) = split(action)?;
    let finishing = action.starts_with("finish(");
    match kind {
        Kind::Finish if !finishing => {
            let a = if errors.pick("finish", key, 2) == 0 {
                "finish()"
            } else {
                "finish(\"Done\")"
            };
            Some(("The task looks done.", a.to_owned()))
        }
        Kind::OtherClick if !finishing => {
            let others: Vec<&El> = p.els.iter().filter(|e| Some(e.id.as_str()) != id).collect();
            let pool: Vec<&El> = match others
                .iter()
                .copied()
                .filter(|e| clickable(e))
                .collect::<Vec<_>>()
            {
                c if c.is_empty() => others,
                c => c,
            };
            let e = pool.get(errors.pick("other_click", key, pool.len()))?;
            Some((
                "Clicking the element the task needs next.",
                format!("click({})", e.id),
            ))
        }
        Kind::OtherField if name == "setValue" => {
            let fields: Vec<&El> = p
                .els
                .iter()
                .filter(|e| e.is_field() && Some(e.id.as_str()) != id)
                .collect();
            let e = fields.get(errors.pick("other_field", key, fields.len()))?;
            Some((
                "Typing the value the task gives into its field.",
                format!("{name}({}{rest})", e.id),
            ))
        }
        Kind::IntoLabel if name == "setValue" => {
            // The element before the field when it takes no text (its label), else the
            // nearest one after it that does not.
            let at = p.els.iter().position(|e| Some(e.id.as_str()) == id)?;
            let before = at
                .checked_sub(1)
                .map(|k| &p.els[k])
                .filter(|e| !e.is_field());
            let e = before.or_else(|| p.els[at..].iter().find(|e| !e.is_field()))?;
            Some((
                "Typing the value the task gives into its field.",
                format!("{name}({}{rest})", e.id),
            ))
        }
        Kind::BadId => {
            id?;
            let max = p
                .els
                .iter()
                .filter_map(|e| e.id.parse::<u64>().ok())
                .max()
                .unwrap_or(100);
            let bad = max + 1 + errors.pick("bad_id", key, 40) as u64;
            Some((
                "Acting on the element the task needs next.",
                format!("{name}({bad}{rest})"),
            ))
        }
        Kind::Scroll if !finishing => {
            let last_click = p.done.iter().rev().find(|d| d.starts_with("click("));
            match last_click {
                Some(c) if errors.pick("scroll", key, 2) == 0 && c != action => {
                    Some(("Clicking the element the task needs next.", c.clone()))
                }
                _ => Some((
                    "Scrolling to see more of the page.",
                    "scroll(true, 1)".to_owned(),
                )),
            }
        }
        _ => None,
    }
}

/// `action` spelled another way (`variant` of 8), meaning the same; `None` when it has no
/// such spelling.
fn respell(action: &str, variant: usize) -> Option<String> {
    let (name, id, rest) = split(action)?;
    let capital = || {
        let mut c = name.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    let single = || {
        let inner = &action[name.len() + 1..action.len() - 1];
        // Only a value without quotes of its own: `\"` turned into `\'` would change it.
        (inner.contains('"') && !inner.contains('\'') && !inner.contains('\\'))
            .then(|| format!("{name}({})", inner.replace('"', "'")))
    };
    let Some(id) = id else {
        // No element: the name's case, a semicolon, single quotes.
        return Some(match variant % 4 {
            0 => format!("{}({rest})", capital()),
            1 => format!("{}({rest})", name.to_uppercase()),
            2 => single().unwrap_or_else(|| format!("{action};")),
            _ => format!("{action};"),
        });
    };
    Some(match variant {
        0 => format!("{}({id}{rest})", capital()),
        1 => format!("{name}(id={id}{rest})"),
        2 => format!("{name}([{id}]{rest})"),
        3 => format!("{name}(#{id}{rest})"),
        4 => format!("{}({id}{rest})", name.to_uppercase()),
        5 => format!("{name}(\"{id}\"{rest})"),
        6 => format!("{action};"),
        _ => single().unwrap_or_else(|| format!("{name}('{id}'{rest})")),
    })
}

/// What the policy injected, by kind, and by task (the `Task:` line of the prompts).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub by_kind: BTreeMap<Kind, u64>,
    pub by_task: BTreeMap<String, BTreeMap<Kind, u64>>,
    /// The actions replacing mistakes put in answers, by task (as written, before any
    /// respelling): what the server's verdicts on them are looked up by.
    pub actions: BTreeMap<String, Vec<(Kind, String)>>,
    /// Decision prompts and verification prompts answered.
    pub decisions: u64,
    pub verdicts: u64,
}

impl Tally {
    pub fn add(&mut self, task: &str, kinds: &[Kind]) {
        for k in kinds {
            *self.by_kind.entry(*k).or_default() += 1;
            *self
                .by_task
                .entry(task.to_owned())
                .or_default()
                .entry(*k)
                .or_default() += 1;
        }
    }

    /// Records the action a replacing mistake wrote for `task`.
    pub fn add_action(&mut self, task: &str, kind: Kind, action: &str) {
        (self.actions.entry(task.to_owned()).or_default()).push((kind, action.to_owned()));
    }

    pub fn total(&self) -> u64 {
        self.by_kind.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spellings the error mode writes cost no model call: each is read as the action it
    /// respells (the grammar's lenient reading), for every kind of action the policy answers.
    #[test]
    fn every_spelling_is_read_as_the_action_it_respells() {
        use shared::agent::action::Action;
        let actions = [
            "click(5)",
            "click(a-12)",
            "setValue(3, \"Ada Lovelace\")",
            "setValue(3, \"it's 5\")",
            "setValue(3, \"say \\\"hi\\\"\")",
            "selectOption(4, \"Express (2 days)\")",
            "check(7)",
            "hover(2)",
            "press(\"Enter\")",
            "findText(\"Total\")",
            "navigate(\"https://a.test/?q=1\")",
            "scroll(true, 1)",
            "wait(1)",
            "finish()",
        ];
        for action in actions {
            let meant = Action::parse_model(action).expect(action).to_string();
            for variant in 0..8 {
                let Some(spelled) = respell(action, variant) else {
                    continue;
                };
                assert_eq!(
                    Action::parse_model(&spelled).map(|a| a.to_string()),
                    Ok(meant.clone()),
                    "{action} spelled {spelled}"
                );
            }
        }
    }

    #[test]
    fn specs_are_read_and_all_sets_every_kind() {
        let e = Errors::parse("fence:0.3, bad_id:0.1").expect("spec");
        assert_eq!(e.rate(Kind::Fence), 0.3);
        assert_eq!(e.rate(Kind::Scroll), 0.0);
        let all = Errors::parse("all:0.2,finish:0").expect("spec");
        assert_eq!(all.rates.len(), Kind::ALL.len() - 1);
        assert!(Errors::parse("nope:0.2").is_err());
        assert!(Errors::parse("fence:2").is_err());
        assert!(Errors::parse("").expect("empty").is_empty());
        let sticky = Errors::parse("bad_id:0.3,sticky:0.5").expect("spec");
        assert_eq!((sticky.rates.len(), sticky.sticky), (1, 0.5));
        assert!(!Errors::parse("sticky:0.5").expect("spec").is_empty());
        assert_eq!(all.only(Kind::Fence).rates.len(), 1);
    }

    #[test]
    fn draws_are_reproducible_and_near_the_rate() {
        let e = Errors::parse("fence:0.3").expect("spec");
        let hits = (0..2000)
            .filter(|k| e.fires(Kind::Fence, &format!("prompt {k}")))
            .count();
        assert!((500..700).contains(&hits), "{hits}");
        assert_eq!(
            e.fires(Kind::Fence, "same"),
            e.clone().fires(Kind::Fence, "same")
        );
    }

    #[test]
    fn spellings_keep_the_action() {
        let all: Vec<String> = (0..8)
            .filter_map(|v| respell("setValue(5, \"hi\")", v))
            .collect();
        assert!(all.contains(&"SetValue(5, \"hi\")".to_owned()));
        assert!(all.contains(&"setValue(#5, \"hi\")".to_owned()));
        assert!(all.contains(&"setValue(5, 'hi')".to_owned()));
        assert_eq!(respell("click(5)", 2).as_deref(), Some("click([5])"));
        assert_eq!(respell("finish()", 1).as_deref(), Some("FINISH()"));
    }

    #[test]
    fn mistakes_replace_or_reshape_the_answer() {
        let p = Prompt::parse(
            "Task: t\n<page url=\"u\" title=\"t\" form=\"tree\" note=\"n\">\n[3] inp\n[7] btn \"Submit\"\n</page>",
        );
        let answer = "<Thought>Clicking.</Thought>\n<Action>click(7)</Action>";
        let e = Errors::parse("bad_id:1").expect("spec");
        let (a, made) = e.mislead(answer, &p, "k");
        assert_eq!(made, vec![Kind::BadId]);
        let bad: u64 = a[a.find("click(").expect("click") + 6..]
            .split(')')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("an id");
        assert!(bad > 7);
        let (a, _) = Errors::parse("other_click:1")
            .expect("spec")
            .mislead(answer, &p, "k");
        assert!(a.contains("click(3)"), "{a}");
        let (a, _) = Errors::parse("finish:1")
            .expect("spec")
            .mislead(answer, &p, "k");
        assert!(a.contains("<Action>finish("), "{a}");
        let (a, made) = Errors::parse("fence:1")
            .expect("spec")
            .mislead(answer, &p, "k");
        assert_eq!(made, vec![Kind::Fence]);
        assert!(a.contains("click(7)") && a != answer);
        let fill = "<Thought>Typing.</Thought>\n<Action>setValue(3, \"Ada\")</Action>";
        let p2 = Prompt::parse(
            "Task: t\n<page url=\"u\" title=\"t\" form=\"tree\" note=\"n\">\n[3] inp\n[4] inp\n[7] btn \"Submit\"\n</page>",
        );
        let (a, made, wrote) = Errors::parse("other_field:1")
            .expect("spec")
            .mislead_action(fill, &p2, "k");
        assert_eq!(made, vec![Kind::OtherField]);
        assert!(a.contains("setValue(4, \"Ada\")"), "{a}");
        assert_eq!(
            wrote,
            Some((Kind::OtherField, "setValue(4, \"Ada\")".into()))
        );
        let (a, made) = Errors::none().mislead(answer, &p, "k");
        assert!(made.is_empty() && a == answer);
    }
}
