//! Pure types and rules, no I/O: identities (tenants, users), tasks and their steps,
//! sessions and messages, email and domain-pattern rules.

pub mod domain_pattern;
pub mod email;
pub mod identity;
pub mod session;
pub mod site;
pub mod task;

pub use domain_pattern::DomainPattern;
pub use email::Email;
pub use identity::{Role, Tenant, User};
pub use session::{Message, MessageRole, Session, SessionStatus};
pub use task::{admission, Admission, Step, Task, TaskRef, TaskStatus};
