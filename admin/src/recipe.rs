//! `agent-admin recipe ...`: a tenant's recipes (runs recorded for replay), listed and deleted.

use clap::Subcommand;
use serde_json::json;
use shared::ports::Store;

/// Most recipes one listing shows.
const MAX_LISTED: usize = 1_000;
/// The most recipes a tenant can hold (the top of `RECIPES_PER_TENANT`).
const MAX_READ: usize = 10_000;

#[derive(Debug, Subcommand)]
pub enum RecipeCmd {
    /// List a tenant's recipes: id, site, task template, steps, replays, healed runs in a row.
    List {
        #[arg(long)]
        tenant: String,
        /// Only this site's (its registrable domain, e.g. example.com).
        #[arg(long)]
        site: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Show one recipe with its steps.
    Show {
        #[arg(long)]
        tenant: String,
        id: String,
    },
    /// Delete a recipe: the next run of its task is the model's (and records it again).
    Delete {
        #[arg(long)]
        tenant: String,
        id: String,
    },
}

pub async fn run(
    store: &dyn Store,
    cmd: RecipeCmd,
) -> Result<(serde_json::Value, Vec<String>), String> {
    match cmd {
        RecipeCmd::List {
            tenant,
            site,
            limit,
        } => {
            let limit = limit.clamp(1, MAX_LISTED);
            // A site's recipes are looked for among all of the tenant's (at most
            // RECIPES_PER_TENANT), not only among the first `limit`.
            let read = if site.is_some() { MAX_READ } else { limit };
            let mut list = store
                .recipes(&tenant, read)
                .await
                .map_err(|e| e.to_string())?;
            if let Some(site) = site {
                list.retain(|r| r.domain.eq_ignore_ascii_case(site.trim()));
            }
            list.truncate(limit);
            let lines = list
                .iter()
                .map(|r| {
                    format!(
                        "{}\t{}{}\t{}\t{} steps\t{} replays\t{} healed",
                        r.id,
                        r.domain,
                        r.path,
                        r.template,
                        r.steps.len(),
                        r.replays,
                        r.healed_runs
                    )
                })
                .collect();
            Ok((json!(list), lines))
        }
        RecipeCmd::Show { tenant, id } => {
            let r = store
                .recipe(&tenant, &id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("tenant {tenant} has no recipe {id}"))?;
            let mut lines = vec![format!("{}{}: {}", r.domain, r.path, r.template)];
            for (k, s) in r.steps.iter().enumerate() {
                let target = s
                    .target
                    .as_ref()
                    .map(|t| format!(" {} \"{}\"", t.role, t.name))
                    .unwrap_or_default();
                let marks = [
                    (s.confirm, " [confirm]"),
                    (s.secret, " [secret: model]"),
                    (s.optional, " [optional]"),
                    (s.answer_from_page, " [answer: model]"),
                ]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, m)| *m)
                .collect::<String>();
                lines.push(format!(
                    "{}. {}{target} on {}{marks}",
                    k + 1,
                    s.action,
                    s.page
                ));
            }
            Ok((json!(r), lines))
        }
        RecipeCmd::Delete { tenant, id } => {
            let gone = store.delete_recipe(&tenant, &id).await;
            crate::workspace::removed(gone, &tenant, "recipe", &id)
        }
    }
}
