//! Server-hosted agent tools (`/api/v1/agent/*`): workspaces defined by administrators, file
//! operations, search and patching inside them, approval tiers and an audit trail. Pure rules
//! (`path`, `calls`, `search`, `patch`) are apart from the use cases (`session`, `approvals`,
//! `run`, `status`); file storage is the `Workspace` port (`ports::workspace`) with a
//! local-directory and an S3 adapter.

pub mod approvals;
pub mod calls;
pub mod commands;
mod decide;
mod errors;
pub mod exec;
pub mod execs;
pub mod limits;
pub mod mcp;
pub mod model;
pub mod patch;
pub mod path;
pub mod process;
pub mod run;
pub mod runner;
pub mod search;
pub mod session;
pub mod status;
