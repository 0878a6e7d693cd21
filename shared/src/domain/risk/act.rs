//! What a control, a link, a chosen option, an address or a key press would do. A control
//! (button, menu item, switch, an element the page made clickable) performs the act its names
//! say; a link only when its name is the act itself ("Pay now", a lone "Delete") or its address
//! performs it — a link that reads like a question, an article title or a help page is
//! reading. Options, tabs and fields are choosing, never acting. A generic "Confirm" or
//! "Submit" commits on a payment or transfer page, or in a form asking for card details.

use std::cell::OnceCell;

use super::field::{field_kind, Sensitive};
use super::fold::{variants, Folded};
use super::lexicon::{hits, Act, Force, Hit, Kind};
use super::{label, ElementFacts, PageFacts, Risk, RiskKind, RiskPatterns};

/// Elements looked at after a field for the control that Enter in it submits (the extension's
/// tree says nothing of forms).
const FORM_REACH: usize = 25;
/// Elements looked at for card fields on a page.
const CARD_SCAN: usize = 2_000;
/// Elements before and after a "Send" or "Transfer" looked at for what it would send.
const COMPOSER_REACH: usize = 20;
/// Most query pairs of an address read (more than an action's text can hold).
const MAX_QUERY_PAIRS: usize = 2_000;
/// Longest name a generic "Confirm" is read in (words).
const GENERIC_WORDS: usize = 4;
/// Names longer than this (words) are titles when they are links.
const TITLE_WORDS: usize = 7;

/// How an element is used, from its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Control,
    Link,
    /// An option, tab or radio: choosing among several.
    Choice,
    Field,
}

fn class_of(role: &str) -> Class {
    match role {
        "link" | "a" => Class::Link,
        "opt" | "option" | "radio" | "tab" | "treeitem" | "tree" | "row" | "cell" | "gridcell"
        | "listitem" | "heading" => Class::Choice,
        "inp" | "sel" | "textbox" | "combobox" | "searchbox" | "slider" | "spin" | "spinbutton"
        | "textarea" | "select" | "input" => Class::Field,
        _ => Class::Control,
    }
}

/// One name of an element as read: its raw text and every folded reading with its phrases.
struct Reading<'t> {
    raw: &'t str,
    folded: Folded,
    hits: Vec<Hit>,
}

/// The gate's view of one page.
pub struct Scope<'a> {
    pub patterns: &'a RiskPatterns,
    pub page: &'a dyn PageFacts,
    cards: OnceCell<bool>,
    shop: OnceCell<Option<Kind>>,
}

impl<'a> Scope<'a> {
    pub fn new(patterns: &'a RiskPatterns, page: &'a dyn PageFacts) -> Self {
        Self {
            patterns,
            page,
            cards: OnceCell::new(),
            shop: OnceCell::new(),
        }
    }

    /// Every reading of `text` with the phrases of the kinds `want`ed.
    fn read<'t>(&self, text: &'t str, want: impl Fn(Kind) -> bool + Copy) -> Vec<Reading<'t>> {
        variants(text)
            .into_iter()
            .map(|folded| Reading {
                raw: text,
                hits: hits(self.patterns.phrases(), &folded, want),
                folded,
            })
            .collect()
    }

    /// Whether the page holds a field for card details.
    pub fn has_cards(&self) -> bool {
        *self
            .cards
            .get_or_init(|| page_asks_for_cards(self.patterns, self.page))
    }

    pub fn page_is(&self, kind: Kind) -> bool {
        match kind {
            Kind::PayPage | Kind::CartPage => self.shop_page() == Some(kind),
            _ => address_has(self, self.page.url(), kind),
        }
    }

    /// Whether the page is a cart or a payment page, by whichever its address names last
    /// (`/checkout/cart` is a cart, `/cart/checkout` the payment).
    fn shop_page(&self) -> Option<Kind> {
        *self.shop.get_or_init(|| {
            let (host, path, _) = split_address(self.page.url());
            let text = format!("{host}/{path}");
            self.read(&text, |k| matches!(k, Kind::PayPage | Kind::CartPage))
                .iter()
                .flat_map(|r| r.hits.iter())
                .max_by_key(|h| (h.end, h.start))
                .map(|h| h.kind)
        })
    }

    /// The act of clicking `el` (or switching it, for `check`), if it performs one.
    pub fn element(&self, el: &ElementFacts<'_>, switching: bool) -> Option<RiskKind> {
        let class = match class_of(&el.role) {
            // A switch or checkbox performs what it says when it is turned.
            Class::Choice | Class::Field if switching => Class::Control,
            c => c,
        };
        self.element_as(el, class)
    }

    fn element_as(&self, el: &ElementFacts<'_>, class: Class) -> Option<RiskKind> {
        if matches!(class, Class::Choice | Class::Field) {
            return None;
        }
        let link = class == Class::Link;
        if link
            && el
                .href
                .is_some_and(|h| address_has(self, h, Kind::InfoHref))
        {
            return None;
        }
        let names = names_of(el);
        let agreeing = matches!(&*el.role, "chk" | "checkbox" | "switch")
            && names.iter().any(|n| {
                self.read(n, |k| k == Kind::Agree)
                    .iter()
                    .any(|r| !r.hits.is_empty())
            });
        if agreeing {
            // Agreeing to terms acts on nothing by itself.
            return None;
        }
        let readings: Vec<Reading<'_>> = names
            .iter()
            .flat_map(|n| {
                self.read(n, |k| {
                    !matches!(
                        k,
                        Kind::Secret
                            | Kind::Card
                            | Kind::CardContext
                            | Kind::NotSecret
                            | Kind::Negation
                    )
                })
            })
            .collect();
        if link && readings.iter().any(informational) {
            return None;
        }
        let question = link && readings.iter().any(asks);
        let mut best: Option<(Act, Force)> = None;
        let on_cart = self.page_is(Kind::CartPage);
        for r in &readings {
            for (act, force, hit) in acts(r) {
                // A cart page leads to the checkout: buying there pays only beside card fields
                // or a price (the act itself still counts), and removing an item is undone by
                // adding it again.
                if on_cart && act == Act::Delete && force == Force::Verb {
                    continue;
                }
                let force = if on_cart && act == Act::Pay && force == Force::Verb {
                    Force::Context
                } else {
                    force
                };
                let counts = match (class, force) {
                    // A link that shows the price it pays ("Pay $25.00") is the act.
                    (Class::Link, _) if act == Act::Pay && has_amount(r.raw) => true,
                    (Class::Link, Force::Commit) => true,
                    (Class::Link, _) if question => false,
                    (Class::Link, _) => {
                        whole(r, &hit) && !navigates(el) && self.in_context(act, r.raw, el)
                    }
                    (_, Force::Commit | Force::Verb) => true,
                    (_, Force::Context) => self.in_context(act, r.raw, el),
                };
                if counts && best.is_none_or(|(_, f)| force > f) {
                    best = Some((act, force));
                }
            }
        }
        if let Some((act, _)) = best {
            return Some(RiskKind::of(act));
        }
        if !link {
            if let Some(kind) = self.generic_commit(&readings) {
                return Some(kind);
            }
        }
        el.href.and_then(|h| self.address(h))
    }

    /// A price in the name, a payment page (not the cart), or card fields on the page:
    /// "Subscribe" or "Checkout" pays.
    fn pay_context(&self, raw: &str) -> bool {
        has_amount(raw) || self.page_is(Kind::PayPage) || self.has_cards()
    }

    /// Whether an act of a context-bound phrase happens here: a payment with a price in the
    /// name, on a payment page or beside card fields; a message next to a filled text field
    /// (what "Send" or "Comment" would send, rather than opening a composer); a transfer on a
    /// transfer page, with an amount in the name, or next to a filled field holding digits.
    fn in_context(&self, act: Act, raw: &str, el: &ElementFacts<'_>) -> bool {
        match act {
            Act::Pay => self.pay_context(raw),
            Act::Send => self.filled_near(el, |_| true),
            Act::Transfer => {
                self.page_is(Kind::TransferPage)
                    || has_amount(raw)
                    || self.filled_near(el, |v| v.chars().any(|c| c.is_ascii_digit()))
            }
            Act::Delete => true,
        }
    }

    /// Whether a field within [`COMPOSER_REACH`] elements of `el` (before or after it) holds
    /// a value that `counts`.
    fn filled_near(&self, el: &ElementFacts<'_>, counts: impl Fn(&str) -> bool) -> bool {
        let filled = |e: &ElementFacts<'_>| {
            class_of(&e.role) == Class::Field
                && e.value
                    .as_deref()
                    .is_some_and(|v| !v.trim().is_empty() && counts(v))
        };
        let mut before: std::collections::VecDeque<bool> = std::collections::VecDeque::new();
        let mut after: Option<usize> = None;
        for e in self.page.elements().take(CARD_SCAN) {
            match after.as_mut() {
                Some(0) => break,
                Some(left) => {
                    *left -= 1;
                    if filled(&e) {
                        return true;
                    }
                }
                None if e.id == el.id => {
                    if before.iter().any(|f| *f) {
                        return true;
                    }
                    after = Some(COMPOSER_REACH);
                }
                None => {
                    if before.len() == COMPOSER_REACH {
                        before.pop_front();
                    }
                    before.push_back(filled(&e));
                }
            }
        }
        false
    }

    /// "Confirm", "Submit" (and "Continue" next to a price) on a payment or transfer page or in
    /// a form asking for card details.
    fn generic_commit(&self, readings: &[Reading<'_>]) -> Option<RiskKind> {
        let short = |r: &&Reading<'_>| r.folded.len() <= GENERIC_WORDS;
        let says = |kind: Kind| {
            readings
                .iter()
                .filter(short)
                .any(|r| r.hits.iter().any(|h| h.kind == kind))
        };
        let priced = readings.iter().any(|r| has_amount(r.raw));
        if says(Kind::Confirm) || (says(Kind::Next) && priced) {
            if self.page_is(Kind::TransferPage) {
                return Some(RiskKind::Transfer);
            }
            if priced || self.page_is(Kind::PayPage) || self.has_cards() {
                return Some(RiskKind::Payment);
            }
        }
        None
    }

    /// The act of choosing `value` in the list `select` when the list acts on change ("Delete
    /// selected"): read from the value and, on `dom` pages, the option's text.
    pub fn choice(&self, select: &str, value: &str) -> Option<RiskKind> {
        let shown = self.page.option_text(select, value);
        let want = |k: Kind| matches!(k, Kind::Act(..) | Kind::Benign | Kind::Filter);
        let mut readings = self.read(value, want);
        if let Some(text) = shown.as_deref() {
            readings.extend(self.read(text, want));
        }
        readings.iter().find_map(|r| {
            acts(r)
                .into_iter()
                .find(|(_, force, hit)| {
                    *force >= Force::Verb && hit.start == 0 && r.folded.len() <= GENERIC_WORDS
                })
                .map(|(act, _, _)| RiskKind::of(act))
        })
    }

    /// The act an address performs when opened: an act in its last path segment that is the
    /// act itself (`/orders/place`, `/unsubscribe`), or an act in its path with the act's
    /// parameters in the query (`/transfer?amount=5000&to=x&confirm=1`), or a query that names
    /// the act (`?action=delete`). Help and article pages perform nothing; a verb alone as the
    /// last segment (`/compose/post`, `/account/delete`) is a page to visit.
    pub fn address(&self, url: &str) -> Option<RiskKind> {
        let (_, path, query) = split_address(url);
        let want = |k: Kind| matches!(k, Kind::Act(..) | Kind::Benign | Kind::InfoHref);
        let path_read = self.read(&path, want);
        if path_read
            .iter()
            .any(|r| r.hits.iter().any(|h| h.kind == Kind::InfoHref))
        {
            return None;
        }
        let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
        for r in self.read(last, want) {
            if let Some((act, _, _)) = acts(&r).into_iter().find(|(_, f, _)| *f == Force::Commit) {
                return Some(RiskKind::of(act));
            }
        }
        let pairs: Vec<(String, String)> = query
            .split('&')
            .filter_map(|p| {
                let (k, v) = p.split_once('=')?;
                let decode = |s: &str| {
                    percent_encoding::percent_decode_str(&s.replace('+', " "))
                        .decode_utf8_lossy()
                        .into_owned()
                };
                Some((decode(k).to_ascii_lowercase(), decode(v)))
            })
            // Every pair: a page may pad the act's parameters behind others. The address is
            // bounded (an action's text, an `href` as kept).
            .take(MAX_QUERY_PAIRS)
            .collect();
        for (k, v) in &pairs {
            if matches!(
                k.as_str(),
                "action"
                    | "op"
                    | "operation"
                    | "do"
                    | "cmd"
                    | "command"
                    | "method"
                    | "_method"
                    | "intent"
            ) {
                for r in self.read(v, want) {
                    if let Some((act, _, _)) = acts(&r).into_iter().find(|(_, _, h)| whole(&r, h)) {
                        return Some(RiskKind::of(act));
                    }
                }
            }
        }
        let cue = pairs.iter().any(|(k, v)| {
            !matches!(v.trim(), "" | "0" | "false" | "no")
                && matches!(
                    k.as_str(),
                    "confirm"
                        | "confirmed"
                        | "confirmation"
                        | "execute"
                        | "commit"
                        | "submit"
                        | "go"
                        | "amount"
                        | "sum"
                        | "value"
                        | "to"
                        | "recipient"
                        | "payee"
                        | "iban"
                        | "account"
                        | "dest"
                        | "destination"
                        | "qty"
                        | "quantity"
                        | "token"
                )
        });
        if cue {
            // The query carries the act's parameters: any act the path names is performed.
            return path_read
                .iter()
                .find_map(|r| acts(r).into_iter().next())
                .map(|(act, _, _)| RiskKind::of(act));
        }
        None
    }

    /// The risk of pressing `key` with the focus on `focus`: Enter in a field submits its
    /// form, Enter or Space on a control presses it; other keys act on nothing.
    pub fn press(&self, key: &str, focus: Option<&ElementFacts<'_>>) -> Option<Risk> {
        let k: String = key.trim().to_ascii_lowercase().replace([' ', '_', '-'], "");
        let enter = matches!(
            k.as_str(),
            "enter" | "return" | "numpadenter" | "kpenter" | "\n"
        );
        let space = key == " " || matches!(k.as_str(), "space" | "spacebar");
        if !(enter || space) {
            return None;
        }
        let focus = focus?;
        let class = class_of(&focus.role);
        if class == Class::Field && enter {
            return self.submit_of(focus).map(|(kind, button)| Risk {
                kind,
                what: format!(
                    "press Enter, which would submit the form with {} — this would {}",
                    label(&button),
                    kind.would()
                ),
            });
        }
        self.element(focus, class == Class::Choice && space)
            .map(|kind| Risk {
                kind,
                what: format!(
                    "press {} on {} — this would {}",
                    if enter { "Enter" } else { "Space" },
                    label(focus),
                    kind.would()
                ),
            })
    }

    /// The act of submitting the form `field` is in: its controls in a `dom` page's form, else
    /// the buttons and links that follow the field (up to the first plain submit button).
    fn submit_of<'p>(&'p self, field: &ElementFacts<'_>) -> Option<(RiskKind, ElementFacts<'p>)> {
        if let Some(controls) = self.page.form_submits(field.id) {
            return controls.into_iter().find_map(|c| {
                let class = if c.role == "link" {
                    Class::Link
                } else {
                    Class::Control
                };
                self.element_as(&c, class).map(|k| (k, c))
            });
        }
        let after = self
            .page
            .elements()
            .skip_while(|e| e.id != field.id)
            .skip(1)
            .take(FORM_REACH);
        for e in after {
            let class = class_of(&e.role);
            if !matches!(class, Class::Control | Class::Link) {
                continue;
            }
            if let Some(kind) = self.element_as(&e, class) {
                return Some((kind, e));
            }
            let plain_submit = e.role == "btn"
                && names_of(&e).iter().any(|n| {
                    self.read(n, |k| {
                        matches!(k, Kind::Confirm | Kind::Next | Kind::Submit)
                    })
                    .iter()
                    .any(|r| !r.hits.is_empty() && r.folded.len() <= GENERIC_WORDS)
                });
            if plain_submit {
                break;
            }
        }
        None
    }
}

/// The texts that name an element: its name, and on `dom` pages the attributes that name it;
/// a button's value is its label.
fn names_of<'e>(el: &'e ElementFacts<'_>) -> Vec<&'e str> {
    let mut names: Vec<&str> = vec![&el.name];
    for a in ["aria-label", "title", "alt", "data-name"] {
        if let Some(v) = el.attr(a) {
            if !names.contains(&v) {
                names.push(v);
            }
        }
    }
    let button = el.role == "btn" || matches!(el.input_type, Some("submit" | "button" | "image"));
    if let Some(v) = el.value.as_deref().filter(|_| button) {
        names.push(v);
    }
    names.retain(|n| !n.trim().is_empty());
    names
}

/// The acts a reading names, without those a harmless phrase contains ("Buy it again") and the
/// deletions of a filter ("Remove filter: Nike").
fn acts(r: &Reading<'_>) -> Vec<(Act, Force, Hit)> {
    let filter = r.hits.iter().any(|h| h.kind == Kind::Filter);
    r.hits
        .iter()
        .filter_map(|h| match h.kind {
            Kind::Act(act, force) => Some((act, force, *h)),
            _ => None,
        })
        .filter(|(act, _, h)| {
            let harmless = r.hits.iter().any(|b| b.kind == Kind::Benign && h.within(b));
            let narrows = filter && *act == Act::Delete;
            !(harmless || narrows)
        })
        .collect()
}

/// Whether a link leads to a page of its own (an address that is not `#` or script), rather
/// than being a control drawn as a link.
fn navigates(el: &ElementFacts<'_>) -> bool {
    el.href.is_some_and(|h| {
        let h = h.trim();
        !(h.is_empty() || h.starts_with('#') || h.to_ascii_lowercase().starts_with("javascript:"))
    })
}

/// Whether `hit` is the whole name and that name is one word (a lone "Delete", "删除").
fn whole(r: &Reading<'_>, hit: &Hit) -> bool {
    if r.folded.len() != 1 || hit.start != 0 || hit.end != 1 {
        return false;
    }
    match hit.chars {
        Some((a, b)) => a == 0 && b == r.folded.joined(false).0.chars().count(),
        None => true,
    }
}

/// Whether a link's name reads as a question, an article title or a help entry.
fn informational(r: &Reading<'_>) -> bool {
    r.folded.len() > TITLE_WORDS
        || r.hits
            .iter()
            .any(|h| h.kind == Kind::Info && (h.start == 0 || h.chars.is_some()))
}

/// Whether a name asks a question ("Why was my payment declined?"): a link named so is reading,
/// unless its name holds the act itself (a page may add a `?` to "Pay now").
fn asks(r: &Reading<'_>) -> bool {
    r.raw.contains(['?', '？', '؟'])
}

/// Whether `text` holds a price: a currency sign or code next to a number.
fn has_amount(text: &str) -> bool {
    let digits = text.chars().any(|c| c.is_ascii_digit());
    if !digits {
        return false;
    }
    if text.contains([
        '$', '€', '£', '¥', '₹', '₽', '₩', '₺', '₴', '₪', '฿', '₫', '₦', '₱', '﷼',
    ]) {
        return true;
    }
    text.split(|c: char| !c.is_alphanumeric()).any(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "usd"
                | "eur"
                | "gbp"
                | "jpy"
                | "chf"
                | "sek"
                | "nok"
                | "dkk"
                | "pln"
                | "czk"
                | "huf"
                | "ron"
                | "try"
                | "inr"
                | "rub"
                | "brl"
                | "cad"
                | "aud"
                | "cny"
                | "krw"
                | "kr"
                | "zł"
                | "kč"
                | "ft"
                | "lei"
                | "rs"
                | "r"
        )
    })
}

/// A URL's host, path (decoded) and query.
fn split_address(url: &str) -> (&str, String, &str) {
    let no_fragment = url.split('#').next().unwrap_or("");
    let (host, rest) = match no_fragment.split_once("://") {
        Some((_, r)) => match r.find(['/', '?']) {
            Some(at) => (&r[..at], &r[at..]),
            None => (r, ""),
        },
        None => ("", no_fragment),
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned();
    (host, path, query)
}

/// Whether `url` names `kind`: a payment or transfer page by its host or path
/// (`pay.example.com`, `/checkout`), a help page by its path.
fn address_has(scope: &Scope<'_>, url: &str, kind: Kind) -> bool {
    let (host, path, _) = split_address(url);
    let text = if kind == Kind::InfoHref {
        path
    } else {
        format!("{host}/{path}")
    };
    scope
        .read(&text, |k| k == kind)
        .iter()
        .any(|r| !r.hits.is_empty())
}

/// Whether `page` holds a field for card details.
pub fn page_asks_for_cards(patterns: &RiskPatterns, page: &dyn PageFacts) -> bool {
    page.elements()
        .take(CARD_SCAN)
        .filter(|e| class_of(&e.role) == Class::Field)
        .any(|e| field_kind(patterns, &e) == Some(Sensitive::Card))
}

/// Whether the model's `<Risk>` note says there is no risk ("None — just opens the menu",
/// "Low risk"): read only when it does not.
pub fn says_none(patterns: &RiskPatterns, note: &str) -> bool {
    let note = note.trim();
    if note.is_empty() {
        return true;
    }
    variants(note).iter().any(|f| {
        hits(patterns.phrases(), f, |k| k == Kind::Negation)
            .iter()
            .any(|h| h.start == 0 && h.chars.is_none_or(|(a, _)| a == 0))
    })
}
