//! Why a request cannot act on its task or session. These are domain outcomes; the HTTP layer
//! maps each to the contract's status and code in one place (`http::error`).

use super::TaskStatus;

/// A task or session refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// Unknown task, or another user's or tenant's (indistinguishable).
    #[error("no such task")]
    NotFound,
    /// Another request holds the task (or the idempotency key) right now.
    #[error("task busy: {0}")]
    Busy(&'static str),
    /// The task is completed or failed.
    #[error("task is {0:?}")]
    Finished(TaskStatus),
    /// The task reached its step limit (it is marked failed).
    #[error("task reached its limit of {max} steps")]
    StepLimit { max: u32 },
    /// Unknown session, or another user's or tenant's (indistinguishable).
    #[error("no such session")]
    SessionNotFound,
    /// A client-chosen session id that another account already uses.
    #[error("session id taken")]
    SessionTaken,
}
