//! The session list and message paging as an outsider would attack them: 30 parallel writers
//! on one user's counts, cursors at and past their limits, and another tenant's session ids.

use api_tests::flows::on_store;
use api_tests::harness::{Harness, PW};
use api_tests::scripted::Reply;
use api_tests::{expect_error, on_both_stores};
use futures::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

async fn json_of(r: reqwest::Response) -> Value {
    assert_eq!(r.status(), 200);
    r.json().await.expect("json")
}

async fn total(h: &Harness, query: &str) -> u64 {
    let v = json_of(
        h.app
            .request(
                Method::GET,
                &format!("/api/session?{query}"),
                &h.token,
                None,
            )
            .await,
    )
    .await;
    v["data"]["pagination"]["total"].as_u64().expect("total")
}

async fn thirty_parallel_inits_and_archives_keep_the_counts_exact(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o).await;
    let ids: Vec<String> = (0..30).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    let inits = ids.iter().map(|id| {
        let body =
            json!({ "sessionId": id, "url": "https://www.example.com/", "domain": "example.com" });
        let h = &h;
        async move {
            h.app
                .request(Method::POST, "/api/session/init", &h.token, Some(&body))
                .await
        }
    });
    for r in join_all(inits).await {
        assert_eq!(
            json_of(r).await["data"]["created"],
            true,
            "every session is new"
        );
    }
    assert_eq!(total(&h, "limit=5").await, 30);
    // Thirty archive the first session at once while nine others are archived alongside.
    let archives = (0..30)
        .map(|_| ids[0].clone())
        .chain(ids[1..10].iter().cloned())
        .map(|id| {
            let h = &h;
            async move {
                let body = json!({ "sessionId": id });
                h.app
                    .request(Method::POST, "/api/session", &h.token, Some(&body))
                    .await
            }
        });
    for r in join_all(archives).await {
        assert_eq!(json_of(r).await["data"]["status"], "archived");
    }
    assert_eq!(total(&h, "").await, 20);
    assert_eq!(total(&h, "status=archived").await, 10);
    assert_eq!(total(&h, "includeArchived=true").await, 30);
    let page = json_of(
        h.app
            .request(
                Method::GET,
                "/api/session?limit=100&offset=15",
                &h.token,
                None,
            )
            .await,
    )
    .await;
    assert_eq!(page["data"]["sessions"].as_array().map(Vec::len), Some(5));
    assert_eq!(page["data"]["pagination"]["hasMore"], false);
}

async fn message_cursors_hold_at_their_limits_and_other_tenants_see_nothing(dynamodb: bool) {
    let h = on_store(dynamodb, |o| o).await;
    let id = uuid::Uuid::new_v4().to_string();
    let body =
        json!({ "sessionId": id, "url": "https://www.example.com/", "domain": "example.com" });
    json_of(
        h.app
            .request(Method::POST, "/api/session/init", &h.token, Some(&body))
            .await,
    )
    .await;
    let path = |q: &str| format!("/api/session/{id}/messages?{q}");
    for q in [
        "after=9999999999",
        "before=1",
        "since=2999-01-01T00:00:00Z",
        "limit=200&after=0",
    ] {
        let v = json_of(h.app.request(Method::GET, &path(q), &h.token, None).await).await;
        assert_eq!(
            (v["messages"].clone(), v["hasMore"].clone()),
            (json!([]), json!(false)),
            "{q}"
        );
    }
    for (q, field) in [
        ("after=10000000000", "after"),
        ("after=18446744073709551616", "after"),
        ("before=99999999999999999999999", "before"),
        ("limit=201", "limit"),
        ("limit=0", "limit"),
        ("since=2026-13-01T00:00:00Z", "since"),
    ] {
        let r = h.app.request(Method::GET, &path(q), &h.token, None).await;
        let v = expect_error(r, 400, "VALIDATION_ERROR").await;
        assert!(v.to_string().contains(field), "{q}: {v}");
    }
    let long = format!("since={}", "9".repeat(4_000));
    let r = h
        .app
        .request(Method::GET, &path(&long), &h.token, None)
        .await;
    assert!(matches!(r.status().as_u16(), 400 | 414), "{}", r.status());

    // Another tenant's user, 30 times at once, with every cursor: nothing of the session.
    h.app.seed_user("globex", "eve@globex.com", PW).await;
    let eve = h.app.login("eve@globex.com", PW).await;
    let polls = (0..30).map(|k| {
        let q = ["after=0", "before=5", "since=2000-01-01T00:00:00Z"][k % 3];
        let (h, eve, p) = (&h, &eve, path(q));
        async move { h.app.request(Method::GET, &p, eve, None).await }
    });
    for r in join_all(polls).await {
        let v = json_of(r).await;
        assert_eq!(
            (v["sessionExists"].clone(), v["messages"].clone()),
            (json!(false), json!([]))
        );
    }
    let archive = h
        .app
        .request(
            Method::POST,
            "/api/session",
            &eve,
            Some(&json!({ "sessionId": id })),
        )
        .await;
    expect_error(archive, 404, "SESSION_NOT_FOUND").await;
    let theirs = json_of(
        h.app
            .request(Method::GET, "/api/session?includeArchived=true", &eve, None)
            .await,
    )
    .await;
    assert_eq!(theirs["data"]["pagination"]["total"], 0);
    assert_eq!(total(&h, "").await, 1, "the owner's count is untouched");
}

/// A session made without a page, its first tasks and its archive, as an outsider would hit
/// them: 30 inits of one id without `url` at once, then 30 first tasks in it at once from pages
/// of two sites, then 30 archives at once while each task sends its next step, and another
/// tenant's user naming that session on every route that takes it. One session is made; it
/// takes one domain and its URL is of that domain; nothing answers 5xx; every task ends and
/// answers 409 from then on; the other tenant changes nothing.
async fn a_session_without_a_page_and_its_archive_hold_under_thirty_at_once(dynamodb: bool) {
    use shared::domain::{SessionStatus, TaskStatus};
    let h = on_store(dynamodb, |o| o.thirty_at_once()).await;
    h.llm.fallback(Reply::action("Open it.", "click(1)"));
    let id = uuid::Uuid::new_v4().to_string();
    let init = json!({ "sessionId": id });
    let inits = join_all((0..30).map(|_| {
        h.app
            .request(Method::POST, "/api/session/init", &h.token, Some(&init))
    }))
    .await;
    let mut created = 0;
    for r in inits {
        created += usize::from(json_of(r).await["data"]["created"] == true);
    }
    assert_eq!(created, 1);

    let sites = [
        "https://www.shop.example.com/a",
        "https://news.example.org/b",
    ];
    let bodies: Vec<Value> = (0..30)
        .map(|k| {
            json!({ "sessionId": id, "url": sites[k % 2], "query": format!("Open item {k}"),
                    "interactiveTree": [{ "i": "1", "r": "link", "n": "Item" }] })
        })
        .collect();
    let firsts = join_all(bodies.iter().map(|b| h.interact(b))).await;
    let mut answers = Vec::new();
    for r in firsts {
        answers.push(json_of(r).await);
    }
    let session = h.session(&answers[0]).await;
    let named = [
        ("example.com", "https://www.shop.example.com/a"),
        ("example.org", "https://news.example.org/b"),
    ];
    assert!(
        named.contains(&(session.domain.as_str(), session.url.as_str())),
        "{} at {}",
        session.domain,
        session.url
    );
    let found = json_of(
        h.app
            .request(
                Method::GET,
                &format!("/api/session/by-domain/{}", session.domain),
                &h.token,
                None,
            )
            .await,
    )
    .await;
    assert_eq!(found["session"]["sessionId"], json!(id));

    // Another tenant's user names the session: refused, nothing changes.
    h.app.seed_user("globex", "grace@globex.com", PW).await;
    let grace = h.app.login("grace@globex.com", PW).await;
    let archive = json!({ "sessionId": id });
    let r = h
        .app
        .request(Method::POST, "/api/session", &grace, Some(&archive))
        .await;
    expect_error(r, 404, "SESSION_NOT_FOUND").await;
    let r = h
        .app
        .request(Method::POST, "/api/session/init", &grace, Some(&init))
        .await;
    expect_error(r, 409, "SESSION_ID_TAKEN").await;
    let mut theirs = bodies[0].clone();
    theirs["taskId"] = answers[0]["taskId"].clone();
    expect_error(
        h.interact_with(&theirs, &grace, None).await,
        404,
        "TASK_NOT_FOUND",
    )
    .await;
    assert_eq!(h.session(&answers[0]).await.status, SessionStatus::Active);
    assert_eq!(h.task(&answers[0]).await.status, TaskStatus::Executing);

    // 30 archives while every task sends its next step.
    let nexts: Vec<Value> = bodies
        .iter()
        .zip(&answers)
        .map(|(b, a)| {
            api_tests::flows::next(
                b,
                a,
                b["url"].as_str().unwrap_or(""),
                vec![json!({ "i": "1", "r": "link", "n": "Item" })],
            )
        })
        .collect();
    let (archived, stepped) = tokio::join!(
        join_all((0..30).map(|_| {
            h.app
                .request(Method::POST, "/api/session", &h.token, Some(&archive))
        })),
        join_all(nexts.iter().map(|b| h.interact(b)))
    );
    for r in archived {
        assert_eq!(r.status(), 200);
    }
    for r in stepped {
        assert!([200, 409].contains(&r.status().as_u16()), "{}", r.status());
    }
    // Every task is ended now: its next step answers 409, and it is stored failed.
    let again = join_all(nexts.iter().map(|b| h.interact(b))).await;
    for (r, a) in again.into_iter().zip(&answers) {
        expect_error(r, 409, "TASK_COMPLETED").await;
        assert_eq!(h.task(a).await.status, TaskStatus::Failed);
    }
}

on_both_stores!(
    thirty_parallel_inits_and_archives_keep_the_counts_exact,
    message_cursors_hold_at_their_limits_and_other_tenants_see_nothing,
    a_session_without_a_page_and_its_archive_hold_under_thirty_at_once,
);
