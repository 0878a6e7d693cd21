//! Phase 4: a model answer is accepted only if the client can execute it on this page.

use super::Decision;
use crate::agent::action::Action;
use crate::agent::output::parse_model_output;
use crate::agent::page::Page;
use crate::domain::TaskStatus;
use crate::text::truncate_chars;

/// Longest thought and question kept from a model answer.
const MAX_THOUGHT_CHARS: usize = 2_000;
const MAX_QUESTION_CHARS: usize = 1_000;

/// The decision for a model answer, or why it cannot be executed.
pub fn guard(answer: &str, page: &Page) -> Result<Decision, String> {
    let out = parse_model_output(answer)?;
    let action = Action::parse_model(&out.action)?;
    if let Some(id) = action.element() {
        if !page.ids.contains(id) {
            return Err(format!(
                "element {} is not on the current page",
                crate::text::single_line(id, 64)
            ));
        }
    }
    let client = action.to_client_string()?;
    let mut thought = out.thought.trim().to_owned();
    let (status, user_question) = match &action {
        Action::Finish => (TaskStatus::Completed, None),
        Action::Fail(reason) => {
            if let Some(r) = reason.as_deref().filter(|r| !thought.contains(*r)) {
                thought = if thought.is_empty() {
                    r.to_owned()
                } else {
                    format!("{thought} {r}")
                };
            }
            (TaskStatus::Failed, None)
        }
        Action::AskUser(q) => {
            let question = q
                .clone()
                .filter(|q| !q.trim().is_empty())
                .unwrap_or_else(|| thought.clone());
            if question.trim().is_empty() {
                return Err("ask_user needs a question".into());
            }
            (TaskStatus::NeedsUserInput, Some(question))
        }
        _ => (TaskStatus::Executing, None),
    };
    if thought.is_empty() {
        thought = format!("Next: {client}");
    }
    // What the model writes is stored and shown: keep it to a readable size.
    Ok(Decision {
        thought: truncate_chars(&thought, MAX_THOUGHT_CHARS),
        action: client,
        status,
        user_question: user_question.map(|q| truncate_chars(&q, MAX_QUESTION_CHARS)),
    })
}
