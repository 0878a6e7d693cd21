//! Storage keys of the single-table design, shared by every adapter so the embedded store
//! and DynamoDB lay records out identically. Tenant-owned records sit under `TENANT#<id>`;
//! users are found by login email before any tenant is known, so they sit under
//! `USER#<email>` and carry their tenant inside.
//!
//! | record | PK | SK | access pattern |
//! |---|---|---|---|
//! | tenant | `TENANT#<t>` | `TENANT` | session/login: tenant name |
//! | allowed domain | `TENANT#<t>` | `DOMAIN#<pattern>` | knowledge filter: query by SK prefix |
//! | revoked token | `TENANT#<t>` | `REVOKED#<jti>` | every authenticated request (TTL) |
//! | user | `USER#<email>` | `USER` | login by email |
//! | rate-limit window | `RATE#<scope>#<id>` | `W#<window start>` | login throttling (TTL) |

pub const TENANT_SK: &str = "TENANT";
pub const USER_SK: &str = "USER";
pub const DOMAIN_PREFIX: &str = "DOMAIN#";
pub const TENANT_PK_PREFIX: &str = "TENANT#";
pub const USER_PK_PREFIX: &str = "USER#";

pub fn tenant_pk(tenant_id: &str) -> String {
    format!("{TENANT_PK_PREFIX}{tenant_id}")
}

pub fn user_pk(email: &str) -> String {
    format!("{USER_PK_PREFIX}{email}")
}

pub fn domain_sk(pattern: &str) -> String {
    format!("{DOMAIN_PREFIX}{pattern}")
}

pub fn revoked_sk(jti: &str) -> String {
    format!("REVOKED#{jti}")
}

pub fn rate_pk(key: &str) -> String {
    format!("RATE#{key}")
}

pub fn rate_sk(window_start: i64) -> String {
    format!("W#{window_start}")
}
