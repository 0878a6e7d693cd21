//! Commands as calls: arguments and the checks made before one is parked or run. Pure rules;
//! the runner adapter (`adapters::runner`) resolves the program and runs it.

use serde::{Deserialize, Serialize};

use super::commands;
use crate::domain::agent_tools::CommandRule;
use crate::error::Error;

/// Most arguments per command.
pub const MAX_ARGS: usize = 64;
/// Longest single argument, in bytes.
pub const MAX_ARG_BYTES: usize = 4_096;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecArgs {
    /// A bare program name from the workspace's allowlist.
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// At most `AGENT_EXEC_MAX_SECONDS` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}

impl ExecArgs {
    /// Checks the arguments' shape (no I/O, no allowlist yet).
    pub fn validate(&self, max_seconds: u64) -> Result<(), Error> {
        if self.program.is_empty()
            || self.program.len() > 64
            || !self
                .program
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
            || self.program.starts_with('.')
        {
            return Err(Error::field(
                "program",
                "must be a bare program name (no path, no shell syntax)",
            ));
        }
        if self.args.len() > MAX_ARGS {
            return Err(Error::field(
                "args",
                format!("holds at most {MAX_ARGS} arguments"),
            ));
        }
        if self
            .args
            .iter()
            .any(|a| a.len() > MAX_ARG_BYTES || a.contains('\0'))
        {
            return Err(Error::field(
                "args",
                format!("each argument is at most {MAX_ARG_BYTES} bytes, without NUL"),
            ));
        }
        if let Some(t) = self.timeout_seconds {
            if t == 0 || t > max_seconds {
                return Err(Error::field(
                    "timeoutSeconds",
                    format!("must be from 1 to {max_seconds}"),
                ));
            }
        }
        Ok(())
    }

    /// Whether an argument names a path outside the workspace copy (refused whatever the
    /// allowlist says: see [`commands::leaves_directory`]).
    fn leaves_copy(&self) -> bool {
        self.args.iter().any(|a| commands::leaves_directory(a))
    }

    /// The allowlist entry that permits this command, if any: none when an argument names a
    /// path outside the workspace copy, whatever the patterns allow.
    pub fn allowed<'a>(&self, rules: &'a [CommandRule]) -> Option<&'a CommandRule> {
        if self.leaves_copy() {
            return None;
        }
        rules.iter().find(|r| {
            r.program == self.program
                && commands::allows(std::slice::from_ref(r), &self.program, &self.args)
        })
    }

    /// `403 COMMAND_NOT_ALLOWED` unless the allowlist permits the command.
    pub fn require_allowed<'a>(&self, rules: &'a [CommandRule]) -> Result<&'a CommandRule, Error> {
        self.allowed(rules).ok_or_else(|| Error::Denied {
            code: "COMMAND_NOT_ALLOWED",
            message: if self.leaves_copy() {
                format!(
                    "An argument of `{}` names a path outside the workspace (absolute, `~` or climbing out with `..`)",
                    self.program
                )
            } else if rules.iter().any(|r| r.program == self.program) {
                format!(
                    "An argument of `{}` is not allowed in this workspace",
                    self.program
                )
            } else {
                format!(
                    "`{}` is not an allowed command of this workspace",
                    self.program
                )
            },
        })
    }

    /// How the command reads in an audit trail or an approval.
    pub fn display(&self) -> String {
        let mut s = self.program.clone();
        for a in &self.args {
            s.push(' ');
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'') {
                s.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
            } else {
                s.push_str(a);
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(program: &str, a: &[&str]) -> ExecArgs {
        ExecArgs {
            program: program.into(),
            args: a.iter().map(|s| s.to_string()).collect(),
            timeout_seconds: None,
        }
    }

    #[test]
    fn shape_and_allowlist() {
        for bad in ["/bin/sh", "../x", "", "a b", "ls;rm", ".hidden"] {
            assert!(args(bad, &[]).validate(60).is_err(), "{bad:?}");
        }
        assert!(args("ls", &["a\0b"]).validate(60).is_err());
        let mut t = args("ls", &[]);
        t.timeout_seconds = Some(61);
        assert!(t.validate(60).is_err());
        let rules = vec![
            commands::parse_rule("git=status|log --oneline").unwrap(),
            commands::parse_rule("echo=.*").unwrap(),
        ];
        assert!(args("git", &["status"]).require_allowed(&rules).is_ok());
        let e = args("git", &["push"]).require_allowed(&rules).unwrap_err();
        assert!(matches!(
            e,
            Error::Denied {
                code: "COMMAND_NOT_ALLOWED",
                ..
            }
        ));
        assert!(args("rm", &["-rf", "/"]).require_allowed(&rules).is_err());
        assert_eq!(
            args("echo", &["a b", "it's"]).display(),
            "echo 'a b' 'it'\\''s'"
        );
    }
}
