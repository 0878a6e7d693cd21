//! HTTP-level tests of login, session and logout through local-api's router, plus CORS,
//! body limits and routing errors; and the login throttle's wait for a slot, on the embedded
//! store with tokio's clock paused.

use api_tests::{expect_error, AppOptions, TestApp, ALLOWED_ORIGIN, TEST_KEY};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Duration};
use serde_json::{json, Value};
use shared::clock::Clock;

const PW: &str = "correct-horse-battery";

async fn app_with_user() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    let id = app.seed_user("acme", "ada@acme.com", PW).await;
    (app, id)
}

#[tokio::test]
async fn login_returns_token_expiry_user_and_tenant() {
    let (app, user_id) = app_with_user().await;
    let r = app
        .login_raw(json!({ "email": "  Ada@ACME.com ", "password": PW }))
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    let v: Value = r.json().await.expect("json");
    assert!(v["accessToken"]
        .as_str()
        .is_some_and(|t| t.split('.').count() == 3));
    let expires = DateTime::parse_from_rfc3339(v["expiresAt"].as_str().expect("expiresAt"))
        .expect("ISO-8601");
    assert_eq!(expires.timestamp() - app.clock.now().timestamp(), 43_200);
    assert!(v["expiresAt"].as_str().expect("s").ends_with('Z'));
    assert_eq!(
        v["user"],
        json!({ "id": user_id, "email": "ada@acme.com", "name": "Test User" })
    );
    assert_eq!(v["tenantId"], "acme");
    assert_eq!(v["tenantName"], "Tenant acme");
    assert!(
        v.get("success").is_none(),
        "auth responses are top-level, no envelope"
    );
}

#[tokio::test]
async fn unknown_email_and_wrong_password_answer_the_same_401() {
    let (app, _) = app_with_user().await;
    let a = app
        .login_raw(json!({ "email": "nobody@acme.com", "password": PW }))
        .await;
    let a = expect_error(a, 401, "INVALID_CREDENTIALS").await;
    let b = app
        .login_raw(json!({ "email": "ada@acme.com", "password": "wrong-password" }))
        .await;
    let b = expect_error(b, 401, "INVALID_CREDENTIALS").await;
    assert_eq!(a, b, "the two failures must be indistinguishable");
}

#[tokio::test]
async fn disabled_user_gets_403_only_with_the_right_password() {
    let (app, _) = app_with_user().await;
    let email = shared::domain::Email::parse("ada@acme.com").expect("e");
    app.ctx
        .store
        .set_user_disabled(&email, true)
        .await
        .expect("disable");
    let r = app
        .login_raw(json!({ "email": "ada@acme.com", "password": PW }))
        .await;
    expect_error(r, 403, "ACCOUNT_DISABLED").await;
    let r = app
        .login_raw(json!({ "email": "ada@acme.com", "password": "wrong-password" }))
        .await;
    expect_error(r, 401, "INVALID_CREDENTIALS").await;
}

#[tokio::test]
async fn bad_login_bodies_get_400_naming_the_field() {
    let (app, _) = app_with_user().await;
    let cases = [
        (json!({ "email": "ada@acme.com" }), "password"),
        (json!({ "password": PW }), "email"),
        (json!({ "email": 42, "password": PW }), "email"),
        (json!({ "email": "not-an-email", "password": PW }), "email"),
        (
            json!({ "email": "ada@acme.com", "password": "" }),
            "password",
        ),
        (
            json!({ "email": "ada@acme.com", "password": "x".repeat(1025) }),
            "password",
        ),
        (json!([1, 2]), "body"),
    ];
    for (body, field) in cases {
        let v = expect_error(app.login_raw(body.clone()).await, 400, "VALIDATION_ERROR").await;
        assert_eq!(v["details"][0]["field"], field, "body {body}");
        assert!(
            v["message"].as_str().expect("msg").starts_with(field),
            "{v}"
        );
    }
    let r = app
        .client
        .post(app.url("/api/v1/auth/login"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("send");
    let v = expect_error(r, 400, "VALIDATION_ERROR").await;
    assert_eq!(v["details"][0]["field"], "body");
    // Unknown fields are ignored, never rejected.
    let r = app
        .login_raw(json!({ "email": "ada@acme.com", "password": PW, "remember": true }))
        .await;
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn repeated_failures_for_one_email_get_429_until_the_window_ends() {
    let (app, _) = app_with_user().await; // 3 failures per email per 600 s
    for _ in 0..3 {
        assert_eq!(
            app.login_status("ada@acme.com", "wrong-password").await,
            401
        );
    }
    let r = app
        .login_raw(json!({ "email": "ada@acme.com", "password": PW }))
        .await;
    let retry_after: i64 = r.headers()["retry-after"]
        .to_str()
        .expect("s")
        .parse()
        .expect("seconds");
    let v = expect_error(r, 429, "RATE_LIMIT").await;
    assert!((1..=600).contains(&retry_after), "{retry_after}");
    let reset_at =
        DateTime::parse_from_rfc3339(v["resetAt"].as_str().expect("resetAt is an ISO string"))
            .expect("iso");
    assert_eq!(
        reset_at.timestamp() - app.clock.now().timestamp(),
        retry_after
    );
    // Another email from the same address is not blocked by this email's counter.
    app.seed_user("acme", "bob@acme.com", PW).await;
    assert_eq!(app.login_status("bob@acme.com", PW).await, 200);
    // After the window the right password works again.
    app.clock.advance(Duration::seconds(retry_after));
    assert_eq!(app.login_status("ada@acme.com", PW).await, 200);
}

#[tokio::test]
async fn unknown_emails_are_throttled_like_known_ones() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        assert_eq!(app.login_status("ghost@acme.com", "whatever-pw").await, 401);
    }
    let r = app
        .login_raw(json!({ "email": "ghost@acme.com", "password": "whatever-pw" }))
        .await;
    expect_error(r, 429, "RATE_LIMIT").await;
}

#[tokio::test]
async fn repeated_failures_from_one_address_get_429_across_emails() {
    let mut opts = AppOptions::default();
    opts.login_limits.max_failures_per_email = 100;
    opts.login_limits.max_failures_per_address = 4;
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    for i in 0..4 {
        let r = app
            .login_raw(
                json!({ "email": format!("user{i}@acme.com"), "password": "wrong-password" }),
            )
            .await;
        assert_eq!(r.status(), 401);
    }
    let r = app
        .login_raw(json!({ "email": "ada@acme.com", "password": PW }))
        .await;
    assert!(r.headers().contains_key("retry-after"));
    expect_error(r, 429, "RATE_LIMIT").await;
}

#[tokio::test]
async fn successful_login_clears_the_email_failure_count() {
    let (app, _) = app_with_user().await;
    for _ in 0..2 {
        app.login_status("ada@acme.com", "wrong-password").await;
    }
    app.login("ada@acme.com", PW).await;
    for _ in 0..2 {
        assert_eq!(
            app.login_status("ada@acme.com", "wrong-password").await,
            401
        );
    }
    assert_eq!(app.login_status("ada@acme.com", PW).await, 200);
}

#[tokio::test]
async fn session_returns_the_account_of_the_token() {
    let (app, user_id) = app_with_user().await;
    let token = app.login("ada@acme.com", PW).await;
    let r = app.get_session(&token).await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        v,
        json!({ "user": { "id": user_id, "email": "ada@acme.com", "name": "Test User" }, "tenantId": "acme", "tenantName": "Tenant acme" })
    );
}

/// Re-signs `claims` (a JSON object) with `key` under `header`, using an HMAC independent of
/// the code under test.
fn forge(header: Value, claims: &Value, key: &str) -> String {
    use hmac::{Hmac, Mac};
    let h = URL_SAFE_NO_PAD.encode(header.to_string());
    let p = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("any key length");
    mac.update(format!("{h}.{p}").as_bytes());
    let sig = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{h}.{p}.{sig}")
}

fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("payload");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("b64")).expect("json")
}

#[tokio::test]
async fn the_hand_made_signer_reproduces_a_genuine_token() {
    // Guards the forgery tests below: with the real key and the real claims, our own HS256
    // must produce exactly the server's token, so each refusal below is about its one change.
    let (app, _) = app_with_user().await;
    let token = app.login("ada@acme.com", PW).await;
    let header: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(token.split('.').next().expect("h"))
            .expect("b64"),
    )
    .expect("json");
    let remade = forge(header, &claims_of(&token), TEST_KEY);
    assert_eq!(app.get_session(&remade).await.status(), 200);
}

#[tokio::test]
async fn every_kind_of_bad_token_gets_401_unauthorized() {
    let (app, _) = app_with_user().await;
    let token = app.login("ada@acme.com", PW).await;
    let claims = claims_of(&token);
    let hs256 = json!({ "alg": "HS256", "typ": "JWT" });
    let with = |k: &str, v: Value| {
        let mut c = claims.clone();
        c[k] = v;
        c
    };
    let none_token = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(json!({ "alg": "none", "typ": "JWT" }).to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut no_jti = claims.clone();
    no_jti.as_object_mut().expect("obj").remove("jti");
    let bad: Vec<(&str, String)> = vec![
        ("garbage", "not.a.token".into()),
        ("alg none", none_token),
        (
            "HS512 header",
            forge(json!({ "alg": "HS512", "typ": "JWT" }), &claims, TEST_KEY),
        ),
        (
            "other key",
            forge(
                hs256.clone(),
                &claims,
                "another-key-0123456789abcdef0123456789",
            ),
        ),
        (
            "wrong aud",
            forge(hs256.clone(), &with("aud", json!("someone-else")), TEST_KEY),
        ),
        (
            "wrong iss",
            forge(hs256.clone(), &with("iss", json!("evil-issuer")), TEST_KEY),
        ),
        (
            "expired",
            forge(
                hs256.clone(),
                &with("exp", json!(app.clock.now().timestamp() - 1)),
                TEST_KEY,
            ),
        ),
        ("no jti", forge(hs256.clone(), &no_jti, TEST_KEY)),
        ("tampered payload", {
            let parts: Vec<&str> = token.split('.').collect();
            let evil = URL_SAFE_NO_PAD.encode(with("tid", json!("other-tenant")).to_string());
            format!("{}.{evil}.{}", parts[0], parts[2])
        }),
    ];
    for (what, t) in bad {
        let r = app.get_session(&t).await;
        assert_eq!(r.status(), 401, "{what}");
        expect_error(r, 401, "UNAUTHORIZED").await;
    }
    let r = app
        .send(reqwest::Method::GET, "/api/v1/auth/session", None)
        .await;
    expect_error(r, 401, "UNAUTHORIZED").await;
    let r = app
        .client
        .get(app.url("/api/v1/auth/session"))
        .header("authorization", format!("Basic {token}"))
        .send()
        .await
        .expect("send");
    expect_error(r, 401, "UNAUTHORIZED").await;
    // The genuine token still works, so each refusal above was about its one change.
    assert_eq!(app.get_session(&token).await.status(), 200);
}

#[tokio::test]
async fn tokens_expire_with_the_clock() {
    let (app, _) = app_with_user().await;
    let token = app.login("ada@acme.com", PW).await;
    app.clock.advance(Duration::seconds(43_199));
    assert_eq!(app.get_session(&token).await.status(), 200);
    app.clock.advance(Duration::seconds(1));
    expect_error(app.get_session(&token).await, 401, "UNAUTHORIZED").await;
}

#[tokio::test]
async fn session_of_a_disabled_user_gets_401() {
    let (app, _) = app_with_user().await;
    let token = app.login("ada@acme.com", PW).await;
    let email = shared::domain::Email::parse("ada@acme.com").expect("e");
    app.ctx
        .store
        .set_user_disabled(&email, true)
        .await
        .expect("disable");
    expect_error(app.get_session(&token).await, 401, "UNAUTHORIZED").await;
}

#[tokio::test]
async fn logout_revokes_only_that_token_at_once() {
    let (app, _) = app_with_user().await;
    let token = app.login("ada@acme.com", PW).await;
    let other = app.login("ada@acme.com", PW).await;
    let r = app.logout(Some(&token)).await;
    assert_eq!(r.status(), 204);
    assert!(r.bytes().await.expect("body").is_empty());
    expect_error(app.get_session(&token).await, 401, "UNAUTHORIZED").await;
    let again = app.logout(Some(&token)).await;
    expect_error(again, 401, "UNAUTHORIZED").await;
    assert_eq!(
        app.get_session(&other).await.status(),
        200,
        "other sessions stay valid"
    );
    let none = app.logout(None).await;
    expect_error(none, 401, "UNAUTHORIZED").await;
}

#[tokio::test]
async fn preflight_from_an_allowed_origin_gets_cors_headers() {
    let app = TestApp::spawn().await;
    for path in [
        "/api/v1/auth/login",
        "/api/v1/auth/session",
        "/api/v1/auth/logout",
    ] {
        let r = app
            .client
            .request(reqwest::Method::OPTIONS, app.url(path))
            .header("origin", ALLOWED_ORIGIN)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 204, "{path}");
        let h = r.headers();
        assert_eq!(h["access-control-allow-origin"], ALLOWED_ORIGIN);
        let headers = h["access-control-allow-headers"]
            .to_str()
            .expect("s")
            .to_ascii_lowercase();
        assert!(headers.contains("authorization") && headers.contains("content-type"));
        assert!(h["access-control-allow-methods"]
            .to_str()
            .expect("s")
            .contains("POST"));
        assert!(h.contains_key("access-control-max-age"));
    }
}

#[tokio::test]
async fn other_origins_get_no_cors_headers() {
    let (app, _) = app_with_user().await;
    let r = app
        .client
        .request(reqwest::Method::OPTIONS, app.url("/api/v1/auth/login"))
        .header("origin", "chrome-extension://someotherextensionid")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 204);
    assert!(!r
        .headers()
        .keys()
        .any(|k| k.as_str().starts_with("access-control-")));
    let r = app
        .client
        .post(app.url("/api/v1/auth/login"))
        .header("origin", "https://evil.example")
        .json(&json!({ "email": "ada@acme.com", "password": PW }))
        .send()
        .await
        .expect("send");
    assert!(!r.headers().contains_key("access-control-allow-origin"));
    // Allowed origins see CORS headers on errors too, so the extension can read them.
    let r = app
        .client
        .post(app.url("/api/v1/auth/login"))
        .header("origin", ALLOWED_ORIGIN)
        .json(&json!({ "email": "ada@acme.com", "password": "wrong-password" }))
        .send()
        .await
        .expect("send");
    assert_eq!(r.headers()["access-control-allow-origin"], ALLOWED_ORIGIN);
    expect_error(r, 401, "INVALID_CREDENTIALS").await;
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let opts = AppOptions {
        max_body_bytes: 2048,
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(opts).await;
    let big = json!({ "email": "ada@acme.com", "password": "x".repeat(4096) });
    let r = app
        .client
        .post(app.url("/api/v1/auth/login"))
        .header("origin", ALLOWED_ORIGIN)
        .json(&big)
        .send()
        .await
        .expect("send");
    assert_eq!(r.headers()["access-control-allow-origin"], ALLOWED_ORIGIN);
    let v = expect_error(r, 413, "PAYLOAD_TOO_LARGE").await;
    assert!(v["message"].as_str().expect("m").contains("2048"));
}

#[tokio::test]
async fn unknown_routes_get_404_and_wrong_methods_405() {
    let app = TestApp::spawn().await;
    let r = app
        .client
        .get(app.url("/api/nope"))
        .send()
        .await
        .expect("send");
    expect_error(r, 404, "NOT_FOUND").await;
    let r = app
        .client
        .get(app.url("/api/v1/auth/login"))
        .send()
        .await
        .expect("send");
    expect_error(r, 405, "METHOD_NOT_ALLOWED").await;
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::spawn().await;
    let r = app
        .send(reqwest::Method::GET, "/api/v1/auth/session", None)
        .await;
    let id = r.headers()["x-request-id"].to_str().expect("s").to_owned();
    assert_eq!(id.len(), 36);
}

#[tokio::test]
async fn a_revoked_token_stays_rejected_after_a_restart_of_the_file_store() {
    let dir = tempfile::tempdir().expect("tmp");
    let opts = AppOptions {
        data_dir: Some(dir.path().to_owned()),
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(opts.clone()).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    let revoked = app.login("ada@acme.com", PW).await;
    let kept = app.login("ada@acme.com", PW).await;
    let r = app.logout(Some(&revoked)).await;
    assert_eq!(r.status(), 204);
    let ctx = app.ctx.clone();
    app.stop().await;
    drop(ctx);

    let app = TestApp::spawn_with(opts).await;
    expect_error(app.get_session(&revoked).await, 401, "UNAUTHORIZED").await;
    assert_eq!(app.get_session(&kept).await.status(), 200);
}

/// A test app on the embedded store or on DynamoDB + S3, with one user.
async fn app_on(dynamodb: bool, opts: AppOptions) -> TestApp {
    let app = TestApp::spawn_with(AppOptions { dynamodb, ..opts }).await;
    app.seed_user("acme", "ada@acme.com", PW).await;
    app
}

/// Disabling a user ends every token issued before it for good: re-enabling the user does
/// not revive them; tokens issued after re-enabling work, and other users' are untouched.
async fn a_disable_ends_every_token_issued_before_it(dynamodb: bool) {
    let app = app_on(dynamodb, AppOptions::default()).await;
    app.seed_user("acme", "bob@acme.com", PW).await;
    let old = app.login("ada@acme.com", PW).await;
    let bobs = app.login("bob@acme.com", PW).await;
    assert_eq!(app.get_session(&old).await.status(), 200);
    let email = shared::domain::Email::parse("ada@acme.com").expect("e");
    let store = app.ctx.store.clone();
    app.clock.advance(Duration::seconds(5));
    store
        .set_user_disabled(&email, true)
        .await
        .expect("disable");
    expect_error(app.get_session(&old).await, 401, "UNAUTHORIZED").await;
    app.clock.advance(Duration::seconds(5));
    store
        .set_user_disabled(&email, false)
        .await
        .expect("enable");
    expect_error(app.get_session(&old).await, 401, "UNAUTHORIZED").await;
    let new = app.login("ada@acme.com", PW).await;
    assert_eq!(app.get_session(&new).await.status(), 200);
    assert_eq!(app.get_session(&bobs).await.status(), 200);
    // A second disable and enable ends the newer token too.
    app.clock.advance(Duration::seconds(5));
    store
        .set_user_disabled(&email, true)
        .await
        .expect("disable");
    store
        .set_user_disabled(&email, false)
        .await
        .expect("enable");
    expect_error(app.get_session(&new).await, 401, "UNAUTHORIZED").await;
}

/// Correct passwords are not refused for arriving together: ten at once for one email, and
/// forty users at once from one address (an office behind one NAT) all log in. (Failures
/// still refuse, the right password too, until the window ends:
/// `repeated_failures_for_one_email_get_429_until_the_window_ends` here, and
/// `hardening::parallel_login_guesses_get_no_more_checks_than_the_limit` under parallel guesses.)
async fn parallel_correct_logins_are_not_refused(dynamodb: bool) {
    // 3 failures per email, 10 per address per window (the test defaults).
    let app = app_on(dynamodb, AppOptions::default()).await;
    // Ten through three slots: each waits for one (hashing takes its time; more would test
    // how fast the machine hashes, not the rule).
    let same = futures::future::join_all((0..10).map(|_| app.login_status("ada@acme.com", PW)));
    assert_eq!(same.await, vec![200; 10]);
    let emails: Vec<String> = (0..40).map(|i| format!("u{i}@acme.com")).collect();
    futures::future::join_all(emails.iter().map(|e| app.seed_user("acme", e, PW))).await;
    let office = futures::future::join_all(emails.iter().map(|e| app.login_status(e, PW)));
    assert_eq!(office.await, vec![200; 40]);
}

api_tests::on_both_stores!(
    a_disable_ends_every_token_issued_before_it,
    parallel_correct_logins_are_not_refused,
);

/// The login throttle's wait, on the embedded store with tokio's clock paused: attempts from
/// one office (two failures per address per window).
mod throttle_wait {
    use std::sync::Arc;
    use std::time::Duration;

    use chrono::{TimeZone, Utc};
    use shared::adapters::TableStore;
    use shared::auth::attempts::{LoginAttempt, MAX_WAIT};
    use shared::clock::ManualClock;
    use shared::config::LoginLimits;
    use shared::error::Error;
    use tokio::time::Instant;

    fn setup() -> (TableStore, Arc<ManualClock>) {
        let start = Utc
            .with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
            .single()
            .expect("t");
        let clock = Arc::new(ManualClock::new(start));
        let store = TableStore::memory(clock.clone()).expect("store");
        (store, clock)
    }

    fn from_office(email: &str) -> LoginAttempt {
        let limits = LoginLimits {
            max_failures_per_email: 3,
            max_failures_per_address: 2,
            window_seconds: 600,
        };
        LoginAttempt::new(&limits, email, Some("203.0.113.7"))
    }

    fn retry_after(r: Result<impl std::fmt::Debug, Error>) -> i64 {
        match r {
            Err(Error::RateLimited {
                retry_after_seconds,
                ..
            }) => retry_after_seconds,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Correct passwords that arrive together: the third waits for a slot, and takes the one
    /// the first gives back when it succeeds.
    #[tokio::test(start_paused = true)]
    async fn an_attempt_waits_for_a_slot_in_flight_and_takes_it_when_given_back() {
        let (store, clock) = setup();
        let [a, b, c] = ["a", "b", "c"].map(|n| from_office(&format!("{n}@acme.com")));
        let a_in = a.enter(&store, clock.as_ref()).await.expect("a");
        b.enter(&store, clock.as_ref()).await.expect("b");
        let started = Instant::now();
        let (c_in, ()) = tokio::join!(c.enter(&store, clock.as_ref()), async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            a.succeeded(&store, a_in).await.expect("a succeeds");
        });
        c_in.expect("c enters once a slot is back");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(3) && waited < Duration::from_secs(4),
            "{waited:?}"
        );
    }

    /// Slots that never come back: refused after the wait, to retry in a second, and nothing
    /// of the refused attempt stays taken (a slot given back lets the next one in at once).
    #[tokio::test(start_paused = true)]
    async fn an_attempt_is_refused_when_no_slot_comes_free_within_the_wait() {
        let (store, clock) = setup();
        let [a, b, c] = ["a", "b", "c"].map(|n| from_office(&format!("{n}@acme.com")));
        let a_in = a.enter(&store, clock.as_ref()).await.expect("a");
        b.enter(&store, clock.as_ref()).await.expect("b");
        let started = Instant::now();
        assert_eq!(retry_after(c.enter(&store, clock.as_ref()).await), 1);
        let waited = started.elapsed();
        assert!(
            waited > MAX_WAIT - Duration::from_secs(1) && waited <= MAX_WAIT,
            "{waited:?}"
        );
        a.succeeded(&store, a_in).await.expect("a succeeds");
        let again = Instant::now();
        c.enter(&store, clock.as_ref())
            .await
            .expect("c, once a slot is back");
        assert_eq!(again.elapsed(), Duration::ZERO);
    }

    /// Attempts in flight that fail fill the window with failures: the waiting attempt is
    /// refused at once, until the window ends, instead of waiting out its time.
    #[tokio::test(start_paused = true)]
    async fn a_waiting_attempt_is_refused_when_the_window_fills_with_failures() {
        let (store, clock) = setup();
        let [a, b, c] = ["a", "b", "c"].map(|n| from_office(&format!("{n}@acme.com")));
        let a_in = a.enter(&store, clock.as_ref()).await.expect("a");
        let b_in = b.enter(&store, clock.as_ref()).await.expect("b");
        let started = Instant::now();
        let (c_in, ()) = tokio::join!(c.enter(&store, clock.as_ref()), async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            a.failed(&store, a_in).await;
            b.failed(&store, b_in).await;
        });
        assert_eq!(retry_after(c_in), 600);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}
