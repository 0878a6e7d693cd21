//! Phase 4 (Gather), the web search: the page's own site first, the open web when the site has
//! nothing; the results condensed into a [`SearchRecord`]. A search never fails a step: an
//! engine that is missing, slow or broken gives a record that says so.

use std::sync::Once;
use std::time::Instant;

use chrono::{DateTime, Utc};

use crate::agent::step::StepPorts;
use crate::domain::secrets::{Finder, HIDDEN};
use crate::domain::web::{condense, search_site, SearchFailure, SearchRecord, SearchScope};
use crate::ports::web_search::{SearchError, SearchQuery};
use crate::text::single_line;

static UNCONFIGURED: Once = Once::new();

/// Searches for `query` from the page at `url`, giving up at `deadline`. A query that holds
/// one of the task's typed `secrets` is not sent.
pub async fn search(
    ctx: &StepPorts<'_>,
    query: &str,
    url: &str,
    deadline: Instant,
    now: DateTime<Utc>,
    secrets: &Finder,
) -> SearchRecord {
    let started = Instant::now();
    let site = search_site(url);
    let withheld = secrets.in_text(query);
    let mut record = SearchRecord {
        query: if withheld {
            HIDDEN.to_owned()
        } else {
            single_line(query, crate::domain::web::QUERY_CHARS)
        },
        site: site.clone(),
        scope: SearchScope::Web,
        results: Vec::new(),
        calls: 0,
        took_ms: 0,
        at: now,
        failure: None,
    };
    if withheld {
        record.failure = Some(SearchFailure::Withheld);
        return record;
    }
    let Some(engine) = ctx.search else {
        UNCONFIGURED.call_once(|| {
            tracing::info!("web search is not configured (TAVILY_API_KEY); searches are skipped");
        });
        record.failure = Some(SearchFailure::Unavailable);
        return record;
    };
    let scopes: Vec<(SearchScope, Vec<String>)> = match site {
        Some(s) => vec![(SearchScope::Site, vec![s]), (SearchScope::Web, Vec::new())],
        None => vec![(SearchScope::Web, Vec::new())],
    };
    for (scope, domains) in scopes {
        if deadline.saturating_duration_since(Instant::now()) < super::deadline::MIN_SEARCH_TIME {
            record.failure = record.failure.or(Some(SearchFailure::NoTime));
            break;
        }
        record.calls += 1;
        let q = SearchQuery {
            query: &record.query,
            include_domains: &domains,
        };
        match engine.search(&q, deadline).await {
            Ok(hits) => {
                record.scope = scope;
                record.results = condense(&hits);
                record.failure = None;
                if !record.results.is_empty() {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "web search failed; the step goes on without it");
                record.failure = Some(match e {
                    SearchError::Timeout => SearchFailure::Timeout,
                    SearchError::Failed(_) => SearchFailure::Failed,
                });
                break;
            }
        }
    }
    record.took_ms = started.elapsed().as_millis() as u64;
    record
}
