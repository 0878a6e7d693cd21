//! Blockers: what stops the agent until the user acts — a captcha, a login wall when the task
//! is not about signing in — and the cookie banners the agent dismisses by itself.

use serde::{Deserialize, Serialize};

use super::facts::{mentions_any, PageFacts, WordSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerKind {
    Captcha,
    LoginRequired,
    MissingInformation,
}

/// `blockerInfo { type, description, userMessage?, resolutionMethods[] }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockerInfo {
    #[serde(rename = "type")]
    pub kind: BlockerKind,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_message: Option<String>,
    pub resolution_methods: Vec<String>,
}

/// What the challenge itself says (a box to tick, a question to answer).
static ROBOT_CHECK: WordSet = WordSet::new(&[
    "verify you are human",
    "i'm not a robot",
    "i am not a robot",
    "are you a robot",
    "ich bin kein roboter",
    "je ne suis pas un robot",
    "no soy un robot",
]);

/// A captcha's other signs (the challenge's own words are [`ROBOT_CHECK`]).
static CAPTCHA: WordSet = WordSet::new(&[
    "captcha",
    "recaptcha",
    "hcaptcha",
    "turnstile",
    "security check",
    "não sou um robô",
]);

static PASSWORD: WordSet = WordSet::new(&[
    "password",
    "passwort",
    "mot de passe",
    "contraseña",
    "senha",
]);

static SIGN_IN: WordSet = WordSet::new(&[
    "sign in",
    "log in",
    "login",
    "signin",
    "anmelden",
    "einloggen",
    "connexion",
    "se connecter",
    "iniciar sesión",
    "entrar",
    "accedi",
    "inloggen",
]);

/// What the task is about when it is about signing in (then a login form is the work, not a
/// blocker).
const ACCOUNT_TASK: &[&str] = &[
    "sign in",
    "log in",
    "login",
    "signin",
    "log into",
    "sign into",
    "password",
    "account",
    "anmelden",
    "einloggen",
    "connexion",
    "iniciar sesión",
    "accedi",
    "inloggen",
];

/// A login page is small or says so in its address; a page with a login box in its header is
/// not a wall.
const LOGIN_PAGE_ELEMENTS: usize = 20;
/// A captcha alone on a page this small walls it.
const CHALLENGE_PAGE_ELEMENTS: usize = 30;

/// Roles an element of a challenge itself has: the box to tick, the frame, the picture, the
/// field to type the characters into.
fn challenge_role(role: &str) -> bool {
    matches!(
        role,
        "chk" | "checkbox" | "switch" | "frame" | "iframe" | "el" | "img" | "inp" | "textbox"
    )
}

/// The blocker on `page` for a task asking `query`, if any: a blocker is what stops the task —
/// a challenge on the page (the box to tick, its frame, a field for the characters), or a page
/// that is a login wall (a small page, or a sign-in address, asking for a password). A link
/// that mentions a captcha, or a sign-in box in a normal page's header, stops nothing.
pub fn detect(page: &dyn PageFacts, query: &str) -> Option<BlockerInfo> {
    let mut mentioned = false;
    let mut challenge = false;
    let look = ROBOT_CHECK.on_page(page) || CAPTCHA.on_page(page);
    for e in page.elements().filter(|_| look) {
        let link = e.role == "link";
        let named = CAPTCHA.in_text(&e.name)
            || e.href
                .is_some_and(|h| mentions_any(h, &["recaptcha", "hcaptcha", "turnstile"]));
        mentioned |= named || ROBOT_CHECK.in_text(&e.name);
        if link {
            continue;
        }
        challenge |= ROBOT_CHECK.in_text(&e.name)
            || (named
                && (challenge_role(&e.role) || page.element_count() <= CHALLENGE_PAGE_ELEMENTS));
    }
    let challenge_url = mentions_any(page.url(), &["captcha", "challenge", "sorry"]);
    if challenge || (mentioned && challenge_url) {
        return Some(BlockerInfo {
            kind: BlockerKind::Captcha,
            description: "The page asks to prove that a human is using it".into(),
            user_message: Some(
                "Please solve the captcha on the page, then tell me to continue.".into(),
            ),
            resolution_methods: vec!["user_action_on_web".into()],
        });
    }
    if mentions_any(query, ACCOUNT_TASK) {
        return None;
    }
    let password = page.elements().any(|e| e.input_type == Some("password"))
        || (PASSWORD.on_page(page)
            && page
                .elements()
                .any(|e| e.role == "inp" && PASSWORD.in_text(&e.name)));
    if !password {
        return None;
    }
    let says_sign_in = page
        .elements()
        .any(|e| e.role != "link" && SIGN_IN.in_text(&e.name));
    let login_url = mentions_any(
        &address_path(page.url()),
        &[
            "login", "signin", "sign-in", "sign_in", "auth", "sso", "logon", "anmelden",
        ],
    );
    if says_sign_in && (login_url || page.element_count() <= LOGIN_PAGE_ELEMENTS) {
        return Some(BlockerInfo {
            kind: BlockerKind::LoginRequired,
            description: "The page asks to sign in before the task can go on".into(),
            user_message: Some(
                "Please sign in on the page, then tell me to continue (or tell me in the chat how to go on)."
                    .into(),
            ),
            resolution_methods: vec!["user_action_on_web".into()],
        });
    }
    None
}

/// The host and path of `url`, without its query (a `?next=/login` says nothing of the page).
fn address_path(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or(url).to_owned()
}

static CONSENT: WordSet = WordSet::new(&[
    "cookie",
    "cookies",
    "consent",
    "cookie-einstellungen",
    "datenschutz",
    "privacy",
]);
/// Labels of a cookie banner's buttons (after dropping [`LABEL_FILLER`]), most
/// privacy-preserving first.
const DISMISS: &[&[&str]] = &[
    &[
        "reject",
        "decline",
        "refuse",
        "only necessary",
        "necessary only",
        "essential only",
        "use necessary only",
        "ablehnen",
        "nur notwendige",
        "refuser",
        "tout refuser",
        "rechazar",
        "rifiuta",
        "weigeren",
        "recusar",
    ],
    &[
        "accept",
        "agree",
        "allow",
        "i agree",
        "got it",
        "ok",
        "akzeptieren",
        "zustimmen",
        "accepter",
        "aceptar",
        "accetta",
        "accepteren",
        "aceitar",
    ],
];
/// Words a banner button's label may carry besides its verb ("Accept all cookies").
const LABEL_FILLER: &[&str] = &[
    "all",
    "cookies",
    "cookie",
    "optional",
    "non-essential",
    "the",
    "and",
    "close",
    "alle",
    "tout",
    "todo",
    "todas",
    "tutto",
    "alles",
    "tous",
    "les",
];
/// How far (in elements, in page order) a banner button may be from the text or link that
/// names cookies or consent.
const BANNER_REACH: usize = 4;

/// A button label without case, punctuation and [`LABEL_FILLER`].
fn label_core(name: &str) -> String {
    name.to_lowercase()
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | '&'))
        .filter(|w| !w.is_empty() && !LABEL_FILLER.contains(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The click that dismisses a cookie banner on `page` (preferring to refuse), unless the task
/// is about cookies or one of `recent` actions already tried it. A banner is a button whose
/// whole label is a banner verb ("Reject all", "Accept cookies", "OK") within a few elements
/// of one that names cookies or consent — not any "Accept" on a page with a cookie policy link.
pub fn cookie_dismissal(page: &dyn PageFacts, query: &str, recent: &[&str]) -> Option<String> {
    if CONSENT.in_text(query) || !CONSENT.on_page(page) {
        return None;
    }
    let elements: Vec<_> = page.elements().take(5_000).collect();
    let mentions: Vec<usize> = elements
        .iter()
        .enumerate()
        .filter(|(_, e)| CONSENT.in_text(&e.name))
        .map(|(k, _)| k)
        .collect();
    if mentions.is_empty() {
        return None;
    }
    let near = |k: usize| mentions.iter().any(|m| m.abs_diff(k) <= BANNER_REACH);
    for labels in DISMISS {
        let button = elements.iter().enumerate().find(|(k, e)| {
            matches!(e.role.as_ref(), "btn" | "link")
                && labels.contains(&label_core(&e.name).as_str())
                && near(*k)
        });
        if let Some((_, b)) = button {
            let action = format!("click({})", b.id);
            if recent.iter().any(|r| r.trim() == action) {
                return None;
            }
            return Some(action);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    #[test]
    fn captchas_and_login_walls_block_unless_signing_in_is_the_task() {
        let captcha = FakePage::new(
            "https://a.com/",
            vec![el("1", "el", "reCAPTCHA"), el("2", "btn", "Next")],
        );
        assert_eq!(
            detect(&captcha, "buy shoes").map(|b| b.kind),
            Some(BlockerKind::Captcha)
        );
        // A big page with captcha links in a side form is not a wall; its challenge address
        // is, and so is the challenge box itself.
        let ids: Vec<String> = (100..140).map(|k| k.to_string()).collect();
        let mut shop = FakePage::new(
            "https://shop.example.com/p/42",
            vec![
                el("1", "link", "Change the CAPTCHA code"),
                el("2", "btn", "Send"),
            ],
        );
        shop.els
            .extend(ids.iter().map(|id| el(id.as_str(), "link", "Product")));
        assert_eq!(detect(&shop, "search for usb hubs"), None);
        let mut challenged = FakePage::new(&shop.url, shop.els.clone());
        challenged.els.push(el("3", "chk", "I'm not a robot"));
        assert_eq!(
            detect(&challenged, "search for usb hubs").map(|b| b.kind),
            Some(BlockerKind::Captcha)
        );
        shop.url = "https://shop.example.com/captcha?return=/p/42".into();
        assert_eq!(
            detect(&shop, "search for usb hubs").map(|b| b.kind),
            Some(BlockerKind::Captcha)
        );
        let login = FakePage::new(
            "https://a.com/login?next=/orders",
            vec![
                el("1", "inp", "Email"),
                el("2", "inp", "Password").input("password"),
                el("3", "btn", "Sign in"),
            ],
        );
        let wall = detect(&login, "show my last order").expect("blocker");
        assert_eq!(wall.kind, BlockerKind::LoginRequired);
        assert_eq!(
            serde_json::to_value(&wall).expect("json")["resolutionMethods"],
            serde_json::json!(["user_action_on_web"])
        );
        assert_eq!(
            detect(&login, "log in to my account"),
            None,
            "signing in is the task"
        );
        // A big page with a login box in its header is not a wall, nor is its account page.
        let mut big = FakePage::new("https://news.example.com/", login.els.clone());
        big.els.extend((0..40).map(|_| el("9", "link", "Story")));
        assert_eq!(detect(&big, "read the top story"), None);
        big.url = "https://news.example.com/account/saved?from=login".into();
        assert_eq!(detect(&big, "read my saved stories"), None);
        // A link that mentions a captcha, on a small page, stops nothing.
        let small = FakePage::new(
            "https://a.com/contact",
            vec![
                el("1", "inp", "Your message"),
                el("2", "btn", "Send"),
                el("3", "link", "Protected by reCAPTCHA - Privacy - Terms"),
            ],
        );
        assert_eq!(detect(&small, "send them a note"), None);
        let mut typed = small.clone();
        typed
            .els
            .push(el("4", "inp", "Type the CAPTCHA characters"));
        assert_eq!(
            detect(&typed, "send them a note").map(|b| b.kind),
            Some(BlockerKind::Captcha),
            "a field for the characters is the challenge"
        );
    }

    #[test]
    fn cookie_banners_are_refused_when_possible_and_only_once() {
        let page = FakePage::new(
            "https://a.com/",
            vec![
                el("1", "el", "We use cookies to improve your experience"),
                el("2", "btn", "Accept all"),
                el("3", "btn", "Reject all"),
            ],
        );
        assert_eq!(
            cookie_dismissal(&page, "find the opening hours", &[]).as_deref(),
            Some("click(3)")
        );
        assert_eq!(
            cookie_dismissal(&page, "find the opening hours", &["click(3)", "click(9)"]),
            None
        );
        assert_eq!(
            cookie_dismissal(&page, "change my cookie settings", &[]),
            None
        );
        let accept_only = FakePage::new(
            "https://a.com/",
            vec![el("1", "el", "Cookie notice"), el("2", "btn", "Got it")],
        );
        assert_eq!(
            cookie_dismissal(&accept_only, "x", &[]).as_deref(),
            Some("click(2)")
        );
        // A footer cookie policy link does not make the page's "Accept" a banner button.
        let mut invitations = FakePage::new(
            "https://social.example.com/invitations",
            vec![el("1", "btn", "Accept"), el("2", "btn", "Decline")],
        );
        invitations
            .els
            .extend((0..10).map(|_| el("5", "link", "Profile")));
        invitations.els.push(el("9", "link", "Cookie Policy"));
        assert_eq!(
            cookie_dismissal(&invitations, "accept the invitation", &[]),
            None
        );
        let near_but_other = FakePage::new(
            "https://a.com/",
            vec![
                el("1", "link", "Cookie Policy"),
                el("2", "btn", "Accept invitation"),
            ],
        );
        assert_eq!(
            cookie_dismissal(&near_but_other, "x", &[]),
            None,
            "whole labels only"
        );
    }
}
