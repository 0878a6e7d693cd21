//! Ports: the small async traits the use cases talk to; `adapters` implements them. Storage
//! (identity, tasks, sessions, records, snapshots) is shaped for a single DynamoDB table:
//! every record that belongs to a tenant lives under a `TENANT#<id>` partition, and every
//! write that must not clobber (creating a user, a tenant) is conditional. The services behind
//! the step — the model (`llm`), web search (`web_search`), organisation knowledge
//! (`knowledge`), the state machine's executions (`executions`), realtime events (`realtime`)
//! — and the agent tools' — workspace storage (`workspace`), command runs (`runner`), MCP
//! servers (`mcp`) — have a module each.

pub mod agent_tools;
pub mod executions;
mod identity;
pub mod knowledge;
pub mod llm;
pub mod mcp;
pub mod metrics;
pub mod realtime;
pub mod recipes;
mod records;
pub mod runner;
pub mod secrets;
mod sessions;
mod snapshots;
mod tasks;
pub mod web_search;
pub mod workspace;

pub use agent_tools::{AgentToolStore, ApprovalChange, ExecEnd};
pub use identity::*;
pub use recipes::RecipeStore;
pub use records::*;
pub use sessions::*;
pub use snapshots::*;
pub use tasks::*;

pub use crate::error::StoreError;

pub type StoreResult<T> = Result<T, StoreError>;

/// Everything a table adapter provides, as one object.
pub trait Store:
    UserStore
    + TenantStore
    + RevokedTokenStore
    + RateLimitStore
    + TaskStore
    + SessionStore
    + SessionQueries
    + IdempotencyStore
    + PreferencesStore
    + DebugLogStore
    + AgentToolStore
    + RecipeStore
{
}
impl<T> Store for T where
    T: UserStore
        + TenantStore
        + RevokedTokenStore
        + RateLimitStore
        + TaskStore
        + SessionStore
        + SessionQueries
        + IdempotencyStore
        + PreferencesStore
        + DebugLogStore
        + AgentToolStore
        + RecipeStore
{
}
