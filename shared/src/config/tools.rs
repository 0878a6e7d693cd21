//! Server-hosted agent tools (`AGENT_*`): whether they answer at all, where local workspaces
//! live, and the limits every call runs under.

use std::path::PathBuf;

use super::{parse_num, ConfigError};

/// Settings of `/api/v1/agent/*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsConfig {
    /// Whether the routes answer (off in deployments unless set; on in local-api).
    pub enabled: bool,
    /// Directory under which local (non-S3) workspace roots live.
    pub workspaces_dir: PathBuf,
    /// Days audit items, agent sessions and decided approvals are kept (DynamoDB TTL).
    pub audit_retention_days: i64,
    /// Seconds a pending approval may be decided in; later it has expired and never runs.
    pub approval_ttl_seconds: i64,
    /// Largest file read, written, patched or searched.
    pub max_file_bytes: u64,
    /// Where approved commands run.
    pub exec_runner: ExecRunner,
    /// Longest a command may run (and the default when a call does not say).
    pub exec_max_seconds: u64,
    /// Output (stdout and stderr together) kept per command; beyond it the command is stopped.
    pub exec_output_bytes: u64,
    /// Requests to `/api/v1/agent/*` per user and per tenant per window (`429` beyond).
    pub rate_per_user: u64,
    pub rate_per_tenant: u64,
    pub rate_window_seconds: i64,
    /// Workspace searches (grep) one process runs at once; others wait their turn.
    pub search_concurrency: usize,
    /// Pending approvals a user may have, and the bytes of their arguments.
    pub max_pending_approvals: u64,
    pub max_pending_bytes: u64,
}

/// Where approved commands run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecRunner {
    /// A child process of this process (local-api), in the workspace directory.
    Local,
    /// The `agent-exec` function, invoked asynchronously by name or ARN.
    Lambda { function: String },
}

impl ToolsConfig {
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let enabled = match get("AGENT_TOOLS_ENABLED").as_deref() {
            None | Some("false") | Some("0") => false,
            Some("true") | Some("1") => true,
            Some(other) => {
                return Err(ConfigError::Invalid(
                    "AGENT_TOOLS_ENABLED",
                    format!("`{other}` is not true or false"),
                ))
            }
        };
        let workspaces_dir = get("AGENT_WORKSPACES_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(get("DATA_DIR").unwrap_or_else(|| ".data".into())).join("workspaces")
            });
        Ok(Self {
            enabled,
            workspaces_dir,
            audit_retention_days: parse_num(&get, "AGENT_AUDIT_RETENTION_DAYS", 90, 1, 3_650)?,
            approval_ttl_seconds: parse_num(&get, "AGENT_APPROVAL_TTL_SECONDS", 900, 30, 86_400)?,
            exec_runner: match (
                get("AGENT_EXEC_RUNNER").as_deref(),
                get("AGENT_EXEC_FUNCTION"),
            ) {
                (None | Some("local"), _) => ExecRunner::Local,
                (Some("lambda"), Some(function)) => ExecRunner::Lambda { function },
                (Some("lambda"), None) => {
                    return Err(ConfigError::Missing(
                        "AGENT_EXEC_FUNCTION",
                        "AGENT_EXEC_RUNNER=lambda needs the agent-exec function's name or ARN",
                    ))
                }
                (Some(other), _) => {
                    return Err(ConfigError::Invalid(
                        "AGENT_EXEC_RUNNER",
                        format!("`{other}` is not local or lambda"),
                    ))
                }
            },
            exec_max_seconds: parse_num(&get, "AGENT_EXEC_MAX_SECONDS", 120, 1, 840)?,
            exec_output_bytes: parse_num(
                &get,
                "AGENT_EXEC_OUTPUT_BYTES",
                1024 * 1024,
                1024,
                16 * 1024 * 1024,
            )?,
            max_file_bytes: parse_num(
                &get,
                "AGENT_MAX_FILE_BYTES",
                1024 * 1024,
                1024,
                16 * 1024 * 1024,
            )?,
            rate_per_user: parse_num(&get, "AGENT_RATE_PER_USER", 240, 1, 1_000_000)?,
            rate_per_tenant: parse_num(&get, "AGENT_RATE_PER_TENANT", 2_400, 1, 10_000_000)?,
            rate_window_seconds: parse_num(&get, "AGENT_RATE_WINDOW_SECONDS", 60, 1, 3_600)?,
            search_concurrency: parse_num(&get, "AGENT_SEARCH_CONCURRENCY", 2, 1, 64)?,
            max_pending_approvals: parse_num(&get, "AGENT_MAX_PENDING_APPROVALS", 20, 1, 1_000)?,
            max_pending_bytes: parse_num(
                &get,
                "AGENT_MAX_PENDING_BYTES",
                8 * 1024 * 1024,
                1024,
                1024 * 1024 * 1024,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<ToolsConfig, ConfigError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ToolsConfig::from_lookup(|k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn off_by_default_with_workspaces_under_the_data_dir() {
        let c = read(&[("DATA_DIR", "/srv/data")]).expect("config");
        assert!(!c.enabled);
        assert_eq!(c.workspaces_dir, PathBuf::from("/srv/data/workspaces"));
        assert_eq!(c.audit_retention_days, 90);
        assert_eq!(c.approval_ttl_seconds, 900);
        assert_eq!(c.max_file_bytes, 1024 * 1024);
    }

    #[test]
    fn bad_values_name_the_variable() {
        assert!(matches!(
            read(&[("AGENT_TOOLS_ENABLED", "yes")]),
            Err(ConfigError::Invalid("AGENT_TOOLS_ENABLED", _))
        ));
        assert!(matches!(
            read(&[("AGENT_AUDIT_RETENTION_DAYS", "0")]),
            Err(ConfigError::Invalid("AGENT_AUDIT_RETENTION_DAYS", _))
        ));
        let c = read(&[
            ("AGENT_TOOLS_ENABLED", "true"),
            ("AGENT_WORKSPACES_DIR", "/w"),
        ])
        .expect("ok");
        assert!(c.enabled);
        assert_eq!(c.workspaces_dir, PathBuf::from("/w"));
    }
}
