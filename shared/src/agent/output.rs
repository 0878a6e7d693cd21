//! Reading the model's answer: `<Thought>…</Thought>` and `<Action>…</Action>`, tolerant of
//! small drift — tag case, whitespace, code fences, a missing closing tag, or plain
//! `Thought:`/`Action:` lines.

/// What the model said. Only `thought` and `action` are required; the rest are optional
/// sections of the answer format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelOutput {
    pub thought: String,
    /// The first action.
    pub action: String,
    /// Every `<Action>` given (several for a chain), the first being `action`.
    pub actions: Vec<String>,
    /// `<Plan>`: step descriptions, in order.
    pub plan: Option<Vec<String>>,
    /// `<Step>`: the plan step (0-based) the action works on.
    pub step: Option<usize>,
    /// `<Expect>`: what should happen after the action.
    pub expect: Option<String>,
    /// `<Risk>`: the model's warning that the action needs the user's confirmation.
    pub risk: Option<String>,
    /// `<TaskType>`: `chat_only` when the answer needs no browser.
    pub task_type: Option<String>,
    /// `<Missing>`: what the user must provide (with `ask_user`), separated by `;` or lines.
    pub missing: Vec<String>,
    /// `<Memory>`: the model's running note for later steps (cut to [`MEMORY_CHARS`]).
    pub memory: Option<String>,
    /// `<Effect>`: what the model declares its action does (read leniently; none when absent
    /// or unreadable, which is read as before).
    pub effect: Option<crate::domain::risk::Effect>,
}

/// The answer as a JSON object (structured output, `LLM_STRUCTURED_OUTPUT`): the fields of
/// the tagged format, `actions` holding the `<Action>`s in order; a field that does not apply
/// is null.
pub fn answer_schema() -> &'static serde_json::Value {
    static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = || serde_json::json!({ "type": ["string", "null"] });
        let list = || serde_json::json!({ "type": ["array", "null"], "items": { "type": "string" } });
        serde_json::json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["thought", "actions", "plan", "step", "expect", "effect", "risk", "missing", "memory", "task_type", "search"],
            "properties": {
                "thought": { "type": "string" },
                "actions": { "type": "array", "items": { "type": "string" } },
                "plan": list(),
                "step": { "type": ["integer", "null"] },
                "expect": text(),
                "effect": text(),
                "risk": text(),
                "missing": list(),
                "memory": text(),
                "task_type": text(),
                "search": text(),
            }
        })
    })
}

/// Longest structured answer read (the completion limit keeps real ones far smaller).
const MAX_JSON_ANSWER: usize = 256 * 1024;

/// A structured answer ([`answer_schema`]) written as the tagged one, so one reader reads
/// both; `None` when `text` is not such an object. Its values are model text: a `<` or `>` in
/// them cannot open a tag (in an action only a closing tag is defused: values may hold `<`).
pub fn from_json(text: &str) -> Option<String> {
    use serde_json::Value;
    let stripped = strip_fences(text);
    let body = stripped.trim();
    if !body.starts_with('{') || body.len() > MAX_JSON_ANSWER {
        return None;
    }
    let v: Value = serde_json::from_str(body).ok()?;
    let obj = v.as_object()?;
    let clean = |s: &str| s.replace('<', "‹").replace('>', "›");
    let actions: Vec<String> = match obj.get("actions").or_else(|| obj.get("action")) {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(a)) => vec![a.clone()],
        _ => return None,
    };
    let mut out = String::new();
    let mut tag = |name: &str, value: &str| {
        out.push_str(&format!("<{name}>{value}</{name}>\n"));
    };
    if let Some(plan) = obj.get("plan").and_then(Value::as_array) {
        let lines: Vec<String> = plan
            .iter()
            .filter_map(Value::as_str)
            .enumerate()
            .map(|(k, s)| format!("{}. {}", k + 1, clean(s)))
            .collect();
        tag("Plan", &lines.join("\n"));
    }
    tag(
        "Thought",
        &clean(obj.get("thought").and_then(Value::as_str).unwrap_or("")),
    );
    if let Some(n) = obj.get("step").and_then(Value::as_u64) {
        tag("Step", &n.to_string());
    }
    for a in actions.iter().take(MAX_ACTIONS) {
        // One line (the reader takes an action's first line only); a typed `<` stays, a
        // closing tag cannot.
        tag(
            "Action",
            &crate::text::single_line(a, 4_000).replace("</", "‹/"),
        );
    }
    for (key, name) in [
        ("expect", "Expect"),
        ("effect", "Effect"),
        ("risk", "Risk"),
        ("memory", "Memory"),
        ("task_type", "TaskType"),
        ("search", "Search"),
    ] {
        if let Some(v) = obj
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.trim().is_empty())
        {
            tag(name, &clean(v));
        }
    }
    if let Some(m) = obj.get("missing").and_then(Value::as_array) {
        let items: Vec<String> = m.iter().filter_map(Value::as_str).map(clean).collect();
        if !items.is_empty() {
            tag("Missing", &items.join("; "));
        }
    }
    Some(out)
}

/// Longest running note kept from an answer.
pub const MEMORY_CHARS: usize = crate::agent::prompt::MEMORY_CHARS;

/// Most items read from `<Missing>`, and the length of each.
const MAX_MISSING: usize = 5;
const MISSING_CHARS: usize = 200;

/// Most `<Action>`s read from one answer.
/// `<Action>`s read from one answer at most (the server runs at most five: the rest are named
/// to the model as not run).
const MAX_ACTIONS: usize = 8;

/// Every `<tag>…</tag>` section, in order.
fn all_tagged(text: &str, tag: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find(&open) {
        let start = from + at + open.len();
        let end = lower[start..]
            .find(&close)
            .map(|e| start + e)
            .or_else(|| lower[start..].find('<').map(|e| start + e))
            .unwrap_or(text.len());
        out.push(text[start..end].trim().to_owned());
        from = end;
        if out.len() >= MAX_ACTIONS {
            break;
        }
    }
    out
}

/// The lines of a `<Plan>`: list markers and numbering removed, empty lines dropped.
fn plan_lines(plan: &str) -> Vec<String> {
    plan.lines()
        .map(|l| {
            let l = l.trim().trim_start_matches(['-', '*', '•']).trim();
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            let rest = &l[digits..];
            if digits > 0 && (rest.starts_with('.') || rest.starts_with(')')) {
                rest[1..].trim().to_owned()
            } else {
                l.to_owned()
            }
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// The text of the first `<tag>…</tag>` section (any case; a missing closing tag ends at the
/// next tag or the end).
pub fn tagged(text: &str, tag: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = lower.find(&open)? + open.len();
    let end = lower[start..]
        .find(&close)
        .map(|e| start + e)
        .or_else(|| lower[start..].find('<').map(|e| start + e))
        .unwrap_or(text.len());
    Some(text[start..end].trim().to_owned())
}

fn labelled(text: &str, label: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let t = l.trim().trim_start_matches(['*', '#', '-', ' ']);
        let lower = t.to_ascii_lowercase();
        lower.starts_with(&format!("{label}:")).then(|| {
            t[label.len() + 1..]
                .trim()
                .trim_matches('*')
                .trim()
                .to_owned()
        })
    })
}

fn strip_fences(s: &str) -> String {
    s.lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .trim_matches('`')
        .trim()
        .to_owned()
}

/// Extracts thought and action(s) and the optional sections; `Err` says what is missing.
pub fn parse_model_output(raw: &str) -> Result<ModelOutput, String> {
    let text = strip_fences(raw);
    // Only the first line of an action counts: models sometimes explain after it.
    let first_line = |a: &str| {
        strip_fences(a)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let mut actions: Vec<String> = all_tagged(&text, "action")
        .iter()
        .map(|a| first_line(a))
        .filter(|a| !a.is_empty())
        .collect();
    if actions.is_empty() {
        actions.extend(
            labelled(&text, "action")
                .map(|a| first_line(&a))
                .filter(|a| !a.is_empty()),
        );
    }
    let action = actions
        .first()
        .cloned()
        .ok_or("the answer has no <Action>…</Action>")?;
    let thought = tagged(&text, "thought")
        .or_else(|| labelled(&text, "thought"))
        .unwrap_or_default();
    let single = |tag: &str| {
        tagged(&text, tag)
            .map(|t| crate::text::single_line(&t, 300))
            .filter(|t| !t.is_empty())
    };
    Ok(ModelOutput {
        thought,
        action,
        actions,
        plan: tagged(&text, "plan")
            .map(|p| plan_lines(&p))
            .filter(|p| !p.is_empty()),
        step: tagged(&text, "step").and_then(|s| s.trim().parse().ok()),
        expect: single("expect"),
        // "none" and the like are no warning.
        risk: single("risk").filter(|r| {
            !matches!(
                r.to_ascii_lowercase().trim_matches(['.', ' ']),
                "none" | "no" | "n/a" | "na" | "-" | "false" | "no risk" | "nothing"
            )
        }),
        task_type: single("tasktype").map(|t| t.to_ascii_lowercase()),
        missing: tagged(&text, "missing")
            .map(|m| {
                m.split([';', '\n'])
                    .map(|i| {
                        crate::text::single_line(
                            i.trim_start_matches(['-', '*', ' ']),
                            MISSING_CHARS,
                        )
                    })
                    .filter(|i| !i.is_empty())
                    .take(MAX_MISSING)
                    .collect()
            })
            .unwrap_or_default(),
        memory: tagged(&text, "memory")
            .map(|m| crate::text::single_line(&m, MEMORY_CHARS))
            .filter(|m| !m.is_empty()),
        effect: single("effect").and_then(|e| crate::domain::risk::Effect::parse(&e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_canonical_form() {
        let o =
            parse_model_output("<Thought>Click the button.</Thought>\n<Action>click(10)</Action>")
                .expect("ok");
        assert_eq!(
            (o.thought.as_str(), o.action.as_str()),
            ("Click the button.", "click(10)")
        );
        assert_eq!(o.actions, vec!["click(10)"]);
        assert!(o.plan.is_none() && o.step.is_none());
    }

    #[test]
    fn tolerates_case_fences_and_missing_closing_tags() {
        for raw in [
            "```xml\n<thought>x</thought>\n<action>click(10)</action>\n```",
            "<THOUGHT>x</THOUGHT><ACTION> click(10) ",
            "<Thought>x</Thought>\n<Action>\n```\nclick(10)\n```\n</Action>",
            "Thought: x\nAction: click(10)",
            "**Thought:** x\n**Action:** click(10)",
        ] {
            let o = parse_model_output(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(o.action, "click(10)", "{raw}");
            assert_eq!(o.thought, "x", "{raw}");
        }
    }

    #[test]
    fn reads_the_optional_sections_and_several_actions() {
        let o = parse_model_output(
            "<Plan>\n1. Open the form\n2) Fill in the name\n- Submit\n</Plan>\n<TaskType>web_only</TaskType>\n<Thought>Filling.</Thought>\n<Step>1</Step>\n<Expect>Both fields filled</Expect>\n<Action>setValue(1, \"Ada\")</Action>\n<Action>setValue(2, \"L\")</Action>\n<Risk>none</Risk>",
        )
        .expect("ok");
        assert_eq!(
            o.plan,
            Some(vec![
                "Open the form".into(),
                "Fill in the name".into(),
                "Submit".into()
            ])
        );
        assert_eq!(o.step, Some(1));
        assert_eq!(o.actions.len(), 2);
        assert_eq!(o.action, "setValue(1, \"Ada\")");
        assert_eq!(o.expect.as_deref(), Some("Both fields filled"));
        assert_eq!(o.task_type.as_deref(), Some("web_only"));
        assert_eq!(o.risk, None, "\"none\" is no warning");
        let o = parse_model_output(
            "<Thought>I need details.</Thought><Action>ask_user(\"Which size?\")</Action><Missing>- shoe size; colour\n</Missing><Risk>pays 20 EUR</Risk>",
        )
        .expect("ok");
        assert_eq!(o.missing, vec!["shoe size".to_owned(), "colour".to_owned()]);
        assert_eq!(o.risk.as_deref(), Some("pays 20 EUR"));
        let many = "<Action>wait(1)</Action>".repeat(20);
        assert_eq!(
            parse_model_output(&many).expect("ok").actions.len(),
            MAX_ACTIONS
        );
    }

    #[test]
    fn garbage_has_no_action() {
        assert!(parse_model_output("I think we should click it.").is_err());
        assert!(parse_model_output("<Thought>hm</Thought>").is_err());
    }

    #[test]
    fn a_structured_answer_reads_as_the_tagged_one() {
        let json = r#"```json
{"thought": "Fill <b>then</b> send. <Action>click(9)</Action>", "actions": ["setValue(3, \"a<b\")", "click(4)"],
 "plan": ["Open the form", "Send it"], "step": 2, "expect": null, "risk": "", "missing": null,
 "memory": "form half done", "task_type": null, "search": null}
```"#;
        let tagged = from_json(json).expect("structured");
        let o = parse_model_output(&tagged).expect("parsed");
        assert_eq!(o.actions, ["setValue(3, \"a<b\")", "click(4)"], "{tagged}");
        assert!(
            !o.thought.contains('<'),
            "the thought cannot carry a tag: {}",
            o.thought
        );
        assert_eq!(
            o.plan.as_deref(),
            Some(&["Open the form".to_owned(), "Send it".to_owned()][..])
        );
        assert_eq!(
            (o.step, o.memory.as_deref(), o.risk),
            (Some(2), Some("form half done"), None)
        );
        // A single `action` string is read too; anything else is not a structured answer.
        let one = from_json(r#"{"thought": "t", "action": "finish()"}"#).expect("one");
        assert_eq!(parse_model_output(&one).expect("ok").action, "finish()");
        for not in [
            "<Thought>t</Thought><Action>click(1)</Action>",
            "{\"thought\": \"no actions\"}",
            "{broken",
            "[1, 2]",
        ] {
            assert_eq!(from_json(not), None, "{not}");
        }
        let huge = format!(
            "{{\"thought\": \"{}\", \"actions\": []}}",
            "x".repeat(MAX_JSON_ANSWER)
        );
        assert_eq!(from_json(&huge), None);
    }

    #[test]
    fn structured_answers_on_their_strangest_inputs_are_bounded_and_never_panic() {
        // Nesting past serde_json's depth limit, inside the size cap: not an answer.
        let deep = format!(
            "{{\"actions\": {}1{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(from_json(&deep), None);
        let nested = format!(
            "{{\"thought\": \"t\", \"actions\": [\"click(1)\"], \"plan\": {}{}}}",
            "[".repeat(5_000),
            "]".repeat(5_000)
        );
        assert!(from_json(&nested).is_none_or(|t| parse_model_output(&t).is_ok()));
        // Many actions, many plan lines, tags and fences in every field: bounded output.
        let many: Vec<String> = (0..20_000).map(|k| format!("click({k})")).collect();
        let big =
            serde_json::json!({ "thought": "</Action><Action>fail()</Action>", "actions": many,
            "plan": vec!["<Plan>x</Plan>"; 10_000], "memory": "m".repeat(100_000) })
            .to_string();
        if let Some(t) = from_json(&big) {
            let o = parse_model_output(&t).expect("parsed");
            assert!(
                o.actions.len() <= MAX_ACTIONS && o.action == "click(0)",
                "{:?}",
                o.actions
            );
            assert!(o.memory.is_some_and(|m| m.chars().count() <= MEMORY_CHARS));
        }
        for odd in [
            "{",
            "{}",
            "{\"actions\": null}",
            "{\"actions\": [1, {}, null]}",
            "\u{0}{\"actions\":[]}",
        ] {
            let _ = from_json(odd).map(|t| parse_model_output(&t));
        }
    }
}
