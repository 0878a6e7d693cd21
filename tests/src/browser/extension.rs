//! What the shipping extension does with an interact answer, field by field, as its code reads
//! them and as it was measured to behave (`../shared/CONTRACT.md`; `docs/answers.md` has the
//! table). [`cannot_run`] is the one check: the extension-like client of every browser test,
//! the competent trajectories and MiniWoB++ stops (`client_stopped`) on an answer the shipping
//! extension could not run, so a server that sends one fails those runs.

use serde_json::Value;

/// The actions the extension's parser knows (`name(args)`; CONTRACT.md, "Action grammar").
pub const ACTIONS: [&str; 16] = [
    "click",
    "setValue",
    "navigate",
    "goBack",
    "wait",
    "scroll",
    "scroll_container",
    "findText",
    "hover",
    "press",
    "selectOption",
    "check",
    "uncheck",
    "finish",
    "fail",
    "ask_user",
];

/// The task statuses the side panel knows.
pub const STATUSES: [&str; 8] = [
    "planning",
    "executing",
    "verifying",
    "correcting",
    "completed",
    "failed",
    "needs_user_input",
    "awaiting_user",
];

/// Why the shipping extension cannot run `answer` (a 200 of interact), or `None` when it can.
pub fn cannot_run(answer: &Value) -> Option<String> {
    let Some(o) = answer.as_object() else {
        return Some("the answer is not a JSON object".into());
    };
    if o.contains_key("data") {
        return Some("the answer is wrapped in `data` (the client reads the top level)".into());
    }
    if answer["toolAction"]["toolType"] == "SERVER" {
        // Measured: `addMessage is not defined` in its currentTask.ts; the loop ends, the task
        // stays running on the server, and the panel's last line is the round's thought.
        return Some(format!(
            "the extension throws on a SERVER toolAction ({}) and stops",
            answer["toolAction"]["toolName"]
        ));
    }
    let chain = answer["chainedActions"]
        .as_array()
        .is_some_and(|c| !c.is_empty());
    if chain && answer["chainMetadata"]["safeToChain"] == true {
        // Measured: "Unknown action: undefined" on the first item, then no further request.
        return Some("the extension fails a chain's first item and stops".into());
    }
    for field in ["thought", "action", "taskId", "sessionId"] {
        if !answer[field].is_string() {
            return Some(format!("`{field}` is not a string"));
        }
    }
    let status = answer["status"].as_str().unwrap_or("");
    if !STATUSES.contains(&status) {
        return Some(format!(
            "the side panel does not know the status {status:?}"
        ));
    }
    if answer.get("reasoning").is_some_and(|r| !r.is_object()) {
        return Some("`reasoning` is not an object (the panel shows \"Unknown • 50 %\")".into());
    }
    let action = answer["action"].as_str().unwrap_or("");
    let Some(parsed) = super::actions::parse(action) else {
        return Some(format!("the extension cannot parse the action {action:?}"));
    };
    if !ACTIONS.contains(&parsed.name.as_str()) {
        return Some(format!("the extension has no action {:?}", parsed.name));
    }
    if parsed.name == "finish" && !parsed.args.is_empty() {
        return Some("the extension parses only `finish()`".into());
    }
    if let Some(why) = misquoted(action) {
        return Some(format!(
            "{why} in {action:?} (the extension does not unescape)"
        ));
    }
    None
}

/// A string argument the extension would read otherwise than meant: its quote character inside
/// it — the argument ends there, escaped or not (a backslash is kept as it is).
fn misquoted(action: &str) -> Option<&'static str> {
    let inner = action.get(action.find('(')? + 1..action.rfind(')')?)?;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if !matches!(c, '"' | '\'' | '`') {
            continue;
        }
        loop {
            match chars.next() {
                None => return Some("an unclosed quote"),
                Some(q) if q == c => break,
                Some(_) => {}
            }
        }
        while chars.next_if(|x| x.is_whitespace()).is_some() {}
        if chars.peek().is_some_and(|x| *x != ',') {
            return Some("a quote inside a quoted argument");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(extra: Value) -> Value {
        let mut a = json!({ "success": true, "thought": "Opening it.", "action": "click(12)",
            "taskId": "t", "sessionId": "s", "status": "executing" });
        if let (Some(a), Some(extra)) = (a.as_object_mut(), extra.as_object()) {
            a.extend(extra.clone());
        }
        a
    }

    #[test]
    fn what_the_extension_runs_and_what_stops_it() {
        assert_eq!(cannot_run(&answer(json!({}))), None);
        assert_eq!(
            cannot_run(&answer(
                json!({ "action": "wait(1)", "reasoning": { "source": "PAGE" } })
            )),
            None
        );
        // Text with other quote characters, commas and backslashes is read as meant.
        for action in [
            r#"setValue(3, 'say "hi", please')"#,
            r#"setValue(3, "St James's, London")"#,
            r#"setValue(3, `C:\path`)"#,
            r#"setValue(3, "C:\")"#,
            r#"navigate("https://a.test/?q=1,2")"#,
        ] {
            assert_eq!(
                cannot_run(&answer(json!({ "action": action }))),
                None,
                "{action}"
            );
        }
        // A DOM toolAction is not a server round.
        assert_eq!(
            cannot_run(&answer(json!({ "toolAction": { "toolType": "DOM" } }))),
            None
        );
        let stops = [
            json!({ "action": "wait(1)", "toolAction": { "toolName": "continue", "toolType": "SERVER" } }),
            json!({ "chainedActions": [{ "action": "click(1)" }], "chainMetadata": { "safeToChain": true } }),
            json!({ "action": "googleSearch(\"lamps\")" }),
            json!({ "action": "finish(\"42\")" }),
            json!({ "action": "click 3" }),
            json!({ "action": "setValue(3, \"say \"hi\" now\")" }),
            json!({ "action": "setValue(3, \"say \\\"hi\\\"\")" }),
            json!({ "action": "setValue(3, \"open)" }),
            json!({ "status": "needs_full_dom" }),
            json!({ "reasoning": "because" }),
            json!({ "thought": null }),
            json!({ "data": {} }),
        ];
        for extra in stops {
            assert!(cannot_run(&answer(extra.clone())).is_some(), "{extra}");
        }
    }
}
