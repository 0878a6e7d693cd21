//! A small interpreter for the part of the Amazon States Language that the project's state
//! machines use: `Task`, `Choice`, `Pass`, `Parallel`, `Succeed` and `Fail` states; `Retry`
//! with backoff and `Catch`; `InputPath`, `Parameters`, `ResultSelector`, `ResultPath` and
//! `OutputPath`. A definition is compiled once ([`Machine::parse`]; anything outside the
//! subset is refused there) and run by [`execute`], which hands every Task to a
//! [`TaskRunner`]. The same file runs on AWS Step Functions.

mod choice;
mod paths;
mod run;
mod states;

pub use run::{execute, Execution, Options, TaskRunner};
pub use states::Machine;

/// A state's failure: the error name Retry and Catch match, and its cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}: {cause}")]
pub struct Failure {
    pub error: String,
    pub cause: String,
}

impl Failure {
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Self {
        Self {
            error: error.into(),
            cause: cause.into(),
        }
    }
}

#[cfg(test)]
mod tests;
