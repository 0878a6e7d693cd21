//! `POST /api/v1/auth/login`: email + password → access token. Unknown email and wrong
//! password answer the same `401 INVALID_CREDENTIALS` after the same amount of hashing work;
//! attempts per email and per client address are counted before the password is checked and
//! refused with `429` beyond the limit (a success clears them).

use ::http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use shared::auth::password::MAX_PASSWORD_LEN;
use shared::auth::rate_limit::FixedWindow;
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
    let now = ctx.clock.now();
    let limits = ctx.config.login_limits;
    let per_email = FixedWindow {
        limit: limits.max_failures_per_email,
        window_seconds: limits.window_seconds,
    };
    let per_address = FixedWindow {
        limit: limits.max_failures_per_address,
        window_seconds: limits.window_seconds,
    };
    let email_key = format!("login-email#{email}");
    let address_key = http::source_ip(&req).map(|ip| format!("login-address#{ip}"));
    let store = ctx.store.as_ref();

    // Every attempt is counted before its password is checked, atomically and only while the
    // window has room, so parallel guesses cannot get more checks than the limit. The counts
    // and the user lookup are independent: one round trip for all three.
    let (email_taken, address_taken, user) = tokio::join!(
        per_email.take(store, &email_key, now),
        async {
            match &address_key {
                Some(key) => per_address.take(store, key, now).await,
                None => Ok(true),
            }
        },
        ctx.store.user_by_email(&email),
    );
    let (email_ok, address_ok) = (
        matches!(email_taken, Ok(true)),
        matches!(address_taken, Ok(true)),
    );
    if !(email_ok && address_ok) {
        // Refused (or the store failed): give back whichever count this attempt did take.
        if email_ok {
            per_email.give_back(store, &email_key, now).await;
        }
        if let (true, Some(key)) = (address_ok, &address_key) {
            per_address.give_back(store, key, now).await;
        }
        email_taken?;
        address_taken?;
        let refused_by = if email_ok { per_address } else { per_email };
        return Err(refused_by.limited(now));
    }
    let user = user?;
    let phc = user.as_ref().map(|u| u.password_hash.clone());
    let matches = ctx.passwords.verify_async(body.password, phc).await?;

    // A failed attempt stays counted.
    let user = match user {
        Some(user) if matches => user,
        _ => return Err(Error::InvalidCredentials),
    };
    if user.disabled {
        return Err(Error::AccountDisabled);
    }
    // A success clears the email's failures and does not count against the address.
    let (tenant, reset, ()) = tokio::join!(
        ctx.store.tenant(&user.tenant_id),
        per_email.reset(store, &email_key, now),
        async {
            if let Some(key) = &address_key {
                per_address.give_back(store, key, now).await;
            }
        }
    );
    reset?;
    let tenant = tenant?.ok_or_else(|| {
        Error::internal(format!(
            "tenant {} of user {} is missing",
            user.tenant_id, user.id
        ))
    })?;
    let issued = ctx.tokens.issue(&user, now)?;
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
