//! What a control, a link, a chosen option, an address or a key press would do. A control
//! (button, menu item, switch, an element the page made clickable) performs the act its names
//! say; a link only when its name is the act itself ("Pay now", a lone "Delete") or its address
//! performs it — a link that reads like a question, an article title or a help page is
//! reading. Options, tabs and fields are choosing, never acting. A generic "Confirm" or
//! "Submit" commits on a payment or transfer page, or in a form asking for card details.

use std::cell::OnceCell;

use super::field::{field_kind, Sensitive};
use super::fold::{fold, variants, Folded};
use super::lexicon::{Act, Force, Hit, Kind, Part, COMPOSED};
use super::{label, ElementFacts, PageFacts, Risk, RiskKind, RiskPatterns};

/// Elements looked at after a field for the control that Enter in it submits (the extension's
/// tree says nothing of forms).
const FORM_REACH: usize = 25;
/// Elements looked at for card fields on a page.
pub(super) const CARD_SCAN: usize = 2_000;
/// Elements before and after a "Send" or "Transfer" looked at for what it would send.
const COMPOSER_REACH: usize = 20;
/// Elements before and after a control looked at for the filters of a bar it would be in.
const FILTER_REACH: usize = 3;
/// Words a dialog's or a form's name is read in, from its start.
const NAME_WORDS: usize = 3;
/// Most query pairs of an address read (more than an action's text can hold).
const MAX_QUERY_PAIRS: usize = 2_000;
/// Longest name a generic "Confirm" is read in (words).
const GENERIC_WORDS: usize = 4;
/// Names longer than this (words) are titles when they are links.
const TITLE_WORDS: usize = 7;
/// Texts before a control read for an amount the page shows beside it.
const SHOWN_TEXTS: usize = 8;
/// Most characters of a dialog's or a page's text read for what a terse control commits.
const HOLDER_CHARS: usize = 400;

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
    /// The page's title, as the client sent it.
    pub title: Option<&'a str>,
    cards: OnceCell<bool>,
    secret_fields: OnceCell<bool>,
    shop: OnceCell<Option<Kind>>,
    security: OnceCell<bool>,
}

impl<'a> Scope<'a> {
    pub fn new(patterns: &'a RiskPatterns, page: &'a dyn PageFacts) -> Self {
        Self {
            patterns,
            page,
            title: None,
            cards: OnceCell::new(),
            secret_fields: OnceCell::new(),
            shop: OnceCell::new(),
            security: OnceCell::new(),
        }
    }

    /// The same scope, knowing the page's title.
    pub fn titled(self, title: Option<&'a str>) -> Self {
        Self { title, ..self }
    }

    /// Every reading of `text` with the phrases of the kinds `want`ed.
    fn read<'t>(&self, text: &'t str, want: impl Fn(Kind) -> bool + Copy) -> Vec<Reading<'t>> {
        variants(text)
            .into_iter()
            .map(|folded| Reading {
                raw: text,
                hits: self.patterns.hits(&folded, want),
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
            Kind::TransferPage => {
                self.named_last(&address_text(self.page.url()), &[kind, Kind::Records])
                    == Some(kind)
            }
            _ => address_has(self, self.page.url(), kind),
        }
    }

    /// Which of `kinds` `text` names last (`/transfers/history` is a list of records).
    fn named_last(&self, text: &str, kinds: &[Kind]) -> Option<Kind> {
        self.read(text, |k| kinds.contains(&k))
            .iter()
            .flat_map(|r| r.hits.iter())
            .max_by_key(|h| (h.end, h.start))
            .map(|h| h.kind)
    }

    /// Whether the page is about the account's security, by its address or its title
    /// (`/account/security`, "Segurança - iToken"): turning something off there lowers a
    /// protection whatever its name ("Desativar iToken", a switch in a row it names).
    fn security_page(&self) -> bool {
        *self.security.get_or_init(|| {
            address_has(self, self.page.url(), Kind::SecurityPage)
                || self
                    .title
                    .is_some_and(|t| self.says(&[t], Kind::SecurityPage))
        })
    }

    /// Whether the page is a help centre or an article (`support.…`, `help.…`, `/help/`,
    /// `/answer/`): its links lead to more reading.
    fn help_page(&self) -> bool {
        let (host, _, _) = split_address(self.page.url());
        let host = host.to_ascii_lowercase();
        ["support.", "help.", "docs.", "faq.", "kb."]
            .iter()
            .any(|p| host.starts_with(p))
            || address_has(self, self.page.url(), Kind::InfoHref)
    }

    /// Whether the page is a cart or a payment page, by whichever its address names last
    /// (`/checkout/cart` is a cart, `/cart/checkout` the payment, and so is `#/checkout/review`;
    /// `/payments/history` lists records).
    fn shop_page(&self) -> Option<Kind> {
        *self.shop.get_or_init(|| {
            let kinds = [Kind::PayPage, Kind::CartPage, Kind::Records];
            (self.named_last(&address_text(self.page.url()), &kinds))
                .filter(|k| *k != Kind::Records)
        })
    }

    /// The act of clicking `el` (or switching it, for `check`), if it performs one. `turn`
    /// is the state the action leaves a switch or checkbox in (on for `check`, off for
    /// `uncheck`, the other one for a click on it).
    pub fn element(
        &self,
        el: &ElementFacts<'_>,
        switching: bool,
        turn: Option<bool>,
    ) -> Option<RiskKind> {
        let class = match class_of(&el.role) {
            // A switch or checkbox performs what it says when it is turned.
            Class::Choice | Class::Field if switching => Class::Control,
            c => c,
        };
        let turn = turn.or_else(|| toggles(el).then(|| !is_on(el)));
        if let Some(decided) = turn.and_then(|on| self.toggle(el, on)) {
            return decided;
        }
        self.element_as(el, class)
    }

    /// What turning the switch `el` `on` (or off) does, when its name says what it guards:
    /// turning a protection off, an exposure or a recurring charge on is an act; turning it
    /// the other way, or any opt-in of the user's own (marketing e-mails), is not.
    fn toggle(&self, el: &ElementFacts<'_>, on: bool) -> Option<Option<RiskKind>> {
        // An opt-out decides over everything else the name says; otherwise its longest phrase
        // ("Block all public access" is a protection, not the "public" in it).
        let mut found: Option<(bool, usize, Kind)> = None;
        for n in names_of(el) {
            for r in self.read(n, |k| {
                matches!(
                    k,
                    Kind::Protect | Kind::Public | Kind::Private | Kind::Renew | Kind::OptOut
                )
            }) {
                for h in &r.hits {
                    let rank = (h.kind == Kind::OptOut, h.end - h.start, h.kind);
                    if found.is_none_or(|(o, len, _)| (rank.0, rank.1) >= (o, len)) {
                        found = Some(rank);
                    }
                }
            }
        }
        let found = found.map(|(.., kind)| kind);
        // A switch whose own name names no setting ("Status", "Aktiviert") is the setting its
        // row or section names: the nearest words before it that name one.
        let found = found.or_else(|| self.setting_before(el, &[Kind::Private]));
        let found = found.or_else(|| (!on && self.security_page()).then_some(Kind::Protect));
        // A box whose name is a role ("Super Admin", "Διαχειριστής"), ticked, gives it; so does
        // a switch named only by its row ("Yönetici yetkisi" … "Etkinleştir") where access is
        // given.
        let row_role =
            || self.setting_before(el, &[Kind::Role]) == Some(Kind::Role) && self.about_access(el);
        if found.is_none() && on && (self.gives_role(el) || row_role()) {
            return Some(Some(RiskKind::Sharing));
        }
        Some(match found? {
            Kind::Protect => (!on).then_some(RiskKind::Security),
            Kind::Public => (on && !self.in_filter(el, &names_of(el))).then_some(RiskKind::Sharing),
            // Turning "Private account" off makes it public.
            Kind::Private => (!on).then_some(RiskKind::Sharing),
            Kind::Renew => on.then_some(RiskKind::Subscription),
            _ => None,
        })
    }

    /// The setting the nearest words before `el` name (its row, then its section's heading):
    /// an opt-out, a protection, an exposure or a recurring charge, or one of `more`.
    fn setting_before(&self, el: &ElementFacts<'_>, more: &[Kind]) -> Option<Kind> {
        let kinds: Vec<Kind> = SETTINGS.into_iter().chain(more.iter().copied()).collect();
        let before = self.page.texts_before(el.id);
        self.nearest_setting(before.iter().map(String::as_str), &kinds)
    }

    /// The first of `kinds` the first text naming one of them names (texts nearest first).
    fn nearest_setting<'t>(
        &self,
        mut texts: impl Iterator<Item = &'t str>,
        kinds: &[Kind],
    ) -> Option<Kind> {
        texts.find_map(|t| kinds.iter().copied().find(|k| self.says(&[t], *k)))
    }

    fn element_as(&self, el: &ElementFacts<'_>, class: Class) -> Option<RiskKind> {
        // Picking an option ("Pay yearly – ¥258/year") sets a value: the control that applies
        // it commits (read with the choice: [`Scope::commits_choice`]) — but an option that is
        // the exposure itself ("Anyone with the link"), like a list's, shares as it is picked
        // in a dialog or on a page about sharing (in a filter or a post not sent, it does not).
        // A menu item or list option whose name is a role ("Owner", "Make admin") gives it
        // (a radio's name as often names a person: "Dana Lee (my manager)").
        if matches!(
            &*el.role,
            "menu" | "menuitem" | "menuitemradio" | "option" | "opt"
        ) && self.gives_role(el)
        {
            return Some(RiskKind::Sharing);
        }
        if option(el) {
            let names = names_of(el);
            let exposes = !self.says(&names, Kind::Private)
                && !self.says(&names, Kind::Off)
                && names.iter().any(|n| self.leads(n, Kind::Public));
            return (exposes && self.about_sharing(el)).then_some(RiskKind::Sharing);
        }
        // A form's reset button only clears what is being written in it — unless its name
        // names another act than clearing (a page's script may do what a "Buy now" says).
        let reset = (el.input_type.or_else(|| el.attr("type")))
            .is_some_and(|t| t.eq_ignore_ascii_case("reset"))
            && self.page.holder(el.id).is_some_and(|h| !h.dialog)
            && !(names_of(el).iter()).any(|n| {
                let want = |k: Kind| matches!(k, Kind::Act(..) | Kind::Benign | Kind::Filter);
                (self.read(n, want).iter()).any(|r| acts(r).iter().any(|(a, ..)| *a != Act::Delete))
            });
        if matches!(class, Class::Choice | Class::Field) || reset {
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
        if link && (readings.iter().any(informational) || self.help_page()) {
            return None;
        }
        // A choice about the user's own privacy (cookies, marketing e-mails) shares, secures
        // and subscribes nothing.
        let own_choice = self.says(&names, Kind::OptOut);
        // A control whose whole name dismisses ("Cancel", "No", "Keep") commits nothing, whatever
        // its dialog asks about.
        if readings.iter().any(dismisses) {
            return None;
        }
        // A control that asks how to do something ("How do I cancel my order?") opens the
        // answer, as such a link does.
        if readings.iter().any(|r| asks(r) && informational(r)) {
            return None;
        }
        let question = link && readings.iter().any(asks);
        // A control led by reading words ("View details: transfer to Ada ₱2,500", "Learn
        // more about …") opens what it names: only the act itself ("Pay now") counts in it.
        // (Phrases of two words or more: a lone question word of one language is another's
        // "yes" or "comment".)
        let leads_reading = !link
            && readings.iter().any(|r| {
                r.hits.iter().any(|h| {
                    h.kind == Kind::Info && h.start == 0 && h.chars.is_none() && h.end >= 2
                })
            });
        // A control whose name starts by turning something off ("Turn off auto-renew",
        // "Disable autopay") starts no charge and shares nothing — unless it states a price
        // ("Remove ads – $2.99/month" buys; "50% off" is a discount).
        let turns_off = !names.iter().any(|n| has_amount(n))
            && !self.says(&names, Kind::On)
            && (readings.iter())
                .any(|r| r.hits.iter().any(|h| h.kind == Kind::Off && h.start == 0));
        let mut best: Option<(Act, Force)> = None;
        let on_cart = self.page_is(Kind::CartPage);
        for r in &readings {
            for (act, force, hit) in acts(r) {
                if own_choice && matches!(act, Act::Share | Act::Secure | Act::Subscribe) {
                    continue;
                }
                // A box sends nothing: it sets what the form's own send does ("Verzenden" among
                // a listing's delivery filters, "Send me a copy").
                if act == Act::Send && toggles(el) {
                    continue;
                }
                if (leads_reading && force != Force::Commit)
                    || (turns_off && matches!(act, Act::Subscribe | Act::Pay | Act::Share))
                {
                    continue;
                }
                // A cart page leads to the checkout: buying there pays only beside card fields
                // or a price (the act itself still counts), and removing an item is undone by
                // adding it again.
                if on_cart && act == Act::Delete && force == Force::Verb {
                    continue;
                }
                let force = if on_cart
                    && matches!(act, Act::Pay | Act::Subscribe)
                    && force == Force::Verb
                {
                    Force::Context
                } else {
                    force
                };
                let counts = match (class, force) {
                    // A link that shows the price it pays ("Pay $25.00") is the act.
                    (Class::Link, _)
                        if matches!(act, Act::Pay | Act::Subscribe) && has_amount(r.raw) =>
                    {
                        true
                    }
                    // A link that offers a plan without its price ("Subscribe now" to the
                    // offers) shows the plans first: the checkout subscribes.
                    (Class::Link, Force::Commit) if act == Act::Subscribe => false,
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
            // A payment whose price recurs starts a subscription.
            if act == Act::Pay && names.iter().any(|n| self.recurs_here(n, el)) {
                return Some(RiskKind::Subscription);
            }
            return Some(RiskKind::of(act));
        }
        // A box or switch sets a value: what a button commits by its generic words, a price or
        // its dialog ("Save my card" ticked on a payment page) it does not.
        let sets_value = toggles(el);
        if !link && !leads_reading && !sets_value {
            if let Some(kind) = self.generic_commit(el, &readings) {
                return Some(kind);
            }
            if let Some(kind) = self.setting_act(el) {
                return Some(kind);
            }
            // A control that names a recurring price starts it ("Get Premium – $13.99/month").
            if !turns_off && names.iter().any(|n| self.recurring(n)) {
                return Some(RiskKind::Subscription);
            }
            // So does a short activation right after one ("89 Kč měsíčně" … "Aktivovat").
            if !turns_off && self.activates_after_price(el, &names) {
                return Some(RiskKind::Subscription);
            }
            // A "Buy" or "Subscribe" that names no price, on a page where the option picked (a
            // selected radio or list option) names a recurring one, buys that plan.
            if !turns_off && self.buys_picked_plan(el, &readings) {
                return Some(RiskKind::Subscription);
            }
            if let Some(kind) = self.exposes(el, &names) {
                return Some(kind);
            }
            if self.grants_app(&readings) {
                return Some(RiskKind::Sharing);
            }
            if let Some(kind) = self.handles_credential(&names, &readings) {
                return Some(kind);
            }
            if let Some(kind) = self.echoes_holder(el, &readings) {
                return Some(kind);
            }
            if let Some(kind) = self.only_answer(el, &readings) {
                return Some(kind);
            }
            if terse(&readings) {
                let yes = (readings.iter()).any(|r| r.hits.iter().any(|h| h.kind == Kind::Confirm));
                if let Some(kind) = self.holder_act(el, yes) {
                    return Some(kind);
                }
            }
        }
        el.href.and_then(|h| self.address(h, false))
    }

    /// The act a terse control ("OK", "Yes", "Confirm", "Continue") commits, read from what
    /// holds it: the heading and text of its dialog or form (or, for a `yes` outside one,
    /// the words just before it), then the page's title. An act
    /// there counts as it would on a control (a price or a billing period makes a "subscribe"
    /// or "buy" one); a title that asks or teaches ("How to delete …") commits nothing.
    fn holder_act(&self, el: &ElementFacts<'_>, yes: bool) -> Option<RiskKind> {
        let holder = self.page.holder(el.id);
        // Outside a dialog or form, the words just before a yes ("Confirm", "OK"; not a step's
        // "Continue" or a "Save") say what it confirms: its row, then its section's heading
        // ("Upgrade to Premium – KSh 9,900 a month").
        let before = match holder {
            None if yes => self.page.texts_before(el.id),
            _ => Vec::new(),
        };
        let texts = (holder.iter().map(|h| (h.text.as_str(), false)))
            .chain(before.iter().take(2).map(|t| (t.as_str(), false)))
            .chain(self.title.map(|t| (t, true)));
        for (text, titled) in texts {
            let text = crate::text::truncate_chars(text.trim(), HOLDER_CHARS);
            let readings = self.read(&text, |k| {
                matches!(k, Kind::Act(..) | Kind::Benign | Kind::Filter | Kind::Info)
            });
            let teaches = readings
                .iter()
                .any(|r| r.hits.iter().any(|h| h.kind == Kind::Info && h.start == 0));
            if teaches {
                continue;
            }
            let priced = has_amount(&text);
            // A title is priced by the page for a one-off act: the amount a review page shows
            // beside its yes ("Överföring", "Belopp: 4 500,00 kr", "Godkänn"); not on a list of
            // records, nor for a plan (the prices of plans to choose from).
            let shown = OnceCell::new();
            let shown = || *shown.get_or_init(|| titled && self.shows_amount(el));
            let mut best: Option<(Act, Force)> = None;
            for r in &readings {
                for (act, force, _) in acts(r) {
                    let counts = force >= Force::Verb
                        || (matches!(act, Act::Pay | Act::Subscribe | Act::Transfer) && priced)
                        || (matches!(act, Act::Pay | Act::Transfer) && shown());
                    if counts && best.is_none_or(|(_, f)| force > f) {
                        best = Some((act, force));
                    }
                }
            }
            if let Some((act, _)) = best {
                // A payment whose price recurs starts a subscription.
                if act == Act::Pay && self.recurring(&text) {
                    return Some(RiskKind::Subscription);
                }
                return Some(RiskKind::of(act));
            }
        }
        let holder = holder?;
        self.holder_setting(&holder.text, holder.dialog)
    }

    /// Whether `el` is named as its dialog begins: the dialog's yes ("Add" in "Add user",
    /// "Tambah" in "Tambah pengguna"), a word or two.
    fn dialogs_own_verb(&self, el: &ElementFacts<'_>) -> bool {
        let name = fold(el.name.trim());
        let Some(holder) = self.page.holder(el.id).filter(|h| h.dialog) else {
            return false;
        };
        let opening = fold(&crate::text::truncate_chars(
            holder.text.trim(),
            HOLDER_CHARS,
        ));
        (1..=2).contains(&name.plain.len()) && opening.plain.starts_with(&name.plain)
    }

    /// Whether the page shows an amount beside `el`: in the names of the elements around
    /// it, or in the words before it — unless its address names a list of records.
    fn shows_amount(&self, el: &ElementFacts<'_>) -> bool {
        let records = self.named_last(
            &address_text(self.page.url()),
            &[Kind::Records, Kind::TransferPage],
        );
        records != Some(Kind::Records)
            && (self.near(el, |e| names_of(e).iter().any(|t| has_amount(t)))
                || (self.page.texts_before(el.id).iter().take(SHOWN_TEXTS)).any(|t| has_amount(t)))
    }

    /// What a terse control ("Continue", "Confirm", "Yes") agrees to after the task's last
    /// action on `chosen`, where no dialog or form says more (the extension's tree): the act
    /// of the control it pressed ("Transfer ownership", then "Yes"), the role it chose in a
    /// list ("Admin", then "OK"); a plan chosen by its recurring price starts it, everyone
    /// given access shares. A choice in a filter only narrows a list.
    pub fn commits_choice(
        &self,
        el: &ElementFacts<'_>,
        chosen: &ElementFacts<'_>,
        said: &str,
    ) -> Option<RiskKind> {
        let names = names_of(el);
        let applies = |k: Kind| matches!(k, Kind::Confirm | Kind::Next | Kind::Save);
        let readings: Vec<Reading<'_>> = (names.iter())
            .flat_map(|n| self.read(n, |k| applies(k) || k == Kind::Part(Part::Change)))
            .collect();
        let picked = names_of(chosen);
        // A field's new value is applied by a bare "Change" ("Ändern") as by a "Save".
        let changes = class_of(&chosen.role) == Class::Field
            && (readings.iter()).any(|r| {
                (r.hits.iter()).any(|h| {
                    h.kind == Kind::Part(Part::Change) && h.start == 0 && h.end == r.folded.len()
                })
            });
        if chosen.id == el.id
            || !(terse(&readings) || changes || self.dialogs_own_verb(el))
            || self.says(&picked, Kind::Filter)
        {
            return None;
        }
        match class_of(&chosen.role) {
            // A control, or a link drawn for one (nowhere to go: "Turn off 2-Step
            // Verification", then "Yes").
            Class::Control | Class::Link
                if !toggles(chosen) && !navigates(chosen) && self.opened(el, chosen) =>
            {
                return self.element(chosen, false, None)
            }
            Class::Field => {
                let value = chosen.value.as_deref().filter(|v| !v.trim().is_empty())?;
                // A contact the user wrote themselves is the change they asked for.
                let theirs = super::fold::holds(value, said);
                let contact = !theirs && self.saves_contact(chosen, value, &readings);
                return (self.setting_choice(chosen, value).flatten())
                    .or(contact.then_some(RiskKind::Security));
            }
            _ => {}
        }
        // A switch or box the task just turned: saving commits what turning it does
        // ("Require SMS code" unticked, then "Save changes").
        if toggles(chosen) {
            if let Some(Some(kind)) = self.toggle(chosen, is_on(chosen)) {
                return Some(kind);
            }
        }
        // A tab picked is read for the role it gives (a view's tab, "Everyone", picks no more).
        let tab = chosen.role == "tab";
        if !(option(chosen) || toggles(chosen) || tab) {
            return None;
        }
        // A role picked where access is given ("Admin" among a member's roles, then "Save"):
        // asked about at the apply, not at the pick.
        if (option(chosen) || tab) && self.gives_role(chosen) {
            return Some(RiskKind::Sharing);
        }
        // A tab is more often a view than a choice: only its role is read.
        if tab {
            return None;
        }
        // An option named by a deletion ("Delete account" over "Deactivate account"), then a
        // yes: the yes deletes. An option to pay or send names a way ("Pay at the property",
        // "Send by post"); the act is done elsewhere.
        if self.names_act(&picked) == Some(RiskKind::Deletion) {
            return Some(RiskKind::Deletion);
        }
        if picked.iter().any(|n| self.recurring(n)) {
            return Some(RiskKind::Subscription);
        }
        // "Never", "None" or "Without" picked for a protection its name or the nearest words
        // before it name ("Ask for a code at sign-in"), then saved (a page about a protection
        // also asks of its exceptions: "Grace period: None" tightens it).
        let off = self.says(&picked, Kind::Off) && !self.says(&picked, Kind::On);
        let protection = || {
            self.says(&picked, Kind::Protect)
                || self.setting_before(chosen, &[]) == Some(Kind::Protect)
        };
        if option(chosen) && off && protection() {
            return Some(RiskKind::Security);
        }
        let public = self.says(&picked, Kind::Public) && !self.says(&picked, Kind::Private);
        public.then_some(RiskKind::Sharing)
    }

    /// The act a short name starts with ("Delete account", "Удалить навсегда"): a verb or the
    /// act itself, not a word the act needs context for, nor a filter's ("Remove filter").
    fn names_act(&self, names: &[&str]) -> Option<RiskKind> {
        let want = |k: Kind| matches!(k, Kind::Act(..) | Kind::Benign | Kind::Filter);
        // A name may carry its description after a dash or a colon ("Delete account — This
        // is permanent"): the act is what comes before.
        let heads = names
            .iter()
            .filter_map(|n| n.split(['—', '–', '·', ':', '|']).next());
        let readings = heads.flat_map(|n| self.read(n, want));
        readings.into_iter().find_map(|r| {
            let short = r.folded.len() <= GENERIC_WORDS;
            (acts(&r).into_iter())
                .find(|(_, force, hit)| short && *force >= Force::Verb && hit.start == 0)
                .map(|(act, ..)| RiskKind::of(act))
        })
    }

    /// Whether the control the task just clicked opened what holds the terse `yes`: nothing
    /// holds it (the extension's tree), or a dialog the control is not in that asks, names no
    /// act of its own, asks about nothing harmless ("Turn off", then "Are you sure? Your order
    /// history will be lost" … "Yes"; not "Clear all notifications?", "Want SMS updates about
    /// this order?", nor a notice that only tells: "Your session expired. OK") and offers no
    /// other act in place of a way out (a session's "Stay signed in?" with "Sign out" and "Yes"
    /// asks about the session; "Log out instead" beside "Keep my account" is an alternative).
    fn opened(&self, yes: &ElementFacts<'_>, control: &ElementFacts<'_>) -> bool {
        let Some(h) = self.page.holder(yes.id) else {
            return true;
        };
        let text = crate::text::truncate_chars(&h.text, HOLDER_CHARS);
        // An act it names, of any force ("SMS updates about this order?"), unless a harmless
        // phrase holds it ("order history").
        let names_act = (self
            .read(&text, |k| matches!(k, Kind::Act(..) | Kind::Benign))
            .iter())
        .any(|r| !acts(r).is_empty());
        // What it asks is in its questions; a harmless phrase elsewhere only describes.
        let questions = text
            .split_inclusive(['.', '!', '。', '\n', '?', '？', '؟'])
            .filter(|s| s.trim_end().ends_with(['?', '？', '؟']));
        let harmless = questions
            .flat_map(|q| self.read(q, |k| k == Kind::Benign))
            .any(|r| !r.hits.is_empty());
        let same_holder = |e: &ElementFacts<'_>| {
            e.id != yes.id && self.page.holder(e.id).is_some_and(|o| o.text == h.text)
        };
        let offers = |e: &ElementFacts<'_>| {
            names_of(e).iter().any(|n| {
                (self.read(n, |k| {
                    matches!(k, Kind::Act(..) | Kind::Part(Part::SignOut))
                }))
                .iter()
                .any(|r| {
                    !dismisses(r)
                        && (!acts(r).is_empty()
                            || r.hits.iter().any(|h| h.kind == Kind::Part(Part::SignOut)))
                })
            })
        };
        // Another act offered with no way out ("Sign out" or "Yes"): a choice of its own. A
        // confirmation offers a way out ("Keep my account"), and maybe another way ("Log out
        // instead").
        let way_out =
            |e: &ElementFacts<'_>| names_of(e).iter().any(|n| self.leads(n, Kind::Dismiss));
        let holders: Vec<ElementFacts<'_>> = (self.page.elements().take(CARD_SCAN))
            .filter(|e| same_holder(e))
            .collect();
        let other_act =
            !holders.iter().any(way_out) && holders.iter().any(|e| e.id != control.id && offers(e));
        h.dialog
            && h.text.contains(['?', '？', '؟'])
            && !names_act
            && !harmless
            && !other_act
            && self
                .page
                .holder(control.id)
                .is_none_or(|c| c.text != h.text)
    }

    /// What a dialog or form that names no act sets, for the terse yes inside it: it turns off
    /// the protection it names ("Turn off 2-step verification?"), turns on a recurring charge
    /// ("Turn on auto-renew?"), exposes what it holds (a dialog asking "Make this repository
    /// public?", nothing making private) or agrees to the recurring price it states (a plan's
    /// billing period chosen, then "Continue"). The page's title is not read so: a settings
    /// page named "Public profile" commits nothing by its "Save".
    fn holder_setting(&self, text: &str, dialog: bool) -> Option<RiskKind> {
        let text = crate::text::truncate_chars(text.trim(), HOLDER_CHARS);
        let t = [text.as_str()];
        let teaches = self
            .read(&text, |k| k == Kind::Info)
            .iter()
            .any(|r| r.hits.iter().any(|h| h.kind == Kind::Info && h.start == 0));
        if teaches || self.says(&t, Kind::OptOut) {
            return None;
        }
        let (off, on) = (self.says(&t, Kind::Off), self.says(&t, Kind::On));
        if (self.says(&t, Kind::Protect) || self.security_page()) && off && !on {
            return Some(RiskKind::Security);
        }
        if self.says(&t, Kind::Renew) && on && !off {
            return Some(RiskKind::Subscription);
        }
        if dialog && !off && self.says(&t, Kind::Public) && !self.says(&t, Kind::Private) {
            return Some(RiskKind::Sharing);
        }
        self.recurring(&text).then_some(RiskKind::Subscription)
    }

    /// What a control that turns something off or on ("Turn off", "Disable", "Enable") does to
    /// the setting its own name, the words just before it, its dialog or form, or the page's
    /// title names — read as the switch it stands for ([`Scope::toggle`]).
    fn setting_act(&self, el: &ElementFacts<'_>) -> Option<RiskKind> {
        let names = names_of(el);
        // "On" and "off" are short words: only a short name is read as one.
        if names.iter().all(|n| fold(n).len() > GENERIC_WORDS + 2) {
            return None;
        }
        let on = match (self.says(&names, Kind::Off), self.says(&names, Kind::On)) {
            (true, false) => false,
            (false, true) => true,
            _ => return None,
        };
        // What it turns is named by the control, the words just before it (its row or
        // heading), its dialog or form, or the page's title.
        let (before, holder) = (self.page.texts_before(el.id), self.page.holder_text(el.id));
        let around: Vec<&str> = names
            .iter()
            .copied()
            .chain(before.iter().map(String::as_str))
            .chain(holder.as_deref())
            .chain(self.title)
            .collect();
        // The nearest words that name a setting decide (its own name, then its row, ...); on
        // a security page, what is turned off is a protection.
        let named = self.nearest_setting(around.into_iter(), &SETTINGS);
        let named = named.or_else(|| (!on && self.security_page()).then_some(Kind::Protect));
        match named? {
            Kind::Protect => (!on).then_some(RiskKind::Security),
            Kind::Public => (on && !self.in_filter(el, &names_of(el))).then_some(RiskKind::Sharing),
            Kind::Renew => on.then_some(RiskKind::Subscription),
            _ => None,
        }
    }

    /// A control that names an account's credential ("Create secret key", "Show backup
    /// codes", "Renovar Access Token") acts on it — makes, shows, rotates or revokes it — where
    /// nothing on the page takes one typed: on a sign-in or code page, "Show password" or
    /// "Resend code" only helps to type it. A control that teaches or asks opens reading.
    fn handles_credential(&self, names: &[&str], readings: &[Reading<'_>]) -> Option<RiskKind> {
        let names_credential = self.says(names, Kind::Credential);
        let reading = readings.iter().any(|r| informational(r) || asks(r));
        (names_credential && !reading && !self.says(names, Kind::Benign) && !self.takes_secrets())
            .then_some(RiskKind::Security)
    }

    /// Whether pressing `el` (or Enter on it) may send the form it is in: a button that is
    /// no switch and no dismissal ("Cancel"), or a field Enter submits.
    pub fn sends_form(&self, el: &ElementFacts<'_>) -> bool {
        match class_of(&el.role) {
            Class::Field => true,
            Class::Control => {
                !toggles(el)
                    && !(names_of(el).iter())
                        .any(|n| self.read(n, |k| k == Kind::Dismiss).iter().any(dismisses))
            }
            _ => false,
        }
    }

    /// Whether a field of the page takes a password or a code (the first [`CARD_SCAN`]
    /// elements, read once a page).
    fn takes_secrets(&self) -> bool {
        *self.secret_fields.get_or_init(|| {
            (self.page.elements().take(CARD_SCAN))
                .filter(|e| class_of(&e.role) == Class::Field)
                .any(|e| field_kind(self.patterns, &e) == Some(Sensitive::Secret))
        })
    }

    /// A control that sets an exposure ("Public", "Anyone with the link", "I want to make this
    /// repository public"): short, or in a dialog or page about it; not one that makes private.
    fn exposes(&self, el: &ElementFacts<'_>, names: &[&str]) -> Option<RiskKind> {
        if !self.says(names, Kind::Public)
            || self.says(names, Kind::Private)
            || self.says(names, Kind::Off)
            || self.in_filter(el, names)
        {
            return None;
        }
        let short = names.iter().any(|n| fold(n).len() <= 3);
        let about = self.holder_and_title(el);
        let about: Vec<&str> = about.iter().map(String::as_str).collect();
        (short || self.says(&about, Kind::Public)).then_some(RiskKind::Sharing)
    }

    /// The act of a dialog or form whose verb the control repeats ("Add" under "Add members
    /// to Finance", "Share" under "Share 'Q3 plan' with Ada"): the holder's text names the act,
    /// the control its verb. A name that is a harmless phrase as a whole, under a dialog about
    /// the user's own privacy ("Allow all" under "We use cookies … you can allow all"),
    /// repeats no act: its dialog's words are its own, read the harmless way ("Allow all"
    /// under "Let 3 people into the call?" still admits them).
    fn echoes_holder(&self, el: &ElementFacts<'_>, readings: &[Reading<'_>]) -> Option<RiskKind> {
        let holder =
            (self.page.holder_text(el.id)).map(|h| crate::text::truncate_chars(&h, HOLDER_CHARS));
        let harmless = |r: &Reading<'_>| {
            let whole = |h: &Hit| h.start == 0 && h.end == r.folded.len();
            r.hits.iter().any(|h| h.kind == Kind::Benign && whole(h))
        };
        let about = self.holder_and_title(el);
        let private = (about.iter()).any(|t| self.says(&[t.as_str()], Kind::OptOut));
        if private && readings.iter().any(harmless) {
            return None;
        }
        if let Some(kind) = holder
            .as_deref()
            .and_then(|h| self.repeats_verb(h, readings))
        {
            return Some(kind);
        }
        // The verb of an act written in two parts, under a dialog or form (or on a page titled
        // so, in the extension's tree) that states it whole ("Kijelentkeztetés" under
        // "Kijelentkezés mindenhol", "変更する" on "メールアドレスの変更").
        let names = names_of(el);
        let holder = match holder {
            Some(h) => h,
            None => self.title?.to_owned(),
        };
        COMPOSED
            .iter()
            .find(|(verb, _, act, force)| {
                *force >= Force::Verb
                    && self.says(&names, Kind::Part(*verb))
                    && self.says(&[holder.as_str()], Kind::Act(*act, *force))
            })
            .map(|(_, _, act, _)| RiskKind::of(*act))
    }

    /// The act a dialog asks about, for the one control in it that does not dismiss it: a
    /// question has two answers ("Удалить все данные?" with "Отмена" and "Очистить": the
    /// second deletes, whatever its own word). Only a question that names the act by its verb,
    /// in a dialog whose other controls (within [`COMPOSER_REACH`]) all dismiss it.
    fn only_answer(&self, el: &ElementFacts<'_>, readings: &[Reading<'_>]) -> Option<RiskKind> {
        let holder = self.page.holder(el.id).filter(|h| h.dialog)?;
        // A terse yes is read with its dialog's other words ([`Scope::holder_act`]).
        if terse(readings) || readings.iter().any(dismisses) {
            return None;
        }
        let text = crate::text::truncate_chars(holder.text.trim(), HOLDER_CHARS);
        let question = text
            .split_inclusive(['?', '？', '؟'])
            .next()
            .filter(|q| q.ends_with(['?', '？', '؟']))?;
        let acts_named: Vec<Act> = (self.read(question, |k| matches!(k, Kind::Act(..))).iter())
            .flat_map(acts)
            .filter(|(_, force, _)| *force >= Force::Verb)
            .map(|(act, ..)| act)
            .collect();
        let act = *acts_named.first()?;
        if acts_named.iter().any(|a| *a != act) {
            return None;
        }
        let elements: Vec<ElementFacts<'_>> = self.page.elements().take(CARD_SCAN).collect();
        let at = elements.iter().position(|e| e.id == el.id)?;
        let reach =
            at.saturating_sub(COMPOSER_REACH)..(at + COMPOSER_REACH + 1).min(elements.len());
        let others_dismiss = elements[reach].iter().all(|e| {
            e.id == el.id
                || class_of(&e.role) != Class::Control
                || self.page.holder_text(e.id).as_deref() != Some(holder.text.as_str())
                || names_of(e)
                    .iter()
                    .any(|n| self.read(n, |k| k == Kind::Dismiss).iter().any(dismisses))
        });
        others_dismiss.then(|| RiskKind::of(act))
    }

    /// The act `holder` states whose verb the control's name repeats from its first word. A
    /// name that is a harmless phrase as a whole ("Allow all" under "We use cookies … you can
    /// allow all") repeats no act: the holder's words are its own, read the harmless way.
    fn repeats_verb(&self, holder: &str, readings: &[Reading<'_>]) -> Option<RiskKind> {
        let harmless = |r: &Reading<'_>| {
            (r.hits.iter())
                .any(|h| h.kind == Kind::Benign && h.start == 0 && h.end == r.folded.len())
        };
        let own: Vec<&Folded> = readings
            .iter()
            .filter(|r| !harmless(r))
            .map(|r| &r.folded)
            .filter(|f| (1..=GENERIC_WORDS).contains(&f.len()))
            .collect();
        if own.is_empty() {
            return None;
        }
        let want = |k: Kind| matches!(k, Kind::Act(..) | Kind::Benign | Kind::Filter);
        for r in self.read(holder, want) {
            let words = r.folded.words(false);
            for (act, force, hit) in acts(&r) {
                if force < Force::Verb || hit.chars.is_some() {
                    continue;
                }
                let starts_with_verb = own.iter().any(|f| {
                    let mine = f.words(false);
                    words
                        .get(hit.start..hit.start + mine.len())
                        .is_some_and(|w| w == mine)
                });
                if starts_with_verb {
                    return Some(RiskKind::of(act));
                }
            }
        }
        None
    }

    /// Whether the dialog or form holding `el`, or the page's title, is about sharing: it
    /// names a sharing act ("Share 'Q3 plan'"), and filters nothing.
    fn about_sharing(&self, el: &ElementFacts<'_>) -> bool {
        let sharing = |k: Kind| matches!(k, Kind::Act(Act::Share, _) | Kind::Filter);
        self.holder_and_title(el).iter().any(|t| {
            let t = crate::text::truncate_chars(t, HOLDER_CHARS);
            let readings = self.read(&t, sharing);
            let filters = (readings.iter()).any(|r| r.hits.iter().any(|h| h.kind == Kind::Filter));
            !filters && readings.iter().any(|r| !acts(r).is_empty())
        })
    }

    /// Whether `el`'s name is a role that grants access, and nothing more than one word besides
    /// before any description ("Owner", "Super Admin", "Make admin", "Admin — manages members";
    /// one word of a script without spaces), outside a
    /// filter (its name, its dialog or form, or the nearest words before it say "filter").
    fn gives_role(&self, el: &ElementFacts<'_>) -> bool {
        let names = names_of(el);
        // A name may carry its description after a dash or a colon ("Administrateur — peut
        // gérer les membres"): the role is what comes before.
        let heads = names
            .iter()
            .filter_map(|n| n.split(['—', '–', '·', ':', '|']).next());
        let role = heads.into_iter().any(|n| {
            self.read(n, |k| k == Kind::Role).iter().any(|r| {
                let words = r.folded.len();
                r.hits.iter().any(|h| match h.chars {
                    Some(_) => words == 1,
                    // As many other words as the role has, one at least ("Super Admin",
                    // "Может редактировать настройки группы").
                    None => {
                        let role = h.end - h.start;
                        words <= 4 && words.saturating_sub(role) <= role.max(1)
                    }
                })
            })
        });
        role && !self.in_filter(el, &names) && self.about_access(el)
    }

    /// Whether `el` narrows a listing: its name, the name its dialog or form opens with ("All
    /// filters"), or the nearest words before it say "filter" ("Visibility: Public" beside
    /// "Filter" picks videos, sets none; a photo's settings dialog that shows its "Tags" is no
    /// filter).
    fn in_filter(&self, el: &ElementFacts<'_>, names: &[&str]) -> bool {
        self.says(names, Kind::Filter)
            || (self.page.holder_text(el.id)).is_some_and(|h| {
                let h = crate::text::truncate_chars(&h, HOLDER_CHARS);
                self.opens_with(&h, |k| k == Kind::Filter)
            })
            || self.labelled_filter(el)
            || self.among_filters(el)
    }

    /// Whether one of the [`FILTER_REACH`] controls before `el`, or the one right after it, is
    /// named by a filter ("Filter", "Sort"): `el` sits in a filter bar ("Account type: Full
    /// members", then "Filter"; a board's "Filters" button two controls after its visibility
    /// menu is another control).
    fn among_filters(&self, el: &ElementFacts<'_>) -> bool {
        // In the same dialog or form; a field holding what was typed in it ("Tags: see,
        // zeitraffer") is a value, not a filter.
        let holder = self.page.holder_text(el.id);
        let filled = |e: &ElementFacts<'_>| {
            class_of(&e.role) == Class::Field
                && e.value.as_deref().is_some_and(|v| !v.trim().is_empty())
        };
        let filters = |e: &ElementFacts<'_>| {
            !filled(e)
                && self.page.holder_text(e.id) == holder
                && names_of(e).iter().any(|n| self.leads(n, Kind::Filter))
        };
        let mut window: std::collections::VecDeque<bool> = std::collections::VecDeque::new();
        let mut elements = self.page.elements().take(CARD_SCAN);
        let mut found = false;
        for e in elements.by_ref() {
            if e.id == el.id {
                found = true;
                break;
            }
            if window.len() == FILTER_REACH {
                window.pop_front();
            }
            window.push_back(filters(&e));
        }
        found && (window.iter().any(|f| *f) || elements.next().is_some_and(|e| filters(&e)))
    }

    /// Whether the nearest words before `el` that name a setting name a filter; a question
    /// before it ("Who can see this photo?") is what it answers, and the words before that
    /// are another matter (a "Tags: beach" line above it).
    fn labelled_filter(&self, el: &ElementFacts<'_>) -> bool {
        let before = self.page.texts_before(el.id);
        let upto = before.iter().position(|t| t.contains(['?', '？', '؟']));
        let texts = before[..upto.map_or(before.len(), |q| q + 1)].iter();
        let kinds: Vec<Kind> = SETTINGS.into_iter().chain([Kind::Filter]).collect();
        self.nearest_setting(texts.map(String::as_str), &kinds) == Some(Kind::Filter)
    }

    /// Whether `el` stands where access is given: its dialog or form, the page's title or
    /// address names roles, permissions or members, it is named by sharing ("Share" over "Can
    /// edit"; not a page titled "SharePoint"), or a
    /// control of the page is named by roles alone (a "Role" menu or column; a link to a
    /// "Permissions" page leads there, it is not here). A role word elsewhere is a tool's name
    /// ("Ads Manager"), a job title or a survey's answer.
    fn about_access(&self, el: &ElementFacts<'_>) -> bool {
        let (_, path, _) = split_address(self.page.url());
        let says =
            |t: &str, kind: Kind| self.says(&[&crate::text::truncate_chars(t, HOLDER_CHARS)], kind);
        // Members in a title or a dialog ("Settings – Members", "Mitglied bearbeiten"); not in
        // an address, where a whole admin area is `/wp-admin/`.
        let said = (self.page.holder_text(el.id).into_iter()).chain(self.title.map(str::to_owned));
        let members = said
            .into_iter()
            .any(|t| says(&t, Kind::RoleField) || says(&t, Kind::Part(Part::Member)));
        let roles_page = says(&path.replace(['/', '-', '_'], " "), Kind::RoleField);
        // A form's field named so (`<input type="radio" name="role">`).
        let named =
            (el.attr("name")).is_some_and(|n| says(&n.replace(['-', '_'], " "), Kind::RoleField));
        // A control named by roles alone, or before its value ("Role: Member").
        let roles_control = (self.page.elements().take(CARD_SCAN)).any(|e| {
            let heads: Vec<&str> = (names_of(&e).into_iter())
                .filter_map(|n| n.split(':').next())
                .collect();
            e.id != el.id
                && !(e.role == "link" || navigates(&e))
                && (heads
                    .iter()
                    .flat_map(|n| self.read(n, |k| k == Kind::RoleField)))
                .any(|r| {
                    r.hits
                        .iter()
                        .any(|h| whole(&r, h) || h.end - h.start == r.folded.len())
                })
        });
        // A dialog or form named by sharing ("Share", "Compartir 'Roadmap'").
        let shares = (self.page.holder_text(el.id)).is_some_and(|h| {
            let h = crate::text::truncate_chars(&h, HOLDER_CHARS);
            self.opens_with(&h, |k| matches!(k, Kind::Act(Act::Share, _)))
        });
        members || roles_page || named || roles_control || shares
    }

    /// Whether a phrase of a kind `want` takes starts within the first [`NAME_WORDS`] words of
    /// `text` (the name a dialog or form opens with: "All filters", "Share 'Q3 plan'").
    /// A short word past the first ("del" in "Datos del candidato": Spanish "of the", Danish
    /// "share") is another language's word as often as the phrase.
    fn opens_with(&self, text: &str, want: impl Fn(Kind) -> bool + Copy) -> bool {
        (self.read(text, want).iter()).any(|r| {
            (r.hits.iter()).any(|h| {
                let short = h.end - h.start == 1
                    && r.folded
                        .plain
                        .get(h.start)
                        .is_some_and(|w| w.chars().count() <= 3);
                want(h.kind)
                    && h.start < NAME_WORDS
                    && !(short && h.start > 0)
                    && h.chars.is_none_or(|(a, _)| a < 16)
            })
        })
    }

    /// The text of the dialog or form holding `el` (when the page tells), then the page's title.
    fn holder_and_title(&self, el: &ElementFacts<'_>) -> Vec<String> {
        let holder = self.page.holder_text(el.id);
        holder
            .into_iter()
            .chain(self.title.map(str::to_owned))
            .collect()
    }

    /// Whether `text` starts with a phrase of `kind` (an option's name may carry its
    /// description after it: "Anyone with the link · Anyone on the internet can view").
    fn leads(&self, text: &str, kind: Kind) -> bool {
        (self.read(text, |k| k == kind).iter())
            .any(|r| (r.hits.iter()).any(|h| h.start == 0 && h.chars.is_none_or(|(a, _)| a == 0)))
    }

    /// Whether any of `texts` holds a phrase of `kind`.
    fn says(&self, texts: &[&str], kind: Kind) -> bool {
        texts.iter().any(|t| {
            self.read(t, |k| k == kind)
                .iter()
                .any(|r| !r.hits.is_empty())
        })
    }

    /// Whether `text` names a recurring price: an amount and a billing period (`/mo`,
    /// "monthly", `/ay`, `/月`; a period word alone is just a word).
    fn recurring(&self, text: &str) -> bool {
        has_amount(text) && self.says(&[text], Kind::Period)
    }

    /// Whether `text` names a recurring price of something (not "$0/month").
    fn charges_recurring(&self, text: &str) -> bool {
        self.recurring(text) && text.chars().any(|c| matches!(c, '1'..='9'))
    }

    /// A price in the name, in the dialog or form that holds the control, a payment page (not
    /// the cart), or card fields on the page: "Subscribe" or "Buy" pays.
    fn pay_context(&self, raw: &str, el: &ElementFacts<'_>) -> bool {
        has_amount(raw)
            || self.page_is(Kind::PayPage)
            || self.has_cards()
            // A price in a dialog: the question before the charge (a form on a product page
            // only leads to the next step).
            || self
                .page
                .holder(el.id)
                .is_some_and(|h| h.dialog && has_amount(&h.text))
    }

    /// Whether a short control that starts something ("Activate", "Try for €0", "Đăng ký")
    /// stands right after a recurring price: in its dialog or form, or the two texts before
    /// it (its offer's price and terms). A price another control names is that control's
    /// offer ("Try Plus – 24.99/month", then "Start free"); a price of nothing ("$0/month")
    /// charges nothing.
    fn activates_after_price(&self, el: &ElementFacts<'_>, names: &[&str]) -> bool {
        let short = names.iter().any(|n| fold(n).len() <= GENERIC_WORDS);
        let charged = |t: &str| self.charges_recurring(t);
        let offer = |t: &String| {
            charged(t)
                && !(self.page.elements().take(CARD_SCAN)).any(|e| {
                    e.id != el.id
                        && matches!(
                            &*e.role,
                            "btn"
                                | "button"
                                | "link"
                                | "a"
                                | "menuitem"
                                | "tab"
                                | "opt"
                                | "option"
                                | "radio"
                                | "chk"
                                | "checkbox"
                                | "switch"
                        )
                        && *e.name == **t
                })
        };
        // "Enable 2FA" turns a setting on: [`Scope::setting_act`] reads it.
        let setting = SETTINGS.iter().any(|k| self.says(names, *k));
        short
            && !setting
            && self.says(names, Kind::Part(Part::Begin))
            && ((self.page.texts_before(el.id).iter().take(2)).any(offer)
                || (self.page.holder_text(el.id)).is_some_and(|h| charged(&h)))
    }

    /// Whether a form's bare "Save", "Change" or "Confirm" ("Speichern", "Ändern", "Update") after
    /// the task typed into `field` on the user's own account page ("Persönliche Daten –
    /// Kundenkonto", `/myaccount/profile`) changes its sign-in contact or secret: a field named or labelled
    /// as one ("E-Mail-Adresse", "Mobilnummer", "New password") or given an e-mail address. A
    /// contact saved in an address book, a customer's record or a guest list is someone else's;
    /// "Save address" saves an address.
    fn saves_contact(
        &self,
        field: &ElementFacts<'_>,
        value: &str,
        readings: &[Reading<'_>],
    ) -> bool {
        // On the page of the contact itself (`/account/email`) its "Next" goes on to change it.
        let its_page = address_has(self, self.page.url(), Kind::PathContact);
        let applies = |k: Kind| {
            matches!(k, Kind::Save | Kind::Confirm | Kind::Part(Part::Change))
                || (its_page && k == Kind::Next)
        };
        let save = (readings.iter()).any(|r| {
            (r.hits.iter()).any(|h| applies(h.kind) && (h.start == 0 && h.end == r.folded.len()))
                || (r.hits.iter()).any(|h| applies(h.kind) && whole(r, h))
        });
        let email = crate::domain::email::Email::parse(value).is_ok_and(|e| {
            e.as_str()
                .rsplit_once('@')
                .is_some_and(|(_, host)| host.contains('.'))
        });
        // Its name, or on a `dom` page the text just before it (its label).
        let label = self.page.texts_before(field.id).into_iter().next();
        let names: Vec<&str> = names_of(field)
            .into_iter()
            .chain(label.as_deref())
            .collect();
        // On the account's own page a field called just "Phone" or "E-mail" is its contact.
        let contact = email
            || self.says(&names, Kind::Part(Part::Contact))
            || self.says(&names, Kind::PathContact);
        let own = self.page_is(Kind::AccountPage)
            || self
                .title
                .is_some_and(|t| self.says(&[t], Kind::AccountPage));
        save && contact
            && own
            && !self.page_is(Kind::AuthPage)
            && self.shop_page().is_none()
            && !self.has_cards()
    }

    /// Whether a yes ("Continue", "Allow", "Leisti", "Continue as Noor") answers an app's request for
    /// access: the page is an authorisation endpoint's (`/oauth…`, `/authorize`, `/consent` with
    /// a `client_id`) that asks for nothing typed but a search (a language list is no field to
    /// type in; the sign-in before it asks for a name: its "Next" only signs in).
    fn grants_app(&self, readings: &[Reading<'_>]) -> bool {
        let (_, path, query) = split_address(self.page.url());
        let path = path.to_ascii_lowercase();
        let endpoint = ["oauth", "authorize", "authorise", "consent"]
            .iter()
            .any(|w| path.contains(w))
            && query
                .split('&')
                .any(|p| p.to_ascii_lowercase().starts_with("client_id="));
        let typed = (self.page.elements().take(CARD_SCAN)).any(|e| {
            class_of(&e.role) == Class::Field
                && !matches!(&*e.role, "sel" | "select" | "combobox" | "listbox")
                && !self.searches(&e)
        });
        // A yes or a share verb ("Allow", "Leisti"); not a refusal ("Don't allow") nor a
        // harmless phrase ("Allow all cookies").
        let yes = (readings.iter()).any(|r| {
            let harmless = (r.hits.iter()).any(|h| matches!(h.kind, Kind::Benign | Kind::Dismiss));
            !harmless
                && (r.hits.iter()).any(|h| {
                    h.start == 0
                        && matches!(
                            h.kind,
                            Kind::Confirm | Kind::Next | Kind::Agree | Kind::Act(Act::Share, _)
                        )
                })
        });
        endpoint && !typed && yes
    }

    /// Whether `el` is a payment's or a subscription's own word ("Satın al", "Subscribe"; not a
    /// step's "Continue", which may only lead on) on a page where the option picked names a
    /// nonzero recurring price (a radio, an option, a card shown pressed): what it buys is
    /// that plan.
    fn buys_picked_plan(&self, el: &ElementFacts<'_>, readings: &[Reading<'_>]) -> bool {
        let buys = (readings.iter())
            .any(|r| (acts(r).iter()).any(|(a, ..)| matches!(a, Act::Pay | Act::Subscribe)));
        // Picked: a checked option, or a plan's card shown pressed.
        let picked = |e: &ElementFacts<'_>| {
            e.id != el.id
                && (option(e) && (e.has_state("checked") || e.has_state("selected"))
                    || e.has_state("pressed"))
                && self.charges_recurring(&e.name)
        };
        buys && (self.page.elements().take(CARD_SCAN)).any(|e| picked(&e))
    }

    /// Whether a payment here recurs: a recurring price in the control's name, its dialog or
    /// form, or the page's title.
    fn recurs_here(&self, raw: &str, el: &ElementFacts<'_>) -> bool {
        self.recurring(raw)
            || self
                .page
                .holder_text(el.id)
                .is_some_and(|h| self.recurring(&h))
            || self.title.is_some_and(|t| self.recurring(t))
    }

    /// Whether an act of a context-bound phrase happens here: a payment with a price in the
    /// name, on a payment page or beside card fields; a message next to a filled text field
    /// (what "Send" or "Comment" would send, rather than opening a composer); a transfer on a
    /// transfer page, with an amount in the name, or next to a filled field holding digits.
    fn in_context(&self, act: Act, raw: &str, el: &ElementFacts<'_>) -> bool {
        match act {
            Act::Pay => self.pay_context(raw, el),
            Act::Send => self.filled_near(el, |_, _| true),
            Act::Transfer => {
                self.page_is(Kind::TransferPage)
                    || has_amount(raw)
                    || self.filled_near(el, |_, v| v.chars().any(|c| c.is_ascii_digit()))
            }
            Act::Delete | Act::Secure => true,
            // "Share" or "Invite" shares once someone's address is typed beside it, or a name
            // in a field for the people to share with ("Add people").
            Act::Share => {
                self.filled_near(el, |field, v| {
                    v.contains('@')
                        || names_of(field).iter().any(|n| {
                            self.read(n, |k| matches!(k, Kind::Act(Act::Share, _)))
                                .iter()
                                .any(|r| !r.hits.is_empty())
                        })
                })
                // An address already added shows as a chip ("ana@example.com ×"), in the
                // dialog or form too.
                || self.near(el, |e| e.id != el.id && e.name.contains('@'))
                || (self.page.holder_text(el.id))
                    .is_some_and(|t| t.split_whitespace().any(|w| w.contains('@')))
            }
            // "Subscribe" or "Upgrade" charges beside a price or a billing period, on a
            // payment page or beside card fields.
            Act::Subscribe => {
                self.pay_context(raw, el)
                    || self.title.is_some_and(has_amount)
                    || self.page.texts_before(el.id).iter().any(|t| has_amount(t))
                    || self.near(el, |e| {
                        names_of(e)
                            .iter()
                            .chain(e.value.as_deref().iter())
                            .any(|t| has_amount(t))
                    })
            }
        }
    }

    /// Whether an element within [`COMPOSER_REACH`] elements of `el` (before or after it)
    /// `counts`.
    fn near(&self, el: &ElementFacts<'_>, counts: impl Fn(&ElementFacts<'_>) -> bool) -> bool {
        let mut before: std::collections::VecDeque<bool> = std::collections::VecDeque::new();
        let mut after: Option<usize> = None;
        for e in self.page.elements().take(CARD_SCAN) {
            match after.as_mut() {
                Some(0) => break,
                Some(left) => {
                    *left -= 1;
                    if counts(&e) {
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
                    before.push_back(counts(&e));
                }
            }
        }
        false
    }

    /// Whether a field within [`COMPOSER_REACH`] elements of `el` (before or after it) holds
    /// typed text that `counts`.
    fn filled_near(
        &self,
        el: &ElementFacts<'_>,
        counts: impl Fn(&ElementFacts<'_>, &str) -> bool,
    ) -> bool {
        // A list's or a slider's value is a choice, not text that would be sent or moved.
        let chooses = |e: &ElementFacts<'_>| {
            matches!(
                &*e.role,
                "sel" | "select" | "slider" | "spin" | "spinbutton"
            )
        };
        self.near(el, |e| {
            class_of(&e.role) == Class::Field
                && !chooses(e)
                && e.value
                    .as_deref()
                    .is_some_and(|v| !v.trim().is_empty() && counts(e, v))
        })
    }

    /// "Confirm", "Submit" (and "Continue" next to a price) on a payment or transfer page or in
    /// a form asking for card details.
    fn generic_commit(&self, el: &ElementFacts<'_>, readings: &[Reading<'_>]) -> Option<RiskKind> {
        // A control that names filtering ("Apply filters", "Pas filters aan") narrows a list.
        if self.says(&names_of(el), Kind::Filter) {
            return None;
        }
        let short = |r: &&Reading<'_>| r.folded.len() <= GENERIC_WORDS;
        let says = |kind: Kind| {
            readings
                .iter()
                .filter(short)
                .any(|r| r.hits.iter().any(|h| h.kind == kind))
        };
        let priced = readings.iter().any(|r| has_amount(r.raw));
        // A recurring price just before a yes ("Confirm", "Sahkan"; not a step's "Continue"),
        // or a recurring charge on a box ticked beside a yes or an "Activate" ("Pakej Sukan
        // RM45/bulan", "Renew automatically every month"): it starts the charge.
        let yes = says(Kind::Confirm);
        if (yes || says(Kind::On)) && !self.page_is(Kind::CartPage) {
            // Picked: a box or option ticked, a plan's card pressed, or a list showing the plan
            // ("99 DH/mois").
            let listed = |e: &ElementFacts<'_>| {
                matches!(&*e.role, "sel" | "select" | "combobox")
                    && e.value.as_deref().is_some_and(|v| self.recurring(v))
            };
            let ticked = self.near(el, |e| {
                listed(e)
                    || (toggles(e) || option(e) || e.has_state("pressed"))
                        && (is_on(e) || e.has_state("selected"))
                        && names_of(e)
                            .iter()
                            .any(|n| self.recurring(n) || self.says(&[n], Kind::Renew))
            });
            let before = || self.page.texts_before(el.id);
            if ticked || (yes && before().iter().take(3).any(|t| self.recurring(t))) {
                return Some(RiskKind::Subscription);
            }
        }
        if says(Kind::Confirm) || (says(Kind::Next) && priced) {
            if self.page_is(Kind::TransferPage) {
                return Some(RiskKind::Transfer);
            }
            if priced || self.page_is(Kind::PayPage) || self.has_cards() {
                return Some(RiskKind::Payment);
            }
        }
        // Text written in a box of lines and submitted with it ("Submit", "Envia", "ثبت"; in
        // the same form or dialog; not saved: "Save and finish later") is sent or published:
        // a review, a comment, a message. On a page of the user's own account a form keeps the
        // user's details, and a box there a note kept with them (a courier's instructions).
        let holder = |e: &ElementFacts<'_>| self.page.holder_text(e.id);
        let boxed = |e: &ElementFacts<'_>, _: &str| multiline(e) && holder(e) == holder(el);
        let kept = || self.page_is(Kind::AuthPage) || self.page_is(Kind::AccountPage);
        if yes && !says(Kind::Save) && self.filled_near(el, boxed) && !kept() {
            return Some(RiskKind::Sending);
        }
        None
    }

    /// The act of choosing `value` in the list `select` when the list acts on change ("Delete
    /// selected"): read from the value and, on `dom` pages, the option's text.
    pub fn choice(&self, list: &ElementFacts<'_>, value: &str) -> Option<RiskKind> {
        if let Some(kind) = self.setting_choice(list, value) {
            return kind;
        }
        let shown = self.page.option_text(list.id, value);
        let names: Vec<&str> = std::iter::once(value).chain(shown.as_deref()).collect();
        self.names_act(&names)
    }

    /// What choosing `value` in `list` does to the setting the list is: everyone given access
    /// ("Anyone with the link", "Public"), someone given a role that grants it ("Admin" in a
    /// "Role" list), a protection turned off, a recurring charge turned on. `Some(None)` when
    /// the list is such a setting and the choice does nothing of the kind.
    fn setting_choice(&self, list: &ElementFacts<'_>, value: &str) -> Option<Option<RiskKind>> {
        let shown = self.page.option_text(list.id, value);
        let chosen: Vec<&str> = std::iter::once(value).chain(shown.as_deref()).collect();
        let names = names_of(list);
        // A list whose own name names no setting ("Method") is the one its row or section
        // names ("Two-step verification").
        let kinds = [Kind::OptOut, Kind::Protect, Kind::Renew];
        let before = match kinds.iter().any(|k| self.says(&names, *k)) {
            true => None,
            false => self.setting_before(list, &[]),
        };
        let is = |kind: Kind| self.says(&names, kind) || before == Some(kind);
        if self.says(&chosen, Kind::OptOut) || is(Kind::OptOut) {
            return Some(None);
        }
        if self.says(&chosen, Kind::Public) {
            return Some((!self.in_filter(list, &names)).then_some(RiskKind::Sharing));
        }
        // A role chosen where access is given (a "Role" list, a member's dialog), not in a
        // filter of a listing nor where a role word is a job's level or title.
        let headed = || {
            (self.page.texts_before(list.id).iter().take(3))
                .any(|t| self.says(&[t], Kind::RoleField))
        };
        let access = || self.says(&names, Kind::RoleField) || headed() || self.about_access(list);
        if self.says(&chosen, Kind::Role) && !self.says(&names, Kind::Filter) && access() {
            return Some(Some(RiskKind::Sharing));
        }
        let (off, on) = (self.says(&chosen, Kind::Off), self.says(&chosen, Kind::On));
        if is(Kind::Protect) && off && !on {
            return Some(Some(RiskKind::Security));
        }
        if is(Kind::Renew) && on && !off {
            return Some(Some(RiskKind::Subscription));
        }
        // A plan chosen by its recurring price ("Premium – 9,99 €/Monat") in a list that
        // applies it starts the charge; a filter of a listing only narrows it.
        if chosen.iter().any(|c| self.recurring(c)) && !self.says(&names, Kind::Filter) {
            return Some(Some(RiskKind::Subscription));
        }
        None
    }

    /// The act an address performs when opened: an act in its last path segment that is the
    /// act itself (`/orders/place`, `/unsubscribe`), or an act in its path with the act's
    /// parameters in the query (`/transfer?amount=5000&to=x&confirm=1`), or a query that names
    /// the act (`?action=delete`), read verb first too (`/api-keys/k_91/roll?confirm=1`); a
    /// query that turns the setting its path names off or on (`/login-alerts?action=disable`,
    /// `/auto-renew?enable=1`), or sets an exposure on a sharing page or with the act's
    /// parameters (`/d/42/share?visibility=public`); an approval's cue (`approve=1`) is one of
    /// those parameters. Help and article pages perform nothing; a verb alone as the last
    /// segment (`/compose/post`, `/account/delete`) is a page to visit.
    pub fn address(&self, url: &str, opening: bool) -> Option<RiskKind> {
        let (_, path, query) = split_address(url);
        let want = |k: Kind| matches!(k, Kind::Act(..) | Kind::Benign | Kind::InfoHref);
        let path_read = self.read(&path, want);
        if path_read
            .iter()
            .any(|r| r.hits.iter().any(|h| h.kind == Kind::InfoHref))
        {
            return None;
        }
        let mut segments = path.rsplit('/').filter(|s| !s.is_empty());
        let last = segments.next().unwrap_or("");
        let before = segments.next().unwrap_or("");
        // The act itself as the last segment (`/orders/place`), or the last two read the other
        // way round (`/trash/empty` is "empty trash").
        for text in [last.to_owned(), format!("{last} {before}")] {
            for r in self.read(&text, want) {
                if let Some((act, _, _)) =
                    acts(&r).into_iter().find(|(_, f, _)| *f == Force::Commit)
                {
                    return Some(RiskKind::of(act));
                }
            }
        }
        // A bare verb that deletes or sends as the whole last segment (`/items/3/delete`,
        // `/compose/send`) performs it when the agent opens it (a link or button leading there
        // shows the step's page first: a click is read by its own name).
        for r in self.read(last, want).into_iter().filter(|_| opening) {
            let verb = acts(&r).into_iter().find(|(act, f, h)| {
                *f == Force::Verb && matches!(act, Act::Delete | Act::Send) && whole(&r, h)
            });
            if let Some((act, _, _)) = verb {
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
        let truthy = |v: &str| !matches!(v.trim(), "" | "0" | "false" | "no" | "off");
        let path_text = [path.as_str()];
        for (k, v) in &pairs {
            let names_act = matches!(
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
            );
            if names_act {
                for r in self.read(v, want) {
                    if let Some((act, _, _)) = acts(&r).into_iter().find(|(_, _, h)| whole(&r, h)) {
                        return Some(RiskKind::of(act));
                    }
                }
            }
            // A query that turns the setting its path names off or on (`/login-alerts?action=
            // disable`, `/auto-renew?enable=1`) is that switch.
            let turn = if names_act {
                Some(v.as_str())
            } else if truthy(v) {
                Some(k.as_str())
            } else {
                None
            };
            if let Some(turn) = turn {
                let (off, on) = (self.says(&[turn], Kind::Off), self.says(&[turn], Kind::On));
                if off && !on && self.says(&path_text, Kind::Protect) {
                    return Some(RiskKind::Security);
                }
                if on && !off && self.says(&path_text, Kind::Renew) {
                    return Some(RiskKind::Subscription);
                }
                if on && !off && self.says(&path_text, Kind::Public) {
                    return Some(RiskKind::Sharing);
                }
            }
        }
        // The act's parameters, or a confirmation's: a key that confirms in the page's
        // language (`potvrzeno=1`, `bestaetigt=ja`) or the one-time ticket of a link sent to
        // confirm (`?ticket=…`, `?code=…`).
        let confirms =
            |k: &str| self.says(&[k], Kind::Confirm) || matches!(k, "ticket" | "code" | "otp");
        // A link sent to confirm one act (`/email/bevestig?code=…`, `/approve-join?token=…`):
        // a confirming word in the path and the link's one-time ticket in the query.
        let ticket = pairs.iter().any(|(k, v)| {
            truthy(v)
                && matches!(
                    k.as_str(),
                    "token" | "code" | "ticket" | "otp" | "t" | "sig" | "signature" | "hash"
                )
        });
        let confirming_path = self.says(&path_text, Kind::Confirm);
        let cue = (ticket && confirming_path)
            || pairs.iter().any(|(k, v)| {
                truthy(v)
                    && (confirms(k)
                        || matches!(
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
                                | "approve"
                                | "approved"
                                | "allow"
                                | "accept"
                                | "grant"
                                | "consent"
                                | "authorize"
                                | "authorise"
                        ))
            });
        // The path read the other way round, without its ids (`/api-keys/k_91/roll` is "roll
        // api keys"): where an act is written verb first.
        let reversed: Vec<&str> = path
            .rsplit('/')
            .filter(|s| !s.is_empty() && !s.chars().any(|c| c.is_ascii_digit()))
            .collect();
        let reversed = reversed.join(" ");
        // The path with the query's keys (`/email/bevestig?wijziging=…` changes the e-mail).
        let keyed = std::iter::once(path.as_str())
            .chain(pairs.iter().map(|(k, _)| k.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        if cue {
            // A confirmation link (`/2fa/disable/confirm?token=…`) performs the switch its path
            // names: a protection turned off, a recurring charge or an exposure turned on.
            let (off, on) = (
                self.says(&path_text, Kind::Off),
                self.says(&path_text, Kind::On),
            );
            // Turned off under the account's security (`/sicherheit/pushtan/deaktivieren`).
            if off && !on && self.says(&path_text, Kind::SecurityPage) {
                return Some(RiskKind::Security);
            }
            // The account's e-mail or phone changed (`/email/confirmar-troca?t=…`,
            // `/unbind/mobile_confirm.html?ticket=…`; confirming one's own address on sign-up
            // changes nothing).
            let keyed_text = [keyed.as_str()];
            if self.says(&keyed_text, Kind::PathContact)
                && self.says(&keyed_text, Kind::Part(Part::Change))
            {
                return Some(RiskKind::Security);
            }
            let turned = [
                (Kind::Protect, off && !on, RiskKind::Security),
                (Kind::Renew, on && !off, RiskKind::Subscription),
                (Kind::Public, on && !off, RiskKind::Sharing),
            ];
            let switched = turned
                .into_iter()
                .find(|(kind, ok, _)| *ok && self.says(&path_text, *kind));
            if let Some((_, _, risk)) = switched {
                return Some(risk);
            }
            // Something turned on at the price the query states (`/balicky/aktivovat?cena=199`,
            // `/abonnement/reactiver?prix=2799`) starts a charge: a plan, a package.
            let priced = pairs.iter().any(|(k, v)| {
                v.chars().any(|c| c.is_ascii_digit())
                    && matches!(
                        k.as_str(),
                        "price"
                            | "prix"
                            | "preis"
                            | "cena"
                            | "precio"
                            | "prezzo"
                            | "preco"
                            | "pris"
                            | "hinta"
                            | "fiyat"
                            | "harga"
                            | "gia"
                            | "ar"
                            | "pret"
                    )
            });
            if priced && on && !off {
                return Some(RiskKind::Subscription);
            }
            // The query carries the act's parameters: any act the path names is performed.
            let found = path_read
                .iter()
                .chain(&self.read(&reversed, want))
                .chain(&self.read(&keyed, want))
                .find_map(|r| acts(r).into_iter().next())
                .map(|(act, _, _)| RiskKind::of(act));
            if found.is_some() {
                return found;
            }
        }
        // A query that sets an exposure (`visibility=public`) on a sharing page or with the act's
        // parameters shares; on a listing it is a filter.
        let exposes = pairs.iter().any(|(_, v)| {
            self.says(&[v.as_str()], Kind::Public) && !self.says(&[v.as_str()], Kind::Private)
        });
        let sharing_path = path_read
            .iter()
            .any(|r| acts(r).iter().any(|(act, _, _)| *act == Act::Share));
        (exposes && (cue || sharing_path)).then_some(RiskKind::Sharing)
    }

    /// The risk of pressing `key` with the focus on `focus`: Enter in a field submits its
    /// form, Enter or Space on a control presses it; other keys act on nothing.
    pub fn press(&self, key: &str, focus: Option<&ElementFacts<'_>>) -> Option<Risk> {
        let lower = key.to_ascii_lowercase();
        let parts: Vec<String> = lower
            .split('+')
            .map(|p| p.trim().replace([' ', '_', '-'], ""))
            .filter(|p| !p.is_empty())
            .collect();
        let (base, mods) = match parts.split_last() {
            Some((b, m)) => (b.as_str(), m),
            None => ("", &[][..]),
        };
        let chord = mods.iter().any(|m| {
            matches!(
                m.as_str(),
                "control" | "ctrl" | "meta" | "cmd" | "command" | "super" | "win" | "os"
            )
        });
        let enter = matches!(base, "enter" | "return" | "numpadenter" | "kpenter" | "\n");
        let space = key.ends_with(' ') || matches!(base, "space" | "spacebar");
        if !(enter || space) {
            return None;
        }
        let focus = focus?;
        let class = class_of(&focus.role);
        if class == Class::Field && enter {
            // Ctrl/Cmd with Enter in any text field sends what it holds; plain Enter submits
            // the field's form (named by the button it presses), and in a message composer
            // sends.
            let composer = names_of(focus).iter().any(|n| {
                self.read(n, |k| {
                    matches!(k, Kind::Composer | Kind::Act(Act::Send, _) | Kind::Benign)
                })
                .iter()
                .any(|r| r.hits.iter().any(|h| h.kind == Kind::Composer) || !acts(r).is_empty())
            });
            // Plain Enter in a field whose suggestions are open (a recipient's "To") picks one;
            // with its list closed it submits the form like any field's, and a composer sends.
            let open = focus.has_state("expanded")
                || (self.page.elements().take(CARD_SCAN))
                    .any(|e| matches!(&*e.role, "opt" | "option" | "listbox"));
            let list = matches!(&*focus.role, "combobox" | "sel" | "select" | "listbox");
            if list && open && !chord && !composer {
                return None;
            }
            // A search box submits only the form the page says it is in (a `dom` form): in
            // the extension's tree the form is a guess, and its Enter searches.
            let search = self.searches(focus);
            let guessed = search && self.page.form_submits(focus.id).is_none();
            let submits = (!chord && !guessed)
                .then(|| self.submit_of(focus))
                .flatten();
            if let Some((kind, button)) = submits {
                return Some(Risk {
                    kind,
                    what: format!(
                        "press Enter, which would submit the form with {} — this would {}",
                        label(&button),
                        kind.would()
                    ),
                });
            }
            // A search box is no composer: its Enter (or Ctrl+Enter) searches.
            if (chord || composer) && !search {
                return Some(Risk {
                    kind: RiskKind::Sending,
                    what: format!(
                        "press {} in {}, which sends what it holds — this would {}",
                        if chord { "Ctrl+Enter" } else { "Enter" },
                        label(focus),
                        RiskKind::Sending.would()
                    ),
                });
            }
            return None;
        }
        let turn = (space && toggles(focus)).then(|| !is_on(focus));
        self.element(focus, class == Class::Choice && space, turn)
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

    /// Whether `field` is a search box: written so (`type="search"`, a `searchbox` role), or
    /// named by a search word first ("Search Acme", "البحث أو بدء دردشة جديدة", "Найти").
    fn searches(&self, field: &ElementFacts<'_>) -> bool {
        let written = field
            .input_type
            .is_some_and(|t| t.eq_ignore_ascii_case("search"))
            || matches!(&*field.role, "searchbox")
            || field
                .attr("role")
                .is_some_and(|r| r.eq_ignore_ascii_case("searchbox"));
        written
            || names_of(field).iter().any(|n| {
                self.read(n, |k| k == Kind::Search)
                    .iter()
                    .any(|r| r.hits.iter().any(|h| h.start == 0))
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

/// Whether `el` is a switch or a checkbox (a click on it turns it over).
fn toggles(el: &ElementFacts<'_>) -> bool {
    matches!(&*el.role, "chk" | "checkbox" | "switch" | "toggle")
        || matches!(el.input_type, Some("checkbox"))
}

/// What names a setting a switch turns, in the order one text's kinds are read: an opt-out
/// decides over the rest.
const SETTINGS: [Kind; 4] = [Kind::OptOut, Kind::Protect, Kind::Public, Kind::Renew];

/// Whether an element is one option among others (a radio button, a list's option).
fn option(el: &ElementFacts<'_>) -> bool {
    matches!(&*el.role, "radio" | "menuitemradio" | "option" | "opt")
        || el.input_type == Some("radio")
}

/// Whether a field takes lines of text (a text area, an editable element: a message, a review).
fn multiline(el: &ElementFacts<'_>) -> bool {
    el.role == "textarea" || el.input_type == Some("textarea")
}

/// Whether a switch or checkbox is on.
fn is_on(el: &ElementFacts<'_>) -> bool {
    el.has_state("checked") || el.has_state("on") || el.has_state("pressed")
}

/// Whether a name is a dismissal and nothing more ("Cancel", "Not now").
fn dismisses(r: &Reading<'_>) -> bool {
    r.hits.iter().any(|h| {
        h.kind == Kind::Dismiss
            && h.start == 0
            && h.end == r.folded.len()
            && h.chars
                .is_none_or(|(a, b)| a == 0 && b == r.folded.joined(false).0.chars().count())
    })
}

/// Whether a control's name is only a generic yes ("OK", "Yes", "Confirm", "Continue"): what it
/// commits is said around it.
fn terse(readings: &[Reading<'_>]) -> bool {
    readings.iter().any(|r| {
        r.folded.len() <= GENERIC_WORDS
            && r.hits
                .iter()
                .any(|h| matches!(h.kind, Kind::Confirm | Kind::Next | Kind::Save))
    })
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
            // Removing, cancelling or revoking "all" of a list's filters only widens the list.
            let narrows = filter && matches!(act, Act::Delete | Act::Secure | Act::Share);
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

/// Currency signs a price is written with.
const CURRENCY_SIGNS: &[char] = &[
    '$', '€', '£', '¥', '₹', '₽', '₩', '₺', '₴', '₪', '฿', '₫', '₦', '₱', '﷼', '円', '元', '₸',
    '₼', '₾', '৳', '₵', '₡', '₲', '₭', '₮', '₨', '₿', '¢',
];
/// Currency codes and the words prices are written with (lower case), in any language:
/// ISO codes, and the local words ("TL", "Rp", "đ", "원", "грн", "บาท", "تومان", "टका" …).
const CURRENCY_WORDS: &[&str] = &[
    "kr",
    "zł",
    "zl",
    "kč",
    "kc",
    "ft",
    "lei",
    "leu",
    "rs",
    "r",
    "tl",
    "rp",
    "đ",
    "dong",
    "원",
    "円",
    "元",
    "块",
    "грн",
    "руб",
    "р",
    "₽",
    "бат",
    "บาท",
    "تومان",
    "ريال",
    "ریال",
    "ر.س",
    "درهم",
    "جنيه",
    "دينار",
    "روپیہ",
    "روپے",
    "टका",
    "টাকা",
    "৳",
    "रु",
    "रुपये",
    "रुपए",
    "ரூ",
    "ரூபாய்",
    "ksh",
    "kshs",
    "sh",
    "tsh",
    "rm",
    "₱",
    "peso",
    "pesos",
    "euro",
    "euros",
    "dollar",
    "dollars",
    "złotych",
    "korun",
    "forint",
    "lira",
    "ringgit",
    "rupiah",
    "baht",
    "won",
    "yen",
    "yuan",
    "rupee",
    "rupees",
    "shilingi",
    "ευρώ",
    "шекел",
    "₪",
    "שח",
    "ש״ח",
    "ש\"ח",
    "dh",
    "dhs",
    "лв",
    "din",
    "дин",
    "ден",
    "сом",
];

/// Currency abbreviations written with a dot (Gulf riyal, dirham, Egyptian pound, dinar).
const CURRENCY_MARKS: &[&str] = &["ر.س", "د.إ", "ج.م", "د.ك", "ر.ق", "ر.ع", "د.ب", "د.أ"];

/// ISO 4217 codes, read only in capitals (`TRY` is the lira, "try" a word).
const CURRENCY_CODES: &[&str] = &[
    "USD", "EUR", "GBP", "JPY", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "RON", "TRY",
    "INR", "RUB", "BRL", "CAD", "AUD", "CNY", "RMB", "KRW", "UAH", "IRR", "IRT", "AED", "SAR",
    "EGP", "PKR", "BDT", "LKR", "KES", "NGN", "ZAR", "IDR", "MYR", "THB", "VND", "PHP", "MXN",
    "ILS", "NZD", "SGD", "HKD", "TWD", "CLP", "COP", "ARS", "PEN", "TZS", "UGX",
];

/// Whether `text` holds a price: a currency sign, code or word next to a number written in
/// any digits (Persian and Arabic-Indic too), glued to it or not (`9.900원`, `99TL`).
fn has_amount(text: &str) -> bool {
    if !text.chars().any(char::is_numeric) {
        return false;
    }
    if text.contains(CURRENCY_SIGNS) || CURRENCY_MARKS.iter().any(|m| text.contains(m)) {
        return true;
    }
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '/' | '(' | ')' | ':' | '-'))
        .map(|w| w.trim_matches(|c: char| c.is_numeric() || matches!(c, '\'' | '’' | '٬' | '٫')))
        .filter(|w| !w.is_empty())
        .any(|w| CURRENCY_CODES.contains(&w) || CURRENCY_WORDS.contains(&w.to_lowercase().as_str()))
}

/// A URL's host, path (decoded) and query.
pub(super) fn split_address(url: &str) -> (&str, String, &str) {
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

/// What an address names a page by: its host, its path and a single-page app's `#/route`.
fn address_text(url: &str) -> String {
    let (host, path, _) = split_address(url);
    let route = (url
        .split_once('#')
        .and_then(|(_, f)| crate::text::hash_route(f)))
    .unwrap_or("");
    format!("{host}/{path}{route}")
}

/// Whether `url` names `kind`: a payment or transfer page by its host or path
/// (`pay.example.com`, `/checkout`, a single-page app's `#/pix/transferir`), a help page by its
/// path (a route's "community" or "blog" is no help page).
fn address_has(scope: &Scope<'_>, url: &str, kind: Kind) -> bool {
    let text = if kind == Kind::InfoHref {
        split_address(url).1
    } else {
        address_text(url)
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
        patterns
            .hits(f, |k| k == Kind::Negation)
            .iter()
            .any(|h| h.start == 0 && h.chars.is_none_or(|(a, _)| a == 0))
    })
}
