//! `POST /api/v1/auth/login`: email + password → access token. Unknown email and wrong
//! password answer the same `401 INVALID_CREDENTIALS` after the same amount of hashing work.
//! Failures per email and per client address are counted; an attempt takes a slot in each
//! before its password is checked, waits while the slots are held by attempts in flight and is
//! refused with `429` once the window is full of failures (`auth::attempts`). A success clears
//! the email's failures.

use ::http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use shared::auth::attempts::LoginAttempt;
use shared::auth::password::MAX_PASSWORD_LEN;
use shared::auth::AccountView;
use shared::domain::Email;
use shared::error::FieldProblem;
use shared::http::{self, parse_json, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "auth-login",
    methods: &[Method::POST],
    path: "/api/v1/auth/login",
};

#[derive(Deserialize)]
struct LoginBody {
    email: String,
    password: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoginResponse {
    access_token: String,
    expires_at: String,
    #[serde(flatten)]
    account: AccountView,
}

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, login).await
}

fn validate(body: &LoginBody) -> Result<Email, Error> {
    let mut problems = Vec::new();
    let email = Email::parse(&body.email)
        .map_err(|p| problems.push(FieldProblem::new("email", p)))
        .ok();
    if body.password.is_empty() {
        problems.push(FieldProblem::new("password", "must not be empty"));
    } else if body.password.chars().count() > MAX_PASSWORD_LEN {
        problems.push(FieldProblem::new(
            "password",
            format!("must be at most {MAX_PASSWORD_LEN} characters"),
        ));
    }
    match email {
        Some(email) if problems.is_empty() => Ok(email),
        _ => Err(Error::Validation(problems)),
    }
}

async fn login(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let body: LoginBody = parse_json(&req)?;
    let email = validate(&body)?;
    // The token's issue time precedes the user's read: a disable that lands after the read
    // (and so is not seen by it) is later than the token, and ends it.
    let now = ctx.clock.now();
    let address = http::source_ip(&req);
    let attempt = LoginAttempt::new(&ctx.config.login_limits, email.as_str(), address.as_deref());
    let store = ctx.store.as_ref();

    // A slot per email and per address is taken before the password is checked (waiting for
    // attempts in flight, refused when the window is full of failures); the user is looked up
    // meanwhile.
    let (entered, user) = tokio::join!(
        attempt.enter(store, ctx.clock.as_ref()),
        ctx.store.user_by_email(&email),
    );
    let entered = entered?;
    let user = match user {
        Ok(u) => u,
        Err(e) => {
            attempt.abandoned(store, entered).await;
            return Err(e.into());
        }
    };
    let phc = user.as_ref().map(|u| u.password_hash.clone());
    let matches = match ctx.passwords.verify_async(body.password, phc).await {
        Ok(m) => m,
        Err(e) => {
            attempt.abandoned(store, entered).await;
            return Err(e);
        }
    };
    let user = match user {
        Some(user) if matches && !user.disabled => user,
        // A disabled account, with the right password.
        Some(_) if matches => {
            attempt.failed(store, entered).await;
            return Err(Error::AccountDisabled);
        }
        _ => {
            attempt.failed(store, entered).await;
            return Err(Error::InvalidCredentials);
        }
    };
    let (tenant, cleared) = tokio::join!(
        ctx.store.tenant(&user.tenant_id),
        attempt.succeeded(store, entered)
    );
    cleared?;
    let tenant = tenant?.ok_or_else(|| {
        Error::internal(format!(
            "tenant {} of user {} is missing",
            user.tenant_id, user.id
        ))
    })?;
    let issued = ctx.tokens.issue_current(&user, now).await?;
    tracing::info!(tenant = %tenant.id, user = %user.id, "login succeeded");
    Ok(http::json(
        StatusCode::OK,
        &LoginResponse {
            access_token: issued.token,
            expires_at: shared::time::iso(issued.expires_at),
            account: AccountView::new(&user, &tenant),
        },
    ))
}
