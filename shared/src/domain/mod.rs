//! Pure types and rules, no I/O: identities (tenants, users), tasks and their steps, plans,
//! sessions and messages, email and domain-pattern rules, and the step's rules over page facts
//! (outcome prediction, verdicts, corrections, loops, the risk gate, blockers, chains, the
//! queue of an answer's remaining actions), the
//! fingerprints of typed secrets, and web search results as a task keeps them.

pub mod agent_tools;
pub mod aim;
pub mod blocker;
pub mod chain;
pub mod chat;
pub mod confirm;
pub mod correction;
pub mod cost;
pub mod domain_pattern;
pub mod email;
pub mod facts;
pub mod finish;
pub mod fit;
pub mod identity;
pub mod intervention;
pub mod knowledge;
pub mod loops;
pub mod marks;
pub mod mcp_credential;
pub mod outcome;
pub mod plan;
pub mod queue;
pub mod reask;
pub mod recipe;
pub mod refusal;
pub mod risk;
pub mod secrets;
pub mod session;
pub mod site;
pub mod sweep;
pub mod task;
pub mod verdict;
pub mod web;
pub mod ws_path;
pub mod ws_root;

pub use domain_pattern::DomainPattern;
pub use email::Email;
pub use identity::{Role, Tenant, User};
pub use session::{Message, MessageRole, Session, SessionStatus};
pub use task::{
    admission, Admission, BeforeState, Step, StepKind, Task, TaskError, TaskRef, TaskStatus,
    TokenUsage,
};
