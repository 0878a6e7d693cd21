//! The page model seen through the domain's [`PageFacts`]: each element's short role, name,
//! value and states, from a tree node as the extension sent it or from a DOM element's tag and
//! attributes.

use std::borrow::Cow;

use super::{DomNode, Page, PageContent, TreeNode};
use crate::domain::facts::{ElementFacts, Holder, PageFacts};

/// A page at a URL.
pub struct PageView<'a> {
    pub page: &'a Page,
    pub url: &'a str,
}

fn attr<'a>(attrs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Whether the page lets the user type into an element of any tag (`contenteditable`).
fn editable(attrs: &[(String, String)]) -> bool {
    attr(attrs, "contenteditable").is_some_and(|v| !v.eq_ignore_ascii_case("false"))
}

/// The tree's short role for a DOM element.
fn dom_role(tag: &str, attrs: &[(String, String)]) -> &'static str {
    let by_aria = match attr(attrs, "role").unwrap_or("") {
        "button" => Some("btn"),
        "link" => Some("link"),
        "checkbox" | "switch" | "menuitemcheckbox" => Some("chk"),
        "radio" => Some("radio"),
        "tab" => Some("tab"),
        // A menu's radio item applies as it is picked, like any of its items.
        "menuitem" | "menuitemradio" => Some("menu"),
        "combobox" | "listbox" => Some("sel"),
        "textbox" | "searchbox" => Some("inp"),
        "option" => Some("opt"),
        _ => None,
    };
    if let Some(r) = by_aria {
        return r;
    }
    // An element the page lets the user type into is a field, whatever its tag.
    if editable(attrs) {
        return "inp";
    }
    match tag {
        "a" => "link",
        "button" => "btn",
        "select" => "sel",
        "textarea" => "inp",
        "option" => "opt",
        "input" => match attr(attrs, "type").unwrap_or("text") {
            "checkbox" => "chk",
            "radio" => "radio",
            "submit" | "button" | "reset" | "image" => "btn",
            _ => "inp",
        },
        _ => "el",
    }
}

fn dom_states(attrs: &[(String, String)]) -> String {
    let mut states = Vec::new();
    for (attr_name, state) in [
        ("checked", "checked"),
        ("selected", "selected"),
        ("disabled", "disabled"),
    ] {
        if attr(attrs, attr_name).is_some() {
            states.push(state);
        }
    }
    for (attr_name, state) in [
        ("aria-checked", "checked"),
        ("aria-selected", "selected"),
        ("aria-expanded", "expanded"),
        ("aria-pressed", "pressed"),
    ] {
        if attr(attrs, attr_name) == Some("true") && !states.contains(&state) {
            states.push(state);
        }
    }
    states.join(",")
}

/// A tree node is its own facts.
fn tree_facts(n: TreeNode<'_>) -> ElementFacts<'_> {
    ElementFacts {
        id: n.i,
        role: Cow::Borrowed(n.r),
        name: Cow::Borrowed(n.n),
        value: n.v.map(Cow::Borrowed),
        states: Cow::Borrowed(n.s.unwrap_or("")),
        href: None,
        input_type: None,
        attrs: &[],
    }
}

/// Most characters of a dialog's or form's text read.
const HOLDER_CHARS: usize = 400;
/// Tree nodes looked back over for the dialog that holds an element.
const DIALOG_REACH: usize = 30;
/// Nodes looked back at for the texts that label a control (a heading or a row's words), and
/// the characters kept of each.
const LABEL_REACH: usize = 40;
const LABEL_CHARS: usize = 200;

/// Whether an element's `value` is what was typed into it (a text, password or number
/// field) rather than the page's own words (a button's caption, a box's or option's value).
fn typed_into(tag: &str, attrs: &[(String, String)]) -> bool {
    tag == "input"
        && !matches!(
            attr(attrs, "type").map(str::to_ascii_lowercase).as_deref(),
            Some("button" | "submit" | "reset" | "image" | "checkbox" | "radio" | "hidden")
        )
}

impl PageView<'_> {
    fn facts_at(&self, at: usize) -> Option<ElementFacts<'_>> {
        match &self.page.content {
            PageContent::Tree(nodes) => nodes.get(at).map(tree_facts),
            PageContent::Dom { tree, .. } => match tree.nodes.get(at)? {
                DomNode::Element {
                    tag,
                    id: Some(id),
                    attrs,
                    ..
                } => Some(ElementFacts {
                    id,
                    role: Cow::Borrowed(dom_role(tag, attrs)),
                    // A text area's (or an editable element's) text is what was typed into it,
                    // a field's value too.
                    name: Cow::Owned(if tag == "textarea" {
                        tree.attribute_label(at, 100)
                    } else if typed_into(tag, attrs) {
                        tree.field_label(at, 100)
                    } else {
                        tree.label_of(at, 100)
                    }),
                    value: if tag == "textarea" || editable(attrs) {
                        Some(tree.text_of(at))
                            .filter(|t| !t.is_empty())
                            .map(Cow::Borrowed)
                    } else if tag == "select" {
                        // A list holds the option it shows.
                        tree.selected_option(at).map(Cow::Owned)
                    } else {
                        attr(attrs, "value").map(Cow::Borrowed)
                    },
                    states: Cow::Owned(dom_states(attrs)),
                    href: attr(attrs, "href"),
                    // A text area and an editable element take lines of text (`textarea`).
                    input_type: match tag.as_str() {
                        "input" => attr(attrs, "type"),
                        "textarea" => Some("textarea"),
                        _ if editable(attrs) => Some("textarea"),
                        _ => None,
                    },
                    attrs,
                }),
                _ => None,
            },
        }
    }
}

impl PageFacts for PageView<'_> {
    fn url(&self) -> &str {
        self.url
    }

    fn hash(&self) -> &str {
        &self.page.hash
    }

    fn element_count(&self) -> usize {
        self.page.element_count()
    }

    fn element(&self, id: &str) -> Option<ElementFacts<'_>> {
        self.facts_at(self.page.position(id)?)
    }

    fn lower_text(&self) -> Option<&str> {
        self.page.lower_text()
    }

    fn option_text(&self, select: &str, value: &str) -> Option<String> {
        let PageContent::Dom { tree, .. } = &self.page.content else {
            return None;
        };
        tree.option_text(self.page.position(select)?, value)
    }

    fn holder(&self, id: &str) -> Option<Holder> {
        let at = self.page.position(id)?;
        let (text, dialog) = match &self.page.content {
            PageContent::Dom { tree, .. } => {
                let (holder, end, dialog) = tree.holder_around(at)?;
                (tree.holder_text(holder, end, HOLDER_CHARS), dialog)
            }
            // The tree has no headings; a dialog node, when the client sends one, names it.
            PageContent::Tree(nodes) => (at.saturating_sub(DIALOG_REACH)..at)
                .rev()
                .filter_map(|k| nodes.get(k))
                .find(|n| matches!(n.r, "dialog" | "alertdialog"))
                .map(|n| (n.n.to_owned(), true))?,
        };
        (!text.trim().is_empty()).then_some(Holder { text, dialog })
    }

    fn texts_before(&self, id: &str) -> Vec<String> {
        let Some(at) = self.page.position(id) else {
            return Vec::new();
        };
        let texts = match &self.page.content {
            // The node before, unless it is a switch or a choice of its own: its name is its
            // own setting's, not a label of the next one.
            PageContent::Tree(nodes) => (at.checked_sub(1).and_then(|k| nodes.get(k)))
                .filter(|n| !matches!(n.r, "chk" | "checkbox" | "switch" | "toggle" | "radio"))
                .map(|n| vec![n.n])
                .unwrap_or_default(),
            PageContent::Dom { tree, .. } => tree.texts_before(at, LABEL_REACH),
        };
        (texts.into_iter().filter(|t| !t.trim().is_empty()))
            .map(|t| crate::text::truncate_chars(t.trim(), LABEL_CHARS))
            .collect()
    }

    fn form_submits(&self, field: &str) -> Option<Vec<ElementFacts<'_>>> {
        let PageContent::Dom { tree, .. } = &self.page.content else {
            return None;
        };
        let at = self.page.position(field)?;
        let (form, end) = tree.form_around(at)?;
        // The default button first (the first submit button in the form, as implicit
        // submission presses it), then the other buttons, then links.
        let mut submits = Vec::new();
        let mut others = Vec::new();
        for k in form + 1..=end {
            let Some(e) = self.facts_at(k) else { continue };
            let submit = match &tree.nodes[k] {
                DomNode::Element { tag, attrs, .. } => match tag.as_str() {
                    "button" => !matches!(attr(attrs, "type"), Some("button" | "reset")),
                    "input" => matches!(attr(attrs, "type"), Some("submit" | "image")),
                    _ => false,
                },
                DomNode::Text(_) => false,
            };
            if submit {
                submits.push(e);
            } else if matches!(&*e.role, "btn" | "link") {
                others.push(e);
            }
        }
        submits.extend(others);
        Some(submits)
    }

    fn elements(&self) -> Box<dyn Iterator<Item = ElementFacts<'_>> + '_> {
        match &self.page.content {
            PageContent::Tree(nodes) => Box::new(nodes.iter().map(tree_facts)),
            PageContent::Dom { tree, .. } => {
                Box::new(tree.elements().filter_map(|(k, _, _)| self.facts_at(k)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pressed_card_is_pressed_and_what_is_written_in_an_editable_box_is_its_value() {
        let page = Page::from_dom(
            r#"<button id="1" aria-pressed="true">Plan S · $9/mo</button><div id="2" contenteditable="true" aria-label="Your review">Great sound.</div><textarea id="3">Fast delivery.</textarea>"#,
        )
        .expect("page");
        let view = PageView {
            page: &page,
            url: "https://a.com/",
        };
        assert!(view.element("1").expect("card").has_state("pressed"));
        for (id, text) in [("2", "Great sound."), ("3", "Fast delivery.")] {
            let e = view.element(id).expect("box");
            assert_eq!(e.input_type, Some("textarea"), "{id}");
            assert_eq!(e.value.as_deref(), Some(text), "{id}");
        }
    }

    #[test]
    fn dom_elements_get_roles_states_and_values_like_tree_nodes() {
        let page = Page::from_dom(
            r#"<a id="1" href="/next">Next page</a><input id="2" type="checkbox" checked><input id="3" type="password" placeholder="Password"><div id="4" role="button" aria-expanded="true">Menu</div><input id="5" value="Ada">"#,
        )
        .expect("page");
        let view = PageView {
            page: &page,
            url: "https://a.com/",
        };
        let link = view.element("1").expect("link");
        assert_eq!(
            (link.role.as_ref(), link.name.as_ref(), link.href),
            ("link", "Next page", Some("/next"))
        );
        let chk = view.element("2").expect("checkbox");
        assert_eq!(chk.role, "chk");
        assert!(chk.has_state("checked"));
        let pw = view.element("3").expect("password");
        assert_eq!(
            (pw.role.as_ref(), pw.input_type, pw.name.as_ref()),
            ("inp", Some("password"), "Password")
        );
        let menu = view.element("4").expect("menu");
        assert_eq!(menu.role, "btn");
        assert!(menu.has_state("expanded"));
        assert_eq!(
            view.element("5")
                .and_then(|e| e.value.map(|v| v.into_owned()))
                .as_deref(),
            Some("Ada")
        );
        assert_eq!(view.elements().count(), 5);
        assert_eq!(view.element_count(), 5);
        assert!(view.element("9").is_none());
    }

    fn view_at<'p>(page: &'p Page, url: &'p str) -> PageView<'p> {
        PageView { page, url }
    }

    /// A menu's checkbox item is a box; its radio item is a menu item (it applies as picked).
    #[test]
    fn a_menus_checkbox_item_is_a_box_and_its_radio_item_a_menu_item() {
        let page = Page::from_dom(
            r#"<div role="menu"><div id="1" role="menuitemcheckbox" aria-checked="true">Bold</div><div id="2" role="menuitemradio">Owner</div><div id="3" role="menuitem">Copy</div></div>"#,
        )
        .expect("page");
        let view = view_at(&page, "https://a.com/menu");
        let role = |id: &str| view.element(id).map(|e| e.role.into_owned());
        assert_eq!(role("1").as_deref(), Some("chk"));
        assert!(view.element("1").is_some_and(|e| e.has_state("checked")));
        assert_eq!(role("2").as_deref(), Some("menu"));
        assert_eq!(role("3").as_deref(), Some("menu"));
    }

    #[test]
    fn a_dom_list_holds_the_option_it_shows() {
        let page = Page::from_dom(
            r#"<select id="1"><option>Restricted</option><option selected>Anyone with the link</option></select><select id="2"><option value="v">Viewer</option><option>Editor</option></select><select id="3"></select>"#,
        )
        .expect("page");
        let view = PageView {
            page: &page,
            url: "https://a.com/",
        };
        let value = |id: &str| {
            view.element(id)
                .and_then(|e| e.value.map(|v| v.into_owned()))
        };
        assert_eq!(value("1").as_deref(), Some("Anyone with the link"));
        assert_eq!(value("2").as_deref(), Some("Viewer"));
        assert_eq!(value("3"), None);
        assert_eq!(view.option_text("2", "v").as_deref(), Some("Viewer"));
    }

    #[test]
    fn what_a_dom_page_lets_the_user_type_into_is_a_field_and_nothing_else_is() {
        let page = Page::from_dom(
            r#"<label id="1">Name:</label><div id="2" contenteditable="true">Draft</div><p id="3" contenteditable="false">Fixed</p><h2 id="4">Title</h2><textarea id="5"></textarea>"#,
        )
        .expect("page");
        let view = PageView {
            page: &page,
            url: "https://a.com/",
        };
        let roles: Vec<String> = view.elements().map(|e| e.role.into_owned()).collect();
        assert_eq!(roles, ["el", "inp", "el", "el", "inp"]);
        let cannot = |id: &str| crate::domain::fit::cannot_type_into(&view, id);
        assert!(cannot("1").is_some_and(|w| w.contains("[2] inp") && w.contains("[5] inp")));
        assert!(cannot("4").is_some());
        assert_eq!((cannot("2"), cannot("5")), (None, None));
    }

    #[test]
    fn what_is_typed_into_a_field_is_not_its_name() {
        let page = Page::from_dom(
            r#"<input id="1" type="password" value="hunter2-secret"><input id="2" value="Ada Lovelace" name="full_name"><input id="3" type="submit" value="Sign in"><input id="4" type="Radio" value="express"><input id="5" type="email" value="ada@example.com" aria-label="Email">"#,
        )
        .expect("page");
        let view = PageView {
            page: &page,
            url: "https://a.com/",
        };
        let name = |id: &str| view.element(id).map(|e| e.name.into_owned());
        assert_eq!(name("1").as_deref(), Some(""));
        assert_eq!(name("2").as_deref(), Some("full_name"));
        assert_eq!(name("3").as_deref(), Some("Sign in"));
        assert_eq!(name("4").as_deref(), Some("express"));
        assert_eq!(name("5").as_deref(), Some("Email"));
        // The value is still the field's value.
        assert_eq!(
            view.element("1")
                .and_then(|e| e.value.map(|v| v.into_owned()))
                .as_deref(),
            Some("hunter2-secret")
        );
    }

    #[test]
    fn tree_nodes_are_their_own_facts() {
        let nodes = [
            TreeNode {
                s: Some("disabled"),
                ..TreeNode::new("10", "btn", "Press me")
            },
            TreeNode {
                v: Some("shoes"),
                ..TreeNode::new("11", "inp", "Search")
            },
        ];
        let page = Page::from_tree(nodes.into_iter().collect(), None);
        assert_eq!(page.skeleton().len(), 2);
        let view = PageView {
            page: &page,
            url: "https://a.com/",
        };
        assert!(view.element("10").expect("btn").has_state("disabled"));
        assert_eq!(
            view.element("11")
                .and_then(|e| e.value.map(|v| v.into_owned()))
                .as_deref(),
            Some("shoes")
        );
        assert_eq!(view.elements().count(), 2);
    }
}
