//! The task's typed secrets in a step ([`crate::domain::secrets`]): values of password, code
//! and card fields on the page are fingerprinted as soon as the page is read, and so is every
//! value the decision types into such a field; then no prompt, search, returned address or
//! question carries them, and nothing the step stores does.

use crate::agent::action::Action;
use crate::agent::page::PageView;
use crate::agent::step::StepPorts;
use crate::domain::facts::PageFacts;
use crate::domain::outcome::DomExpectation;
use crate::domain::risk::{masked, Secrets};
use crate::domain::secrets::{remember, Finder, SecretKey, SecretMark, HIDDEN};
use crate::ports::llm::ChatMessage;
use secrecy::ExposeSecret;

use super::{BuiltPage, Decision, StepContext};

/// Most page elements looked at for filled secret fields.
const FIELD_SCAN: usize = 5_000;

/// `expectations` of an earlier step as they can be checked on `view`: a value kept as
/// [`HIDDEN`] (a secret typed into a field) is expected to be the task's secret still — met when
/// the field now holds exactly one of the task's secrets, or shows it masked.
pub fn expectations_on(
    f: &Finder,
    expectations: Vec<DomExpectation>,
    view: &dyn PageFacts,
) -> Vec<DomExpectation> {
    expectations
        .into_iter()
        .map(|e| match e {
            DomExpectation::ValueEquals { element_id, value } if value == HIDDEN => {
                let now = view
                    .element(&element_id)
                    .and_then(|el| el.value.map(|v| v.into_owned()))
                    .unwrap_or_default();
                let holds =
                    !now.trim().is_empty() && (masked(&now) || f.scrub(now.trim()) == HIDDEN);
                DomExpectation::ValueEquals {
                    element_id,
                    value: if holds { now } else { value },
                }
            }
            other => other,
        })
        .collect()
}

/// The fingerprints' key of this server (`FINGERPRINT_KEY`, else the token signing key).
pub fn key(ctx: &StepPorts<'_>) -> SecretKey {
    SecretKey::derive(ctx.fingerprint_key.expose_secret().as_bytes())
}

/// Fingerprints the values of this page's secret fields (typed by the agent or by the user).
pub fn observe(ctx: &StepPorts<'_>, step: &mut StepContext, built: &BuiltPage, url: &str) {
    let view = PageView {
        page: &built.page,
        url,
    };
    let key = key(ctx);
    let secrets = Secrets::new(&ctx.agent.risk, &view);
    let filled: Vec<SecretMark> = view
        .elements()
        .take(FIELD_SCAN)
        .filter(|e| {
            e.value
                .as_deref()
                .is_some_and(|v| !v.trim().is_empty() && !masked(v))
        })
        .filter(|e| secrets.typed(e, e.value.as_deref().unwrap_or("")))
        .filter_map(|e| key.seen(e.value.as_deref().unwrap_or("")))
        .collect();
    for m in filled {
        remember(&mut step.task.seen.secrets, m);
    }
}

/// Whether a field of the page holds a value of a password, code or card field (then nothing
/// that cannot be scrubbed, a screenshot, leaves the server).
pub fn shows_secret(ctx: &StepPorts<'_>, view: &PageView<'_>) -> bool {
    let secrets = Secrets::new(&ctx.agent.risk, view);
    view.elements().take(FIELD_SCAN).any(|e| {
        e.value
            .as_deref()
            .is_some_and(|v| !v.trim().is_empty() && secrets.typed(&e, v))
    })
}

/// Fingerprints what `d` types into secret fields of the page (its action and its chain).
fn note_typed(ctx: &StepPorts<'_>, step: &mut StepContext, d: &Decision, view: &PageView<'_>) {
    let key = key(ctx);
    let secrets = Secrets::new(&ctx.agent.risk, view);
    let actions =
        std::iter::once(d.action.as_str()).chain(d.chain.iter().map(|c| c.action.as_str()));
    for a in actions {
        let Ok(Action::SetValue(id, value)) = Action::parse(a) else {
            continue;
        };
        let Some(field) = view.element(&id) else {
            continue;
        };
        if secrets.typed(&field, &value) {
            if let Some(m) = key.mark(&value) {
                remember(&mut step.task.seen.secrets, m);
            }
        }
    }
}

/// What the step keeps and shows once its decision `d` is made: what `d` types into secret
/// fields is fingerprinted, the step's kept state is scrubbed ([`scrub_kept`]), the thought and
/// question the user reads are scrubbed in `d` (whose action goes out as decided), and the
/// decision as it is kept comes back with its actions' secrets hidden too.
pub fn hide(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    d: &mut Decision,
    page: &crate::agent::page::Page,
    url: &str,
) -> (Finder, Decision) {
    note_typed(ctx, step, d, &PageView { page, url });
    let hidden = finder(ctx, step);
    scrub_kept(&hidden, step);
    d.thought = hidden.scrub(&d.thought).into_owned();
    // A server round shows what its tool did (a note's value may hold a secret).
    if let Some(t) = d.tool_action.as_ref().and_then(|t| hidden.scrubbed(t)) {
        d.tool_action = Some(t);
    }
    d.user_question = d
        .user_question
        .take()
        .map(|q| hidden.scrub(&q).into_owned());
    let kept = hidden.scrubbed(&*d).unwrap_or_else(|| d.clone());
    (hidden, kept)
}

/// A finder of the task's secrets.
pub fn finder(ctx: &StepPorts<'_>, step: &StepContext) -> Finder {
    key(ctx).finder(&step.task.seen.secrets)
}

/// The messages of a model call with the task's secrets hidden.
pub fn scrub_messages(ctx: &StepPorts<'_>, step: &StepContext, messages: &mut [ChatMessage]) {
    if step.task.seen.secrets.is_empty() {
        return;
    }
    let f = finder(ctx, step);
    for m in messages {
        if let std::borrow::Cow::Owned(clean) = f.scrub(&m.content) {
            m.content = clean;
        }
    }
}

/// What the step keeps with the secrets hidden: the task (its query, notes, plan and
/// questions; its fingerprints stay as they are), the verdict and correction, the user's
/// answer, the session's notes and the records of the server tools it ran.
fn scrub_kept(f: &Finder, step: &mut StepContext) {
    if f.is_empty() {
        return;
    }
    let marks = std::mem::take(&mut step.task.seen.secrets);
    if let Some(clean) = f.scrubbed(&step.task) {
        step.task = clean;
    }
    step.task.seen.secrets = marks;
    if let Some(v) = step
        .verdicts
        .verification
        .as_ref()
        .and_then(|v| f.scrubbed(v))
    {
        step.verdicts.verification = Some(v);
    }
    if let Some(c) = step
        .verdicts
        .correction
        .as_ref()
        .and_then(|c| f.scrubbed(c))
    {
        step.verdicts.correction = Some(c);
    }
    if let Some(m) = step.session.memory.as_ref().and_then(|m| f.scrubbed(m)) {
        step.session.memory = Some(m);
    }
    if let Some(u) = &step.request.user_input {
        step.request.user_input = Some(f.scrub(u).into_owned());
    }
    if let Some(t) = f.scrubbed(&step.records.tool_steps) {
        step.records.tool_steps = t;
    }
}
