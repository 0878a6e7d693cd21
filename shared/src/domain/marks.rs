//! Which elements are new since the last page: each element's role and name hashed to 16 bits
//! and kept with the task (at most [`MAX_ELEMENTS`], about 4 KB), so the next request can
//! mark the elements it did not have (`*[id]` in the prompt) — a dialog that opened, the
//! suggestions under a field, the message a submit brought. Only a page that mostly stayed
//! the same gets marks: after a navigation everything is new, and nothing is marked.
//!
//! 16 bits: an element is missed as new when another element of the last page shares its
//! hash, about 3 % of the time on a page of 2 000 elements; a mark is a hint, never a rule.

use base64::Engine;

use super::facts::PageFacts;

/// Elements hashed per page at most.
pub const MAX_ELEMENTS: usize = 2_000;
/// Elements marked new at most: more than this (or than half the page) is a new page.
pub const MAX_NEW: usize = 40;

/// The 16-bit hash of a role and name (FNV-1a, folded).
fn hash(role: &str, name: &str) -> u16 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let name = crate::text::single_line(name, 100).to_lowercase();
    for b in role.bytes().chain([0u8]).chain(name.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) as u16
}

/// The page's element hashes, sorted and without repeats.
pub fn of(page: &dyn PageFacts) -> Vec<u16> {
    let mut all: Vec<u16> = page
        .elements()
        .take(MAX_ELEMENTS)
        .map(|e| hash(&e.role, &e.name))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The hashes as kept with the task.
pub fn encode(marks: &[u16]) -> String {
    let bytes: Vec<u8> = marks.iter().flat_map(|m| m.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes)
}

/// The hashes kept with the task (none when the text is not what [`encode`] wrote).
pub fn decode(text: &str) -> Vec<u16> {
    let Ok(bytes) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(text) else {
        return Vec::new();
    };
    let mut marks: Vec<u16> = bytes
        .chunks_exact(2)
        .take(MAX_ELEMENTS)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    marks.sort_unstable();
    marks
}

/// Whether `page` has an element the last page (`before`, its sorted hashes) did not — however
/// many (a new page has them all); `false` without a last page.
pub fn gained(page: &dyn PageFacts, before: &[u16]) -> bool {
    !before.is_empty()
        && page
            .elements()
            .take(MAX_ELEMENTS)
            .any(|e| before.binary_search(&hash(&e.role, &e.name)).is_err())
}

/// Whether the last page (`before`, its sorted hashes) had an element `page` no longer has (a
/// dialog or banner closed); `false` without a last page.
pub fn lost(page: &dyn PageFacts, before: &[u16]) -> bool {
    if before.is_empty() {
        return false;
    }
    let mut now: Vec<u16> = (page.elements().take(MAX_ELEMENTS))
        .map(|e| hash(&e.role, &e.name))
        .collect();
    now.sort_unstable();
    before.iter().any(|h| now.binary_search(h).is_err())
}

/// The ids of `page`'s elements that the last page (`before`, its sorted hashes) did not have,
/// in page order; none without a last page, or when most of the page is new.
pub fn new_ids(page: &dyn PageFacts, before: &[u16]) -> Vec<String> {
    if before.is_empty() {
        return Vec::new();
    }
    let mut total = 0;
    let mut new = Vec::new();
    for e in page.elements().take(MAX_ELEMENTS) {
        total += 1;
        if before.binary_search(&hash(&e.role, &e.name)).is_err() {
            if new.len() == MAX_NEW {
                return Vec::new();
            }
            new.push(e.id.to_owned());
        }
    }
    if new.len() * 2 > total {
        return Vec::new();
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    fn form(extra: &[(&str, &str, &str)]) -> FakePage {
        let mut els = vec![
            el("1", "inp", "City"),
            el("2", "btn", "Search"),
            el("3", "link", "Home"),
            el("4", "link", "Help"),
        ];
        els.extend(extra.iter().map(|(i, r, n)| el(i, r, n)));
        FakePage::new("https://a.com/", els)
    }

    #[test]
    fn what_appeared_on_a_page_that_stayed_is_new_and_a_new_page_marks_nothing() {
        let before = decode(&encode(&of(&form(&[]))));
        assert_eq!(before, of(&form(&[])), "kept and read back");
        let with_suggestions = form(&[("9", "option", "Paris"), ("10", "option", "Parma")]);
        assert_eq!(new_ids(&with_suggestions, &before), ["9", "10"]);
        // Ids do not matter, roles and names do.
        let renumbered = FakePage::new(
            "https://a.com/",
            [el("7", "inp", "CITY"), el("8", "btn", "Search")],
        );
        assert!(new_ids(&renumbered, &before).is_empty());
        let elsewhere = FakePage::new(
            "https://b.com/",
            [
                el("1", "link", "News"),
                el("2", "link", "Sport"),
                el("3", "btn", "Search"),
            ],
        );
        assert!(
            new_ids(&elsewhere, &before).is_empty(),
            "mostly new: a new page"
        );
        assert!(new_ids(&with_suggestions, &[]).is_empty(), "no last page");
        assert!(decode("not base64 at all!").is_empty());
        // Whether anything was gained: a new page counts, the same elements do not.
        assert!(gained(&with_suggestions, &before) && gained(&elsewhere, &before));
        assert!(!gained(&renumbered, &before) && !gained(&form(&[]), &before));
        assert!(!gained(&with_suggestions, &[]), "no last page");
        // Whether anything went: a banner closed counts, the same or more elements do not.
        let with_banner = decode(&encode(&of(&form(&[("9", "btn", "Accept all")]))));
        assert!(lost(&form(&[]), &with_banner));
        assert!(!lost(&form(&[("9", "btn", "Accept all")]), &with_banner));
        assert!(!lost(&with_suggestions, &before) && !lost(&renumbered, &[]));
    }

    #[test]
    fn marks_are_bounded_on_huge_pages() {
        let els: Vec<_> = (0..10_000)
            .map(|k| el(&k.to_string(), "link", &format!("Item {k}")))
            .collect();
        let big = FakePage::new("https://a.com/", els);
        let marks = of(&big);
        assert!(marks.len() <= MAX_ELEMENTS);
        assert!(encode(&marks).len() <= MAX_ELEMENTS * 3);
        let mut half: Vec<_> = (0..1_000)
            .map(|k| el(&k.to_string(), "link", &format!("Item {k}")))
            .collect();
        half.extend((0..100).map(|k| el(&format!("n{k}"), "btn", &format!("New {k}"))));
        let grown = FakePage::new("https://a.com/", half);
        assert!(
            new_ids(&grown, &marks).is_empty(),
            "more than {MAX_NEW} new"
        );
    }
}
