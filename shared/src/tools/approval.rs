//! An approval as data: where it stands at a moment (a pending one past its deadline has
//! expired, a running one past the run limit was interrupted), how clients see it, where its
//! arguments are kept when they are too large for the item, and the error for one that is not
//! the caller's.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::domain::agent_tools::{Approval, ApprovalStatus};
use crate::error::Error;

/// No such approval, or another user's or tenant's (indistinguishable).
pub fn approval_missing() -> Error {
    Error::NotFound {
        code: "APPROVAL_NOT_FOUND",
        message: "No such approval".into(),
    }
}

/// A call `running` longer than this has lost its process (a Lambda runs 15 minutes at most).
const RUN_LIMIT_SECONDS: i64 = 15 * 60;

/// Where an approval stands at `now`: a pending one past its deadline has expired, a running
/// one past the run limit was interrupted.
pub fn effective_status(a: &Approval, now: DateTime<Utc>) -> ApprovalStatus {
    match a.status {
        ApprovalStatus::Pending if a.decide_by <= now.timestamp() => ApprovalStatus::Expired,
        ApprovalStatus::Running
            if a.decided_at
                .is_some_and(|t| (now - t).num_seconds() > RUN_LIMIT_SECONDS) =>
        {
            ApprovalStatus::Interrupted
        }
        s => s,
    }
}

/// An approval as clients see it.
pub fn approval_view(a: &Approval, now: DateTime<Utc>) -> Value {
    json!({
        "approvalId": a.id, "sessionId": a.session_id, "toolName": a.tool_name, "args": a.args,
        "workspace": { "id": a.workspace_id, "name": a.workspace_name }, "tier": a.tier,
        "status": effective_status(a, now),
        "createdAt": crate::time::iso(a.created_at),
        "expiresAt": DateTime::from_timestamp(a.decide_by, 0).map(crate::time::iso),
        "decidedAt": a.decided_at.map(crate::time::iso), "outcome": a.outcome,
    })
}

/// The snapshot key an approval's arguments are kept under when kept aside.
pub fn stored_call_id(approval_id: &str) -> String {
    format!("approval-{approval_id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::agent_tools::Tier;
    use chrono::{Duration, TimeZone};

    fn approval(status: ApprovalStatus, decided: Option<i64>) -> Approval {
        let t0 = Utc.timestamp_opt(1_000_000, 0).single().expect("t0");
        Approval {
            id: "a".into(),
            tenant_id: "t".into(),
            session_id: "s".into(),
            user_id: "u".into(),
            workspace_id: "w".into(),
            workspace_name: "W".into(),
            tool_name: "fs.write".into(),
            args: Value::Null,
            args_stored: false,
            args_bytes: 0,
            tier: Tier::Batch,
            status,
            created_at: t0,
            decide_by: t0.timestamp() + 900,
            decided_at: decided.map(|s| t0 + Duration::seconds(s)),
            decided_by: None,
            outcome: None,
        }
    }

    #[test]
    fn pending_expires_and_a_lost_run_reads_as_interrupted() {
        let t0 = Utc.timestamp_opt(1_000_000, 0).single().expect("t0");
        let at = |s: i64| t0 + Duration::seconds(s);
        let pending = approval(ApprovalStatus::Pending, None);
        assert_eq!(effective_status(&pending, at(899)), ApprovalStatus::Pending);
        assert_eq!(effective_status(&pending, at(900)), ApprovalStatus::Expired);
        let running = approval(ApprovalStatus::Running, Some(10));
        assert_eq!(
            effective_status(&running, at(10 + 900)),
            ApprovalStatus::Running
        );
        assert_eq!(
            effective_status(&running, at(10 + 901)),
            ApprovalStatus::Interrupted
        );
        let done = approval(ApprovalStatus::Done, Some(10));
        assert_eq!(effective_status(&done, at(100_000)), ApprovalStatus::Done);
    }
}
