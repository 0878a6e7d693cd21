//! Whether what an action did is what the instruction asked for, beyond "something changed"
//! (issue 52). The page changing after a click, or a value landing in the field it was typed
//! into, shows the action ran — not that it was the right one. A verdict of "worked" is only
//! given when nothing the instruction says contradicts the target; otherwise the verdict says
//! "unconfirmed" and names the mismatch, for the model to read.
//!
//! The model: an instruction names elements by their names ("press Login", "tick Lorem",
//! "the username "ada""). An action is **misdirected** when the instruction names elements of
//! the target's own kind and the target is not the one it names for this action:
//! - a value the instruction gives goes into the text field whose name the instruction writes
//!   next to it (within a few words); typed into another field the instruction also names (for
//!   another value), it is misdirected. A field the instruction does not name may be the right
//!   one in words the rule cannot read ("ship to 1 Main Street" into "Street address"): no
//!   opinion;
//! - a click on a box, radio, option, tab, button or link the instruction does not name, on a
//!   page where it names others of the same kind, is misdirected — unless the click brought
//!   something the page did not have (a new address, a section it opened, the next page of
//!   results): finding what the instruction names may take such steps, and the names are for
//!   what they reach. A click that only changed the state of what was there (a box ticked, a
//!   radio chosen, a dialog closed) is judged against the instruction.
//!
//! Where the instruction names nothing of the kind, or the value is not in it, there is no
//! opinion: an action the instruction does not describe (open a menu, expand a section) is
//! never held against the model. The rule only ever lowers a "worked" to "unconfirmed".

use super::facts::{ElementFacts, ElementSnapshot, PageFacts};
use super::outcome::ActionKind;

/// Names shorter than this are not looked for in an instruction (an "x" close button is,
/// when the instruction quotes it).
const MIN_NAME_CHARS: usize = 2;
/// Longest name looked for.
const MAX_NAME_CHARS: usize = 60;
/// Elements of a page looked at, at most.
const MAX_ELEMENTS: usize = 2_000;
/// How close to a value the instruction must write a field's name to give the value for it
/// ("the username "ada"", "from year 1995"); further off, the words are about something else.
const NEAR_CHARS: usize = 24;
/// Occurrences of a name or value in the instruction looked at, at most: distances are
/// compared pairwise, so an instruction repeating a short value and a field name thousands of
/// times would otherwise cost their product for each of the page's fields.
const MAX_PLACES: usize = 16;

/// Lower case, whitespace collapsed, without surrounding punctuation (a label's colon).
fn norm(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// Where `word` occurs in `text` with no letter or digit around it.
fn places(text: &str, word: &str) -> Vec<usize> {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    if word.is_empty() {
        return Vec::new();
    }
    text.match_indices(word)
        .filter(|(at, _)| {
            !alnum(text[..*at].chars().next_back())
                && !alnum(text[at + word.len()..].chars().next())
        })
        .map(|(at, _)| at)
        .take(MAX_PLACES)
        .collect()
}

/// Whether the instruction names an element called `name`.
fn named(query: &str, name: &str) -> bool {
    let n = norm(name);
    (MIN_NAME_CHARS..=MAX_NAME_CHARS).contains(&n.chars().count()) && !places(query, &n).is_empty()
}

/// The kind an element counts as, for "the instruction names others of its kind".
fn kind(role: &str) -> Option<&'static str> {
    Some(match role {
        "chk" | "switch" => "box",
        "radio" => "radio",
        "opt" => "option",
        "tab" => "tab",
        "btn" => "button",
        "link" => "link",
        "inp" | "sel" => "field",
        _ => return None,
    })
}

/// Why the action `kind` on `target` (as it was when decided) is not what the instruction
/// `query` asks for, on the page it left (`page`; `moved`: the address changed or the page
/// gained elements it did not have), or `None`.
pub fn misdirected(
    query: &str,
    action: &ActionKind<'_>,
    target: &ElementSnapshot,
    page: &dyn PageFacts,
    moved: bool,
) -> Option<String> {
    let query = norm(query);
    let t = target.facts();
    match action {
        ActionKind::SetValue(_, value) => wrong_field(&query, value, &t, page),
        ActionKind::Click(_) | ActionKind::Check(_) | ActionKind::Uncheck(_) if !moved => {
            unnamed_click(&query, &t, page)
        }
        _ => None,
    }
}

/// The field the instruction writes nearest to `value`, when it is not `target`.
fn wrong_field(
    query: &str,
    value: &str,
    target: &ElementFacts<'_>,
    page: &dyn PageFacts,
) -> Option<String> {
    let v = norm(value);
    let at = places(query, &v);
    if at.is_empty() || v.chars().count() > 200 {
        return None;
    }
    let distance = |name: &str| {
        let n = norm(name);
        let mut best: Option<usize> = None;
        for p in places(query, &n) {
            for a in &at {
                let d = if p < *a {
                    a.saturating_sub(p + n.len())
                } else {
                    p.saturating_sub(a + v.len())
                };
                best = Some(best.map_or(d, |b| b.min(d)));
            }
        }
        best
    };
    if !named(query, &target.name) {
        return None;
    }
    let fields = page
        .elements()
        .take(MAX_ELEMENTS)
        .filter(|e| e.role == "inp" && named(query, &e.name));
    let (nearest, _) = fields
        .filter_map(|e| Some((norm(&e.name), distance(&e.name)?)))
        .filter(|(_, d)| *d <= NEAR_CHARS)
        .min_by_key(|(_, d)| *d)?;
    let mine = norm(&target.name);
    (nearest != mine && !nearest.is_empty()).then(|| {
        format!(
            "the value went into \"{}\", but the instruction gives it for \"{nearest}\"",
            crate::text::single_line(&target.name, 60)
        )
    })
}

/// A click on an element of a kind the instruction names others of, not this one. A control
/// that shows or hides content (it is expanded or collapsed) is a way to what the instruction
/// names, never a choice of its own.
fn unnamed_click(query: &str, target: &ElementFacts<'_>, page: &dyn PageFacts) -> Option<String> {
    if target.has_state("expanded") || target.has_state("collapsed") {
        return None;
    }
    let k = kind(&target.role).filter(|k| *k != "field")?;
    if norm(&target.name).is_empty() || named(query, &target.name) {
        return None;
    }
    let others: Vec<String> = page
        .elements()
        .take(MAX_ELEMENTS)
        .filter(|e| e.id != target.id && kind(&e.role) == Some(k) && named(query, &e.name))
        .map(|e| format!("\"{}\"", crate::text::single_line(&e.name, 40)))
        .take(3)
        .collect();
    (!others.is_empty()).then(|| {
        format!(
            "the instruction names the {k} {}, not \"{}\", which was clicked",
            others.join(", "),
            crate::text::single_line(&target.name, 60)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    fn login() -> FakePage {
        FakePage::new(
            "https://a.test/login",
            [
                el("1", "inp", "Username"),
                el("2", "inp", "Password"),
                el("3", "btn", "Login"),
                el("4", "btn", "Cancel"),
                el("5", "chk", "Lorem"),
                el("6", "chk", "Ipsum"),
                el("7", "tab", "Section #1"),
                el("8", "tab", "Section #2").states("collapsed"),
                el("9", "tab", "Login").states("collapsed"),
            ],
        )
    }

    fn snap(page: &FakePage, id: &str) -> ElementSnapshot {
        page.element(id).expect("element").snapshot()
    }

    const Q: &str =
        "Enter the username \"ada\" and the password \"x1y2\" into the text fields, tick Lorem and press Login.";

    #[test]
    fn a_long_repetitive_instruction_is_read_in_bounded_work() {
        // "username ada password ada" 5 000 times: unbounded, each of the page's fields
        // compares 10 000 places of its name with 10 000 places of the value.
        let q = "username ada password ada ".repeat(5_000);
        assert_eq!(places(&q, "ada").len(), MAX_PLACES);
        let p = login();
        let verdict = misdirected(
            &q,
            &ActionKind::SetValue("1", "ada"),
            &snap(&p, "1"),
            &p,
            false,
        );
        assert_eq!(
            verdict, None,
            "the value is next to both names: no opinion is wrong"
        );
    }

    #[test]
    fn a_value_typed_into_the_field_the_instruction_gives_it_for_has_no_mismatch() {
        let p = login();
        let into = |id: &str, v: &str| {
            misdirected(Q, &ActionKind::SetValue(id, v), &snap(&p, id), &p, false)
        };
        assert_eq!(into("1", "ada"), None);
        assert_eq!(into("2", "x1y2"), None);
        let wrong = into("2", "ada").expect("the username typed as the password");
        assert!(
            wrong.contains("\"Password\"") && wrong.contains("\"username\""),
            "{wrong}"
        );
        assert!(into("1", "x1y2").is_some());
        // A value the instruction does not hold: no opinion.
        assert_eq!(into("2", "something else"), None);
        // A field named far from the value is not the one the value is for; a field the
        // instruction does not name may be the right one in other words.
        let q = "Search for surreal movies directed by Baxter from year 1995.";
        let form = FakePage::new(
            "https://a.test/",
            [
                el("1", "inp", "Genre"),
                el("2", "inp", "Year"),
                el("3", "sel", "Shipping"),
                el("4", "inp", "Street address"),
            ],
        );
        let into = |q: &str, id: &str, v: &str| {
            misdirected(
                q,
                &ActionKind::SetValue(id, v),
                &snap(&form, id),
                &form,
                false,
            )
        };
        assert_eq!(into(q, "1", "surreal"), None);
        assert_eq!(into(q, "2", "1995"), None);
        assert_eq!(into(q, "1", "1995"), None, "Genre is not named: no opinion");
        let both = "Type the genre \"surreal\" and the year \"1995\".";
        assert!(into(both, "2", "surreal").is_some_and(|w| w.contains("\"genre\"")));
        assert_eq!(into(both, "1", "surreal"), None);
        let ship = "Check out with shipping to 1 Main Street, Arlington.";
        assert_eq!(into(ship, "4", "1 Main Street, Arlington"), None);
    }

    #[test]
    fn a_click_on_what_the_instruction_names_or_on_a_kind_it_does_not_name_passes() {
        let p = login();
        let click = |id: &str, moved: bool| {
            misdirected(Q, &ActionKind::Click(id), &snap(&p, id), &p, moved)
        };
        assert_eq!(click("3", false), None, "Login is named");
        assert_eq!(click("5", false), None, "Lorem is named");
        assert_eq!(
            click("8", false),
            None,
            "a section opened on the way is no choice"
        );
        assert!(
            click("7", false).is_some(),
            "a tab, where the instruction names the tab Login"
        );
        let box_ = click("6", false).expect("a box the instruction does not name");
        assert!(
            box_.contains("\"Lorem\"") && box_.contains("\"Ipsum\""),
            "{box_}"
        );
        assert!(click("4", false).is_some(), "Cancel, where Login is named");
        assert_eq!(
            click("4", true),
            None,
            "it brought something new: no opinion"
        );
    }

    #[test]
    fn instructions_that_name_nothing_have_no_opinion() {
        let p = login();
        for q in ["Sign in.", "Do the thing", ""] {
            for id in ["1", "2", "3", "4", "5", "6", "7", "8", "9"] {
                let action = if matches!(id, "1" | "2") {
                    ActionKind::SetValue(id, "ada")
                } else {
                    ActionKind::Click(id)
                };
                assert_eq!(
                    misdirected(q, &action, &snap(&p, id), &p, false),
                    None,
                    "{q} {id}"
                );
            }
        }
    }
}
