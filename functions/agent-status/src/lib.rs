//! `GET /api/v1/agent/status`: whether the server-hosted agent tools are `online`, `degraded`
//! or `offline`, with the reason per part (the store, the organisation's workspace storage,
//! the command runner, each MCP server).
//! Answers `200` whenever the caller is known — a store outage is reported, not thrown.

use ::http::Method;
use shared::auth::check_account;
use shared::http::guard::verify_bearer;
use shared::http::{self, Request, Response, RouteSpec};
use shared::tools::health::{self, Health, Part};
use shared::tools::status;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-status",
    methods: &[Method::GET],
    path: "/api/v1/agent/status",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let mut p = verify_bearer(ctx, req.headers()).await?;
    let enabled = ctx.config.tools.enabled;
    let parts = match check_account(ctx.store.as_ref(), ctx.clock.now(), &mut p).await {
        Ok(_) if !enabled => Vec::new(),
        Ok(_) => {
            // The tenant's parts: its workspace storage first, then each MCP server.
            let tools = ctx.tools();
            let (tenant, runner) = tokio::join!(
                status::tenant_parts(&tools, &p.tenant_id),
                ctx.runner.check()
            );
            let runner = match runner {
                Ok(()) => Part::online("commandRunner"),
                Err(why) => Part::down("commandRunner", Health::Offline, why),
            };
            let mut tenant = tenant.into_iter();
            let mut parts = vec![Part::online("store")];
            parts.extend(tenant.next());
            parts.push(runner);
            parts.extend(tenant);
            parts
        }
        Err(Error::Store(_)) => vec![Part::down(
            "store",
            Health::Offline,
            "the store is unreachable",
        )],
        Err(e) => return Err(e),
    };
    Ok(http::agent::ok(health::body(enabled, &parts)))
}
