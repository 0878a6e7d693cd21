//! What a re-ask adds after a refused answer (issue 52): enough for a model to write the
//! action it meant, never a push to another one. An id that is not on the page is most often
//! a near miss (a digit off, an id from the last page): the elements whose ids are nearest to
//! it are named, with the grammar written out on one of them and the last action that ran.
//! Nothing here tells the model to act on something else — a refusal is about the answer's
//! form, and what to do is still the model's.

use super::facts::{ElementFacts, PageFacts};

/// Elements named as the nearest to an id not on the page, at most.
const NEAREST: usize = 5;
/// Elements of a page looked at, at most.
const MAX_ELEMENTS: usize = 2_000;

/// The help for a refused answer: `missing` is the element id it named when the page does not
/// have it; `last_ran` the task's last browser action.
pub fn help(missing: Option<&str>, page: &dyn PageFacts, last_ran: Option<&str>) -> String {
    let mut parts = Vec::new();
    let near = missing.map(|id| nearest(page, id)).unwrap_or_default();
    if let Some(id) = missing {
        if !near.is_empty() {
            let list: Vec<String> = near.iter().map(|e| e.brief(50)).collect();
            parts.push(format!(
                "There is no element {} on this page; the ids nearest to it are {}",
                crate::text::single_line(id, 40),
                list.join(", ")
            ));
        }
    }
    let example = near.first().cloned().or_else(|| page.elements().next());
    if let Some(e) = example {
        let id = crate::text::single_line(e.id, 40);
        // Written with the verb its kind of element takes: a model copies what it is shown.
        let call = match e.role.as_ref() {
            "inp" => format!("setValue({id}, \"text\")"),
            "sel" => format!("selectOption({id}, \"option\")"),
            _ => format!("click({id})"),
        };
        parts.push(format!(
            "Write the action exactly as the grammar has it, with the id in brackets at the start of a line of the page: {call}"
        ));
    }
    if let Some(last) = last_ran {
        parts.push(format!(
            "The last action that ran was {}",
            crate::text::single_line(last, 160)
        ));
    }
    parts.join(". ")
}

/// The elements whose ids are nearest to `id`: numerically when both are numbers (the
/// extension's ids are numbers in page order), otherwise none.
fn nearest<'a>(page: &'a dyn PageFacts, id: &str) -> Vec<ElementFacts<'a>> {
    let Ok(want) = id.trim().parse::<u64>() else {
        return Vec::new();
    };
    let mut all: Vec<(u64, ElementFacts<'a>)> = page
        .elements()
        .take(MAX_ELEMENTS)
        .filter_map(|e| Some((e.id.parse::<u64>().ok()?.abs_diff(want), e)))
        .collect();
    all.sort_by_key(|(d, _)| *d);
    all.truncate(NEAREST);
    all.into_iter().map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    fn page() -> FakePage {
        FakePage::new(
            "https://a.test/",
            [
                el("12", "inp", "Name"),
                el("13", "btn", "Submit"),
                el("40", "link", "Help"),
            ],
        )
    }

    #[test]
    fn an_id_not_on_the_page_gets_its_nearest_ids_the_grammar_and_the_last_action() {
        let h = help(Some("14"), &page(), Some("setValue(12, \"Ada\")"));
        assert!(
            h.starts_with("There is no element 14 on this page; the ids nearest to it are [13] btn \"Submit\", [12] inp \"Name\", [40] link \"Help\""),
            "{h}"
        );
        assert!(
            h.contains("of the page: click(13)."),
            "a button is clicked: {h}"
        );
        assert!(
            h.ends_with("The last action that ran was setValue(12, \"Ada\")"),
            "{h}"
        );
        let h = help(Some("11"), &page(), None);
        assert!(
            h.contains("of the page: setValue(12, \"text\")"),
            "a field typed into: {h}"
        );
    }

    #[test]
    fn other_refusals_get_the_grammar_on_a_real_id_and_nothing_is_invented() {
        let h = help(None, &page(), None);
        assert!(
            h.starts_with("Write the action exactly") && h.contains("setValue(12, \"text\")"),
            "{h}"
        );
        assert!(!h.contains("There is no element"), "{h}");
        let h = help(Some("a-7"), &page(), None);
        assert!(!h.contains("nearest"), "no order to go by: {h}");
        let empty = FakePage::new("https://a.test/", []);
        assert_eq!(help(Some("3"), &empty, None), "");
    }
}
