//! Pure types and rules, no I/O: identities (tenants, users), email and domain-pattern rules.

pub mod domain_pattern;
pub mod email;
pub mod identity;

pub use domain_pattern::DomainPattern;
pub use email::Email;
pub use identity::{Tenant, User};
