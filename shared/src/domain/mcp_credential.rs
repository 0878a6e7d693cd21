//! Where an MCP server's credential may come from: the server's environment
//! (`env:AGENT_MCP_SECRET_*`) or AWS Secrets Manager under `browser-agent/mcp/` (read through
//! the Lambda extension by the MCP adapter), never from the store.

/// Prefix of the environment variables an `env:` credential may name.
pub const SECRET_ENV_PREFIX: &str = "AGENT_MCP_SECRET_";
/// The names MCP credentials in Secrets Manager must have: the agent tools' roles may read
/// these and no other (never the server's own keys, which they may read too).
pub const MCP_SECRET_PREFIX: &str = "browser-agent/mcp/";

/// Whether `id` names a secret under [`MCP_SECRET_PREFIX`], by name or by ARN
/// (`arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`).
pub fn is_mcp_secret(id: &str) -> bool {
    let name = match id.strip_prefix("arn:") {
        Some(_) => match id.split(':').collect::<Vec<_>>()[..] {
            ["arn", _, "secretsmanager", _, _, "secret", name] => name,
            _ => return false,
        },
        None => id,
    };
    id.len() <= 2048 && name.len() > MCP_SECRET_PREFIX.len() && name.starts_with(MCP_SECRET_PREFIX)
}

/// Checks a credential reference as an administrator gives it.
pub fn check_secret_ref(raw: &str) -> Result<(), String> {
    match raw.split_once(':') {
        Some(("env", name))
            if name.starts_with(SECRET_ENV_PREFIX)
                && name.len() > SECRET_ENV_PREFIX.len()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
        {
            Ok(())
        }
        Some(("secretsmanager", id)) if is_mcp_secret(id) => Ok(()),
        _ => Err(format!(
            "use env:{SECRET_ENV_PREFIX}<NAME> or secretsmanager:<name or ARN of a secret named \
             {MCP_SECRET_PREFIX}...>"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_come_only_from_named_places() {
        assert!(check_secret_ref("env:AGENT_MCP_SECRET_GITHUB").is_ok());
        assert!(check_secret_ref("secretsmanager:browser-agent/mcp/github").is_ok());
        assert!(check_secret_ref(
            "secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:browser-agent/mcp/gh-AbCdEf"
        )
        .is_ok());
        for bad in [
            "env:JWT_SECRET",
            // The server's own keys, which the agent tools' roles may also read.
            "secretsmanager:browser-agent/jwt-secret",
            "secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:browser-agent/jwt-secret",
            "secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:x:browser-agent/mcp/x",
            "secretsmanager:browser-agent/mcp/",
            &format!("secretsmanager:browser-agent/mcp/{}", "x".repeat(100_000)),
            "secretsmanager:",
            "env:AGENT_MCP_SECRET_",
            "env:agent_mcp_secret_x",
            "plain",
            "file:/etc/x",
        ] {
            assert!(check_secret_ref(bad).is_err(), "{bad}");
        }
    }
}
