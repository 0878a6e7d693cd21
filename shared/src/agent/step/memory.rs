//! The memory tools the model may call (`remember`, `recall`, `exportToSession`): notes kept
//! with the task, or with its session for later tasks, each bounded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agent::action::Action;

/// Most notes a task (or a session) keeps.
pub const MAX_KEYS: usize = 32;

/// `memoryResult { success, action, key?, scope?, value?, error?, message }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryResult {
    pub success: bool,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub message: String,
}

impl MemoryResult {
    /// What the tool did, as the user reads it in the round's thought (a client that does not
    /// show `memoryResult` gets only the thought).
    pub fn told(&self) -> String {
        match self.value.as_deref().filter(|_| self.success) {
            // Whole (a value is at most `MAX_MEMORY_VALUE` characters): a secret cut short
            // would not be found again and scrubbed.
            Some(v) => format!("{} It reads: {v}", self.message),
            None => self.message.clone(),
        }
    }
}

fn result(action: &str, key: &str, scope: &str) -> MemoryResult {
    MemoryResult {
        success: true,
        action: action.into(),
        key: Some(key.into()),
        scope: Some(scope.into()),
        value: None,
        error: None,
        message: String::new(),
    }
}

fn refused(mut r: MemoryResult, error: String) -> MemoryResult {
    r.success = false;
    r.message = error.clone();
    r.error = Some(error);
    r
}

/// Runs a memory tool on the task's notes and the session's (`None` when this request does not
/// know the task's session: nothing is exported then); `true` when the session's notes
/// changed. `None` for actions that are not memory tools.
pub fn apply(
    action: &Action,
    task: &mut BTreeMap<String, String>,
    session: Option<&mut BTreeMap<String, String>>,
) -> Option<(MemoryResult, bool)> {
    let full = |m: &BTreeMap<String, String>, k: &str| m.len() >= MAX_KEYS && !m.contains_key(k);
    Some(match action {
        Action::Remember(k, v) => {
            let r = result("remember", k, "task");
            if full(task, k) {
                (
                    refused(r, format!("at most {MAX_KEYS} notes per task")),
                    false,
                )
            } else {
                task.insert(k.clone(), v.clone());
                let message = format!("Noted \"{k}\".");
                let value = Some(v.clone());
                (
                    MemoryResult {
                        message,
                        value,
                        ..r
                    },
                    false,
                )
            }
        }
        Action::Recall(k) => {
            let found = task.get(k).map(|v| ("task", v)).or_else(|| {
                session
                    .as_ref()
                    .and_then(|s| s.get(k))
                    .map(|v| ("session", v))
            });
            match found {
                Some((scope, v)) => (
                    MemoryResult {
                        value: Some(v.clone()),
                        message: format!("Recalled \"{k}\"."),
                        ..result("recall", k, scope)
                    },
                    false,
                ),
                None => (
                    refused(
                        result("recall", k, "task"),
                        format!("nothing is noted under \"{k}\""),
                    ),
                    false,
                ),
            }
        }
        Action::ExportToSession(k) => {
            let r = result("exportToSession", k, "session");
            let Some(session) = session else {
                let why = "this request does not name the task's session".to_owned();
                return Some((refused(r, why), false));
            };
            match task.get(k) {
                None => (
                    refused(r, format!("the task has no note \"{k}\" to export")),
                    false,
                ),
                Some(_) if full(session, k) => (
                    refused(r, format!("at most {MAX_KEYS} notes per session")),
                    false,
                ),
                Some(v) => {
                    session.insert(k.clone(), v.clone());
                    (
                        MemoryResult {
                            value: Some(v.clone()),
                            message: format!("\"{k}\" is kept for the rest of this session."),
                            ..r
                        },
                        true,
                    )
                }
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_kept_recalled_exported_and_bounded() {
        let (mut task, mut session) = (BTreeMap::new(), BTreeMap::new());
        let recall = |task: &mut BTreeMap<String, String>,
                      session: &mut BTreeMap<String, String>,
                      k: &str| {
            apply(&Action::Recall(k.into()), task, Some(session))
                .expect("tool")
                .0
        };
        let remember = Action::Remember("price".into(), "42 EUR".into());
        let (r, changed) = apply(&remember, &mut task, Some(&mut session)).expect("tool");
        assert!(r.success && !changed);
        assert_eq!(task.get("price").map(String::as_str), Some("42 EUR"));
        let r = recall(&mut task, &mut session, "price");
        assert_eq!(
            (r.value.as_deref(), r.scope.as_deref()),
            (Some("42 EUR"), Some("task"))
        );
        let r = recall(&mut task, &mut session, "other");
        assert!(!r.success && r.error.is_some());
        let export = Action::ExportToSession("price".into());
        let (r, changed) = apply(&export, &mut task, Some(&mut session)).expect("tool");
        assert!(r.success && changed);
        task.clear();
        let r = recall(&mut task, &mut session, "price");
        assert_eq!(
            r.scope.as_deref(),
            Some("session"),
            "a later task reads the session's note"
        );
        for k in 0..MAX_KEYS {
            task.insert(format!("k{k}"), "v".into());
        }
        let (r, _) = apply(&remember, &mut task, Some(&mut session)).expect("tool");
        assert!(!r.success, "the notes of a task are bounded");
        assert!(apply(&Action::Finish(None), &mut task, Some(&mut session)).is_none());
        let (r, changed) = apply(&export, &mut task, None).expect("tool");
        assert!(!r.success && !changed, "no export into an unknown session");
    }
}
