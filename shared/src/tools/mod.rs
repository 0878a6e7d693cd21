//! Server-hosted agent tools (`/api/v1/agent/*`): workspaces defined by administrators, file
//! operations, search and patching inside them, approval tiers and an audit trail. Pure rules
//! (`calls`, `search`, `patch`, `health`, `approval`) are apart from the use cases (`session`,
//! `approvals`, `run`, `status`), which take the ports they use ([`ToolPorts`]); the records
//! and the workspace path type are in `domain` (`agent_tools`, `ws_path`, `ws_root`); file
//! storage is the `Workspace` port with a local-directory and an S3 adapter, and commands run
//! through the `CommandRunner` and `Jobs` ports (`adapters::runner`).

pub mod approval;
pub mod approvals;
pub mod calls;
pub mod commands;
mod decide;
mod errors;
pub mod exec;
pub mod execs;
pub mod health;
pub mod limits;
pub mod mcp;
pub mod patch;
mod ports;
pub mod recorded_run;
pub mod run;
pub mod search;
pub mod session;
pub mod status;

pub use ports::ToolPorts;
