//! Choice rules: `And`, `Or`, `Not` and comparisons of a `Variable` (string, numeric, boolean
//! and type tests), compiled once and evaluated over the state.

use serde_json::Value;

use super::paths::Path;
use super::Failure;

#[derive(Debug, Clone)]
pub enum Test {
    StringEquals(String),
    StringLessThan(String),
    StringGreaterThan(String),
    StringMatches(String),
    NumericEquals(f64),
    NumericLessThan(f64),
    NumericLessThanEquals(f64),
    NumericGreaterThan(f64),
    NumericGreaterThanEquals(f64),
    BooleanEquals(bool),
    IsPresent(bool),
    IsNull(bool),
    IsString(bool),
    IsNumeric(bool),
    IsBoolean(bool),
}

/// A compiled Choice rule.
#[derive(Debug, Clone)]
pub enum Rule {
    And(Vec<Rule>),
    Or(Vec<Rule>),
    Not(Box<Rule>),
    Compare { variable: Path, test: Test },
}

fn field<'a>(rule: &'a serde_json::Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    rule.get(name).ok_or_else(|| format!("{name} is required"))
}

impl Rule {
    /// Compiles a rule object (without its `Next`).
    pub fn compile(rule: &Value) -> Result<Self, String> {
        let obj = rule.as_object().ok_or("a choice rule must be an object")?;
        let list = |v: &Value| -> Result<Vec<Rule>, String> {
            v.as_array()
                .filter(|a| !a.is_empty())
                .ok_or("And/Or take a non-empty list")?
                .iter()
                .map(Rule::compile)
                .collect()
        };
        if let Some(v) = obj.get("And") {
            return Ok(Rule::And(list(v)?));
        }
        if let Some(v) = obj.get("Or") {
            return Ok(Rule::Or(list(v)?));
        }
        if let Some(v) = obj.get("Not") {
            return Ok(Rule::Not(Box::new(Rule::compile(v)?)));
        }
        let variable = field(obj, "Variable")?
            .as_str()
            .ok_or("Variable must be a path")?;
        let variable = Path::parse(variable)?;
        let s = |v: &Value| v.as_str().map(str::to_owned).ok_or("expects a string");
        let n = |v: &Value| v.as_f64().ok_or("expects a number");
        let b = |v: &Value| v.as_bool().ok_or("expects a boolean");
        let mut tests = obj.iter().filter(|(k, _)| *k != "Variable" && *k != "Next");
        let (op, v) = tests.next().ok_or("a comparison is required")?;
        if tests.next().is_some() {
            return Err("one comparison per rule".into());
        }
        let test = match op.as_str() {
            "StringEquals" => Test::StringEquals(s(v)?),
            "StringLessThan" => Test::StringLessThan(s(v)?),
            "StringGreaterThan" => Test::StringGreaterThan(s(v)?),
            "StringMatches" => Test::StringMatches(s(v)?),
            "NumericEquals" => Test::NumericEquals(n(v)?),
            "NumericLessThan" => Test::NumericLessThan(n(v)?),
            "NumericLessThanEquals" => Test::NumericLessThanEquals(n(v)?),
            "NumericGreaterThan" => Test::NumericGreaterThan(n(v)?),
            "NumericGreaterThanEquals" => Test::NumericGreaterThanEquals(n(v)?),
            "BooleanEquals" => Test::BooleanEquals(b(v)?),
            "IsPresent" => Test::IsPresent(b(v)?),
            "IsNull" => Test::IsNull(b(v)?),
            "IsString" => Test::IsString(b(v)?),
            "IsNumeric" => Test::IsNumeric(b(v)?),
            "IsBoolean" => Test::IsBoolean(b(v)?),
            other => return Err(format!("the comparison {other} is not supported")),
        };
        Ok(Rule::Compare { variable, test })
    }

    /// Whether the rule holds for `data`. A missing variable is an error, except for
    /// `IsPresent`.
    pub fn holds(&self, data: &Value, context: &Value) -> Result<bool, Failure> {
        match self {
            Rule::And(rules) => {
                for r in rules {
                    if !r.holds(data, context)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Rule::Or(rules) => {
                for r in rules {
                    if r.holds(data, context)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Rule::Not(r) => Ok(!r.holds(data, context)?),
            Rule::Compare { variable, test } => {
                let found = variable.find(data, context);
                if let Test::IsPresent(want) = test {
                    return Ok(found.is_some() == *want);
                }
                let v = found.ok_or_else(|| {
                    Failure::new(
                        "States.Runtime",
                        format!("the choice variable {} is not present", variable.raw()),
                    )
                })?;
                Ok(compare(&v, test))
            }
        }
    }
}

fn compare(v: &Value, test: &Test) -> bool {
    let num = v.as_f64();
    let st = v.as_str();
    match test {
        Test::StringEquals(x) => st == Some(x.as_str()),
        Test::StringLessThan(x) => st.is_some_and(|s| s < x.as_str()),
        Test::StringGreaterThan(x) => st.is_some_and(|s| s > x.as_str()),
        Test::StringMatches(p) => st.is_some_and(|s| matches(p, s)),
        Test::NumericEquals(x) => num == Some(*x),
        Test::NumericLessThan(x) => num.is_some_and(|n| n < *x),
        Test::NumericLessThanEquals(x) => num.is_some_and(|n| n <= *x),
        Test::NumericGreaterThan(x) => num.is_some_and(|n| n > *x),
        Test::NumericGreaterThanEquals(x) => num.is_some_and(|n| n >= *x),
        Test::BooleanEquals(x) => v.as_bool() == Some(*x),
        Test::IsNull(w) => v.is_null() == *w,
        Test::IsString(w) => v.is_string() == *w,
        Test::IsNumeric(w) => v.is_number() == *w,
        Test::IsBoolean(w) => v.is_boolean() == *w,
        Test::IsPresent(w) => *w,
    }
}

/// `StringMatches`: `*` matches any run of characters, `\*` and `\\` are literal. Linear in
/// the text for each star (greedy with one backtrack point).
fn matches(pattern: &str, text: &str) -> bool {
    // Tokens: Some(c) a literal character, None a star.
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => tokens.push(Some(chars.next().unwrap_or('\\'))),
            '*' => tokens.push(None),
            c => tokens.push(Some(c)),
        }
    }
    let text: Vec<char> = text.chars().collect();
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Some(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            Some(None) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p..].iter().all(Option::is_none)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holds(rule: Value, data: Value) -> Result<bool, Failure> {
        Rule::compile(&rule).unwrap().holds(&data, &json!({}))
    }

    // The specification's Choice examples.
    #[test]
    fn the_specifications_choice_examples() {
        let not_rule = json!({ "Not": { "Variable": "$.type", "StringEquals": "Private" } });
        assert!(holds(not_rule.clone(), json!({ "type": "Public" })).unwrap());
        assert!(!holds(not_rule, json!({ "type": "Private" })).unwrap());
        let and_rule = json!({ "And": [
            { "Variable": "$.value", "NumericGreaterThanEquals": 20 },
            { "Variable": "$.value", "NumericLessThan": 30 }
        ]});
        assert!(holds(and_rule.clone(), json!({ "value": 20 })).unwrap());
        assert!(holds(and_rule.clone(), json!({ "value": 29.5 })).unwrap());
        assert!(!holds(and_rule, json!({ "value": 30 })).unwrap());
        let or_rule = json!({ "Or": [
            { "Variable": "$.a", "BooleanEquals": true },
            { "Variable": "$.b", "StringMatches": "log-*.txt" }
        ]});
        assert!(holds(or_rule.clone(), json!({ "a": false, "b": "log-2024.txt" })).unwrap());
        assert!(!holds(or_rule, json!({ "a": false, "b": "log-2024.csv" })).unwrap());
    }

    #[test]
    fn types_presence_and_missing_variables() {
        // A comparison of another type is false, not an error.
        assert!(!holds(
            json!({ "Variable": "$.x", "NumericLessThan": 3 }),
            json!({ "x": "2" })
        )
        .unwrap());
        assert!(holds(json!({ "Variable": "$.x", "IsPresent": false }), json!({})).unwrap());
        assert!(holds(
            json!({ "Variable": "$.x", "IsNull": true }),
            json!({ "x": null })
        )
        .unwrap());
        assert!(holds(
            json!({ "Variable": "$.x", "IsString": true }),
            json!({ "x": "s" })
        )
        .unwrap());
        let missing = holds(json!({ "Variable": "$.x", "StringEquals": "a" }), json!({}));
        assert_eq!(missing.unwrap_err().error, "States.Runtime");
        assert!(Rule::compile(&json!({ "Variable": "$.x", "TimestampEquals": "a" })).is_err());
        assert!(Rule::compile(&json!({ "Variable": "$.x" })).is_err());
        assert!(Rule::compile(&json!({ "And": [] })).is_err());
    }

    #[test]
    fn string_matches_wildcards_and_escapes() {
        assert!(matches("*.log", "a.log"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXbYY"));
        assert!(matches(r"a\*", "a*"));
        assert!(!matches(r"a\*", "ab"));
        assert!(matches("*", ""));
        assert!(!matches("", "x"));
        // Long inputs stay cheap.
        let long = "a".repeat(20_000);
        assert!(!matches("*a*a*b", &long));
    }
}
