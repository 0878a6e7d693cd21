//! Where a request's time goes: a tracing layer that times the request path's spans
//! (`interact.*`, one per step-machine phase, `snapshot.compress`) in this process.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

static TIMES: Mutex<BTreeMap<String, Vec<f64>>> = Mutex::new(BTreeMap::new());

struct Started(Instant, String);

struct PhaseName(Option<String>);

impl Visit for PhaseName {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "phase" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, _field: &Field, _value: &dyn std::fmt::Debug) {}
}

struct Timing;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Timing {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut phase = PhaseName(None);
        attrs.record(&mut phase);
        let name = match phase.0 {
            Some(p) => format!("{}:{p}", attrs.metadata().name()),
            None => attrs.metadata().name().to_owned(),
        };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Started(Instant::now(), name));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let ext = span.extensions();
        let Some(Started(at, name)) = ext.get::<Started>() else {
            return;
        };
        let ms = at.elapsed().as_secs_f64() * 1000.0;
        if let Ok(mut times) = TIMES.lock() {
            times.entry(name.clone()).or_default().push(ms);
        }
    }
}

/// Installs the layer for this process (once; later calls do nothing).
pub fn install() {
    let timed = tracing_subscriber::filter::filter_fn(|m| {
        m.is_span() && (m.name().starts_with("interact.") || m.name() == "snapshot.compress")
    });
    let _ = tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(Timing.with_filter(timed)),
    );
}

/// The times recorded since the last call, by span, in ms.
pub fn take() -> BTreeMap<String, Vec<f64>> {
    TIMES
        .lock()
        .map(|mut t| std::mem::take(&mut *t))
        .unwrap_or_default()
}
