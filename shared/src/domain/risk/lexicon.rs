//! The risk gate's phrase table ([`lexicon.txt`](lexicon.txt)): what acts, fields and contexts
//! look like in some thirty languages, read once and folded as page text is ([`super::fold`]),
//! and found in a folded text as whole words (a `*` word as a stem), or anywhere for scripts
//! written without spaces.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::fold::{fold, unspaced, Folded};

/// What a control does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Act {
    Pay,
    Delete,
    Send,
    Transfer,
    /// Share with someone, make public, grant access, change a member's role.
    Share,
    /// Change how the account is protected: its password, e-mail, phone, recovery, second
    /// factor, sessions and keys.
    Secure,
    /// Start a recurring charge: subscribe, upgrade, a paid trial.
    Subscribe,
}

impl Act {
    pub const ALL: [Act; 7] = [
        Act::Pay,
        Act::Delete,
        Act::Send,
        Act::Transfer,
        Act::Share,
        Act::Secure,
        Act::Subscribe,
    ];
}

/// How sure a phrase is that the control performs its act.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Force {
    /// Only in context: a payment with a price in the name, on a payment page or beside card
    /// fields ("Subscribe", "Buy now"); a message or a transfer next to a filled field (what
    /// would be sent, an amount) or on a transfer page ("Send", "Transfer").
    Context,
    /// The act's verb ("Delete", "Pay"): risky on controls.
    Verb,
    /// The act itself ("Pay now", "Place order"): risky on links too.
    Commit,
}

/// What a phrase of the table says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Act(Act, Force),
    Benign,
    Agree,
    Filter,
    Info,
    InfoHref,
    PayPage,
    TransferPage,
    Confirm,
    Next,
    Submit,
    /// A search box's first word ("Search", "Suchen", "البحث"): Enter there searches.
    Search,
    /// An account's credential a control makes, shows or rotates (an API key, a token,
    /// backup codes): not a field's name, which [`Kind::Secret`] reads.
    Credential,
    Secret,
    Card,
    CardContext,
    NotSecret,
    Negation,
    CartPage,
    Code,
    AuthPage,
    /// A protection a switch turns on (two-step verification): turning it off is an act.
    Protect,
    /// An exposure a switch turns on (anyone with the link): turning it on is an act.
    Public,
    /// A recurring charge a switch turns on (auto-renew): turning it on is an act.
    Renew,
    /// A setting that is the user's to turn either way (marketing e-mails): never an act.
    OptOut,
    /// A billing period written by a price (`/mo`, "monthly", `/ay`, `/月`).
    Period,
    /// Turning a setting off ("Turn off", "Disable"), or on.
    Off,
    On,
    /// A role that grants access ("Admin", "Can edit"), and what a list of roles is called.
    Role,
    RoleField,
    /// A field where a message is written (Enter there sends it).
    Composer,
    /// A form's generic apply ("Save", "Done"): what it commits is said around it.
    Save,
    /// The opposite of an exposure ("Private account"): turning it off exposes.
    Private,
    /// Dismissing a dialog ("Cancel", "No", "Keep"): it commits nothing.
    Dismiss,
    /// One part of an act written in two ([`COMPOSED`]).
    Part(Part),
    /// Words of a page about the account's security (its address or title): what a control
    /// there turns off is a protection.
    SecurityPage,
    /// Words of a page about the user's own account (its address or title: "My account",
    /// "Persönliche Daten", `/myaccount/profile`): a contact saved there is the sign-in one.
    AccountPage,
    /// How an address names the account's e-mail or phone (`/email/`, `mobile_confirm`):
    /// a confirmation link that changes one changes the account's sign-in contact.
    PathContact,
    /// How an address names a page of records (`/history`, `/statements`, `#/perevod/istoriya`):
    /// named last, the page lists what was done; it does nothing.
    Records,
    /// A word a look-alike host is dressed in (`-verify`, `-rewards`, `-delivery`): read in a
    /// host's registrable name only ([`lexicon-hosts.txt`](lexicon-hosts.txt)).
    Lure,
}

/// The parts of the acts a page writes as a verb and what it acts on, in either order and
/// with any words between ("Esci da tutti gli altri dispositivi", "Passwort ändern",
/// "Transfer ownership", "Approve Ada's request to join"): read apart
/// ([`lexicon-parts.txt`](lexicon-parts.txt)), they make the act together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// Ending sessions ("Sign out", "Log out", "Terminate").
    SignOut,
    /// All of them, or the others ("all", "other devices", "everywhere").
    Everywhere,
    /// Changing, replacing or removing ("Change", "Update", "Unbind").
    Change,
    /// The account's sign-in contact, recovery or secret ("phone number", "password").
    Contact,
    /// Handing over ("Transfer", "Übertragen", "譲渡").
    Handover,
    /// Ownership ("owner", "ownership").
    Ownership,
    /// Letting someone in ("Add", "Invite", "Approve").
    Admit,
    /// Whom or what standing ("member", "admin", "request to join").
    Member,
    /// Starting ("Start", "Try", "Activate").
    Begin,
    /// A trial ("trial", "free trial", "無料体験"): a charge once it ends, where a price is
    /// stated near it.
    Trial,
}

/// Most words between the two parts of an act ("Esci da tutti gli altri dispositivi": 3). A
/// dialog's heading and a field label further on ("Edit your address … Phone number") are
/// two clauses.
pub const PART_GAP: usize = 3;

/// Most hits of one part paired with the other's in one text (64 × 64 pairs at most).
pub const MAX_PART_HITS: usize = 64;

/// The acts made of two parts, with how sure they are: either part alone is no act ("Sign
/// out" ends this session, "Phone number" names a field, "Add" adds to a list).
pub const COMPOSED: [(Part, Part, Act, Force); 5] = [
    (Part::SignOut, Part::Everywhere, Act::Secure, Force::Verb),
    (Part::Change, Part::Contact, Act::Secure, Force::Verb),
    (Part::Handover, Part::Ownership, Act::Share, Force::Verb),
    (Part::Admit, Part::Member, Act::Share, Force::Verb),
    (Part::Begin, Part::Trial, Act::Subscribe, Force::Context),
];

impl Kind {
    fn parse(s: &str) -> Option<Self> {
        let act = |a, f| Some(Kind::Act(a, f));
        match s {
            "pay!" => act(Act::Pay, Force::Commit),
            "pay" => act(Act::Pay, Force::Verb),
            "pay?" => act(Act::Pay, Force::Context),
            "delete!" => act(Act::Delete, Force::Commit),
            "delete" => act(Act::Delete, Force::Verb),
            "send!" => act(Act::Send, Force::Commit),
            "send" => act(Act::Send, Force::Verb),
            "transfer!" => act(Act::Transfer, Force::Commit),
            "transfer" => act(Act::Transfer, Force::Verb),
            "send?" => act(Act::Send, Force::Context),
            "transfer?" => act(Act::Transfer, Force::Context),
            "share!" => act(Act::Share, Force::Commit),
            "share" => act(Act::Share, Force::Verb),
            "share?" => act(Act::Share, Force::Context),
            "secure!" => act(Act::Secure, Force::Commit),
            "secure" => act(Act::Secure, Force::Verb),
            "subscribe!" => act(Act::Subscribe, Force::Commit),
            "subscribe" => act(Act::Subscribe, Force::Verb),
            "subscribe?" => act(Act::Subscribe, Force::Context),
            "protect" => Some(Kind::Protect),
            "public" => Some(Kind::Public),
            "renew" => Some(Kind::Renew),
            "optout" => Some(Kind::OptOut),
            "period" => Some(Kind::Period),
            "off" => Some(Kind::Off),
            "on" => Some(Kind::On),
            "role" => Some(Kind::Role),
            "rolefield" => Some(Kind::RoleField),
            "composer" => Some(Kind::Composer),
            "save" => Some(Kind::Save),
            "private" => Some(Kind::Private),
            "dismiss" => Some(Kind::Dismiss),
            "signout" => Some(Kind::Part(Part::SignOut)),
            "everywhere" => Some(Kind::Part(Part::Everywhere)),
            "change" => Some(Kind::Part(Part::Change)),
            "contact" => Some(Kind::Part(Part::Contact)),
            "handover" => Some(Kind::Part(Part::Handover)),
            "ownership" => Some(Kind::Part(Part::Ownership)),
            "admit" => Some(Kind::Part(Part::Admit)),
            "member" => Some(Kind::Part(Part::Member)),
            "begin" => Some(Kind::Part(Part::Begin)),
            "trial" => Some(Kind::Part(Part::Trial)),
            "benign" => Some(Kind::Benign),
            "agree" => Some(Kind::Agree),
            "filter" => Some(Kind::Filter),
            "info" => Some(Kind::Info),
            "infohref" => Some(Kind::InfoHref),
            "paypage" => Some(Kind::PayPage),
            "transferpage" => Some(Kind::TransferPage),
            "confirm" => Some(Kind::Confirm),
            "next" => Some(Kind::Next),
            "submit" => Some(Kind::Submit),
            "search" => Some(Kind::Search),
            "credential" => Some(Kind::Credential),
            "secret" => Some(Kind::Secret),
            "card" => Some(Kind::Card),
            "card?" => Some(Kind::CardContext),
            "notsecret" => Some(Kind::NotSecret),
            "negation" => Some(Kind::Negation),
            "cartpage" => Some(Kind::CartPage),
            "code" => Some(Kind::Code),
            "authpage" => Some(Kind::AuthPage),
            "securitypage" => Some(Kind::SecurityPage),
            "accountpage" => Some(Kind::AccountPage),
            "pathcontact" => Some(Kind::PathContact),
            "lure" => Some(Kind::Lure),
            "records" => Some(Kind::Records),
            _ => None,
        }
    }
}

/// One folded phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    pub kind: Kind,
    pub lang: String,
    /// Folded words; a stem matches any word it begins.
    words: Vec<(String, bool)>,
    /// Matched against the words with their marks (the phrase has some).
    marked: bool,
    /// Written without spaces: found anywhere in the joined text.
    joined: Option<String>,
}

impl Phrase {
    /// `text` (a `*` ending a word makes it a stem) as a phrase of `kind`.
    pub fn new(kind: Kind, lang: &str, text: &str) -> Option<Self> {
        let mut words = Vec::new();
        let mut marked = false;
        for raw in text.split_whitespace() {
            let (raw, stem) = match raw.strip_suffix('*') {
                Some(r) => (r, true),
                None => (raw, false),
            };
            let f = fold(raw);
            let n = f.len();
            for (k, (m, p)) in f.marked.iter().zip(&f.plain).enumerate() {
                marked |= m != p;
                words.push((m.clone(), stem && k + 1 == n));
            }
        }
        if words.is_empty() {
            return None;
        }
        // Marks tell words apart only in Vietnamese (`gửi` is not `gui`); elsewhere a page may
        // drop them (Greek capitals lose their accents) or add them.
        marked &= lang == "vi";
        if !marked {
            for (w, _) in &mut words {
                w.retain(|c| !unicode_normalization::char::is_combining_mark(c));
            }
        }
        let joined = words
            .iter()
            .any(|(w, _)| w.chars().any(unspaced))
            .then(|| words.iter().map(|(w, _)| w.as_str()).collect::<String>());
        Some(Self {
            kind,
            lang: lang.to_owned(),
            words,
            marked,
            joined,
        })
    }

    /// The phrase's words as folded, joined by spaces (a stem without its `*`).
    pub fn text(&self) -> String {
        self.words
            .iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Every place the phrase occurs in `text` (`together` keeps the text's words written
    /// together, made the first time a phrase needs them).
    fn find(&self, text: &Folded, together: &mut Joined, out: &mut Vec<Hit>) {
        let words = text.words(self.marked);
        if let Some(joined) = &self.joined {
            let (all, starts) =
                together[usize::from(self.marked)].get_or_insert_with(|| text.joined(self.marked));
            let word_at = |c: usize| starts.partition_point(|&s| s <= c).saturating_sub(1);
            let len = joined.chars().count();
            for (byte, _) in all.match_indices(joined.as_str()) {
                let at = all[..byte].chars().count();
                out.push(Hit {
                    kind: self.kind,
                    start: word_at(at),
                    end: word_at(at + len - 1) + 1,
                    chars: Some((at, at + len)),
                });
            }
            return;
        }
        let n = self.words.len();
        if n > words.len() {
            return;
        }
        for start in 0..=words.len() - n {
            if self.matches_at(words, start) {
                out.push(Hit {
                    kind: self.kind,
                    start,
                    end: start + n,
                    chars: None,
                });
            }
        }
    }
}

impl Phrase {
    /// Whether the phrase's words are the text's `words` from `start` on.
    fn matches_at(&self, words: &[String], start: usize) -> bool {
        words.len() >= start + self.words.len()
            && (self.words.iter().zip(&words[start..])).all(|((w, stem), t)| {
                if *stem {
                    t.starts_with(w.as_str())
                } else {
                    t == w
                }
            })
    }
}

/// A text's words written together (without and with their marks), and where each starts.
type Joined = [Option<(String, Vec<usize>)>; 2];

/// Phrases, indexed by how a text's word or character leads to them: a reading looks up each
/// word of the text (and each of its beginnings, for stems) instead of trying every phrase at
/// every word. The table has over 20 000 phrases and the largest pages ask about thousands of
/// fields: trying them all took the risk gate's corpus test 83 s of CPU in a debug build, the
/// index 13 s (`perf`: four fifths of the time was in `Phrase::find`; 2026-11-30).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Phrases {
    all: Vec<Phrase>,
    /// Spaced phrases by their first word, per form (`[plain, marked]`).
    by_word: [HashMap<String, Vec<usize>>; 2],
    /// Spaced phrases whose first word is a stem, by that stem, per form.
    by_stem: [HashMap<String, Vec<usize>>; 2],
    /// Phrases written without spaces, by their first character, per form.
    by_char: [HashMap<char, Vec<usize>>; 2],
    /// The longest stem's characters: a word's longer beginnings lead to no phrase.
    longest_stem: usize,
}

impl Phrases {
    pub fn iter(&self) -> std::slice::Iter<'_, Phrase> {
        self.all.iter()
    }

    pub fn len(&self) -> usize {
        self.all.len()
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Adds `phrases` after the others.
    pub fn extend(&mut self, phrases: impl IntoIterator<Item = Phrase>) {
        for p in phrases {
            let at = self.all.len();
            let form = usize::from(p.marked);
            let first = p.joined.as_ref().and_then(|j| j.chars().next());
            match (first, p.words.first()) {
                (Some(c), _) => self.by_char[form].entry(c).or_default().push(at),
                (None, Some((w, true))) => {
                    self.longest_stem = self.longest_stem.max(w.chars().count());
                    self.by_stem[form].entry(w.clone()).or_default().push(at)
                }
                (None, Some((w, false))) => {
                    self.by_word[form].entry(w.clone()).or_default().push(at)
                }
                (None, None) => {}
            }
            self.all.push(p);
        }
    }

    /// The hits of the phrases whose kind `want`s in `text`, in table order (a phrase's own in
    /// the order they occur): what [`Phrase::find`] finds, phrase after phrase of the table.
    pub fn hits(&self, text: &Folded, want: impl Fn(Kind) -> bool) -> Vec<Hit> {
        let found = self.indexed_hits(text, want);
        found.into_iter().map(|(_, h)| h).collect()
    }

    /// [`Phrases::hits`], each with the index of its phrase.
    fn indexed_hits(&self, text: &Folded, want: impl Fn(Kind) -> bool) -> Vec<(usize, Hit)> {
        let mut found: Vec<(usize, Hit)> = Vec::new();
        let mut one = Vec::new();
        for form in [0, 1] {
            let words = text.words(form == 1);
            for (start, t) in words.iter().enumerate() {
                let stems = (t.char_indices().skip(1).take(self.longest_stem))
                    .map(|(b, _)| b)
                    .chain([t.len()])
                    .filter_map(|b| self.by_stem[form].get(&t[..b]));
                for &i in self.by_word[form]
                    .get(t.as_str())
                    .into_iter()
                    .chain(stems)
                    .flatten()
                {
                    if want(self.all[i].kind) && self.all[i].matches_at(words, start) {
                        let end = start + self.all[i].words.len();
                        let kind = self.all[i].kind;
                        found.push((
                            i,
                            Hit {
                                kind,
                                start,
                                end,
                                chars: None,
                            },
                        ));
                    }
                }
            }
            // Unspaced phrases starting with a character the text has, each looked for once.
            let mut chars: Vec<char> = words.iter().flat_map(|w| w.chars()).collect();
            chars.sort_unstable();
            chars.dedup();
            let mut ids: Vec<usize> = (chars.iter())
                .filter_map(|c| self.by_char[form].get(c))
                .flatten()
                .copied()
                .filter(|&i| want(self.all[i].kind))
                .collect();
            ids.sort_unstable();
            let mut joined: Joined = [None, None];
            for i in ids {
                self.all[i].find(text, &mut joined, &mut one);
                found.extend(one.drain(..).map(|h| (i, h)));
            }
        }
        // Stable: a phrase's own hits stay in the order they occur.
        found.sort_by_key(|(i, _)| *i);
        found
    }

    /// The acts of [`COMPOSED`] that `want`s whose two parts both occur in `text`, in one
    /// clause of one language: apart (a word that is both parts is one of them), at most
    /// [`PART_GAP`] words between them, both of the same language's table (English "add" and
    /// Czech "host" make no act). Each is a hit over the words from the first part to the
    /// last.
    pub fn composed(&self, text: &Folded, want: impl Fn(Kind) -> bool) -> Vec<Hit> {
        let wanted: Vec<&(Part, Part, Act, Force)> = (COMPOSED.iter())
            .filter(|(_, _, act, force)| want(Kind::Act(*act, *force)))
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        // The verbs first: most texts hold none, and then the objects are not looked for.
        let mut parts =
            self.indexed_hits(text, |k| wanted.iter().any(|(a, ..)| k == Kind::Part(*a)));
        if parts.is_empty() {
            return Vec::new();
        }
        parts.extend(self.indexed_hits(text, |k| {
            wanted.iter().any(|(_, b, ..)| k == Kind::Part(*b))
        }));
        let gap =
            |x: &Hit, y: &Hit| (y.start.saturating_sub(x.end)).max(x.start.saturating_sub(y.end));
        let mut out = Vec::new();
        for (a, b, act, force) in wanted {
            // The first hits of each part only: a page's text may repeat a part thousands of
            // times, and every pair of them is looked at.
            let of = |p: Part| {
                (parts.iter())
                    .filter(move |(_, h)| h.kind == Kind::Part(p))
                    .take(MAX_PART_HITS)
                    .map(|(i, h)| (self.all[*i].lang.as_str(), h))
            };
            let pair = of(*a)
                .flat_map(|x| of(*b).map(move |y| (x, y)))
                .find(|((l, x), (m, y))| {
                    l == m && !x.within(y) && !y.within(x) && gap(x, y) <= PART_GAP
                })
                .map(|((_, x), (_, y))| (x, y));
            if let Some((x, y)) = pair {
                out.push(Hit {
                    kind: Kind::Act(*act, *force),
                    start: x.start.min(y.start),
                    end: x.end.max(y.end),
                    chars: x
                        .chars
                        .zip(y.chars)
                        .map(|((p, q), (r, t))| (p.min(r), q.max(t))),
                });
            }
        }
        out
    }
}

impl FromIterator<Phrase> for Phrases {
    fn from_iter<I: IntoIterator<Item = Phrase>>(phrases: I) -> Self {
        let mut out = Self::default();
        out.extend(phrases);
        out
    }
}

/// Where a phrase occurs: words `start..end` (and the characters of the joined text, for
/// phrases found in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub chars: Option<(usize, usize)>,
}

impl Hit {
    /// Whether `self` lies inside `other`.
    pub fn within(&self, other: &Hit) -> bool {
        match (self.chars, other.chars) {
            (Some((a, b)), Some((c, d))) => c <= a && b <= d,
            _ => other.start <= self.start && self.end <= other.end,
        }
    }
}

/// The table as written: the first acts and their contexts, then sharing, account security and
/// subscriptions (with the toggles and billing periods they are read by), the parts of the acts
/// written in two ([`COMPOSED`]) and the words of a security page.
const TABLE: &str = concat!(
    include_str!("lexicon.txt"),
    "\n",
    include_str!("lexicon-acts.txt"),
    "\n",
    include_str!("lexicon-words.txt"),
    "\n",
    include_str!("lexicon-more.txt"),
    "\n",
    include_str!("lexicon-more2.txt"),
    "\n",
    include_str!("lexicon-more3.txt"),
    "\n",
    include_str!("lexicon-more4.txt"),
    "\n",
    include_str!("lexicon-more5.txt"),
    "\n",
    include_str!("lexicon-langs.txt"),
    "\n",
    include_str!("lexicon-parts.txt"),
    "\n",
    include_str!("lexicon-pages.txt"),
    "\n",
    include_str!("lexicon-hosts.txt")
);

/// The built-in phrases, read once. The table is compiled in and read whole by a unit test;
/// should a line ever fail to read, the lines before and after it still count.
pub fn builtin() -> &'static Phrases {
    static PHRASES: OnceLock<Phrases> = OnceLock::new();
    PHRASES.get_or_init(|| {
        TABLE
            .lines()
            .filter_map(|line| match parse(line) {
                Ok(phrases) => Some(phrases),
                Err(e) => {
                    tracing::error!(line = %e, "a line of the risk gate's phrase table does not read");
                    None
                }
            })
            .flatten()
            .collect()
    })
}

/// The phrases of a table, or the first line that is not one.
pub fn parse(table: &str) -> Result<Vec<Phrase>, String> {
    let mut out = Vec::new();
    for (n, line) in table.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("line {}: {line}", n + 1);
        let (head, phrases) = line.split_once(':').ok_or_else(bad)?;
        let (lang, kind) = head.trim().split_once(' ').ok_or_else(bad)?;
        let kind = Kind::parse(kind.trim()).ok_or_else(bad)?;
        for p in phrases.split('|') {
            out.push(Phrase::new(kind, lang, p.trim()).ok_or_else(bad)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_whole_and_covers_twenty_languages() {
        let phrases = parse(TABLE).expect("table");
        assert_eq!(phrases.len(), builtin().len());
        let mut langs: Vec<&str> = phrases.iter().map(|p| p.lang.as_str()).collect();
        langs.sort_unstable();
        langs.dedup();
        assert!(langs.len() >= 25, "{langs:?}");
        for lang in &langs {
            let acts = |a: Act| {
                phrases
                    .iter()
                    .any(|p| p.lang == *lang && matches!(p.kind, Kind::Act(x, _) if x == a))
            };
            for act in Act::ALL {
                assert!(acts(act), "{lang} lacks {act:?}");
            }
        }
        assert!(parse("en nonsense: x").is_err());
        assert!(parse("no colon here").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// Reading by kind finds what reading every phrase of the table in order finds, in the
        /// same order: texts made of the table's own phrases (any language, spaced or not)
        /// with other words between and endings added (a stem matches the longer word), read
        /// for one kind, a few, or all.
        #[test]
        fn the_index_by_kind_finds_what_the_whole_table_finds(
            picks in proptest::collection::vec((0..usize::MAX, 0..6usize, 0..3usize), 1..6),
            wanted in 0..4usize,
        ) {
            let table = builtin();
            let fillers = ["the", "x", "42 €", "", "Mon compte", "设置"];
            let text: String = picks
                .iter()
                .map(|&(i, f, e)| {
                    let p = table.all[i % table.len()].text();
                    format!("{p}{} {} ", ["", "ing", "ức"][e], fillers[f])
                })
                .collect();
            let some = table.all[picks[0].0 % table.len()].kind;
            let want = |k: Kind| match wanted {
                0 => k == some,
                1 => matches!(k, Kind::Secret | Kind::Card | Kind::NotSecret) || k == some,
                2 => matches!(k, Kind::Act(..)),
                _ => true,
            };
            for f in super::super::fold::variants(&text) {
                let mut every = Vec::new();
                for p in table.iter().filter(|p| want(p.kind)) {
                    p.find(&f, &mut [None, None], &mut every);
                }
                proptest::prop_assert_eq!(table.hits(&f, want), every);
            }
        }
    }

    /// Every phrase that begins with a stem is found by the index at the start of a longer word,
    /// the longest stem included (a word's beginnings are looked up only up to its length).
    #[test]
    fn the_index_finds_every_stem_in_a_longer_word() {
        let table = builtin();
        let stems =
            (table.iter().enumerate()).filter(|(_, p)| p.words.first().is_some_and(|w| w.1));
        let mut checked = 0;
        for (i, p) in stems {
            let text = fold(&format!("{}ingly", p.text()));
            let mut own = Vec::new();
            p.find(&text, &mut [None, None], &mut own);
            let hits = table.indexed_hits(&text, |k| k == p.kind);
            assert!(
                own.is_empty() || hits.iter().any(|(at, _)| *at == i),
                "{}",
                p.text()
            );
            checked += usize::from(!own.is_empty());
        }
        assert!(checked > 100, "{checked}");
    }

    fn found(kind: &str, phrase: &str, text: &str) -> bool {
        let p = Phrase::new(Kind::parse(kind).expect("kind"), "vi", phrase).expect("phrase");
        let mut out = Vec::new();
        p.find(&fold(text), &mut [None, None], &mut out);
        !out.is_empty()
    }

    #[test]
    fn phrases_match_whole_words_stems_and_unspaced_scripts() {
        assert!(found("pay", "pay", "Pay now"));
        assert!(!found("pay", "pay", "Display settings"), "whole words only");
        assert!(!found("pay", "pay", "Payment methods"));
        assert!(found("delete", "удал*", "Удалите файл"));
        assert!(found("pay", "购买", "立即购买商品"));
        assert!(found("delete", "삭제", "계정삭제하기"));
        assert!(found("send", "gửi", "Gửi tin nhắn"));
        assert!(
            !found("send", "gửi", "GUI settings"),
            "marks tell words apart"
        );
        assert!(
            found("pay", "pay", "Páy now"),
            "a mark added to a plain word changes nothing"
        );
    }
}
