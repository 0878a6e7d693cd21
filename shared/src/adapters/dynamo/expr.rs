//! Conditions and updates as expression strings with attribute-name and value placeholders.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use super::attrs::{to_attr, AttrMap};
use crate::adapters::table::{Cond, Update, EXPIRES_AT, PK};

/// Builds expression attribute names and values.
#[derive(Default)]
pub(super) struct Expr {
    names: HashMap<String, String>,
    values: AttrMap,
}

impl Expr {
    pub(super) fn name(&mut self, attr: &str) -> String {
        if let Some((k, _)) = self.names.iter().find(|(_, v)| v.as_str() == attr) {
            return k.clone();
        }
        let k = format!("#n{}", self.names.len());
        self.names.insert(k.clone(), attr.to_owned());
        k
    }

    pub(super) fn value(&mut self, v: AttributeValue) -> String {
        let k = format!(":v{}", self.values.len());
        self.values.insert(k.clone(), v);
        k
    }

    /// The condition as an expression; `None` means "always true".
    pub(super) fn cond(&mut self, c: &Cond) -> Option<String> {
        match c {
            Cond::Always => None,
            Cond::Missing => {
                let pk = self.name(PK);
                Some(format!("attribute_not_exists({pk})"))
            }
            Cond::Absent { now } => {
                let (pk, exp) = (self.name(PK), self.name(EXPIRES_AT));
                let now = self.value(AttributeValue::N(now.to_string()));
                Some(format!("(attribute_not_exists({pk}) OR {exp} <= {now})"))
            }
            Cond::Live { now } => {
                let (pk, exp) = (self.name(PK), self.name(EXPIRES_AT));
                let now = self.value(AttributeValue::N(now.to_string()));
                Some(format!(
                    "(attribute_exists({pk}) AND (attribute_not_exists({exp}) OR {exp} > {now}))"
                ))
            }
            Cond::Eq(attr, v) => {
                let (n, v) = (self.name(attr), self.value(to_attr(v)));
                Some(format!("{n} = {v}"))
            }
            Cond::MissingOrAtMost(attr, at_most) => {
                let n = self.name(attr);
                let v = self.value(AttributeValue::N(at_most.to_string()));
                Some(format!("(attribute_not_exists({n}) OR {n} <= {v})"))
            }
            Cond::AtLeast(attr, at_least) => {
                let n = self.name(attr);
                let v = self.value(AttributeValue::N(at_least.to_string()));
                Some(format!("{n} >= {v}"))
            }
            Cond::All(cs) => {
                let parts: Vec<String> = cs.iter().filter_map(|c| self.cond(c)).collect();
                (!parts.is_empty()).then(|| format!("({})", parts.join(" AND ")))
            }
            Cond::Any(cs) => {
                let parts: Vec<Option<String>> = cs.iter().map(|c| self.cond(c)).collect();
                if parts.iter().any(Option::is_none) {
                    return None;
                }
                let parts: Vec<String> = parts.into_iter().flatten().collect();
                Some(if parts.is_empty() {
                    "(1 = 0)".into()
                } else {
                    format!("({})", parts.join(" OR "))
                })
            }
        }
    }

    pub(super) fn update(&mut self, u: &Update) -> Option<String> {
        let mut sets = Vec::new();
        let mut removes: Vec<String> = u.remove.iter().map(|r| self.name(r)).collect();
        for (k, v) in &u.set {
            let n = self.name(k);
            if v.is_null() {
                removes.push(n);
            } else {
                let val = self.value(to_attr(v));
                sets.push(format!("{n} = {val}"));
            }
        }
        let adds: Vec<String> = u
            .add
            .iter()
            .map(|(k, by)| {
                let n = self.name(k);
                let v = self.value(AttributeValue::N(by.to_string()));
                format!("{n} {v}")
            })
            .collect();
        let mut parts = Vec::new();
        if !sets.is_empty() {
            parts.push(format!("SET {}", sets.join(", ")));
        }
        if !removes.is_empty() {
            parts.push(format!("REMOVE {}", removes.join(", ")));
        }
        if !adds.is_empty() {
            parts.push(format!("ADD {}", adds.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    pub(super) fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    pub(super) fn values(&self) -> Option<AttrMap> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_become_expressions_with_placeholders() {
        let mut x = Expr::default();
        let c = x
            .cond(&Cond::All(vec![
                Cond::Live { now: 5 },
                Cond::MissingOrAtMost("leaseUntil".into(), 5),
                Cond::Always,
            ]))
            .expect("expression");
        assert_eq!(
            c,
            "((attribute_exists(#n0) AND (attribute_not_exists(#n1) OR #n1 > :v0)) AND (attribute_not_exists(#n2) OR #n2 <= :v1))"
        );
        assert_eq!(x.names["#n2"], "leaseUntil");
        assert!(Expr::default()
            .cond(&Cond::Any(vec![Cond::Always, Cond::Live { now: 1 }]))
            .is_none());
    }

    #[test]
    fn updates_combine_set_remove_and_add_and_turn_null_into_remove() {
        let mut x = Expr::default();
        let u = Update {
            set: json!({ "a": 1, "gone": null })
                .as_object()
                .cloned()
                .expect("object"),
            remove: vec!["r".into()],
            add: vec![("count".into(), 1)],
        };
        let e = x.update(&u).expect("expression");
        assert!(
            e.starts_with("SET ") && e.contains(" REMOVE ") && e.contains(" ADD "),
            "{e}"
        );
        assert_eq!(e.matches("REMOVE").count(), 1);
        assert!(x.names.values().any(|v| v == "gone"));
    }
}
