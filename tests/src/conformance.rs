//! The store conformance suite: one set of checks every implementation of the storage ports
//! must pass (embedded in memory, embedded on file, DynamoDB + S3). Each check takes fresh
//! stores whose clock is the given `ManualClock`; checks that race writers need a
//! multi-threaded runtime.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use shared::clock::{Clock, ManualClock};
use shared::config::Retention;
use shared::context::Stores;
use shared::domain::plan::Plan;
use shared::domain::BeforeState;
use shared::domain::{
    DomainPattern, Email, Message, MessageRole, Session, SessionStatus, Step, Task, TaskRef,
    TaskStatus, Tenant, User,
};
use shared::ports::{MessagePage, MessagesFrom, SessionCreated, StoreError};

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
        role: shared::domain::Role::Member,
        created_at: clock.now(),
        tokens_valid_after: None,
    }
}

/// Users: create is conditional on the email, lookups are exact, disable round-trips.
pub async fn users(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
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
    let a = got;
    assert!(store
        .user_by_email(&Email::parse("b@x.com").expect("e"))
        .await
        .expect("get")
        .is_none());

    assert_eq!(a.tokens_valid_after, None);
    clock.advance(Duration::milliseconds(1_500));
    let disabled = store
        .set_user_disabled(&a.email, true)
        .await
        .expect("disable");
    assert!(disabled.disabled);
    // A disable ends every token issued until then, and enabling again keeps the cut-off.
    assert_eq!(disabled.tokens_valid_after, Some(clock.now()));
    clock.advance(Duration::seconds(5));
    let enabled = store
        .set_user_disabled(&a.email, false)
        .await
        .expect("enable");
    assert!(!enabled.disabled);
    assert_eq!(
        enabled.tokens_valid_after, disabled.tokens_valid_after,
        "kept when enabled again"
    );
    store
        .set_user_disabled(&a.email, true)
        .await
        .expect("disable");
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
pub async fn tenants(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
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
pub async fn allowed_domains(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
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
pub async fn revoked_tokens(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let until = clock.now() + Duration::minutes(10);
    assert!(store.revoke("t1", "jti-1", until).await.expect("revoke"));
    assert!(
        !store.revoke("t1", "jti-1", until).await.expect("again"),
        "already revoked"
    );
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

/// Rate-limit counters: conditional increments per key and window, give-backs, reset,
/// expiry honoured on read.
pub async fn rate_limit_counters(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let exp = clock.now() + Duration::seconds(60);
    let take = |key: &'static str, start: i64, limit: u64| {
        let store = store.clone();
        async move {
            store
                .increment_below(key, start, exp, limit)
                .await
                .expect("inc")
        }
    };
    for want in 1..=3 {
        assert_eq!(take("k", 100, 3).await, Some(want));
    }
    assert_eq!(take("k", 100, 3).await, None, "the limit is reached");
    assert_eq!(
        store.count("k", 100).await.expect("count"),
        3,
        "a refusal counts nothing"
    );
    store.decrement("k", 100).await.expect("give back");
    assert_eq!(
        take("k", 100, 3).await,
        Some(3),
        "a given-back count is free again"
    );
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
    store
        .decrement("k", 100)
        .await
        .expect("nothing to give back");
    assert_eq!(
        store.count("k", 100).await.expect("count"),
        0,
        "never below zero"
    );
    assert_eq!(
        take("k", 100, 0).await,
        None,
        "a zero limit refuses everything"
    );
    take("k", 100, 10).await;
    clock.advance(Duration::seconds(61));
    assert_eq!(
        store.count("k", 100).await.expect("count"),
        0,
        "expired counters read as zero"
    );
    assert_eq!(
        store
            .increment_below("k", 100, exp + Duration::seconds(120), 1)
            .await
            .expect("inc"),
        Some(1),
        "an expired counter starts afresh"
    );
}

/// Concurrent increments of one counter lose no update and never pass the limit.
pub async fn concurrent_increments(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let exp = clock.now() + Duration::seconds(600);
    let race = |key: &'static str, limit: u64| {
        let tasks: Vec<_> = (0..30)
            .map(|_| {
                let s = store.clone();
                tokio::spawn(async move { s.increment_below(key, 0, exp, limit).await })
            })
            .collect();
        async move {
            let mut counted = 0;
            for t in tasks {
                counted += usize::from(t.await.expect("join").expect("increment").is_some());
            }
            counted
        }
    };
    assert_eq!(race("race", 1_000).await, 30);
    assert_eq!(store.count("race", 0).await.expect("count"), 30);
    assert_eq!(
        race("limited", 5).await,
        5,
        "30 racers, limit 5: five counted"
    );
    assert_eq!(store.count("limited", 0).await.expect("count"), 5);
}

/// Concurrent creation of the same user: exactly one writer wins.
pub async fn concurrent_user_creation(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
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

// ---------------------------------------------------------------- tasks and steps

/// A task of tenant `tenant` expiring an hour after `clock`'s now.
pub fn task(tenant: &str, session: Option<&str>, clock: &ManualClock) -> Task {
    let now = clock.now();
    Task::new(
        uuid::Uuid::new_v4().to_string(),
        tenant.into(),
        "u1".into(),
        session.map(str::to_owned),
        "Click the Press me button".into(),
        "http://127.0.0.1:3000/test-page".into(),
        now,
        (now + Duration::hours(1)).timestamp(),
    )
}

/// Step `index` of `task`.
pub fn step(task: &Task, index: u32, clock: &ManualClock) -> Step {
    Step {
        before_state: Some(BeforeState {
            url: task.goal.url.clone(),
            page_hash: "abc".into(),
            ..BeforeState::default()
        }),
        usage: Some(json!({ "promptTokens": 10, "completionTokens": 2 })),
        ..Step::new(
            &task.tenant_id,
            &task.id,
            index,
            (format!("thought {index}"), format!("click({})", 10 + index)),
            clock.now(),
            task.stored.expires_at,
        )
    }
}

fn task_ref(t: &Task) -> TaskRef {
    TaskRef {
        tenant_id: t.tenant_id.clone(),
        task_id: t.id.clone(),
        session_id: t.session_id.clone(),
    }
}

/// Tasks: conditional create, tenant-scoped reads, optimistic saves.
pub async fn tasks(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let t = task("t1", None, clock);
    store.create_task(&t).await.expect("create");
    assert!(matches!(
        store.create_task(&t).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.task("t1", &t.id).await.expect("get"), Some(t.clone()));
    assert_eq!(
        store.task("t2", &t.id).await.expect("get"),
        None,
        "another tenant's id reads as missing"
    );

    let mut edited = t.clone();
    edited.status = TaskStatus::NeedsUserInput;
    let mut plan =
        Plan::from_descriptions(["Open the page", "Press the button"], clock.now()).expect("plan");
    plan.count_attempt();
    edited.goal.plan = Some(plan);
    edited.notes.memory.insert("k".into(), "v".into());
    edited.usage.prompt_tokens = 7;
    let saved = store.save_task(&edited).await.expect("save");
    assert_eq!(saved.stored.version, 1);
    assert_eq!(
        store.task("t1", &t.id).await.expect("get"),
        Some(saved.clone())
    );
    // A writer that still holds version 0 loses.
    assert!(matches!(
        store.save_task(&edited).await,
        Err(StoreError::Conflict(_))
    ));
    let mut ghost = task("t1", None, clock);
    ghost.stored.version = 3;
    assert!(matches!(
        store.save_task(&ghost).await,
        Err(StoreError::NotFound(_))
    ));

    // A tenant's tasks newest first: its own only, of one user when asked, at most as many
    // as asked for, and the read bounded.
    clock.advance(Duration::seconds(1));
    let second = task("t1", None, clock);
    store.create_task(&second).await.expect("create");
    store
        .append_step(&step(&second, 0, clock))
        .await
        .expect("step");
    let other = task("t2", None, clock);
    store.create_task(&other).await.expect("create");
    let ids = |listed: (Vec<Task>, bool)| {
        (
            listed.0.into_iter().map(|t| t.id).collect::<Vec<_>>(),
            listed.1,
        )
    };
    let recent = |tenant: &'static str, user: Option<&'static str>, limit, max_read| {
        let store = store.clone();
        async move {
            ids(store
                .recent_tasks(tenant, user, limit, max_read)
                .await
                .expect("list"))
        }
    };
    assert_eq!(
        recent("t1", None, 10, 100).await,
        (vec![second.id.clone(), t.id.clone()], false),
        "newest first, the saved task as saved"
    );
    assert_eq!(
        recent("t1", Some("u1"), 1, 100).await,
        (vec![second.id.clone()], false)
    );
    assert_eq!(
        recent("t1", Some("someone-else"), 10, 100).await,
        (vec![], false)
    );
    assert_eq!(
        recent("t1", Some("someone-else"), 10, 1).await,
        (vec![], true),
        "the read stops at its bound"
    );
    assert_eq!(
        recent("t2", None, 10, 100).await,
        (vec![other.id.clone()], false)
    );

    // Expired tasks read as missing even where TTL deletion has not happened.
    clock.advance(Duration::hours(1));
    assert_eq!(store.task("t1", &t.id).await.expect("get"), None);
    assert_eq!(recent("t1", None, 10, 100).await, (vec![], false));
}

/// Leases: one holder at a time, free again after expiry or release by its owner.
pub async fn task_leases(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let t = task("t1", None, clock);
    store.create_task(&t).await.expect("create");
    let now = clock.now();
    let held = store
        .acquire_lease("t1", &t.id, "u1", "req-a", now + Duration::seconds(60), now)
        .await
        .expect("lease");
    assert_eq!(held.stored.lease_owner.as_deref(), Some("req-a"));
    assert!(matches!(
        store
            .acquire_lease("t1", &t.id, "u1", "req-b", now + Duration::seconds(60), now)
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .acquire_lease("t2", &t.id, "u1", "req-b", now + Duration::seconds(60), now)
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(
        matches!(
            store
                .acquire_lease("t1", &t.id, "u2", "req-b", now + Duration::seconds(60), now)
                .await,
            Err(StoreError::NotFound(_))
        ),
        "another user's task is not found, busy or not"
    );
    store
        .release_lease("t1", &t.id, "req-b")
        .await
        .expect("not the owner: no-op");
    assert!(store
        .acquire_lease("t1", &t.id, "u1", "req-b", now + Duration::seconds(60), now)
        .await
        .is_err());
    store
        .release_lease("t1", &t.id, "req-a")
        .await
        .expect("release");
    store
        .acquire_lease("t1", &t.id, "u1", "req-b", now + Duration::seconds(30), now)
        .await
        .expect("free after release");
    // A crashed holder's lease runs out.
    let later = now + Duration::seconds(31);
    let again = store
        .acquire_lease(
            "t1",
            &t.id,
            "u1",
            "req-c",
            later + Duration::seconds(30),
            later,
        )
        .await
        .expect("free after expiry");
    assert_eq!(again.stored.lease_owner.as_deref(), Some("req-c"));
}

/// Steps: appended in order, each index once; the task's step count follows.
pub async fn steps(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let t = task("t1", None, clock);
    store.create_task(&t).await.expect("create");
    store
        .append_step(&step(&t, 0, clock))
        .await
        .expect("step 0");
    assert!(matches!(
        store.append_step(&step(&t, 0, clock)).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(
        matches!(
            store.append_step(&step(&t, 2, clock)).await,
            Err(StoreError::Conflict(_))
        ),
        "no gaps"
    );
    store
        .append_step(&step(&t, 1, clock))
        .await
        .expect("step 1");
    let got = store.steps("t1", &t.id).await.expect("steps");
    assert_eq!(got.iter().map(|s| s.index).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(got[1], step(&t, 1, clock));
    assert!(store.steps("t2", &t.id).await.expect("steps").is_empty());
    assert_eq!(
        store
            .task("t1", &t.id)
            .await
            .expect("get")
            .expect("task")
            .stored
            .step_count,
        2
    );
    let other = task("t1", None, clock);
    assert!(
        matches!(
            store.append_step(&step(&other, 0, clock)).await,
            Err(StoreError::Conflict(_))
        ),
        "no steps for a task that does not exist"
    );
}

/// 50 writers race to append the same step: exactly one wins.
pub async fn concurrent_step_append(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let t = task("t1", None, clock);
    store.create_task(&t).await.expect("create");
    let racers: Vec<_> = (0..50)
        .map(|i| {
            let s = store.clone();
            let mut st = step(&t, 0, clock);
            st.thought = format!("writer {i}");
            tokio::spawn(async move { s.append_step(&st).await.map(|()| i) })
        })
        .collect();
    let mut winners = Vec::new();
    for r in racers {
        match r.await.expect("join") {
            Ok(i) => winners.push(i),
            Err(StoreError::Conflict(_)) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one writer wins");
    let got = store.steps("t1", &t.id).await.expect("steps");
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].thought,
        format!("writer {}", winners[0]),
        "the winner's step is the stored one"
    );
}

/// The expiry and idle sweeps find the right tasks; interrupting is conditional.
pub async fn sweeps(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let start = clock.now();
    let mut old = task("t1", None, clock);
    old.stored.expires_at = (start + Duration::minutes(5)).timestamp();
    let live = task("t2", None, clock);
    let mut done = task("t1", None, clock);
    done.status = TaskStatus::Completed;
    for t in [&old, &live, &done] {
        store.create_task(t).await.expect("create");
    }
    assert!(store
        .expired_tasks(clock.now(), 10)
        .await
        .expect("sweep")
        .is_empty());
    clock.advance(Duration::minutes(5));
    assert_eq!(
        store.expired_tasks(clock.now(), 10).await.expect("sweep"),
        vec![task_ref(&old)]
    );

    // Idle: active tasks not updated since the cut-off; finished ones never.
    let cutoff = clock.now() - Duration::minutes(1);
    let idle = store.idle_tasks(cutoff, 10).await.expect("idle");
    assert!(
        idle.contains(&task_ref(&live)) && !idle.contains(&task_ref(&done)),
        "{idle:?}"
    );
    // A task being worked on (leased) is not interrupted.
    let now = clock.now();
    store
        .acquire_lease(
            "t2",
            &live.id,
            "u1",
            "req",
            now + Duration::seconds(30),
            now,
        )
        .await
        .expect("lease");
    assert!(!store
        .mark_interrupted(&task_ref(&live), cutoff, now)
        .await
        .expect("mark"));
    clock.advance(Duration::seconds(31));
    let now = clock.now();
    assert!(store
        .mark_interrupted(&task_ref(&live), cutoff, now)
        .await
        .expect("mark"));
    assert!(
        !store
            .mark_interrupted(&task_ref(&live), cutoff, now)
            .await
            .expect("mark again"),
        "idempotent"
    );
    let t = store
        .task("t2", &live.id)
        .await
        .expect("get")
        .expect("task");
    assert_eq!(t.status, TaskStatus::Interrupted);
    assert!(!store
        .idle_tasks(cutoff, 10)
        .await
        .expect("idle")
        .contains(&task_ref(&live)));
    // A task touched after the cut-off does not qualify.
    let fresh = task("t2", None, clock);
    store.create_task(&fresh).await.expect("create");
    assert!(!store
        .mark_interrupted(&task_ref(&fresh), cutoff, now)
        .await
        .expect("mark"));
}

// ---------------------------------------------------------------- sessions and messages

/// A session of user `u1` in `tenant`.
pub fn session(tenant: &str, clock: &ManualClock) -> Session {
    let now = clock.now();
    Session {
        session_id: uuid::Uuid::new_v4().to_string(),
        tenant_id: tenant.into(),
        user_id: "u1".into(),
        title: "example.com: Click the Press me button".into(),
        url: "https://www.example.com/".into(),
        domain: "example.com".into(),
        status: SessionStatus::Active,
        is_renamed: false,
        message_count: 0,
        last_sequence: 0,
        created_at: now,
        updated_at: now,
        metadata: None,
        id_claimed: false,
        waiting_task_id: None,
        memory: Default::default(),
        last_message_at: None,
    }
}

/// A message for `session` (and optionally a task) at `at`.
pub fn message(
    session: &Session,
    task: Option<&Task>,
    content: &str,
    at: DateTime<Utc>,
) -> Message {
    Message::new(
        &session.tenant_id,
        &session.session_id,
        task.map(|t| (t.id.as_str(), t.stored.expires_at)),
        MessageRole::User,
        content,
        at,
    )
}

/// Sessions: idempotent create, tenant-scoped reads, messages numbered strictly increasing.
pub async fn sessions_and_messages(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let s = session("t1", clock);
    assert_eq!(
        store.create_session(&s).await.expect("create"),
        SessionCreated::Created
    );
    assert_eq!(
        store.create_session(&s).await.expect("again"),
        SessionCreated::Exists,
        "create is idempotent"
    );
    assert_eq!(
        store.session("t1", &s.session_id).await.expect("get"),
        Some(Session {
            id_claimed: true,
            ..s.clone()
        }),
        "stored with its id claimed"
    );
    assert_eq!(store.session("t2", &s.session_id).await.expect("get"), None);

    let t0 = clock.now();
    let first = store
        .append_message(&message(&s, None, "one", t0))
        .await
        .expect("append");
    clock.advance(Duration::seconds(1));
    let second = store
        .append_message(&message(&s, None, "two", clock.now()))
        .await
        .expect("append");
    assert_eq!((first.sequence_number, second.sequence_number), (1, 2));
    let all = store
        .messages("t1", &s.session_id, MessagesFrom::Newest, 50)
        .await
        .expect("list")
        .messages;
    assert_eq!(all, vec![first.clone(), second.clone()]);
    let since = store
        .messages("t1", &s.session_id, MessagesFrom::Since(t0), 50)
        .await
        .expect("since")
        .messages;
    assert_eq!(since, vec![first.clone(), second], "since is inclusive");
    assert_eq!(
        store
            .messages("t1", &s.session_id, MessagesFrom::Newest, 1)
            .await
            .expect("limit")
            .messages
            .len(),
        1
    );
    assert!(store
        .messages("t2", &s.session_id, MessagesFrom::Newest, 50)
        .await
        .expect("other tenant")
        .messages
        .is_empty());
    let stored = store
        .session("t1", &s.session_id)
        .await
        .expect("get")
        .expect("session");
    assert_eq!((stored.message_count, stored.last_sequence), (2, 2));
    let mut stray = message(&s, None, "x", t0);
    stray.tenant_id = "t2".into();
    assert!(matches!(
        store.append_message(&stray).await,
        Err(StoreError::NotFound(_))
    ));
}

/// A session id belongs to one tenant and user, whichever way the session was created; the
/// same id elsewhere is refused and nothing is written.
pub async fn session_ownership(stores: Stores, clock: &ManualClock) {
    use shared::ports::SessionOwner;
    let store = stores.store;
    let s = session("t1", clock);
    store.create_session(&s).await.expect("create");
    assert_eq!(
        store.session_owner(&s.session_id).await.expect("owner"),
        Some(SessionOwner {
            tenant_id: "t1".into(),
            user_id: "u1".into()
        })
    );
    let mut other_tenant = s.clone();
    other_tenant.tenant_id = "t2".into();
    let mut other_user = s.clone();
    other_user.user_id = "u2".into();
    for thief in [&other_tenant, &other_user] {
        assert_eq!(
            store.create_session(thief).await.expect("create"),
            SessionCreated::Taken
        );
    }
    let m = message(&other_tenant, None, "hello", clock.now());
    assert!(matches!(
        store
            .append_messages("t2", &s.session_id, &[m], Some(&other_tenant))
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.session("t2", &s.session_id).await.expect("get"), None);
    // Created by a first message, the id is claimed just the same.
    let fresh = session("t1", clock);
    let m = message(&fresh, None, "first", clock.now());
    store
        .append_messages("t1", &fresh.session_id, &[m], Some(&fresh))
        .await
        .expect("append creates");
    let mut stolen = fresh.clone();
    stolen.tenant_id = "t2".into();
    assert_eq!(
        store.create_session(&stolen).await.expect("create"),
        SessionCreated::Taken
    );
    assert_eq!(
        store
            .session_owner(&fresh.session_id)
            .await
            .expect("owner")
            .map(|o| o.tenant_id),
        Some("t1".to_owned())
    );
    // An unclaimed id (a session stored before ids were claimed) is claimed once, by its own.
    let legacy = session("t1", clock);
    assert!(store.claim_session(&legacy).await.expect("claim"));
    assert!(store
        .claim_session(&legacy)
        .await
        .expect("again, same owner"));
    let mut other = legacy.clone();
    other.tenant_id = "t2".into();
    assert!(!store
        .claim_session(&other)
        .await
        .expect("claimed elsewhere"));
}

/// Concurrent appends to one session get distinct, gap-free sequence numbers.
pub async fn concurrent_message_append(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let s = session("t1", clock);
    store.create_session(&s).await.expect("create");
    let writers: Vec<_> = (0..6)
        .map(|i| {
            let st = store.clone();
            let m = message(&s, None, &format!("m{i}"), clock.now());
            tokio::spawn(async move { st.append_message(&m).await })
        })
        .collect();
    let mut seqs = Vec::new();
    for w in writers {
        seqs.push(w.await.expect("join").expect("append").sequence_number);
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=6).collect::<Vec<u64>>());
}

// ---------------------------------------------------------------- snapshots and cleanup

/// Snapshots: compressed round trip, per-tenant keys, listing, deletion, presigned URLs.
pub async fn snapshots(stores: Stores, _clock: &ManualClock) {
    let snaps = stores.snapshots;
    let html = "<html><body>".to_owned()
        + &"<a data-element-id=\"1\" href=\"/x\">x</a>".repeat(3000)
        + "</body></html>";
    let r = snaps
        .put_snapshot("t1", "task-1", 0, html.as_bytes())
        .await
        .expect("put");
    assert_eq!(r.key, "snapshots/t1/task-1/000000");
    assert_eq!(r.bytes, html.len());
    assert!(r.stored_bytes * 5 < r.bytes, "stored compressed");
    snaps
        .put_snapshot("t1", "task-1", 1, b"<p>two</p>")
        .await
        .expect("put");
    snaps
        .put_snapshot("t1", "task-2", 0, b"<p>other task</p>")
        .await
        .expect("put");
    assert_eq!(
        snaps
            .snapshot("t1", "task-1", 0)
            .await
            .expect("get")
            .as_deref(),
        Some(html.as_bytes())
    );
    assert_eq!(
        snaps.snapshot("t2", "task-1", 0).await.expect("get"),
        None,
        "keys are per tenant"
    );
    assert_eq!(
        snaps.snapshot_steps("t1", "task-1").await.expect("list"),
        vec![0, 1]
    );
    let url = snaps
        .presign_snapshot("t1", "task-1", 0, 60)
        .await
        .expect("presign");
    assert!(url.contains("snapshots/t1/task-1/000000"), "{url}");
    assert_eq!(
        snaps
            .delete_snapshots("t1", "task-1")
            .await
            .expect("delete"),
        2
    );
    assert_eq!(
        snaps
            .delete_snapshots("t1", "task-1")
            .await
            .expect("delete again"),
        0
    );
    assert!(snaps
        .snapshot_steps("t1", "task-1")
        .await
        .expect("list")
        .is_empty());
    assert_eq!(
        snaps.snapshot_steps("t1", "task-2").await.expect("list"),
        vec![0]
    );
    assert!(snaps
        .put_snapshot("t1", "../escape", 0, b"x")
        .await
        .is_err());
}

/// Deleting a task removes its steps and messages but nothing of other tasks.
pub async fn task_deletion(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let s = session("t1", clock);
    store.create_session(&s).await.expect("session");
    let doomed = task("t1", Some(&s.session_id), clock);
    let kept = task("t1", Some(&s.session_id), clock);
    for t in [&doomed, &kept] {
        store.create_task(t).await.expect("create");
        store.append_step(&step(t, 0, clock)).await.expect("step");
        store
            .append_message(&message(&s, Some(t), "hi", clock.now()))
            .await
            .expect("msg");
    }
    // Task + 1 step + 1 message.
    assert_eq!(
        store.delete_task(&task_ref(&doomed)).await.expect("delete"),
        3
    );
    assert_eq!(store.task("t1", &doomed.id).await.expect("get"), None);
    assert!(store
        .steps("t1", &doomed.id)
        .await
        .expect("steps")
        .is_empty());
    let left = store
        .messages("t1", &s.session_id, MessagesFrom::Newest, 50)
        .await
        .expect("messages")
        .messages;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].task_id.as_deref(), Some(kept.id.as_str()));
    assert_eq!(store.steps("t1", &kept.id).await.expect("steps").len(), 1);
    assert_eq!(
        store
            .session("t1", &s.session_id)
            .await
            .expect("get")
            .expect("s")
            .message_count,
        1
    );
    assert_eq!(
        store.delete_task(&task_ref(&doomed)).await.expect("again"),
        0,
        "idempotent"
    );
    // One entry read covers the whole list: the deleted task's entry went with it.
    let (listed, cut) = store.recent_tasks("t1", None, 10, 1).await.expect("list");
    assert_eq!(
        (listed.into_iter().map(|t| t.id).collect::<Vec<_>>(), cut),
        (vec![kept.id.clone()], false),
        "the deleted task left the tenant's list"
    );
}

/// The cleanup leaves only live tasks (with their snapshots) and is safe to run twice at once.
pub async fn cleanup(stores: Stores, clock: &ManualClock) {
    let (store, snaps) = (stores.store.clone(), stores.snapshots.clone());
    let s = session("t1", clock);
    store.create_session(&s).await.expect("session");
    let mut expired = Vec::new();
    for i in 0..30 {
        let mut t = task(
            if i % 2 == 0 { "t1" } else { "t2" },
            Some(&s.session_id),
            clock,
        );
        t.status = TaskStatus::Completed;
        t.stored.expires_at = (clock.now() + Duration::minutes(10)).timestamp();
        store.create_task(&t).await.expect("create");
        store.append_step(&step(&t, 0, clock)).await.expect("step");
        if t.tenant_id == "t1" {
            store
                .append_message(&message(&s, Some(&t), "m", clock.now()))
                .await
                .expect("msg");
        }
        snaps
            .put_snapshot(&t.tenant_id, &t.id, 0, b"<p>page</p>")
            .await
            .expect("snapshot");
        expired.push(t);
    }
    let mut live = task("t1", Some(&s.session_id), clock);
    live.stored.expires_at = (clock.now() + Duration::hours(3)).timestamp();
    store.create_task(&live).await.expect("create");
    store
        .append_step(&step(&live, 0, clock))
        .await
        .expect("step");
    snaps
        .put_snapshot("t1", &live.id, 0, b"<p>live</p>")
        .await
        .expect("snapshot");

    clock.advance(Duration::minutes(10));
    let retention = Retention {
        task_seconds: 3600,
        idle_seconds: 3600,
    };
    let budget = std::time::Duration::from_secs(60);
    let c: &dyn Clock = clock;
    let (a, b) = tokio::join!(
        shared::cleanup::run(store.as_ref(), snaps.as_ref(), c, retention, budget),
        shared::cleanup::run(store.as_ref(), snaps.as_ref(), c, retention, budget),
    );
    let (a, b) = (a.expect("run a"), b.expect("run b"));
    assert_eq!(a.failures + b.failures, 0, "{a:?} {b:?}");
    assert!(a.expired_tasks + b.expired_tasks >= 30, "{a:?} {b:?}");
    for t in &expired {
        assert_eq!(store.task(&t.tenant_id, &t.id).await.expect("get"), None);
        assert!(store
            .steps(&t.tenant_id, &t.id)
            .await
            .expect("steps")
            .is_empty());
        assert!(snaps
            .snapshot_steps(&t.tenant_id, &t.id)
            .await
            .expect("snaps")
            .is_empty());
    }
    assert!(store.task("t1", &live.id).await.expect("get").is_some());
    assert_eq!(store.steps("t1", &live.id).await.expect("steps").len(), 1);
    assert_eq!(
        snaps.snapshot_steps("t1", &live.id).await.expect("snaps"),
        vec![0]
    );
    assert!(store
        .messages("t1", &s.session_id, MessagesFrom::Newest, 100)
        .await
        .expect("messages")
        .messages
        .is_empty());
    let again = shared::cleanup::run(store.as_ref(), snaps.as_ref(), c, retention, budget)
        .await
        .expect("rerun");
    assert_eq!(again.expired_tasks, 0, "nothing left to do");

    // After the idle time, the live task is interrupted (and kept).
    clock.advance(Duration::minutes(61));
    let r = shared::cleanup::run(store.as_ref(), snaps.as_ref(), c, retention, budget)
        .await
        .expect("idle run");
    assert_eq!(r.interrupted_tasks, 1);
    let t = store
        .task("t1", &live.id)
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(t.status, TaskStatus::Interrupted);
}

// ---------------------------------------------------------------- interact persistence

/// A new task starts with its first step in one transaction; later steps are recorded with the
/// task's status and lease release, only by the lease holder.
pub async fn task_step_recording(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let mut t = task("t1", None, clock);
    t.stored.step_count = 1;
    store
        .start_task(&t, &[step(&t, 0, clock)])
        .await
        .expect("start");
    assert!(matches!(
        store.start_task(&t, &[step(&t, 0, clock)]).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.steps("t1", &t.id).await.expect("steps").len(), 1);

    let now = clock.now();
    let leased = store
        .acquire_lease("t1", &t.id, "u1", "req-1", now + Duration::seconds(30), now)
        .await
        .expect("lease");
    assert_eq!(
        leased.stored.version,
        t.stored.version + 1,
        "taking the lease moves the version"
    );
    assert!(
        matches!(store.save_task(&t).await, Err(StoreError::Conflict(_))),
        "a save from before the lease cannot clear it"
    );
    let mut done = leased.clone();
    done.status = TaskStatus::Completed;
    done.notes.memory.insert("total".into(), "42".into());
    let (tool, decision) = (step(&t, 1, clock), step(&t, 2, clock));
    assert!(matches!(
        store
            .record_steps(&[tool.clone(), decision.clone()], &done, "someone-else")
            .await,
        Err(StoreError::Conflict(_))
    ));
    for bad in [
        vec![],
        vec![decision.clone()],
        vec![tool.clone(), tool.clone()],
    ] {
        assert!(
            store.record_steps(&bad, &done, "req-1").await.is_err(),
            "only consecutive steps from the task's next index are recorded"
        );
    }
    assert_eq!(store.steps("t1", &t.id).await.expect("steps").len(), 1);
    store
        .record_steps(&[tool, decision], &done, "req-1")
        .await
        .expect("record");
    let after = store.task("t1", &t.id).await.expect("get").expect("task");
    assert_eq!(
        (after.stored.step_count, after.status),
        (3, TaskStatus::Completed)
    );
    assert_eq!(
        store.steps("t1", &t.id).await.expect("steps").len(),
        3,
        "a tool run and the decision are recorded together"
    );
    assert_eq!(
        after.notes.memory.get("total").map(String::as_str),
        Some("42"),
        "the task's new state is stored with the step"
    );
    assert_eq!(after.stored.version, leased.stored.version + 1);
    assert_eq!(
        after.stored.lease_owner, None,
        "the lease is released with the step"
    );
    assert!(
        !store
            .idle_tasks(now + Duration::days(1), 10)
            .await
            .expect("idle")
            .iter()
            .any(|r| r.task_id == t.id),
        "a finished task leaves the idle sweep"
    );
}

/// Several messages in one append get consecutive numbers; a missing session can be created.
pub async fn message_batches(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let s = session("t1", clock);
    let batch = [
        message(&s, None, "a", clock.now()),
        message(&s, None, "b", clock.now()),
    ];
    assert!(matches!(
        store
            .append_messages("t1", &s.session_id, &batch, None)
            .await,
        Err(StoreError::NotFound(_))
    ));
    let stored = store
        .append_messages("t1", &s.session_id, &batch, Some(&s))
        .await
        .expect("append creating the session");
    assert_eq!(
        stored.iter().map(|m| m.sequence_number).collect::<Vec<_>>(),
        vec![1, 2]
    );
    let got = store
        .session("t1", &s.session_id)
        .await
        .expect("get")
        .expect("created");
    assert_eq!((got.message_count, got.last_sequence), (2, 2));
    let more = store
        .append_messages("t1", &s.session_id, &batch[..1], Some(&s))
        .await
        .expect("append to the existing session");
    assert_eq!(more[0].sequence_number, 3);
    assert_eq!(
        store
            .messages("t1", &s.session_id, MessagesFrom::Newest, 10)
            .await
            .expect("list")
            .messages
            .len(),
        3
    );
}

/// Idempotency keys: first claim wins, a running one is pending, a finished one replays.
pub async fn idempotency_keys(stores: Stores, clock: &ManualClock) {
    use shared::ports::{KeyClaim, Reservation};
    let store = stores.store;
    let reserve = |tenant: &'static str, user: &'static str, hash: &'static str| {
        let store = store.clone();
        let until = clock.now() + Duration::seconds(30);
        async move {
            let claim = KeyClaim {
                request_hash: hash,
                holder: hash,
                until,
            };
            store
                .reserve(tenant, user, "k1", &claim)
                .await
                .expect("reserve")
        }
    };
    assert_eq!(reserve("t1", "u1", "h1").await, Reservation::New);
    assert_eq!(reserve("t1", "u1", "h1").await, Reservation::Pending);
    assert_eq!(
        reserve("t1", "u1", "h2").await,
        Reservation::Mismatch,
        "the same key with another body"
    );
    assert_eq!(
        reserve("t1", "u2", "h1").await,
        Reservation::New,
        "other user"
    );
    assert_eq!(
        reserve("t2", "u1", "h1").await,
        Reservation::New,
        "other tenant"
    );
    let response = json!({ "success": true, "action": "click(10)" });
    let keep = clock.now() + Duration::hours(24);
    store
        .complete("t1", "u1", "k1", "someone-else", &json!({}), keep)
        .await
        .expect_err("only the holder completes");
    store
        .complete("t1", "u1", "k1", "h1", &response, keep)
        .await
        .expect("complete");
    assert_eq!(
        reserve("t1", "u1", "h1").await,
        Reservation::Done(response.clone())
    );
    assert_eq!(reserve("t1", "u1", "h2").await, Reservation::Mismatch);
    store
        .abandon("t1", "u1", "k1", "h1")
        .await
        .expect("a completed key is not abandoned");
    assert_eq!(
        reserve("t1", "u1", "h1").await,
        Reservation::Done(response.clone())
    );
    store
        .abandon("t2", "u1", "k1", "someone-else")
        .await
        .expect("another holder's claim is left alone");
    assert_eq!(reserve("t2", "u1", "h1").await, Reservation::Pending);
    store
        .abandon("t2", "u1", "k1", "h1")
        .await
        .expect("abandon");
    assert_eq!(
        reserve("t2", "u1", "h1").await,
        Reservation::New,
        "after abandon"
    );
    // A claim whose request died lapses after its short life; a completed key stays.
    clock.advance(Duration::seconds(31));
    assert_eq!(
        reserve("t2", "u1", "h9").await,
        Reservation::New,
        "lapsed claim"
    );
    store
        .abandon("t2", "u1", "k1", "h1")
        .await
        .expect("the old holder cannot drop the new claim");
    assert_eq!(reserve("t2", "u1", "h9").await, Reservation::Pending);
    assert_eq!(reserve("t1", "u1", "h1").await, Reservation::Done(response));
    clock.advance(Duration::hours(25));
    assert_eq!(
        reserve("t1", "u1", "h1").await,
        Reservation::New,
        "expired response"
    );
}

// ---------------------------------------------------------------- side panel queries

/// Listing, latest and by-domain follow the indexes, per user, newest first.
pub async fn session_queries(stores: Stores, clock: &ManualClock) {
    use shared::domain::SessionStatus;
    use shared::ports::{SessionChanges, SessionFilter};
    let store = stores.store;
    let mut made = Vec::new();
    for (i, domain) in ["a.com", "b.co.uk", "a.com"].iter().enumerate() {
        let mut s = session("t1", clock);
        s.domain = (*domain).into();
        s.title = format!("{domain}: {i}");
        store.create_session(&s).await.expect("create");
        made.push(s);
        clock.advance(Duration::seconds(1));
    }
    let mut other_user = session("t1", clock);
    other_user.user_id = "u2".into();
    store.create_session(&other_user).await.expect("create");
    let mut other_tenant = session("t2", clock);
    other_tenant.domain = "a.com".into();
    store.create_session(&other_tenant).await.expect("create");

    let (page, total) = store
        .list_sessions("t1", "u1", SessionFilter::default(), 2, 0)
        .await
        .expect("list");
    assert_eq!(total, 3);
    let ids: Vec<&str> = page.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(
        ids,
        vec![made[2].session_id.as_str(), made[1].session_id.as_str()]
    );
    let (rest, _) = store
        .list_sessions("t1", "u1", SessionFilter::default(), 2, 2)
        .await
        .expect("list");
    assert_eq!(rest[0].session_id, made[0].session_id);

    let latest = store
        .latest_session("t1", "u1")
        .await
        .expect("latest")
        .expect("some");
    assert_eq!(latest.session_id, made[2].session_id);
    let by = store
        .session_by_domain("t1", "u1", "a.com", None)
        .await
        .expect("by")
        .expect("some");
    assert_eq!(by.session_id, made[2].session_id);
    assert!(store
        .session_by_domain("t1", "u1", "c.com", None)
        .await
        .expect("by")
        .is_none());

    let archived = store
        .update_session(
            "t1",
            &made[2].session_id,
            &SessionChanges {
                status: Some(SessionStatus::Archived),
                ..SessionChanges::default()
            },
            clock.now(),
        )
        .await
        .expect("archive");
    assert_eq!(archived.status, SessionStatus::Archived);
    assert_eq!(
        store
            .latest_session("t1", "u1")
            .await
            .expect("latest")
            .expect("some")
            .session_id,
        made[1].session_id
    );
    let (_, total) = store
        .list_sessions("t1", "u1", SessionFilter::default(), 10, 0)
        .await
        .expect("list");
    assert_eq!(total, 2, "archived ones are hidden");
    let filter = SessionFilter {
        status: Some(SessionStatus::Archived),
        include_archived: false,
    };
    assert_eq!(
        store
            .list_sessions("t1", "u1", filter, 10, 0)
            .await
            .expect("list")
            .1,
        1
    );
    let active_a = store
        .session_by_domain("t1", "u1", "a.com", Some(SessionStatus::Active))
        .await
        .expect("by")
        .expect("some");
    assert_eq!(active_a.session_id, made[0].session_id);
    // Renaming moves the session to the top (it was just updated).
    clock.advance(Duration::seconds(5));
    let renamed = store
        .update_session(
            "t1",
            &made[0].session_id,
            &SessionChanges {
                title: Some("a.com: Mine".into()),
                is_renamed: Some(true),
                ..SessionChanges::default()
            },
            clock.now(),
        )
        .await
        .expect("rename");
    assert!(renamed.is_renamed);
    assert_eq!(
        store
            .latest_session("t1", "u1")
            .await
            .expect("latest")
            .expect("some")
            .session_id,
        made[0].session_id
    );
    assert!(matches!(
        store
            .update_session(
                "t2",
                &made[0].session_id,
                &SessionChanges::default(),
                clock.now()
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    // A session made without a page is found by the domain its first task names.
    let mut blank = session("t1", clock);
    blank.domain = String::new();
    blank.url = String::new();
    store.create_session(&blank).await.expect("create");
    let named = store
        .update_session(
            "t1",
            &blank.session_id,
            &SessionChanges {
                place: Some(shared::ports::SessionPlace {
                    user_id: "u1".into(),
                    url: "https://c.com/x".into(),
                    domain: "c.com".into(),
                }),
                ..SessionChanges::default()
            },
            clock.now(),
        )
        .await
        .expect("named");
    assert_eq!(
        (named.url.as_str(), named.domain.as_str()),
        ("https://c.com/x", "c.com")
    );
    let by = store
        .session_by_domain("t1", "u1", "c.com", None)
        .await
        .expect("by")
        .expect("found by its new domain");
    assert_eq!(by.session_id, blank.session_id);
    assert!(store
        .session_by_domain("t1", "u1", "", None)
        .await
        .expect("by")
        .is_none_or(|s| s.session_id != blank.session_id));
}

/// Preferences per user and debug logs per tenant.
pub async fn preferences_and_logs(stores: Stores, clock: &ManualClock) {
    use shared::ports::DebugLog;
    let store = stores.store;
    assert!(store.preferences("t1", "u1").await.expect("get").is_none());
    let prefs = json!({ "theme": "dark", "x": [1, 2] })
        .as_object()
        .cloned()
        .expect("obj");
    store
        .save_preferences("t1", "u1", &prefs, clock.now())
        .await
        .expect("save");
    let got = store
        .preferences("t1", "u1")
        .await
        .expect("get")
        .expect("some");
    assert_eq!(got.preferences, prefs);
    assert!(store.preferences("t1", "u2").await.expect("get").is_none());
    assert!(store.preferences("t2", "u1").await.expect("get").is_none());

    let log = |task: &str, kind: &str, at: DateTime<Utc>| DebugLog {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: "t1".into(),
        user_id: "u1".into(),
        task_id: Some(task.into()),
        log_type: kind.into(),
        message: format!("{kind} of {task}"),
        data: Some(json!({ "n": 1 })),
        timestamp: at,
        expires_at: (at + Duration::hours(1)).timestamp(),
    };
    let t0 = clock.now();
    store.append_log(&log("a", "step", t0)).await.expect("log");
    store
        .append_log(&log("b", "step", t0 + Duration::seconds(1)))
        .await
        .expect("log");
    store
        .append_log(&log("a", "error", t0 + Duration::seconds(2)))
        .await
        .expect("log");
    let all = store
        .logs("t1", "u1", None, None, None, 10)
        .await
        .expect("logs");
    assert_eq!(
        all.iter().map(|l| l.message.as_str()).collect::<Vec<_>>(),
        vec!["error of a", "step of b", "step of a"]
    );
    assert_eq!(
        store
            .logs("t1", "u1", Some("a"), None, None, 10)
            .await
            .expect("logs")
            .len(),
        2
    );
    assert_eq!(
        store
            .logs("t1", "u1", Some("a"), Some("step"), None, 10)
            .await
            .expect("logs")
            .len(),
        1
    );
    assert_eq!(
        store
            .logs("t1", "u1", None, None, Some(t0), 10)
            .await
            .expect("logs")
            .len(),
        2,
        "strictly after since"
    );
    assert_eq!(
        store
            .logs("t1", "u1", None, None, None, 1)
            .await
            .expect("logs")
            .len(),
        1
    );
    assert!(store
        .logs("t2", "u1", None, None, None, 10)
        .await
        .expect("logs")
        .is_empty());
    assert!(
        store
            .logs("t1", "u2", None, None, None, 10)
            .await
            .expect("logs")
            .is_empty(),
        "another user's logs are not listed"
    );
    clock.advance(Duration::hours(2));
    assert!(
        store
            .logs("t1", "u1", None, None, None, 10)
            .await
            .expect("logs")
            .is_empty(),
        "expired logs are gone"
    );
}

/// Message pages: the newest page without a cursor, lossless paging after a sequence number,
/// older history before one, an inclusive time, and timestamps that never go backwards.
pub async fn message_pages(stores: Stores, clock: &ManualClock) {
    let store = stores.store;
    let s = session("t1", clock);
    store.create_session(&s).await.expect("create");
    let t0 = clock.now();
    let (t1, t2) = (t0 + Duration::seconds(1), t0 + Duration::seconds(2));
    // One step's messages share a timestamp; the last comes from a clock that lags behind.
    let stamps = [t0, t0, t0, t1, t1, t2, t2, t0 - Duration::seconds(10)];
    let batch: Vec<Message> = stamps
        .iter()
        .enumerate()
        .map(|(k, at)| message(&s, None, &format!("m{}", k + 1), *at))
        .collect();
    let stored = store
        .append_messages("t1", &s.session_id, &batch, None)
        .await
        .expect("append");
    assert_eq!(
        stored[7].timestamp, t2,
        "a lagging clock never stamps earlier"
    );
    let page = |from: MessagesFrom, limit: usize| {
        let store = store.clone();
        let id = s.session_id.clone();
        async move {
            let MessagePage { messages, has_more } =
                store.messages("t1", &id, from, limit).await.expect("page");
            let seqs: Vec<u64> = messages.iter().map(|m| m.sequence_number).collect();
            (seqs, has_more)
        }
    };
    assert_eq!(page(MessagesFrom::Newest, 3).await, (vec![6, 7, 8], true));
    assert_eq!(
        page(MessagesFrom::Newest, 8).await,
        ((1..=8).collect(), false)
    );
    assert_eq!(page(MessagesFrom::After(0), 3).await, (vec![1, 2, 3], true));
    assert_eq!(page(MessagesFrom::After(3), 3).await, (vec![4, 5, 6], true));
    assert_eq!(page(MessagesFrom::After(6), 3).await, (vec![7, 8], false));
    assert_eq!(page(MessagesFrom::After(8), 3).await, (vec![], false));
    assert_eq!(page(MessagesFrom::Before(4), 2).await, (vec![2, 3], true));
    assert_eq!(page(MessagesFrom::Before(3), 5).await, (vec![1, 2], false));
    assert_eq!(page(MessagesFrom::Before(1), 5).await, (vec![], false));
    assert_eq!(
        page(MessagesFrom::Since(t1), 50).await,
        ((4..=8).collect(), false)
    );
    assert_eq!(page(MessagesFrom::Since(t1), 2).await, (vec![7, 8], true));
    assert_eq!(
        page(MessagesFrom::Since(t2 + Duration::milliseconds(1)), 5).await,
        (vec![], false)
    );
    assert_eq!(
        store
            .messages("t2", &s.session_id, MessagesFrom::After(0), 50)
            .await
            .expect("other tenant"),
        MessagePage::default()
    );

    // The messages of an expired task are skipped, however many there are.
    let mut gone = task("t1", Some(&s.session_id), clock);
    gone.stored.expires_at = (clock.now() + Duration::minutes(1)).timestamp();
    let expiring: Vec<Message> = (0..5)
        .map(|k| message(&s, Some(&gone), &format!("x{k}"), t2))
        .collect();
    store
        .append_messages("t1", &s.session_id, &expiring, None)
        .await
        .expect("append");
    clock.advance(Duration::minutes(2));
    assert_eq!(page(MessagesFrom::Newest, 2).await, (vec![7, 8], true));
    assert_eq!(page(MessagesFrom::After(7), 5).await, (vec![8], false));

    // A change stamped earlier than the newest message (a rename on a lagging clock) lowers
    // nothing the next messages are stamped against.
    let renamed = shared::ports::SessionChanges {
        title: Some("renamed".into()),
        ..shared::ports::SessionChanges::default()
    };
    store
        .update_session("t1", &s.session_id, &renamed, t0 - Duration::hours(1))
        .await
        .expect("rename");
    let late = store
        .append_message(&message(&s, None, "late", t0))
        .await
        .expect("append");
    assert!(late.timestamp >= t2, "{} < {t2}", late.timestamp);
    let (since_t2, _) = page(MessagesFrom::Since(t2), 50).await;
    assert_eq!(since_t2.last(), Some(&late.sequence_number));
}

/// Session counts stay exact under parallel writers: sessions created at once (by `create` and
/// by a first message), parallel archives of one session (counted once), and listings that
/// merge statuses newest first across pages.
pub async fn session_counts(stores: Stores, clock: &ManualClock) {
    use shared::domain::SessionStatus;
    use shared::ports::{SessionChanges, SessionFilter};
    let store = stores.store;
    let count = |tenant: &'static str, user: &'static str, filter: SessionFilter| {
        let store = store.clone();
        async move {
            store
                .list_sessions(tenant, user, filter, 50, 0)
                .await
                .expect("list")
                .1
        }
    };
    let mut made: Vec<Session> = Vec::new();
    for k in 0..12 {
        let mut s = session("t1", clock);
        if k % 3 == 2 {
            s.status = SessionStatus::Completed;
        }
        s.updated_at = clock.now() + Duration::seconds(k);
        s.created_at = s.updated_at;
        made.push(s);
    }
    // Half are created, half come with their first message; all at once.
    let writes = made.iter().enumerate().map(|(k, s)| {
        let store = store.clone();
        let s = s.clone();
        async move {
            if k % 2 == 0 {
                store.create_session(&s).await.map(|created| {
                    assert_eq!(created, SessionCreated::Created, "each is new");
                })
            } else {
                let m = message(&s, None, "hi", s.updated_at);
                store
                    .append_messages("t1", &s.session_id, &[m], Some(&s))
                    .await
                    .map(|_| ())
            }
        }
    });
    for r in futures::future::join_all(writes).await {
        r.expect("write");
    }
    let all = SessionFilter {
        status: None,
        include_archived: true,
    };
    let (page, total) = store
        .list_sessions("t1", "u1", all, 5, 0)
        .await
        .expect("list");
    assert_eq!(total, 12);
    let newest: Vec<&str> = made
        .iter()
        .rev()
        .take(5)
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(
        page.iter()
            .map(|s| s.session_id.as_str())
            .collect::<Vec<_>>(),
        newest,
        "statuses merged newest first"
    );
    let (rest, _) = store
        .list_sessions("t1", "u1", all, 5, 10)
        .await
        .expect("list");
    assert_eq!(
        rest.iter()
            .map(|s| s.session_id.as_str())
            .collect::<Vec<_>>(),
        vec![made[1].session_id.as_str(), made[0].session_id.as_str()]
    );
    let completed = SessionFilter {
        status: Some(SessionStatus::Completed),
        include_archived: false,
    };
    assert_eq!(count("t1", "u1", completed).await, 4);

    // Eight archive the same session at once: it is counted once.
    let target = made[11].session_id.clone();
    let archives = (0..8).map(|_| {
        let store = store.clone();
        let target = target.clone();
        let at = clock.now();
        async move {
            let changes = SessionChanges {
                status: Some(SessionStatus::Archived),
                ..SessionChanges::default()
            };
            store.update_session("t1", &target, &changes, at).await
        }
    });
    for r in futures::future::join_all(archives).await {
        assert_eq!(r.expect("archive").status, SessionStatus::Archived);
    }
    let (_, visible) = store
        .list_sessions("t1", "u1", SessionFilter::default(), 50, 0)
        .await
        .expect("list");
    assert_eq!(visible, 11);
    assert_eq!(count("t1", "u1", completed).await, 3);
    let archived = SessionFilter {
        status: Some(SessionStatus::Archived),
        include_archived: true,
    };
    let (only, n) = store
        .list_sessions("t1", "u1", archived, 50, 0)
        .await
        .expect("list");
    assert_eq!((only.len(), n), (1, 1));
    assert_eq!(only[0].session_id, target);
    assert_eq!(count("t1", "u1", all).await, 12);
    // Another user and another tenant count nothing of these.
    assert_eq!(count("t1", "u2", all).await, 0);
    assert_eq!(count("t2", "u1", all).await, 0);
}

/// An agent session's audit trail and approvals, newest first, page by page after a position:
/// every item once, in order, nothing of another tenant's or another session's.
pub async fn agent_trail_pages(stores: Stores, clock: &ManualClock) {
    use shared::domain::agent_tools::{Approval, ApprovalStatus, AuditEntry, Tier};
    use shared::ports::agent_tools::{approval_position, audit_position};
    let store = stores.store;
    let keep = clock.now() + Duration::days(1);
    let entry = |session: &str, i: usize| AuditEntry {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: session.into(),
        user_id: "u1".into(),
        action: format!("fs.list{}", i % 3),
        target: format!("t{i}"),
        approved: Some(true),
        timestamp: clock.now(),
        outcome: "ok".into(),
        duration_ms: 1,
        approval_id: None,
    };
    let approval = |tenant: &str, session: &str| Approval {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: tenant.into(),
        session_id: session.into(),
        user_id: "u1".into(),
        workspace_id: "w".into(),
        workspace_name: "W".into(),
        tool_name: "fs.write".into(),
        args: json!({ "path": "a" }),
        args_stored: false,
        args_bytes: 10,
        tier: Tier::Batch,
        status: ApprovalStatus::Pending,
        created_at: clock.now(),
        decide_by: clock.now().timestamp() + 900,
        decided_at: None,
        decided_by: None,
        outcome: None,
    };
    let mut written = Vec::new();
    for i in 0..25 {
        // Two items in the same millisecond now and then: the id orders them.
        if i % 4 != 0 {
            clock.advance(Duration::milliseconds(7));
        }
        let e = entry("s1", i);
        store.append_audit("t1", &e, keep).await.expect("audit");
        written.push(e);
        store
            .append_audit("t1", &entry("s2", i), keep)
            .await
            .expect("other session");
        store
            .append_audit("t2", &entry("s1", i), keep)
            .await
            .expect("other tenant");
        store
            .create_approval(&approval("t1", "s1"), keep)
            .await
            .expect("approval");
        store
            .create_approval(&approval("t2", "s1"), keep)
            .await
            .expect("other tenant's approval");
    }
    written.sort_by_key(|e| std::cmp::Reverse(audit_position(e)));
    let mut seen = Vec::new();
    let mut before: Option<String> = None;
    for _ in 0..10 {
        let (page, more) = store
            .audit_trail("t1", "s1", before.as_deref(), 7)
            .await
            .expect("page");
        assert!(page.len() <= 7);
        before = page.last().map(audit_position);
        seen.extend(page);
        if !more {
            break;
        }
    }
    assert_eq!(seen, written, "every item once, newest first");
    let mut approvals = Vec::new();
    let mut before: Option<String> = None;
    for _ in 0..10 {
        let (page, more) = store
            .session_approvals("t1", "s1", before.as_deref(), 10)
            .await
            .expect("page");
        before = page.last().map(approval_position);
        approvals.extend(page);
        if !more {
            break;
        }
    }
    assert_eq!(approvals.len(), 25);
    assert!(approvals.iter().all(|a| a.tenant_id == "t1"));
    let positions: Vec<String> = approvals.iter().map(approval_position).collect();
    assert!(positions.windows(2).all(|w| w[0] > w[1]), "newest first");
    let (none, _) = store
        .audit_trail("t3", "s1", None, 50)
        .await
        .expect("another tenant");
    assert!(none.is_empty());
}

pub fn recipe(
    tenant: &str,
    origin: &str,
    template: &str,
    clock: &ManualClock,
) -> shared::domain::recipe::book::Recipe {
    member_recipe(tenant, "ada", origin, template, clock)
}

/// A recipe of member `owner`'s.
pub fn member_recipe(
    tenant: &str,
    owner: &str,
    origin: &str,
    template: &str,
    clock: &ManualClock,
) -> shared::domain::recipe::book::Recipe {
    use shared::domain::recipe::book::{recipe_id, Recipe, RecipeStep};
    Recipe {
        id: recipe_id(origin, "/", template, owner),
        tenant_id: tenant.into(),
        owner: owner.into(),
        promoted: false,
        origin: origin.into(),
        path: "/".into(),
        template: template.into(),
        params: Vec::new(),
        shapes: Vec::new(),
        format: shared::domain::recipe::book::FORMAT,
        steps: vec![RecipeStep::new("finish", "/")],
        recorded_from: "task".into(),
        runs: 1,
        demoted: false,
        created_at: clock.now(),
        updated_at: clock.now(),
        expires_at: (clock.now() + Duration::days(30)).timestamp(),
    }
}

fn caps(per_tenant: usize, per_member: usize) -> shared::ports::recipes::RecipeLimits {
    shared::ports::recipes::RecipeLimits {
        per_tenant,
        per_member,
    }
}

/// Recipes: found by tenant and site only, replaced by id, capped per tenant and per member
/// under thirty concurrent writers (expired ones make room again), deleted by their tenant
/// only.
pub async fn recipes(stores: Stores, clock: &ManualClock) {
    use shared::ports::recipes::Stored;
    let store = stores.store;
    let shop = "https://shop.test:443";
    let a = recipe("t1", shop, "buy {item}", clock);
    assert_eq!(
        store.put_recipe(&a, caps(10, 10)).await.expect("put"),
        Stored::Added
    );
    let mut again = a.clone();
    again.runs = 4;
    assert_eq!(
        store.put_recipe(&again, caps(10, 10)).await.expect("put"),
        Stored::Replaced
    );
    let found = store.site_recipes("t1", shop, "/", 5).await.expect("site");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].runs, 4, "replaced, not added");
    assert!(store
        .site_recipes("t2", shop, "/", 5)
        .await
        .expect("other tenant")
        .is_empty());
    // Another scheme, host or port is another site.
    for other in [
        "http://shop.test:80",
        "https://shop.test:8443",
        "https://evil.test:443",
    ] {
        let none = store
            .site_recipes("t1", other, "/", 5)
            .await
            .expect("other site");
        assert!(none.is_empty(), "{other}");
    }
    assert_eq!(store.recipe("t2", &a.id).await.expect("get"), None);
    assert!(
        !store.delete_recipe("t2", &a.id).await.expect("delete"),
        "another tenant's"
    );
    assert!(store.recipe("t1", &a.id).await.expect("get").is_some());

    // Thirty writers at once, a cap of five (one held already).
    let tasks: Vec<_> = (0..30)
        .map(|i| {
            let s = store.clone();
            let owner = ["ada", "bob", "eve"][i % 3];
            let r = member_recipe("t1", owner, shop, &format!("task {i}"), clock);
            tokio::spawn(async move { s.put_recipe(&r, caps(5, 50)).await })
        })
        .collect();
    let mut added = 0;
    for t in tasks {
        if t.await.expect("join").expect("put") == Stored::Added {
            added += 1;
        }
    }
    assert_eq!(added, 4, "the cap holds under concurrent writers");
    assert_eq!(store.recipes("t1", 100).await.expect("list").len(), 5);
    assert_eq!(store.recipes("t1", 2).await.expect("list").len(), 2);
    // Another tenant has its own cap.
    let b = recipe("t2", shop, "buy {item}", clock);
    assert_eq!(
        store.put_recipe(&b, caps(5, 5)).await.expect("put"),
        Stored::Added
    );

    // One member's runs fill only that member's share: thirty at once, two kept.
    let tasks: Vec<_> = (0..30)
        .map(|i| {
            let s = store.clone();
            let r = member_recipe("t3", "mallory", shop, &format!("junk {i}"), clock);
            tokio::spawn(async move { s.put_recipe(&r, caps(50, 2)).await })
        })
        .collect();
    let mut added = 0;
    for t in tasks {
        if t.await.expect("join").expect("put") == Stored::Added {
            added += 1;
        }
    }
    assert_eq!(added, 2, "the member's cap holds under concurrent writers");
    let theirs = member_recipe("t3", "grace", shop, "real work", clock);
    assert_eq!(
        store.put_recipe(&theirs, caps(50, 2)).await.expect("put"),
        Stored::Added
    );
    // The organisation's copy is not the member's.
    let kept = store.recipes("t3", 10).await.expect("list");
    let mallorys = kept
        .iter()
        .find(|r| r.owner == "mallory")
        .expect("one kept");
    let promoted = mallorys.promoted(clock.now());
    assert_eq!(
        store.put_recipe(&promoted, caps(50, 2)).await.expect("put"),
        Stored::Added
    );
    // Deleting one of the member's makes room for one more of theirs.
    assert!(store
        .delete_recipe("t3", &mallorys.id)
        .await
        .expect("delete"));
    let more = member_recipe("t3", "mallory", shop, "one more", clock);
    assert_eq!(
        store.put_recipe(&more, caps(50, 2)).await.expect("put"),
        Stored::Added
    );
    let over = member_recipe("t3", "mallory", shop, "one too many", clock);
    assert_eq!(
        store.put_recipe(&over, caps(50, 2)).await.expect("put"),
        Stored::Full
    );

    // Deleted: gone, and room for one more.
    assert!(store.delete_recipe("t1", &a.id).await.expect("delete"));
    assert!(!store.delete_recipe("t1", &a.id).await.expect("again"));
    assert_eq!(store.recipe("t1", &a.id).await.expect("get"), None);
    let c = recipe("t1", shop, "one more", clock);
    assert_eq!(
        store.put_recipe(&c, caps(5, 50)).await.expect("put"),
        Stored::Added
    );
    let d = recipe("t1", shop, "one too many", clock);
    assert_eq!(
        store.put_recipe(&d, caps(5, 50)).await.expect("put"),
        Stored::Full
    );

    // Expired recipes are not found and make room.
    clock.advance(Duration::days(31));
    assert!(store
        .site_recipes("t1", shop, "/", 50)
        .await
        .expect("site")
        .is_empty());
    let e = recipe("t1", shop, "after expiry", clock);
    assert_eq!(
        store.put_recipe(&e, caps(5, 50)).await.expect("put"),
        Stored::Added
    );
    assert_eq!(store.recipes("t1", 100).await.expect("list").len(), 1);
}

/// A recipe put only while its id is free (the organisation's copy a promotion makes): of
/// thirty concurrent writers one adds it and the others find it there; the same id is another
/// tenant's to add; an expired one not deleted yet is taken over; the caps hold.
pub async fn recipes_added_once(stores: Stores, clock: &ManualClock) {
    use shared::ports::recipes::Stored;
    let store = stores.store;
    let shop = "https://shop.test:443";
    let org = member_recipe("t1", "ada", shop, "buy {item}", clock).promoted(clock.now());
    // Rounds of thirty writers at once, the recipe deleted between them.
    for round in 0..5 {
        if round > 0 {
            assert!(store.delete_recipe("t1", &org.id).await.expect("delete"));
        }
        let tasks: Vec<_> = (0..30)
            .map(|_| {
                let s = store.clone();
                let r = org.clone();
                tokio::spawn(async move { s.put_recipe_if_absent(&r, caps(50, 50)).await })
            })
            .collect();
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(t.await.expect("join").expect("put"));
        }
        let added = outcomes.iter().filter(|o| **o == Stored::Added).count();
        let found = outcomes.iter().filter(|o| **o == Stored::Exists).count();
        assert_eq!((added, found), (1, 29), "round {round}: {outcomes:?}");
        assert_eq!(
            store.recipes("t1", 10).await.expect("list"),
            vec![org.clone()]
        );
    }
    // The same id in another tenant is that tenant's own.
    let theirs = shared::domain::recipe::book::Recipe {
        tenant_id: "t2".into(),
        ..org.clone()
    };
    assert_eq!(
        store
            .put_recipe_if_absent(&theirs, caps(50, 50))
            .await
            .expect("put"),
        Stored::Added
    );
    let mut changed = org.clone();
    changed.runs = 9;
    assert_eq!(
        store
            .put_recipe_if_absent(&changed, caps(50, 50))
            .await
            .expect("put"),
        Stored::Exists
    );
    assert_eq!(
        store.recipe("t1", &org.id).await.expect("get"),
        Some(org.clone())
    );
    // Counted like any other: a full tenant adds none.
    let more = member_recipe("t1", "bob", shop, "sell {item}", clock).promoted(clock.now());
    assert_eq!(
        store
            .put_recipe_if_absent(&more, caps(1, 50))
            .await
            .expect("put"),
        Stored::Full
    );
    // Expired and not deleted yet: taken over (it was counted already).
    clock.advance(Duration::days(31));
    let again = member_recipe("t1", "ada", shop, "buy {item}", clock).promoted(clock.now());
    assert_eq!(again.id, org.id);
    assert_ne!(
        store
            .put_recipe_if_absent(&again, caps(50, 50))
            .await
            .expect("put"),
        Stored::Exists
    );
    assert_eq!(store.recipe("t1", &org.id).await.expect("get"), Some(again));
}
