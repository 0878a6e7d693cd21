//! Tenants and users. A tenant is a user (normal mode) or its organisation; every other record
//! belongs to exactly one tenant.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Email;

/// A tenant: the isolation boundary of all data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tenant {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// What a user may do in their tenant: admins also read other users' debug data and (later)
/// manage the tenant's agent workspaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    #[default]
    Member,
}

impl Role {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "admin" => Some(Role::Admin),
            "member" => Some(Role::Member),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }
}

/// A user who can log in. `password_hash` is an argon2id PHC string.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: String,
    pub tenant_id: String,
    pub email: Email,
    pub name: String,
    pub password_hash: String,
    pub disabled: bool,
    #[serde(default)]
    pub role: Role,
    pub created_at: DateTime<Utc>,
    /// Tokens issued at or before this instant are refused: set when the user is disabled, and
    /// kept when they are enabled again, so a disable ends every token issued before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_valid_after: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The hash stays out of debug output and therefore out of logs.
        f.debug_struct("User")
            .field("id", &self.id)
            .field("tenant_id", &self.tenant_id)
            .field("email", &self.email)
            .field("name", &self.name)
            .field("disabled", &self.disabled)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// Checks a tenant id: 1..=64 characters of `[A-Za-z0-9_-]` (ids appear inside storage keys,
/// so the key separator `#` can never occur in one).
pub fn validate_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() || id.len() > 64 {
        return Err("must be 1 to 64 characters");
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("may only contain letters, digits, '-' and '_'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_carry_key_separators() {
        assert!(validate_id("acme-1").is_ok());
        assert!(validate_id("a#b").is_err());
        assert!(validate_id("").is_err());
        assert!(validate_id(&"x".repeat(65)).is_err());
    }

    #[test]
    fn debug_output_omits_the_password_hash() {
        let u = User {
            id: "u".into(),
            tenant_id: "t".into(),
            email: Email::parse("a@b.c").unwrap(),
            name: "A".into(),
            password_hash: "$argon2id$secret".into(),
            disabled: false,
            role: Role::Member,
            created_at: Utc::now(),
            tokens_valid_after: None,
        };
        assert!(!format!("{u:?}").contains("argon2id"));
    }
}
