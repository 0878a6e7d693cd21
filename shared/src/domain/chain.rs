//! Chained actions: filling several fields of one form in one round. A chain is safe only when
//! every action types, ticks or selects (no click, no submit, no navigation) on a different
//! element present on this page and none of them is risky; the client checks each result and
//! the next request verifies them all from its page.

use serde::{Deserialize, Serialize};

use super::facts::PageFacts;
use super::outcome::ActionKind;
use super::risk::{assess, Context, RiskPatterns};

/// Most actions in one chain.
pub const MAX_CHAIN: usize = 5;

/// `clientVerificationChecks[]` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCheck {
    #[serde(rename = "type")]
    pub kind: String,
    pub element_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_value: Option<String>,
}

/// `chainedActions[]` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainItem {
    pub action: String,
    pub description: String,
    pub index: usize,
    pub target_element_id: String,
    pub action_type: String,
    pub verification_level: String,
    pub client_verification_checks: Vec<ClientCheck>,
}

/// `chainMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainMetadata {
    pub total_actions: usize,
    pub safe_to_chain: bool,
    pub chain_reason: String,
    pub default_verification_level: String,
    pub client_verification_sufficient: bool,
    pub final_verification_level: String,
}

/// Why actions cannot go out together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotChainable {
    Count,
    Kind,
    SameElement,
    Missing,
    Risky,
}

/// The chain of `actions` (each with its client string), or why it is not safe.
pub fn chain(
    actions: &[(ActionKind<'_>, String)],
    page: &dyn PageFacts,
    patterns: &RiskPatterns,
) -> Result<(Vec<ChainItem>, ChainMetadata), NotChainable> {
    if !(2..=MAX_CHAIN).contains(&actions.len()) {
        return Err(NotChainable::Count);
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut items = Vec::new();
    for (index, (kind, client)) in actions.iter().enumerate() {
        let (id, action_type, check) = match kind {
            ActionKind::SetValue(id, v) => (*id, "setValue", ("value_matches", Some(*v))),
            ActionKind::SelectOption(id, v) => (*id, "selectOption", ("value_matches", Some(*v))),
            ActionKind::Check(id) => (*id, "check", ("state_changed", None)),
            ActionKind::Uncheck(id) => (*id, "uncheck", ("state_changed", None)),
            _ => return Err(NotChainable::Kind),
        };
        if seen.contains(&id) {
            return Err(NotChainable::SameElement);
        }
        seen.push(id);
        let target = page.element(id).ok_or(NotChainable::Missing)?;
        if assess(patterns, kind, Some(&target), page, &Context::default()).is_some() {
            return Err(NotChainable::Risky);
        }
        let name = crate::text::single_line(&target.name, 60);
        items.push(ChainItem {
            action: client.clone(),
            description: match check.1 {
                Some(v) => format!(
                    "{action_type} \"{name}\" to \"{}\"",
                    crate::text::single_line(v, 60)
                ),
                None => format!("{action_type} \"{name}\""),
            },
            index,
            target_element_id: id.to_owned(),
            action_type: action_type.to_owned(),
            verification_level: "client".into(),
            client_verification_checks: vec![ClientCheck {
                kind: check.0.to_owned(),
                element_id: id.to_owned(),
                expected_value: check.1.map(str::to_owned),
            }],
        });
    }
    let meta = ChainMetadata {
        total_actions: items.len(),
        safe_to_chain: true,
        chain_reason: "FORM_FILL".into(),
        default_verification_level: "client".into(),
        client_verification_sufficient: true,
        final_verification_level: "lightweight".into(),
    };
    Ok((items, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{signup, FakePage};

    /// A sign-up form.
    fn form() -> FakePage {
        signup([])
    }

    fn act(k: ActionKind<'static>, s: &str) -> (ActionKind<'static>, String) {
        (k, s.to_owned())
    }

    #[test]
    fn a_form_fill_chains_and_anything_else_does_not() {
        let p = RiskPatterns::default();
        let ok = [
            act(ActionKind::SetValue("1", "Ada"), "setValue(1, \"Ada\")"),
            act(
                ActionKind::SetValue("2", "Lovelace"),
                "setValue(2, \"Lovelace\")",
            ),
            act(ActionKind::Check("3"), "check(3)"),
        ];
        let (items, meta) = chain(&ok, &form(), &p).expect("chain");
        assert_eq!(meta.total_actions, 3);
        assert!(meta.safe_to_chain);
        let json = serde_json::to_value(&items[0]).expect("json");
        assert_eq!(
            json["clientVerificationChecks"][0],
            serde_json::json!({ "type": "value_matches", "elementId": "1", "expectedValue": "Ada" })
        );
        assert_eq!(json["verificationLevel"], "client");
        assert_eq!(items[2].client_verification_checks[0].kind, "state_changed");
        assert_eq!(chain(&ok[..1], &form(), &p), Err(NotChainable::Count));
        let click = [ok[0].clone(), act(ActionKind::Click("3"), "click(3)")];
        assert_eq!(chain(&click, &form(), &p), Err(NotChainable::Kind));
        let twice = [
            ok[0].clone(),
            act(ActionKind::SetValue("1", "x"), "setValue(1, \"x\")"),
        ];
        assert_eq!(chain(&twice, &form(), &p), Err(NotChainable::SameElement));
        let missing = [ok[0].clone(), act(ActionKind::Check("9"), "check(9)")];
        assert_eq!(chain(&missing, &form(), &p), Err(NotChainable::Missing));
        let secret = [
            ok[0].clone(),
            act(ActionKind::SetValue("4", "pw"), "setValue(4, \"pw\")"),
        ];
        assert_eq!(chain(&secret, &form(), &p), Err(NotChainable::Risky));
    }
}
