//! A definition compiled: every state checked against the supported subset, every path and
//! template parsed, every transition checked to name a state.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Map, Value};

use super::choice::Rule;
use super::paths::{Filter, Path, Placement, Template};

/// One `Retry` entry.
#[derive(Debug, Clone)]
pub struct Retrier {
    pub errors: Vec<String>,
    pub interval: Duration,
    pub max_attempts: u32,
    pub backoff: f64,
    pub max_delay: Option<Duration>,
}

/// One `Catch` entry.
#[derive(Debug, Clone)]
pub struct Catcher {
    pub errors: Vec<String>,
    pub result_path: Placement,
    pub next: String,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Task {
        resource: String,
    },
    Pass {
        result: Option<Value>,
    },
    Choice {
        choices: Vec<(Rule, String)>,
        default: Option<String>,
    },
    Parallel {
        branches: Vec<Machine>,
    },
    Succeed,
    Fail {
        error: String,
        cause: String,
    },
}

#[derive(Debug, Clone)]
pub struct State {
    pub kind: Kind,
    pub input_path: Filter,
    pub output_path: Filter,
    pub result_path: Placement,
    pub parameters: Option<Template>,
    pub result_selector: Option<Template>,
    /// `None` for a state that ends the machine.
    pub next: Option<String>,
    pub retry: Vec<Retrier>,
    pub catch: Vec<Catcher>,
}

/// A compiled state machine (or Parallel branch).
#[derive(Debug, Clone)]
pub struct Machine {
    pub start_at: String,
    pub states: HashMap<String, State>,
    pub timeout: Option<Duration>,
}

const FIELDS: &[&str] = &[
    "Type",
    "Comment",
    "Next",
    "End",
    "InputPath",
    "OutputPath",
    "ResultPath",
    "Parameters",
    "ResultSelector",
    "Resource",
    "Result",
    "Choices",
    "Default",
    "Branches",
    "Retry",
    "Catch",
    "Error",
    "Cause",
];

fn errors_of(v: &Map<String, Value>) -> Result<Vec<String>, String> {
    let list = v
        .get("ErrorEquals")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or("ErrorEquals must be a non-empty list")?;
    let names: Vec<String> = list
        .iter()
        .map(|e| {
            e.as_str()
                .map(str::to_owned)
                .ok_or("error names are strings")
        })
        .collect::<Result<_, _>>()?;
    if names.iter().any(|n| n == "States.ALL") && names.len() > 1 {
        return Err("States.ALL must be alone in ErrorEquals".into());
    }
    Ok(names)
}

fn seconds(v: Option<&Value>, default: f64) -> Result<Duration, String> {
    let s = v
        .map_or(Some(default), Value::as_f64)
        .ok_or("seconds must be a number")?;
    Duration::try_from_secs_f64(s).map_err(|_| "seconds must be positive".into())
}

fn filter(obj: &Map<String, Value>, name: &str) -> Result<Filter, String> {
    match obj.get(name) {
        None => Ok(Filter::All),
        Some(Value::Null) => Ok(Filter::Nothing),
        Some(Value::String(p)) => Ok(Filter::Path(Path::parse(p)?)),
        Some(_) => Err(format!("{name} must be a path or null")),
    }
}

fn template(obj: &Map<String, Value>, name: &str) -> Result<Option<Template>, String> {
    obj.get(name).map(Template::compile).transpose()
}

fn text(obj: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match obj.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{name} must be a string")),
    }
}

fn retriers(obj: &Map<String, Value>) -> Result<Vec<Retrier>, String> {
    let Some(list) = obj.get("Retry") else {
        return Ok(Vec::new());
    };
    let list = list.as_array().ok_or("Retry must be a list")?;
    list.iter()
        .map(|r| {
            let r = r.as_object().ok_or("a retrier must be an object")?;
            Ok(Retrier {
                errors: errors_of(r)?,
                interval: seconds(r.get("IntervalSeconds"), 1.0)?,
                max_attempts: r
                    .get("MaxAttempts")
                    .map_or(Some(3), Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or("MaxAttempts must be a whole number")?,
                backoff: r
                    .get("BackoffRate")
                    .map_or(Some(2.0), Value::as_f64)
                    .filter(|b| *b >= 1.0)
                    .ok_or("BackoffRate must be at least 1")?,
                max_delay: r
                    .get("MaxDelaySeconds")
                    .map(|v| seconds(Some(v), 0.0))
                    .transpose()?,
            })
        })
        .collect()
}

fn catchers(obj: &Map<String, Value>) -> Result<Vec<Catcher>, String> {
    let Some(list) = obj.get("Catch") else {
        return Ok(Vec::new());
    };
    let list = list.as_array().ok_or("Catch must be a list")?;
    list.iter()
        .map(|c| {
            let c = c.as_object().ok_or("a catcher must be an object")?;
            Ok(Catcher {
                errors: errors_of(c)?,
                result_path: match c.get("ResultPath") {
                    None => Placement::parse("$")?,
                    Some(Value::Null) => Placement::Discard,
                    Some(Value::String(p)) => Placement::parse(p)?,
                    Some(_) => return Err("ResultPath must be a path or null".into()),
                },
                next: text(c, "Next")?.ok_or("a catcher needs Next")?,
            })
        })
        .collect()
}

fn state(obj: &Map<String, Value>) -> Result<State, String> {
    if let Some(k) = obj.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!("the field {k} is not supported"));
    }
    let kind = match text(obj, "Type")?.as_deref() {
        Some("Task") => Kind::Task {
            resource: text(obj, "Resource")?.ok_or("a Task needs a Resource")?,
        },
        Some("Pass") => Kind::Pass {
            result: obj.get("Result").cloned(),
        },
        Some("Choice") => {
            let list = obj
                .get("Choices")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .ok_or("a Choice needs Choices")?;
            let mut choices = Vec::with_capacity(list.len());
            for c in list {
                let next = c
                    .get("Next")
                    .and_then(Value::as_str)
                    .ok_or("a choice rule needs Next")?;
                choices.push((Rule::compile(c)?, next.to_owned()));
            }
            Kind::Choice {
                choices,
                default: text(obj, "Default")?,
            }
        }
        Some("Parallel") => Kind::Parallel {
            branches: obj
                .get("Branches")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .ok_or("a Parallel needs Branches")?
                .iter()
                .map(Machine::compile)
                .collect::<Result<_, _>>()?,
        },
        Some("Succeed") => Kind::Succeed,
        Some("Fail") => Kind::Fail {
            error: text(obj, "Error")?.unwrap_or_else(|| "States.Fail".into()),
            cause: text(obj, "Cause")?.unwrap_or_default(),
        },
        Some(other) => return Err(format!("the state type {other} is not supported")),
        None => return Err("Type is required".into()),
    };
    let terminal = matches!(
        kind,
        Kind::Succeed | Kind::Fail { .. } | Kind::Choice { .. }
    );
    let end = obj.get("End").and_then(Value::as_bool).unwrap_or(false);
    let next = text(obj, "Next")?;
    if !terminal && next.is_some() == end {
        return Err("a state needs exactly one of Next and End".into());
    }
    Ok(State {
        kind,
        input_path: filter(obj, "InputPath")?,
        output_path: filter(obj, "OutputPath")?,
        result_path: match obj.get("ResultPath") {
            None => Placement::parse("$")?,
            Some(Value::Null) => Placement::Discard,
            Some(Value::String(p)) => Placement::parse(p)?,
            Some(_) => return Err("ResultPath must be a path or null".into()),
        },
        parameters: template(obj, "Parameters")?,
        result_selector: template(obj, "ResultSelector")?,
        next,
        retry: retriers(obj)?,
        catch: catchers(obj)?,
    })
}

impl Machine {
    /// Compiles a definition given as JSON text, replacing each `${Name}` in it first.
    pub fn parse(definition: &str, substitutions: &[(&str, &str)]) -> Result<Self, String> {
        let mut text = definition.to_owned();
        for (name, value) in substitutions {
            text = text.replace(&format!("${{{name}}}"), value);
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        Self::compile(&value)
    }

    fn compile(value: &Value) -> Result<Self, String> {
        let obj = value.as_object().ok_or("a machine must be an object")?;
        let start_at = text(obj, "StartAt")?.ok_or("StartAt is required")?;
        let list = obj
            .get("States")
            .and_then(Value::as_object)
            .ok_or("States is required")?;
        let mut states = HashMap::with_capacity(list.len());
        for (name, s) in list {
            let s = s.as_object().ok_or("a state must be an object")?;
            states.insert(name.clone(), state(s).map_err(|e| format!("{name}: {e}"))?);
        }
        let machine = Self {
            start_at,
            states,
            timeout: obj
                .get("TimeoutSeconds")
                .map(|v| seconds(Some(v), 0.0))
                .transpose()?,
        };
        machine.check_targets()?;
        Ok(machine)
    }

    /// Every transition names a state of this machine.
    fn check_targets(&self) -> Result<(), String> {
        let known = |n: &String| self.states.contains_key(n);
        let mut targets = vec![&self.start_at];
        for s in self.states.values() {
            targets.extend(s.next.iter());
            targets.extend(s.catch.iter().map(|c| &c.next));
            if let Kind::Choice { choices, default } = &s.kind {
                targets.extend(choices.iter().map(|(_, n)| n));
                targets.extend(default.iter());
            }
        }
        match targets.into_iter().find(|t| !known(t)) {
            Some(t) => Err(format!("no state named {t}")),
            None => Ok(()),
        }
    }
}
