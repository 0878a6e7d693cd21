//! Server-hosted agent tools (`/api/v1/agent/*`): workspaces defined by administrators, file
//! operations, search and patching inside them, approval tiers and an audit trail. Pure rules
//! (`calls`, `search`, `patch`, `health`, `approval`) are apart from the use cases (`session`,
//! `approvals`, `run`, `status`); the records and the workspace path type are in `domain`
//! (`agent_tools`, `ws_path`); file storage is the `Workspace` port (`ports::workspace`) with a
//! local-directory and an S3 adapter.

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
pub mod process;
pub mod recorded_run;
pub mod run;
pub mod run_dirs;
pub mod run_record;
pub mod runner;
pub mod search;
pub mod session;
pub mod status;
