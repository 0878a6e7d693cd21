//! Paths of the States Language: JSONPath queries (with the `serde_json_path` crate) for
//! `InputPath`, `OutputPath`, `Parameters`/`ResultSelector` fields ending in `.$` and Choice
//! variables; reference paths (`$.a.b`, `$['a']`, `$.a[0]`) for `ResultPath`; payload
//! templates compiled once.

use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use super::Failure;

/// A compiled JSONPath: over the state (`$`) or the context object (`$$`).
#[derive(Debug, Clone)]
pub struct Path {
    raw: String,
    compiled: JsonPath,
    context: bool,
    /// Selects one node at most (no wildcard, filter, slice, union or descent).
    singular: bool,
}

impl Path {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let (context, path) = match raw.strip_prefix("$$") {
            Some(rest) => (true, format!("${rest}")),
            None => (false, raw.to_owned()),
        };
        let compiled = JsonPath::parse(&path).map_err(|e| format!("invalid path {raw:?}: {e}"))?;
        let singular = !["*", "..", "?", ":", ","].iter().any(|m| path.contains(m));
        Ok(Self {
            raw: raw.to_owned(),
            compiled,
            context,
            singular,
        })
    }

    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The value at the path; `None` when a singular path selects nothing.
    pub fn find(&self, data: &Value, context: &Value) -> Option<Value> {
        let target = if self.context { context } else { data };
        let nodes = self.compiled.query(target);
        if self.singular {
            nodes.at_most_one().ok().flatten().cloned()
        } else {
            Some(Value::Array(nodes.all().into_iter().cloned().collect()))
        }
    }

    /// The value at the path, or the runtime error the specification names.
    pub fn select(&self, data: &Value, context: &Value) -> Result<Value, Failure> {
        self.find(data, context).ok_or_else(|| {
            Failure::new(
                "States.Runtime",
                format!("the path {} matched nothing", self.raw),
            )
        })
    }
}

/// `InputPath`/`OutputPath`: absent is `$` (everything), `null` discards the input (`{}`).
#[derive(Debug, Clone)]
pub enum Filter {
    All,
    Nothing,
    Path(Path),
}

impl Filter {
    pub fn apply(&self, data: Value, context: &Value) -> Result<Value, Failure> {
        match self {
            Filter::All => Ok(data),
            Filter::Nothing => Ok(Value::Object(Map::new())),
            Filter::Path(p) => p.select(&data, context),
        }
    }
}

/// One step of a reference path.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    Field(String),
    Index(usize),
}

/// `ResultPath`: absent is `$` (the result replaces the input), `null` discards the result.
#[derive(Debug, Clone)]
pub enum Placement {
    Discard,
    At(Vec<Segment>),
}

impl Placement {
    /// Parses a reference path: `$` followed by `.name`, `['name']` or `[n]` steps.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let bad = || format!("invalid reference path {raw:?}");
        let mut rest = raw.strip_prefix('$').ok_or_else(bad)?;
        let mut segments = Vec::new();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return Err(bad());
                }
                segments.push(Segment::Field(r[..end].to_owned()));
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix("['") {
                let end = r.find("']").ok_or_else(bad)?;
                segments.push(Segment::Field(r[..end].to_owned()));
                rest = &r[end + 2..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').ok_or_else(bad)?;
                let n = r[..end].parse().map_err(|_| bad())?;
                segments.push(Segment::Index(n));
                rest = &r[end + 1..];
            } else {
                return Err(bad());
            }
        }
        Ok(Placement::At(segments))
    }

    /// The state input with `result` placed in it (missing objects on the way are made).
    pub fn place(&self, input: Value, result: Value) -> Result<Value, Failure> {
        let segments = match self {
            Placement::Discard => return Ok(input),
            Placement::At(s) if s.is_empty() => return Ok(result),
            Placement::At(s) => s,
        };
        let mismatch = || {
            Failure::new(
                "States.ResultPathMatchFailure",
                "the result path does not fit the state input",
            )
        };
        let mut root = input;
        let mut at = &mut root;
        for seg in segments {
            at = match seg {
                Segment::Field(name) => {
                    if at.is_null() {
                        *at = Value::Object(Map::new());
                    }
                    at.as_object_mut()
                        .ok_or_else(mismatch)?
                        .entry(name.clone())
                        .or_insert(Value::Null)
                }
                Segment::Index(i) => at
                    .as_array_mut()
                    .and_then(|a| a.get_mut(*i))
                    .ok_or_else(mismatch)?,
            };
        }
        *at = result;
        Ok(root)
    }
}

/// A `Parameters` or `ResultSelector` template: fields ending in `.$` take a path's value.
#[derive(Debug, Clone)]
pub enum Template {
    Literal(Value),
    Path(Path),
    Object(Vec<(String, Template)>),
    Array(Vec<Template>),
}

impl Template {
    pub fn compile(value: &Value) -> Result<Self, String> {
        Ok(match value {
            Value::Object(map) => {
                let mut fields = Vec::with_capacity(map.len());
                for (k, v) in map {
                    match k.strip_suffix(".$") {
                        Some(name) => {
                            let raw = v
                                .as_str()
                                .ok_or_else(|| format!("{k} must be a path string"))?;
                            if !raw.starts_with('$') {
                                return Err(format!(
                                    "{k}: intrinsic functions are not supported ({raw})"
                                ));
                            }
                            fields.push((name.to_owned(), Template::Path(Path::parse(raw)?)));
                        }
                        None => fields.push((k.clone(), Template::compile(v)?)),
                    }
                }
                Template::Object(fields)
            }
            Value::Array(items) => Template::Array(
                items
                    .iter()
                    .map(Template::compile)
                    .collect::<Result<_, _>>()?,
            ),
            v => Template::Literal(v.clone()),
        })
    }

    pub fn render(&self, data: &Value, context: &Value) -> Result<Value, Failure> {
        Ok(match self {
            Template::Literal(v) => v.clone(),
            Template::Path(p) => p.select(data, context)?,
            Template::Object(fields) => {
                let mut map = Map::with_capacity(fields.len());
                for (k, t) in fields {
                    map.insert(k.clone(), t.render(data, context)?);
                }
                Value::Object(map)
            }
            Template::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|t| t.render(data, context))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Value {
        json!({ "Execution": { "Name": "e1" } })
    }

    // The specification's "Path" examples: reference paths and JSONPath queries.
    #[test]
    fn paths_select_as_the_specification_describes() {
        let input = json!({ "foo": 123, "bar": ["a", "b", "c"], "car": { "cdr": true } });
        let sel = |p: &str| Path::parse(p).unwrap().select(&input, &ctx());
        assert_eq!(sel("$.foo").unwrap(), json!(123));
        assert_eq!(sel("$.bar").unwrap(), json!(["a", "b", "c"]));
        assert_eq!(sel("$.car.cdr").unwrap(), json!(true));
        assert_eq!(sel("$.bar[1]").unwrap(), json!("b"));
        assert_eq!(sel("$.bar[*]").unwrap(), json!(["a", "b", "c"]));
        assert_eq!(sel("$['car']['cdr']").unwrap(), json!(true));
        assert_eq!(sel("$$.Execution.Name").unwrap(), json!("e1"));
        assert_eq!(sel("$.missing").unwrap_err().error, "States.Runtime");
        assert!(Path::parse("foo").is_err());
    }

    // The specification's ResultPath examples.
    #[test]
    fn result_paths_place_the_result_as_the_specification_describes() {
        let input = json!({ "master": { "detail": [1, 2, 3] } });
        let put = |p: &str, r: Value| Placement::parse(p).unwrap().place(input.clone(), r);
        assert_eq!(
            put("$.master.detail", json!(6)).unwrap(),
            json!({ "master": { "detail": 6 } })
        );
        assert_eq!(
            put("$.master.result.sum", json!(6)).unwrap(),
            json!({ "master": { "detail": [1, 2, 3], "result": { "sum": 6 } } })
        );
        assert_eq!(
            put("$.master.detail[0]", json!(0)).unwrap(),
            json!({ "master": { "detail": [0, 2, 3] } })
        );
        assert_eq!(put("$", json!(6)).unwrap(), json!(6));
        assert_eq!(
            Placement::Discard.place(input.clone(), json!(6)).unwrap(),
            input
        );
        assert_eq!(
            put("$.master.detail.x", json!(6)).unwrap_err().error,
            "States.ResultPathMatchFailure"
        );
        for bad in ["master", "$..a", "$.a[*]", "$.", "$['a"] {
            assert!(Placement::parse(bad).is_err(), "{bad}");
        }
    }

    // The specification's Parameters example.
    #[test]
    fn templates_fill_path_fields_and_keep_literals() {
        let t = Template::compile(&json!({
            "flagged": true,
            "parts": { "first.$": "$.vals[0]", "last3.$": "$.vals[-3:]" },
            "weekday.$": "$$.Execution.Name",
            "list": [1, { "x.$": "$.vals[1]" }]
        }))
        .unwrap();
        let input = json!({ "flagged": 7, "vals": [0, 10, 20, 30, 40, 50] });
        assert_eq!(
            t.render(&input, &ctx()).unwrap(),
            json!({
                "flagged": true,
                "parts": { "first": 0, "last3": [30, 40, 50] },
                "weekday": "e1",
                "list": [1, { "x": 10 }]
            })
        );
        assert!(Template::compile(&json!({ "a.$": 3 })).is_err());
        assert!(Template::compile(&json!({ "a.$": "States.Format('x')" })).is_err());
        let missing = Template::compile(&json!({ "a.$": "$.nope" })).unwrap();
        assert_eq!(
            missing.render(&input, &ctx()).unwrap_err().error,
            "States.Runtime"
        );
    }
}
