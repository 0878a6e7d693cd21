//! A page's element ids and where each element is. A tree's are its node positions sorted by
//! id — no copy of any id, found by binary search; a DOM's map each id to its element, with the
//! ids template calls pass.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use super::{DomTree, Nodes, PageContent};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ids {
    /// A tree's: for each distinct id, the position of its first node, in id order.
    Sorted(Vec<u32>),
    /// A DOM's: each id's element; every id an action may use (template calls' too).
    Mapped {
        index: HashMap<String, usize>,
        ids: HashSet<String>,
    },
}

/// The order ids are kept and searched in: shorter first, then byte by byte. For the
/// extension's ids (backend node ids, digits) this is their numeric order, in which a page's
/// nodes mostly arrive already — so sorting them is a pass that finds them in order.
fn id_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

impl Ids {
    pub(super) fn of_tree(nodes: &Nodes) -> Self {
        // u32 holds every position: a tree has fewer nodes than its body has bytes.
        let mut pairs: Vec<(&str, u32)> = nodes.iter().zip(0u32..).map(|(n, k)| (n.i, k)).collect();
        // By id, then position: the first node of each id comes first.
        pairs.sort_unstable_by(|a, b| id_order(a.0, b.0).then(a.1.cmp(&b.1)));
        pairs.dedup_by(|later, first| later.0 == first.0);
        Ids::Sorted(pairs.into_iter().map(|(_, k)| k).collect())
    }

    pub(super) fn of_dom(tree: &DomTree, call_ids: Vec<String>) -> Self {
        let mut index = HashMap::new();
        for (k, _, id) in tree.elements() {
            index.entry(id.to_owned()).or_insert(k);
        }
        let mut ids: HashSet<String> = index.keys().cloned().collect();
        ids.extend(call_ids);
        Ids::Mapped { index, ids }
    }

    pub(super) fn position(&self, id: &str, content: &PageContent) -> Option<usize> {
        match (self, content) {
            (Ids::Sorted(sorted), PageContent::Tree(nodes)) => {
                let at = sorted
                    .binary_search_by(|k| id_order(nodes.get(*k as usize).map_or("", |n| n.i), id))
                    .ok()?;
                sorted.get(at).map(|k| *k as usize)
            }
            (Ids::Mapped { index, .. }, _) => index.get(id).copied(),
            _ => None,
        }
    }

    pub(super) fn contains(&self, id: &str, content: &PageContent) -> bool {
        match self {
            Ids::Sorted(_) => self.position(id, content).is_some(),
            Ids::Mapped { ids, .. } => ids.contains(id),
        }
    }

    /// Elements with an id, each id once.
    pub(super) fn elements(&self) -> usize {
        match self {
            Ids::Sorted(sorted) => sorted.len(),
            Ids::Mapped { index, .. } => index.len(),
        }
    }

    /// Ids an action may use.
    pub(super) fn count(&self) -> usize {
        match self {
            Ids::Sorted(sorted) => sorted.len(),
            Ids::Mapped { ids, .. } => ids.len(),
        }
    }

    pub(super) fn all(&self, content: &PageContent) -> HashSet<String> {
        match (self, content) {
            (Ids::Sorted(_), PageContent::Tree(nodes)) => {
                nodes.iter().map(|n| n.i.to_owned()).collect()
            }
            (Ids::Mapped { ids, .. }, _) => ids.clone(),
            _ => HashSet::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::page::{Page, TreeNode};

    #[test]
    fn a_tree_finds_the_first_node_of_each_id() {
        let nodes: Nodes = [
            ("b", "btn", "first b"),
            ("a", "link", "a"),
            ("b", "btn", "second b"),
            ("10", "inp", "ten"),
            ("1", "inp", "one"),
        ]
        .iter()
        .map(|(i, r, n)| TreeNode::new(i, r, n))
        .collect();
        let page = Page::from_tree(nodes, None);
        assert_eq!(page.position("b"), Some(0));
        assert_eq!(page.position("a"), Some(1));
        assert_eq!(page.position("10"), Some(3));
        assert_eq!(page.position("1"), Some(4));
        assert_eq!(page.position("c"), None);
        assert!(page.has_id("10") && !page.has_id("") && !page.has_id("B"));
        assert_eq!(page.element_count(), 4);
        assert_eq!(page.id_set().len(), 4);
    }

    #[test]
    fn every_id_of_a_tree_is_found_whatever_the_order_it_came_in() {
        // Numeric ids in document order, shuffled, with repeats, and ids of other forms.
        let mut ids: Vec<String> = (0..300).map(|k| (k * 7 % 1000).to_string()).collect();
        ids.extend(["a", "b10", "b9", "", "007", "7", "z", "10", "1"].map(String::from));
        ids.extend((0..300).rev().map(|k| (k * 3).to_string()));
        let nodes: Nodes = ids.iter().map(|i| TreeNode::new(i, "btn", "x")).collect();
        let page = Page::from_tree(nodes, None);
        for (k, id) in ids.iter().enumerate() {
            let first = ids.iter().position(|i| i == id);
            assert_eq!(page.position(id), first, "{id} at {k}");
        }
        for absent in ["9999", "b", "0070", "A", "-1"] {
            assert_eq!(page.position(absent), None, "{absent}");
        }
        let distinct: HashSet<&String> = ids.iter().collect();
        assert_eq!(page.element_count(), distinct.len());
    }
}
