//! Phase 3 (with 4): the prompt, the model, and the guard's verdict on its answer — one
//! corrective retry when the answer cannot be executed and time allows, else `fail()`.

use std::time::{Duration, Instant};

use super::{guard, BuiltPage, Decision, StepContext};
use crate::agent::prompt::{self, PromptInput};
use crate::agent::request::InteractRequest;
use crate::context::AppContext;
use crate::domain::TaskStatus;
use crate::error::Error;
use crate::llm::{ChatMessage, LlmError};

/// Time kept back from the model for persisting the step.
const PERSIST_RESERVE: Duration = Duration::from_millis(2_500);
/// A corrective second model call is only made with at least this much time left.
const RETRY_MIN_TIME: Duration = Duration::from_secs(3);

/// Asks the model until the guard accepts an answer or the retry is used up.
pub async fn decide(
    ctx: &AppContext,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    deadline: Instant,
) -> Result<(), Error> {
    let llm = ctx.llm.as_ref().ok_or(Error::LlmNotConfigured)?;
    let answers: Vec<String> = step
        .history
        .iter()
        .filter_map(|s| s.user_input.clone())
        .chain(step.user_input.clone())
        .collect();
    let query = step
        .task
        .as_ref()
        .map_or(req.query.as_str(), |t| t.query.as_str())
        .to_owned();
    let mut messages: Vec<ChatMessage> = prompt::build(&PromptInput {
        query: &query,
        url: &req.url,
        page_title: req.page_title.as_deref(),
        user_answers: &answers,
        history: &step.history,
        last_action: &req.last_action,
        knowledge: &step.knowledge,
        page: &built.rendered,
    });
    let model_deadline = deadline.checked_sub(PERSIST_RESERVE).unwrap_or(deadline);
    for attempt in 0..2 {
        let t = Instant::now();
        let completion = llm.complete(&messages, model_deadline).await;
        step.llm_ms += t.elapsed().as_millis() as u64;
        step.llm_calls += 1;
        let completion = completion.map_err(|e| Error::Upstream {
            code: "LLM_ERROR",
            message: match e {
                LlmError::Timeout => "The language model did not answer in time".into(),
                LlmError::Upstream(_) => "The language model failed after retries".into(),
            },
        })?;
        step.usage.prompt_tokens += completion.prompt_tokens;
        step.usage.completion_tokens += completion.completion_tokens;
        match guard(&completion.content, &built.page) {
            Ok(decision) => {
                step.decision = Some(decision);
                return Ok(());
            }
            Err(problem) => {
                tracing::info!(attempt, problem = %problem, "model answer refused by the guard");
                let time_left = model_deadline.saturating_duration_since(Instant::now());
                if attempt == 0 && time_left >= RETRY_MIN_TIME {
                    messages.extend(prompt::correction(&completion.content, &problem));
                    continue;
                }
                step.decision = Some(Decision {
                    thought: format!(
                        "I could not decide on a valid next step, so I am stopping: {problem}."
                    ),
                    action: "fail()".into(),
                    status: TaskStatus::Failed,
                    user_question: None,
                });
                return Ok(());
            }
        }
    }
    Ok(())
}
