//! `agent-admin recipe ...`: a tenant's recipes (runs recorded for replay), listed, shown,
//! promoted to the organisation's, demoted and deleted. What members' runs wrote (templates,
//! names, pages) is printed with control characters escaped.

use clap::Subcommand;
use serde_json::json;
use shared::config::RecipeSettings;
use shared::domain::recipe::book::Recipe;
use shared::ports::Store;

/// Most recipes one listing shows.
const MAX_LISTED: usize = 1_000;
/// The most recipes a tenant can hold (the top of `RECIPES_PER_TENANT`).
const MAX_READ: usize = 10_000;

#[derive(Debug, Subcommand)]
pub enum RecipeCmd {
    /// List a tenant's recipes: id, whose (a member's, or the organisation's), site, task
    /// template, steps, agreeing runs.
    List {
        #[arg(long)]
        tenant: String,
        /// Only this site's (any part of its origin, e.g. example.com).
        #[arg(long)]
        site: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Show one recipe with its steps and the page each was taken on.
    Show {
        #[arg(long)]
        tenant: String,
        id: String,
    },
    /// Make a member's recipe the organisation's: replayed for every member (audited).
    Promote {
        #[arg(long)]
        tenant: String,
        id: String,
        /// Who promotes it (for the audit trail).
        #[arg(long, default_value = "agent-admin")]
        by: String,
    },
    /// Take the organisation's recipe back: members' own recipes stay (audited).
    Demote {
        #[arg(long)]
        tenant: String,
        id: String,
        #[arg(long, default_value = "agent-admin")]
        by: String,
    },
    /// Delete a recipe: the next run of its task is the model's (and records it again).
    Delete {
        #[arg(long)]
        tenant: String,
        id: String,
    },
}

/// `text` with control and direction characters escaped (`\u{1b}`): a member's words cannot
/// move the operator's cursor, colour the terminal, break a column or reorder a line.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || hidden {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

fn whose(r: &Recipe) -> String {
    match r.promoted {
        true => format!("organisation (from {})", escaped(&r.owner)),
        false => format!("member {}", escaped(&r.owner)),
    }
}

pub async fn run(
    store: &dyn Store,
    cmd: RecipeCmd,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(serde_json::Value, Vec<String>), String> {
    let settings =
        RecipeSettings::from_lookup(&|k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
    let (value, lines) = match cmd {
        RecipeCmd::List {
            tenant,
            site,
            limit,
        } => {
            let limit = limit.clamp(1, MAX_LISTED);
            // A site's recipes are looked for among all of the tenant's.
            let read = if site.is_some() { MAX_READ } else { limit };
            let mut list = store
                .recipes(&tenant, read)
                .await
                .map_err(|e| e.to_string())?;
            if let Some(site) = site {
                let site = site.trim().to_ascii_lowercase();
                list.retain(|r| r.origin.contains(&site));
            }
            list.truncate(limit);
            let lines = list
                .iter()
                .map(|r| {
                    format!(
                        "{}\t{}\t{}{}\t{}\t{} steps\t{} runs",
                        r.id,
                        whose(r),
                        escaped(&r.origin),
                        escaped(&r.path),
                        escaped(&r.template),
                        r.steps.len(),
                        r.runs
                    )
                })
                .collect();
            (json!(list), lines)
        }
        RecipeCmd::Show { tenant, id } => {
            let r = one(store, &tenant, &id).await?;
            let mut lines = vec![format!(
                "{}{}: {} ({})",
                escaped(&r.origin),
                escaped(&r.path),
                escaped(&r.template),
                whose(&r)
            )];
            for (k, s) in r.steps.iter().enumerate() {
                let marks = [
                    (s.confirm, " [confirm]"),
                    (s.own_value.is_some(), " [value: model]"),
                    (s.own_target, " [target: model]"),
                ]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, m)| *m)
                .collect::<String>();
                let title = escaped(s.title.as_deref().unwrap_or(""));
                lines.push(format!(
                    "{}. {} on {} \"{title}\"{marks}",
                    k + 1,
                    escaped(&s.intent),
                    escaped(&s.page)
                ));
            }
            (json!(r), lines)
        }
        RecipeCmd::Promote { tenant, id, by } => {
            let r = one(store, &tenant, &id).await?;
            let copy = shared::agent::promotion::promote(store, &r, &by, now, settings)
                .await
                .map_err(|e| e.to_string())?;
            let line = format!("promoted {id} as the organisation's {}", copy.id);
            (json!(copy), vec![line])
        }
        RecipeCmd::Demote { tenant, id, by } => {
            let gone =
                shared::agent::promotion::demote(store, &tenant, &id, &by, now, settings).await;
            if !gone.map_err(|e| e.to_string())? {
                return Err(format!("tenant {tenant} has no promoted recipe {id}"));
            }
            (
                json!({ "id": id, "demoted": true }),
                vec![format!("demoted {id}")],
            )
        }
        RecipeCmd::Delete { tenant, id } => {
            let gone = store.delete_recipe(&tenant, &id).await;
            crate::workspace::removed(gone, &tenant, "recipe", &id)?
        }
    };
    Ok((value, lines))
}

async fn one(store: &dyn Store, tenant: &str, id: &str) -> Result<Recipe, String> {
    store
        .recipe(tenant, id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("tenant {tenant} has no recipe {id}"))
}
