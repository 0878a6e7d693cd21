//! A page's element ids and where each element is. A tree's are its node positions sorted by
//! id — no copy of any id, found by binary search; a DOM's map each id to its element, with the
//! ids template calls pass.

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

impl Ids {
    pub(super) fn of_tree(nodes: &Nodes) -> Self {
        // u32 holds every position: a tree has fewer nodes than its body has bytes.
        let mut pairs: Vec<(&str, u32)> = nodes.iter().zip(0u32..).map(|(n, k)| (n.i, k)).collect();
        // By id, then position: the first node of each id comes first.
        pairs.sort_unstable();
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
                    .binary_search_by(|k| nodes.get(*k as usize).map_or("", |n| n.i).cmp(id))
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
}
