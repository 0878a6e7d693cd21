//! Reading the model's answer: `<Thought>…</Thought>` and `<Action>…</Action>`, tolerant of
//! small drift — tag case, whitespace, code fences, a missing closing tag, or plain
//! `Thought:`/`Action:` lines.

/// What the model said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOutput {
    pub thought: String,
    pub action: String,
}

fn tagged(text: &str, tag: &str) -> Option<String> {
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

/// Extracts thought and action; `Err` says what is missing.
pub fn parse_model_output(raw: &str) -> Result<ModelOutput, String> {
    let text = strip_fences(raw);
    let action = tagged(&text, "action")
        .or_else(|| labelled(&text, "action"))
        .map(|a| strip_fences(&a))
        .filter(|a| !a.is_empty())
        .ok_or("the answer has no <Action>…</Action>")?;
    // Only the first line of the action counts: models sometimes explain after it.
    let action = action.lines().next().unwrap_or("").trim().to_owned();
    let thought = tagged(&text, "thought")
        .or_else(|| labelled(&text, "thought"))
        .unwrap_or_default();
    Ok(ModelOutput { thought, action })
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
            o,
            ModelOutput {
                thought: "Click the button.".into(),
                action: "click(10)".into()
            }
        );
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
    fn garbage_has_no_action() {
        assert!(parse_model_output("I think we should click it.").is_err());
        assert!(parse_model_output("<Thought>hm</Thought>").is_err());
    }
}
