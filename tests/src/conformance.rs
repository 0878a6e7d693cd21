//! The store conformance suite: one set of checks every implementation of the storage ports
//! must pass (embedded in memory, embedded on file, and DynamoDB once it exists). Each check
//! takes a fresh store whose clock is the given `ManualClock`; checks that race writers need
//! a multi-threaded runtime.

use std::sync::Arc;

use chrono::Duration;
use shared::clock::{Clock, ManualClock};
use shared::domain::{DomainPattern, Email, Tenant, User};
use shared::ports::{Store, StoreError};

fn tenant(id: &str, clock: &ManualClock) -> Tenant {
    Tenant {
        id: id.into(),
        name: format!("Tenant {id}"),
        created_at: clock.now(),
    }
}

fn user(tenant_id: &str, email: &str, clock: &ManualClock) -> User {
    User {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: tenant_id.into(),
        email: Email::parse(email).expect("email"),
        name: "N".into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$x$y".into(),
        disabled: false,
        created_at: clock.now(),
    }
}

/// Users: create is conditional on the email, lookups are exact, disable round-trips.
pub async fn users(store: Arc<dyn Store>, clock: &ManualClock) {
    let a = user("t1", "a@x.com", clock);
    store.create_user(&a).await.expect("create");
    let dup = user("t2", "a@x.com", clock);
    assert!(matches!(
        store.create_user(&dup).await,
        Err(StoreError::Conflict(_))
    ));
    let got = store
        .user_by_email(&a.email)
        .await
        .expect("get")
        .expect("present");
    assert_eq!(got, a, "the first writer's user is kept");
    assert!(store
        .user_by_email(&Email::parse("b@x.com").expect("e"))
        .await
        .expect("get")
        .is_none());

    let disabled = store
        .set_user_disabled(&a.email, true)
        .await
        .expect("disable");
    assert!(disabled.disabled);
    assert!(
        store
            .user_by_email(&a.email)
            .await
            .expect("get")
            .expect("present")
            .disabled
    );
    let missing = Email::parse("nobody@x.com").expect("e");
    assert!(matches!(
        store.set_user_disabled(&missing, true).await,
        Err(StoreError::NotFound(_))
    ));

    store
        .create_user(&user("t2", "c@x.com", clock))
        .await
        .expect("create");
    let t1: Vec<_> = store
        .list_users(Some("t1"))
        .await
        .expect("list")
        .into_iter()
        .map(|u| u.email)
        .collect();
    assert_eq!(t1, vec![a.email.clone()]);
    assert_eq!(store.list_users(None).await.expect("list").len(), 2);
}

/// Tenants: create is conditional, lookups and listing work.
pub async fn tenants(store: Arc<dyn Store>, clock: &ManualClock) {
    store
        .create_tenant(&tenant("t1", clock))
        .await
        .expect("create");
    let mut again = tenant("t1", clock);
    again.name = "Other".into();
    assert!(matches!(
        store.create_tenant(&again).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store
            .tenant("t1")
            .await
            .expect("get")
            .expect("present")
            .name,
        "Tenant t1"
    );
    assert!(store.tenant("t2").await.expect("get").is_none());
    store
        .create_tenant(&tenant("t2", clock))
        .await
        .expect("create");
    let ids: Vec<_> = store
        .list_tenants()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, vec!["t1", "t2"]);
}

/// Allowed domains: per tenant, idempotent add, remove reports presence, unknown tenant refused.
pub async fn allowed_domains(store: Arc<dyn Store>, clock: &ManualClock) {
    store
        .create_tenant(&tenant("t1", clock))
        .await
        .expect("create");
    store
        .create_tenant(&tenant("t2", clock))
        .await
        .expect("create");
    let wild = DomainPattern::parse("*.acme.com").expect("p");
    let exact = DomainPattern::parse("app.beta.io").expect("p");
    assert!(store.add_allowed_domain("t1", &wild).await.expect("add"));
    assert!(!store
        .add_allowed_domain("t1", &wild)
        .await
        .expect("add again"));
    assert!(store.add_allowed_domain("t1", &exact).await.expect("add"));
    assert_eq!(
        store.allowed_domains("t1").await.expect("list"),
        vec![wild.clone(), exact.clone()]
    );
    assert!(
        store.allowed_domains("t2").await.expect("list").is_empty(),
        "domains never leak across tenants"
    );
    assert!(matches!(
        store.add_allowed_domain("nope", &wild).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(store
        .remove_allowed_domain("t1", &exact)
        .await
        .expect("remove"));
    assert!(!store
        .remove_allowed_domain("t1", &exact)
        .await
        .expect("remove again"));
    assert!(!store
        .remove_allowed_domain("t2", &wild)
        .await
        .expect("other tenant"));
    assert_eq!(store.allowed_domains("t1").await.expect("list"), vec![wild]);
}

/// Revocation: per tenant, effective until the given instant and not after.
pub async fn revoked_tokens(store: Arc<dyn Store>, clock: &ManualClock) {
    let until = clock.now() + Duration::minutes(10);
    store.revoke("t1", "jti-1", until).await.expect("revoke");
    assert!(store
        .is_revoked("t1", "jti-1", clock.now())
        .await
        .expect("check"));
    assert!(
        !store
            .is_revoked("t2", "jti-1", clock.now())
            .await
            .expect("check"),
        "revocations are per tenant"
    );
    assert!(!store
        .is_revoked("t1", "jti-2", clock.now())
        .await
        .expect("check"));
    clock.advance(Duration::minutes(11));
    assert!(
        !store
            .is_revoked("t1", "jti-1", clock.now())
            .await
            .expect("check"),
        "expired entries do not count"
    );
}

/// Rate-limit counters: atomic increments per key and window, reset, expiry honoured on read.
pub async fn rate_limit_counters(store: Arc<dyn Store>, clock: &ManualClock) {
    let exp = clock.now() + Duration::seconds(60);
    for want in 1..=3 {
        assert_eq!(store.increment("k", 100, exp).await.expect("inc"), want);
    }
    assert_eq!(store.count("k", 100).await.expect("count"), 3);
    assert_eq!(
        store.count("k", 160).await.expect("count"),
        0,
        "windows are separate"
    );
    assert_eq!(
        store.count("other", 100).await.expect("count"),
        0,
        "keys are separate"
    );
    store.reset("k", 100).await.expect("reset");
    assert_eq!(store.count("k", 100).await.expect("count"), 0);
    store.increment("k", 100, exp).await.expect("inc");
    clock.advance(Duration::seconds(61));
    assert_eq!(
        store.count("k", 100).await.expect("count"),
        0,
        "expired counters read as zero"
    );
    assert_eq!(
        store
            .increment("k", 100, exp + Duration::seconds(120))
            .await
            .expect("inc"),
        1
    );
}

/// Concurrent increments of one counter lose no update.
pub async fn concurrent_increments(store: Arc<dyn Store>, clock: &ManualClock) {
    let exp = clock.now() + Duration::seconds(600);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = store.clone();
            tokio::spawn(async move { s.increment("race", 0, exp).await })
        })
        .collect();
    for t in tasks {
        t.await.expect("join").expect("increment");
    }
    assert_eq!(store.count("race", 0).await.expect("count"), 20);
}

/// Concurrent creation of the same user: exactly one writer wins.
pub async fn concurrent_user_creation(store: Arc<dyn Store>, clock: &ManualClock) {
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = store.clone();
            let u = user("t1", "race@x.com", clock);
            tokio::spawn(async move { s.create_user(&u).await })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        match t.await.expect("join") {
            Ok(()) => wins += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(wins, 1);
}
