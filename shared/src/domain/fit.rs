//! Whether an action can work on the element it names, before it goes out (issue 52): typed
//! text only goes into something that takes text. The extension runs `setValue` on whatever
//! it is given — on a label, a heading or a button it overwrites the element's own text (seen:
//! a task's instruction destroyed that way) — so the server refuses it and names the fields
//! that are there instead.
//!
//! The model: an element takes text when it is a field (`inp`: text boxes, search boxes, spin
//! buttons, text areas, and a `dom` page's element written `contenteditable`), or a list or
//! range that can be typed into (`sel`, `slider`). It does not when its role says it is a
//! control or a piece of text: a button, link, box, radio, switch, tab, menu item, option,
//! tree item, or a `dom` page's plain element (`el`: a label, heading, cell, paragraph). A
//! role this list does not know is let through: the server refuses only what it knows cannot
//! work.

use super::facts::{ElementFacts, PageFacts};

/// Fields named in a refusal at most.
const NEARBY: usize = 3;

/// Roles of elements that never take typed text.
const NOT_TEXT: &[&str] = &[
    "btn", "link", "chk", "radio", "switch", "tab", "menu", "opt", "tree",
];

/// Whether `el` takes typed text: `Some(false)` when its role says it does not, `None` when
/// the role is one this rule does not know.
pub fn takes_text(el: &ElementFacts<'_>) -> Option<bool> {
    let role = el.role.as_ref();
    if matches!(role, "inp" | "sel" | "slider") {
        return Some(true);
    }
    (NOT_TEXT.contains(&role) || role == "el").then_some(false)
}

/// Why typing into element `id` cannot work, naming the fields nearest to it on the page
/// (in the page's order), or `None` when it can (or the rule cannot tell).
pub fn cannot_type_into(page: &dyn PageFacts, id: &str) -> Option<String> {
    let el = page.element(id)?;
    if takes_text(&el) != Some(false) {
        return None;
    }
    let what = el.brief(60);
    let all: Vec<ElementFacts<'_>> = page.elements().take(2_000).collect();
    let at = all.iter().position(|e| e.id == id).unwrap_or(0);
    let mut fields: Vec<(usize, &ElementFacts<'_>)> = all
        .iter()
        .enumerate()
        .filter(|(_, e)| takes_text(e) == Some(true) && !e.has_state("disabled"))
        .map(|(k, e)| (k.abs_diff(at), e))
        .collect();
    fields.sort_by_key(|(distance, _)| *distance);
    let near: Vec<String> = fields
        .iter()
        .take(NEARBY)
        .map(|(_, e)| e.brief(60))
        .collect();
    Some(if near.is_empty() {
        format!("element {id} is {what}, which does not take typed text, and the page has no field that does: click it, or choose another action")
    } else {
        format!(
            "element {id} is {what}, which does not take typed text; the fields nearest to it are {}",
            near.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    fn page() -> FakePage {
        FakePage::new(
            "https://a.test/form",
            [
                el("1", "el", "Username:"),
                el("2", "inp", "Username"),
                el("3", "el", "Password:"),
                el("4", "inp", "Password").input("password"),
                el("5", "btn", "Log in"),
                el("6", "link", "Forgot password?"),
                el("7", "inp", "Old").states("disabled"),
            ],
        )
    }

    #[test]
    fn typing_into_a_control_or_text_is_refused_naming_the_fields_nearby() {
        let p = page();
        let why = cannot_type_into(&p, "5").expect("a button takes no text");
        assert_eq!(
            why,
            "element 5 is [5] btn \"Log in\", which does not take typed text; the fields nearest to it are [4] inp \"Password\", [2] inp \"Username\""
        );
        let label = cannot_type_into(&p, "1").expect("a label takes no text");
        assert!(label.contains("[2] inp \"Username\""), "{label}");
        assert!(
            !label.contains("[7]"),
            "a disabled field is not offered: {label}"
        );
        assert!(cannot_type_into(&p, "6").is_some());
    }

    #[test]
    fn fields_and_roles_the_rule_does_not_know_are_let_through() {
        let p = FakePage::new(
            "https://a.test/",
            [
                el("1", "inp", "Name"),
                el("2", "sel", "Country"),
                el("3", "slider", "Volume"),
                el("6", "gridcell", "A1"),
            ],
        );
        for id in ["1", "2", "3", "6", "99"] {
            assert_eq!(cannot_type_into(&p, id), None, "element {id}");
        }
        let text = FakePage::new("https://a.test/", [el("4", "el", "Notes")]);
        assert!(cannot_type_into(&text, "4")
            .expect("not editable")
            .contains("no field"));
    }
}
