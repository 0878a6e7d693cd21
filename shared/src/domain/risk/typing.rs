//! What typing a value into a field risks: a secret field's or a one-time code's value (a
//! number named for a code on a sign-in or payment page) asks the user first, unless the user
//! wrote that value in the task itself together with a word for the field's kind ("log in as
//! ada with password X"); given for a site the user named, it goes only there.

use super::act::{Scope, CARD_SCAN};
use super::field::{kind_beside, names_of, Sensitive};
use super::fold::{fold, holds, variants, Folded};
use super::lexicon::{Hit, Kind};
use super::{label, shape, ElementFacts, Risk, RiskKind, RiskPatterns};

/// Whether `value` typed into `field` is a one-time code: a number of 4 to 10 digits in a
/// field named for a code ("Enter the 6-digit code", "Kod BLIK"; not a promo or postal code),
/// on any page: a code is what a page asks for to let its holder act.
fn one_time_code(scope: &Scope<'_>, field: &ElementFacts<'_>, value: &str) -> bool {
    let digits: Vec<char> = value.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    if !(4..=10).contains(&digits.len()) || !digits.iter().all(char::is_ascii_digit) {
        return false;
    }
    let named = names_of(field).iter().any(|n| {
        variants(n).iter().any(|f| {
            let hs = scope
                .patterns
                .hits(f, |k| matches!(k, Kind::Code | Kind::NotSecret));
            hs.iter().any(|h| {
                h.kind == Kind::Code && !hs.iter().any(|x| x.kind == Kind::NotSecret && h.within(x))
            })
        })
    });
    named
}

/// What kind of secret typing `value` into `field` types: a secret field's, a one-time
/// code's, or a card or bank value by its shape in a field of any name.
pub(super) fn sensitive(
    scope: &Scope<'_>,
    field: &ElementFacts<'_>,
    value: &str,
) -> Option<Sensitive> {
    kind_beside(scope.patterns, field, || scope.has_cards())
        .or_else(|| one_time_code(scope, field, value).then_some(Sensitive::Secret))
        .or_else(|| {
            // Twelve plain words are a recovery phrase, except in a field for messages or
            // searches, where they are a sentence.
            let phrase = shape::recovery_phrase(value) && !writes_text(scope, field);
            (shape::access_key(value) || phrase).then_some(Sensitive::Secret)
        })
        .or_else(|| {
            let card = shape::card_number(value)
                || shape::iban(value)
                || (shape::security_code(value) && beside_card_number(scope, field));
            card.then_some(Sensitive::Card)
        })
}

/// What secret a text holds, by its shape (an access key, a card number, an IBAN) or because
/// the user gave it as one ([`marked_secret`]).
fn secret_in_text(patterns: &RiskPatterns, value: &str, said: &str) -> Option<&'static str> {
    let words: Vec<&str> = value.split_whitespace().take(MAX_WORDS).collect();
    if words.iter().any(|w| {
        // In an address only its user part holds a secret (`https://<token>@github.com/…`);
        // its path and query name things (a playlist's `list=PL…`).
        let w = match w.split_once("://") {
            Some((_, rest)) => match rest
                .split(['/', '?', '#'])
                .next()
                .unwrap_or("")
                .rsplit_once('@')
            {
                Some((user, _)) => user.rsplit(':').next().unwrap_or(user),
                None => return false,
            },
            None => w,
        };
        let w = w.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        // `OPENAI_API_KEY=sk-…`: the key after its name.
        shape::access_key(w.rsplit('=').next().unwrap_or(w))
    }) {
        return Some("an access key");
    }
    // A card number or an IBAN written in groups ("5162 9201 0234 5677"): runs of words
    // of digits and capitals.
    let groups = value.split(|c: char| !(c.is_ascii_alphanumeric() || c == ' ' || c == '-'));
    let card = groups.take(MAX_WORDS).any(|g| {
        let parts: Vec<&str> = (g.split([' ', '-']).filter(|p| !p.is_empty()))
            .take(MAX_WORDS)
            .collect();
        (0..parts.len()).any(|i| {
            (i + 1..=parts.len().min(i + 8)).any(|j| {
                let run = parts[i..j].join(" ");
                // An IBAN is given out to be paid: the user's own is theirs to write.
                shape::card_number(&run) || (shape::iban(&run) && !holds(&run, said))
            })
        })
    });
    if card {
        return Some("a card or bank number");
    }
    marked_secret(patterns, value, said).then_some("a password or code you gave")
}

/// Most words of a typed value read for secrets.
const MAX_WORDS: usize = 512;
/// How near the word for a code ("OTP", "PIN") a code the user gave stands, in words.
const CODE_WORDS: usize = 8;

/// Whether `value` holds a word the user gave as a secret: a word of theirs, where they
/// spoke of a password, a one-time code or a sign-in (not of a promo code), that no word or
/// number of daily life is — a code of 4 to 8 digits within [`CODE_WORDS`] words of the word
/// for it ("kode OTP aku 739201"; not a year, a postcode or an order number elsewhere in the
/// task), or six characters or more mixing digits with small letters or signs
/// ("Mustikka55!"; not a booking's "HX7K29", nor "210g"), never an address.
fn marked_secret(patterns: &RiskPatterns, value: &str, said: &str) -> bool {
    let trim = |w: &str| -> String {
        w.trim_matches(|c: char| {
            matches!(
                c,
                ',' | '.' | ';' | ':' | '(' | ')' | '"' | '\'' | '«' | '»' | '“' | '”'
            )
        })
        .to_owned()
    };
    let theirs: Vec<String> = said.split_whitespace().take(MAX_WORDS).map(trim).collect();
    // A password, a one-time code or a sign-in spoken of; not a promo code's "code".
    let folded = fold(said);
    let hits = patterns.hits(&folded, |k| {
        matches!(k, Kind::Secret | Kind::AuthPage | Kind::NotSecret)
    });
    let spoken: Vec<&Hit> = (hits.iter())
        .filter(|h| {
            h.kind != Kind::NotSecret
                && !(hits.iter()).any(|x| x.kind == Kind::NotSecret && h.within(x))
        })
        .collect();
    if spoken.is_empty() {
        return false;
    }
    // A code is a secret only beside the word for it ("kode OTP aku 739201"), not a year, a
    // postcode or an order number elsewhere in a task that also signs in.
    let beside_secret = |w: &str| {
        let at = folded
            .plain
            .iter()
            .position(|t| t == &fold(w).plain.concat());
        at.is_some_and(|at| {
            (spoken.iter()).any(|h| {
                h.kind == Kind::Secret && h.start <= at + CODE_WORDS && at <= h.end + CODE_WORDS
            })
        })
    };
    value.split_whitespace().take(MAX_WORDS).map(trim).any(|w| {
        let digits = w.chars().filter(char::is_ascii_digit).count();
        let n = w.chars().count();
        let code = digits == n && (4..=8).contains(&n) && beside_secret(&w);
        // A password mixes digits with small letters or signs ("Mustikka55!", "Xk92!mqLp"); a
        // booking's or an order's reference is capitals and digits ("HX7K29").
        let signs = w.chars().any(|c| {
            c.is_lowercase() || !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        });
        let mixed =
            digits > 0 && digits < n && n >= 6 && w.chars().any(char::is_alphabetic) && signs;
        n >= 4
            && (code || mixed)
            && !w.contains(['@', '/'])
            && sites_named(&w).is_empty()
            && theirs.contains(&w)
    })
}

/// Whether what is written into `field` is read by people or a search engine: a box of lines
/// (a message, a comment, a review), a search box, or a field named for a message or a
/// search (a sign-in's "Login" is no such field).
fn people_read(scope: &Scope<'_>, field: &ElementFacts<'_>) -> bool {
    matches!(&*field.role, "textarea" | "searchbox")
        || matches!(field.input_type, Some("textarea" | "search"))
        || names_of(field).iter().any(|n| {
            variants(n).iter().any(|f| {
                !(scope.patterns)
                    .hits(f, |k| matches!(k, Kind::Composer | Kind::Search))
                    .is_empty()
            })
        })
}

/// Whether `field` is one where people write text: a message, a comment, a search.
fn writes_text(scope: &Scope<'_>, field: &ElementFacts<'_>) -> bool {
    matches!(&*field.role, "textarea" | "searchbox")
        || field.input_type == Some("textarea")
        || names_of(field).iter().any(|n| {
            variants(n).iter().any(|f| {
                !scope
                    .patterns
                    .hits(f, |k| {
                        matches!(
                            k,
                            Kind::Composer | Kind::Submit | Kind::Search | Kind::Act(..)
                        )
                    })
                    .is_empty()
            })
        })
}

/// Elements before a field looked at for a card number it would go with (a security code).
const CODE_REACH: usize = 8;

/// Whether one of the [`CODE_REACH`] fields before `field` holds a card number.
fn beside_card_number(scope: &Scope<'_>, field: &ElementFacts<'_>) -> bool {
    let mut before: std::collections::VecDeque<bool> = std::collections::VecDeque::new();
    for e in scope.page.elements().take(super::act::CARD_SCAN) {
        if e.id == field.id {
            return before.iter().any(|b| *b);
        }
        if before.len() == CODE_REACH {
            before.pop_front();
        }
        before.push_back(e.value.as_deref().is_some_and(shape::card_number));
    }
    false
}

/// The risk of typing `value` into `field`.
pub(super) fn typing(
    scope: &Scope<'_>,
    field: &ElementFacts<'_>,
    value: &str,
    said: &str,
) -> Option<Risk> {
    if value.trim().is_empty() {
        return None;
    }
    // A secret written into a message, a comment or a search goes to people (or a search
    // engine), whoever gave it: only a field of its own takes it.
    if people_read(scope, field) {
        if let Some(what) = secret_in_text(scope.patterns, value, said) {
            return Some(Risk {
                kind: RiskKind::Credentials,
                what: format!("write {what} into {}, where others read it", label(field)),
            });
        }
    }
    let marked = || marked_secret(scope.patterns, value, said).then_some(Sensitive::Secret);
    let kind = sensitive(scope, field, value).or_else(marked)?;
    if given_by_user(scope.patterns, kind, value, said) {
        // Given for a site the user named: only there (and on its subdomains); given for a
        // name, not on a host that spells that name as a domain of its own.
        let host = host_of(scope.page.url());
        let root = crate::domain::site::root_domain(&host);
        let named = sites_named(said);
        let what = match named.is_empty() {
            true => format!(
                "type what you gave into {} on {root}, which {}",
                label(field),
                lookalike(scope.patterns, scope.page.url(), said)?
            ),
            false if named.iter().any(|d| on_site(&host, d)) => return None,
            false => format!(
                "type what you gave for {} into {} on {root}, another site",
                named.join(", "),
                label(field)
            ),
        };
        return Some(Risk {
            kind: RiskKind::Credentials,
            what,
        });
    }
    Some(match kind {
        Sensitive::Secret => Risk {
            kind: RiskKind::Credentials,
            what: format!("type a password or code into {}", label(field)),
        },
        Sensitive::Card => Risk {
            kind: RiskKind::Payment,
            what: format!("type card details into {}", label(field)),
        },
    })
}

/// Sending the page's form on a site other than the ones the user named while one of its
/// fields holds a secret (a filled password or code field, a card number): it goes to this
/// site. Typing it there was asked about; a value the page or the browser filled was not.
pub(super) fn sent_elsewhere(scope: &Scope<'_>, said: &str) -> Option<Risk> {
    let host = host_of(scope.page.url());
    let named = match sites_named(said) {
        named if named.is_empty() => posing_as(&host, said).into_iter().collect(),
        named => named,
    };
    if named.is_empty() || named.iter().any(|d| on_site(&host, d)) {
        return None;
    }
    let field = scope.page.elements().take(CARD_SCAN).find(|f| {
        let value = f.value.as_deref().unwrap_or("").trim();
        !value.is_empty() && sensitive(scope, f, value).is_some()
    })?;
    Some(Risk {
        kind: RiskKind::Credentials,
        what: format!(
            "send what {} holds to {}, not the site you named ({})",
            label(&field),
            crate::domain::site::root_domain(&host),
            named.join(", ")
        ),
    })
}

/// The host of `url`, lower case, without a port.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    // A fully qualified name ("www.mybank.com.") is the same host.
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `host` is `domain` or one of its subdomains.
fn on_site(host: &str, domain: &str) -> bool {
    host == domain
        || host
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// File names that look like domains ("report.pdf").
const FILE_ENDINGS: &[&str] = &[
    "pdf", "doc", "docx", "xls", "xlsx", "csv", "txt", "png", "jpg", "jpeg", "gif", "zip", "html",
    "htm", "js", "json", "md", "ppt", "pptx", "mp4", "mp3",
];
/// Most sites read from what the user said.
const MAX_SITES: usize = 8;

/// The sites the user named ("log in to mybank.com"): words with a dot and a top-level domain
/// of letters, not an e-mail address's domain nor a file name.
fn sites_named(said: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in address_words(said) {
        if out.len() == MAX_SITES {
            break;
        }
        if word.contains('@') {
            continue;
        }
        let host = host_of(word.trim_end_matches(['.', '!', '?', ':', '-']));
        let labels: Vec<&str> = host.split('.').collect();
        let tld = labels.last().copied().unwrap_or("");
        let plausible = labels.len() >= 2
            && labels
                .iter()
                .all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'))
            && tld.chars().count() >= 2
            && tld.chars().all(char::is_alphabetic)
            && !FILE_ENDINGS.contains(&tld)
            && real_suffix(&host);
        if plausible {
            let host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
            if !out.contains(&host) {
                out.push(host);
            }
        }
    }
    out
}

/// Top-level names kept for examples and tests (RFC 2606), which no registry lists.
const RESERVED: &[&str] = &["example", "test", "invalid", "localhost"];

/// Whether `host` ends in a suffix a registry lists (or a reserved one): "impots.gouv" is a
/// name the user shortened, not a site.
fn real_suffix(host: &str) -> bool {
    let tld = host.rsplit('.').next().unwrap_or("");
    RESERVED.contains(&tld)
        || !tld.is_ascii()
        || psl::suffix(host.as_bytes()).is_some_and(|s| s.is_known())
}

/// The words of `said` that could be addresses, without the letters of another script glued
/// to them ("bkash.com-এ") or its brackets around them ("（rakuten-card.co.jp）に").
fn address_words(said: &str) -> impl Iterator<Item = &str> {
    said.split(|c: char| {
        c.is_whitespace()
            || matches!(c, ',' | ';' | '(' | ')' | '"' | '\'' | '<' | '>')
            || !(c.is_ascii() || c.is_alphanumeric())
    })
    .map(|w| w.trim_matches(|c: char| !c.is_ascii()))
    .filter(|w| !w.is_empty())
}

/// What makes `host` a look-alike of the site a secret was given for, where the user named
/// no address: it spells a domain of its own before another site's ([`posing_as`]), or its
/// registrable name is dressed in a look-alike's words ([`dressed`]).
fn lookalike(patterns: &RiskPatterns, url: &str, said: &str) -> Option<String> {
    let host = &host_of(url);
    (posing_as(host, said).map(|site| format!("poses as {site}")))
        .or_else(|| {
            dressed(patterns, host, said)
                .map(|word| format!("is dressed as a look-alike (\"{word}\")"))
        })
        .or_else(|| {
            published_on(host, said)
                .map(|platform| format!("is a page anyone can publish on {platform}"))
        })
        .or_else(|| form_page(url).map(|host| format!("is a form anyone can publish on {host}")))
}

/// Form services whose forms anyone publishes under the service's own name, by host and the
/// path its forms are served under: a sign-in is never one of their forms, and what is typed
/// into one goes to whoever wrote it.
const FORM_PAGES: &[(&str, &str)] = &[
    ("docs.google.com", "/forms/"),
    ("forms.gle", "/"),
    ("forms.office.com", "/"),
    ("forms.microsoft.com", "/"),
    ("form.typeform.com", "/to/"),
    ("form.jotform.com", "/"),
    ("www.jotform.com", "/form/"),
    ("www.surveymonkey.com", "/r/"),
    ("tally.so", "/r/"),
    ("airtable.com", "/shr"),
    ("forms.zohopublic.com", "/"),
    ("form.123formbuilder.com", "/"),
    ("wenjuan.com", "/s/"),
    ("www.wjx.cn", "/vm/"),
];

/// The form service `url` is a form of ([`FORM_PAGES`]).
fn form_page(url: &str) -> Option<&'static str> {
    let host = host_of(url);
    let (_, path, _) = super::act::split_address(url);
    (FORM_PAGES.iter())
        .find(|(h, p)| host == *h && path.starts_with(p))
        .map(|(h, _)| *h)
}

/// Sign-in services whose customers' names stand under a suffix of the public-suffix list's
/// private section, as a publishing platform's do: a sign-in there is the customer's own.
const SIGN_IN_PLATFORMS: &[&str] = &[
    "amazoncognito.com",
    "b2clogin.com",
    "ciamlogin.com",
    "auth0.com",
    "okta.com",
    "oktapreview.com",
    "onelogin.com",
];

/// The platform `host` is a look-alike's page on (`sparkasse-online.wixsite.com`,
/// `bancaintesa-prijava.vercel.app`): a name under a suffix the public-suffix list keeps in its
/// private section — the platforms where anyone may publish a site under a name of their
/// choosing — other than a sign-in service's, with a word in that name the user did not
/// write. A service's own deployment there is named as the user names it (`acme-dashboard`
/// for "Acme Dashboard").
fn published_on(host: &str, said: &str) -> Option<String> {
    let suffix = psl::suffix(host.as_bytes())?.trim();
    let platform = std::str::from_utf8(suffix.as_bytes()).ok()?;
    let sign_in =
        (SIGN_IN_PLATFORMS.iter()).any(|p| platform == *p || platform.ends_with(&format!(".{p}")));
    let name = host.strip_suffix(platform)?.strip_suffix('.')?;
    let name = name.rsplit('.').next().unwrap_or(name);
    let theirs: Vec<String> = (said.split(|c: char| !c.is_alphanumeric()))
        .take(256)
        .map(str::to_lowercase)
        .collect();
    let unsaid = name
        .split('-')
        .any(|w| !w.is_empty() && !theirs.iter().any(|t| t == w));
    (suffix.typ() == Some(psl::Type::Private) && !sign_in && unsaid).then(|| platform.to_owned())
}

/// Top-level domains a host spells inside itself only to pose as a site (`.com.`), where a
/// country's (`tenant.eu.auth0.com`) or a brand's (`signin.aws.amazon.com`) names a region or
/// a service of the site itself.
const GENERIC: &[&str] = &["com", "net", "org", "gov", "edu", "mil", "int"];

/// The site `host` spells as a domain of its own before another site's: a label followed,
/// inside the host's subdomain, by a public suffix (`paypal.com.secure-login.example`,
/// `chase.com-secure-verify.info`). A generic suffix (`.com.`) or one of two labels (`.co.jp.`,
/// `.gouv.fr.`) spells a site whatever its name; any other (`paypal.de.konto-sicherheit.info`)
/// only a name of the user's (four letters or more), and inside the subdomain only before a
/// hyphened registrable name (`northwind.eu.auth0.com` is a tenant's region). A subdomain that only holds a name
/// (`moodle.ucl.ac.uk`, `acme.okta.com`) is how sites host their customers, and poses as nothing.
fn posing_as(host: &str, said: &str) -> Option<String> {
    let root = crate::domain::site::root_domain(host);
    let labels: Vec<&str> = host.split('.').collect();
    let sub = labels.len().saturating_sub(root.split('.').count());
    let first = |l: &str| l.split('-').next().unwrap_or("").to_owned();
    let known = |s: &str| {
        !s.is_empty()
            && psl::suffix(s.as_bytes())
                .is_some_and(|x| x.is_known() && x.as_bytes() == s.as_bytes())
    };
    // The suffix spelled is the subdomain's own ("paypal.com.…"), or starts the registrable
    // domain's first label ("chase.com-secure-verify.info"), never the registrable domain
    // itself (`account.bbc.com`: "bbc" is a top-level domain too).
    let inside = |j: usize| j < sub || labels.get(j).is_some_and(|l| l.contains('-'));
    let spelled: Vec<(&str, bool)> = (0..sub)
        .filter(|&i| inside(i + 1))
        .filter_map(|i| {
            let tld = first(labels[i + 1]);
            let two = (labels.get(i + 2).filter(|_| inside(i + 2)))
                .is_some_and(|after| known(&format!("{tld}.{}", first(after))));
            // A generic suffix glued to the registrable name is a word of it (`net-a-porter`).
            let whole = i + 1 < sub;
            let generic = (whole && GENERIC.contains(&tld.as_str())) || two;
            // A country's suffix inside the subdomain names a region of the site
            // (`tenant.eu.auth0.com`) unless the site's own name is hyphened as look-alikes'
            // are (`paypal.de.konto-sicherheit.info`).
            let country =
                known(&tld) && (!whole || root.split('.').next().is_some_and(|n| n.contains('-')));
            (country || generic).then(|| (labels[i], generic))
        })
        .collect();
    if let Some((site, _)) = spelled.iter().find(|(_, generic)| *generic) {
        return Some((*site).to_owned());
    }
    (said.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| w.len() >= 4)
        .take(256)
        .map(str::to_ascii_lowercase)
        .find(|w| spelled.iter().any(|(l, _)| l == w))
}

/// A look-alike's word in `host`'s registrable name, read part by hyphened part
/// (`sbi-kyc-update-online.in`, `gcash-rewards-claim.com`), and in a part glued of several
/// words by its last one, as compounds are (`sicherheitsupdate`, `veronpalautus`): a brand's
/// own sign-in is not so named ([`Kind::Lure`]), unless the whole name is the brand's as the
/// user wrote it (`f-secure.com` for "F-Secure", `toll-collect.de` for "Toll Collect"; a lure
/// the user wrote alone, "zawadi" for `mpesa-zawadi-safaricom`, is the lure's own word). A
/// name without hyphens is read as one word, and never so.
fn dressed(patterns: &RiskPatterns, host: &str, said: &str) -> Option<String> {
    let root = crate::domain::site::root_domain(host);
    let name = root.split('.').next().filter(|n| n.contains('-'))?;
    let words = fold(&name.replace('-', " "));
    let theirs = fold(said);
    let n = words.plain.len();
    if n > 0 && theirs.plain.windows(n).any(|t| t == words.plain.as_slice()) {
        return None;
    }
    let lure = |text: &Folded| {
        (patterns.hits(text, |k| k == Kind::Lure).into_iter())
            .next()
            .map(|h| text.plain[h.start..h.end].join("-"))
    };
    lure(&words).or_else(|| {
        (words
            .plain
            .iter()
            .filter(|w| w.chars().count() >= MODIFIER + HEAD))
        .flat_map(|w| compound_heads(w))
        .find_map(|head| {
            let head = fold(head);
            let whole = |h: &Hit| h.start == 0 && h.end == head.plain.len();
            (patterns.hits(&head, |k| k == Kind::Lure).iter())
                .any(whole)
                .then(|| head.plain.join("-"))
        })
    })
}

/// Fewest letters of a compound's first word, and of its head (the last word, which names
/// what the compound is: `sicherheits|update`, `veron|palautus`).
const MODIFIER: usize = 3;
const HEAD: usize = 5;

/// The endings of `word` that may be a compound's head: at least [`HEAD`] letters, after at
/// least [`MODIFIER`].
fn compound_heads(word: &str) -> impl Iterator<Item = &str> {
    let letters = word.chars().count();
    (word.char_indices())
        .enumerate()
        .filter(move |&(k, _)| k >= MODIFIER && letters - k >= HEAD)
        .map(move |(_, (at, _))| &word[at..])
}

/// Whether `said` writes `value` second in a pair of words joined by a slash ("ada / X",
/// "1087762219/X"), the way a sign-in is handed over.
fn paired(value: &str, said: &str) -> bool {
    if value.is_empty() || value.contains(char::is_whitespace) {
        return false;
    }
    (said.match_indices(value).take(64)).any(|(at, _)| {
        let before = said[..at].trim_end();
        let after = said[at + value.len()..].chars().next();
        let ends = after.is_none_or(|c| c.is_whitespace() || matches!(c, ')' | ',' | ';' | ']'));
        let first = before.strip_suffix('/').map(str::trim_end);
        ends && first
            .and_then(|f| f.chars().next_back())
            .is_some_and(|c| c.is_alphanumeric() || c == '.' || c == '_')
    })
}

/// Whether the user's own words hold `value` and name a field of `kind` ("… with password X").
fn given_by_user(patterns: &RiskPatterns, kind: Sensitive, value: &str, said_raw: &str) -> bool {
    // A card number or an IBAN the user wrote (in any grouping) is theirs to give, whatever
    // words are around it.
    let alnum = |t: &str| -> String {
        t.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let raw = alnum(value);
    if kind == Sensitive::Card
        && (shape::card_number(value) || shape::iban(value))
        && alnum(said_raw).contains(&raw)
    {
        return true;
    }
    // A sign-in written as a pair, "(ada / X)", in any language: X is what the name before
    // it signs in with.
    if kind == Sensitive::Secret && paired(value.trim(), said_raw) {
        return true;
    }
    // "password X", or a sign-in the user asked for ("log in as ada / X").
    let names = |k: Kind| match kind {
        Sensitive::Secret => matches!(k, Kind::Secret | Kind::AuthPage),
        Sensitive::Card => k == Kind::Card,
    };
    holds(value, said_raw) && !patterns.hits(&fold(said_raw), names).is_empty()
}
