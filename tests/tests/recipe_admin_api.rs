//! The inspector's recipe routes over HTTP (`/api/debug/recipes`, `…/{recipeId}/promote`,
//! `…/{recipeId}/demote`): an admin lists the tenant's recipes with their steps and pages, a
//! member only their own; only an admin promotes and demotes, once, audited under their user id;
//! another tenant's recipe is never found nor changed; off with the debug routes; thirty
//! promotions of one recipe at once make one copy and one audit entry.

use api_tests::harness::{harness_with, Harness, PW};
use api_tests::on_both_stores;
use serde_json::{json, Value};
use shared::agent::promotion::AUDIT_SESSION;
use shared::clock::Clock;
use shared::domain::agent_tools::AuditEntry;
use shared::domain::recipe::book::{OwnValue, Recipe, RecipeStep};
use shared::domain::recipe::TargetDescription;
use shared::domain::Role;
use shared::ports::recipes::RecipeLimits;

const SHOP: &str = "https://shop.example.com:443";
/// Member-written text that tries markup: answered as data.
const HOSTILE: &str = "<img src=x onerror=alert(1)> buy {item}";

const LIMITS: RecipeLimits = RecipeLimits {
    per_tenant: 50,
    per_member: 50,
};

/// Who is who: an admin and two members of acme (ada, the harness's, is a third), and a
/// member and an admin of globex.
struct People {
    root: String,
    root_id: String,
    bob: String,
    bob_id: String,
    carl_id: String,
    hank: String,
    hank_id: String,
    gina: String,
}

async fn app(dynamodb: bool, debug_routes: bool) -> (Harness, People) {
    app_on(dynamodb, debug_routes, None).await
}

/// [`app`] on the embedded store in the files of `dir` when given (writers on their own
/// connections, as in a deployment of several processes).
async fn app_on(
    dynamodb: bool,
    debug_routes: bool,
    dir: Option<&std::path::Path>,
) -> (Harness, People) {
    let h = harness_with(|o| {
        let mut o = o.set("DEBUG_ROUTES", if debug_routes { "true" } else { "false" });
        o.dynamodb = dynamodb;
        o.data_dir = dir.map(std::path::Path::to_path_buf);
        o
    })
    .await;
    let root_id = h
        .app
        .seed_user_as("acme", "root@acme.com", PW, Role::Admin)
        .await;
    let bob_id = h.app.seed_user("acme", "bob@acme.com", PW).await;
    let carl_id = h.app.seed_user("acme", "carl@acme.com", PW).await;
    let hank_id = h.app.seed_user("globex", "hank@globex.com", PW).await;
    h.app
        .seed_user_as("globex", "gina@globex.com", PW, Role::Admin)
        .await;
    let people = People {
        root: h.app.login("root@acme.com", PW).await,
        root_id,
        bob: h.app.login("bob@acme.com", PW).await,
        bob_id,
        carl_id,
        hank: h.app.login("hank@globex.com", PW).await,
        hank_id,
        gina: h.app.login("gina@globex.com", PW).await,
    };
    (h, people)
}

/// A recipe of `owner`'s with four steps on three pages: a pick the instruction names, a
/// secret the model types, a confirmed payment and an answer read off the page.
fn recipe(h: &Harness, tenant: &str, owner: &str, template: &str) -> Recipe {
    let mut r = api_tests::conformance::member_recipe(tenant, owner, SHOP, template, &h.app.clock);
    let mut open = RecipeStep::new("click", "/products/#");
    open.intent = "Open the product {item} <script>alert(1)</script>".into();
    open.title = Some("Products — page #".into());
    open.context = Some("search results".into());
    open.target_param = Some("item".into());
    open.target = Some(TargetDescription {
        role: "link".into(),
        name: "{item}".into(),
        nth: 0,
        of: 1,
    });
    let mut code = RecipeStep::new("setValue", "/checkout");
    code.intent = "Type the card's code".into();
    code.own_value = Some(OwnValue::Secret);
    code.context = Some("payment form".into());
    let mut pay = RecipeStep::new("click", "/checkout");
    pay.intent = "Pay".into();
    pay.confirm = true;
    pay.own_target = true;
    let mut done = RecipeStep::new("finish", "/orders/#/thanks");
    done.intent = "Say the order number".into();
    done.own_value = Some(OwnValue::Answer);
    r.steps = vec![open, code, pay, done];
    r
}

async fn put(h: &Harness, r: &Recipe) {
    h.app
        .ctx
        .store
        .put_recipe(r, LIMITS)
        .await
        .expect("recipe stored");
}

/// `method path` with `token`: status and body.
async fn call(h: &Harness, method: reqwest::Method, path: &str, token: &str) -> (u16, Value) {
    let r = h.app.request(method, path, token, None).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn list(h: &Harness, token: &str, query: &str) -> (u16, Value) {
    call(
        h,
        reqwest::Method::GET,
        &format!("/api/debug/recipes{query}"),
        token,
    )
    .await
}

async fn promote(h: &Harness, token: &str, id: &str) -> (u16, Value) {
    let path = format!("/api/debug/recipes/{id}/promote");
    call(h, reqwest::Method::POST, &path, token).await
}

async fn demote(h: &Harness, token: &str, id: &str) -> (u16, Value) {
    let path = format!("/api/debug/recipes/{id}/demote");
    call(h, reqwest::Method::POST, &path, token).await
}

/// The ids of a listing, sorted.
fn ids(body: &Value) -> Vec<String> {
    let mut out: Vec<String> = body["recipes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["id"].as_str().map(str::to_owned))
        .collect();
    out.sort();
    out
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The tenant's promotion audit trail, newest first.
async fn trail(h: &Harness, tenant: &str) -> Vec<AuditEntry> {
    h.app
        .ctx
        .store
        .audit_trail(tenant, AUDIT_SESSION, None, 100)
        .await
        .expect("audit trail")
        .0
}

/// Everything a tenant holds of recipes and their audit trail.
async fn state(h: &Harness, tenant: &str) -> (Vec<Recipe>, usize) {
    let recipes = h.app.ctx.store.recipes(tenant, 100).await.expect("recipes");
    (recipes, trail(h, tenant).await.len())
}

async fn an_admin_lists_the_tenants_recipes_with_their_steps_a_member_only_their_own(
    dynamodb: bool,
) {
    let (h, p) = app(dynamodb, true).await;
    let bobs = recipe(&h, "acme", &p.bob_id, HOSTILE);
    let carls = recipe(&h, "acme", &p.carl_id, "sell {item}");
    let hanks = recipe(&h, "globex", &p.hank_id, "buy {item}");
    let org = carls.promoted(h.app.clock.now());
    for r in [&bobs, &carls, &hanks, &org] {
        put(&h, r).await;
    }

    let (status, all) = list(&h, &p.root, "").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(
        ids(&all),
        sorted(vec![bobs.id.clone(), carls.id.clone(), org.id.clone()]),
        "the tenant's, never globex's: {all}"
    );
    assert_eq!(
        (&all["truncated"], &all["admin"]),
        (&json!(false), &json!(true))
    );
    let row = all["recipes"]
        .as_array()
        .expect("recipes")
        .iter()
        .find(|r| r["id"] == bobs.id)
        .expect("bob's");
    assert_eq!(
        (
            &row["owner"],
            &row["promoted"],
            &row["origin"],
            &row["path"],
            &row["template"],
            &row["runs"]
        ),
        (
            &json!(p.bob_id),
            &json!(false),
            &json!(SHOP),
            &json!("/"),
            &json!(HOSTILE),
            &json!(1)
        ),
        "{row}"
    );
    assert!(
        row["updatedAt"]
            .as_str()
            .is_some_and(|t| t.starts_with("2026-11-22")),
        "{row}"
    );
    let steps = row["steps"].as_array().expect("steps");
    let pages: Vec<&str> = steps.iter().filter_map(|s| s["page"].as_str()).collect();
    assert_eq!(
        pages,
        ["/products/#", "/checkout", "/checkout", "/orders/#/thanks"]
    );
    let indexes: Vec<u64> = steps.iter().filter_map(|s| s["index"].as_u64()).collect();
    assert_eq!(indexes, [0, 1, 2, 3]);
    assert_eq!(
        steps[0],
        json!({
            "index": 0, "action": "click",
            "intent": "Open the product {item} <script>alert(1)</script>",
            "page": "/products/#", "title": "Products — page #", "context": "search results",
            "confirm": false, "ownValue": null, "ownTarget": false, "owned": false,
            "valueParam": null, "targetParam": "item",
            "target": { "role": "link", "name": "{item}", "nth": 0, "of": 1 },
        })
    );
    assert_eq!(
        (
            &steps[1]["ownValue"],
            &steps[1]["owned"],
            &steps[1]["context"]
        ),
        (&json!("secret"), &json!(true), &json!("payment form"))
    );
    assert_eq!(
        (
            &steps[2]["confirm"],
            &steps[2]["ownTarget"],
            &steps[2]["title"]
        ),
        (&json!(true), &json!(true), &Value::Null)
    );
    assert_eq!(steps[3]["ownValue"], "answer");
    let org_row = all["recipes"]
        .as_array()
        .expect("recipes")
        .iter()
        .find(|r| r["id"] == org.id)
        .expect("the organisation's");
    assert_eq!(
        (&org_row["promoted"], &org_row["owner"]),
        (&json!(true), &json!(p.carl_id))
    );

    // A member: their own only (not a colleague's, not the organisation's).
    let (status, own) = list(&h, &p.bob, "").await;
    assert_eq!(status, 200, "{own}");
    assert_eq!(ids(&own), vec![bobs.id.clone()], "{own}");
    assert_eq!(own["admin"], false);
    let (_, none) = list(&h, &h.token, "").await;
    assert_eq!(ids(&none), Vec::<String>::new(), "ada has none: {none}");
    // Another tenant: its own.
    assert_eq!(ids(&list(&h, &p.hank, "").await.1), vec![hanks.id.clone()]);
    assert_eq!(ids(&list(&h, &p.gina, "").await.1), vec![hanks.id.clone()]);

    // Bounded by `limit`.
    let (status, one) = list(&h, &p.root, "?limit=1").await;
    assert_eq!(status, 200);
    assert_eq!((ids(&one).len(), &one["truncated"]), (1, &json!(true)));
    let (_, three) = list(&h, &p.root, "?limit=3").await;
    assert_eq!((ids(&three).len(), &three["truncated"]), (3, &json!(false)));
    // The inspector's page has the view, and puts what it reads in as text only.
    let page = h.app.send(reqwest::Method::GET, "/inspect", None).await;
    assert_eq!(page.status(), 200);
    let page = page.text().await.expect("page");
    assert!(
        page.contains("id=\"recipes\"") && page.contains("/api/debug/recipes?limit="),
        "the Recipes view"
    );
    assert!(!page.contains("innerHTML") && !page.contains("insertAdjacentHTML"));
    for bad in ["0", "201", "x", "-1", "1.5"] {
        let (status, body) = list(&h, &p.root, &format!("?limit={bad}")).await;
        assert_eq!(
            (status, &body["code"], &body["details"][0]["field"]),
            (400, &json!("VALIDATION_ERROR"), &json!("limit")),
            "limit={bad}: {body}"
        );
    }
}

async fn a_member_cannot_promote_or_demote(dynamodb: bool) {
    let (h, p) = app(dynamodb, true).await;
    let bobs = recipe(&h, "acme", &p.bob_id, "buy {item}");
    let carls = recipe(&h, "acme", &p.carl_id, "sell {item}");
    let org = carls.promoted(h.app.clock.now());
    for r in [&bobs, &carls, &org] {
        put(&h, r).await;
    }
    let before = state(&h, "acme").await;
    for (what, id) in [
        ("promote", &bobs.id),
        ("promote", &carls.id),
        ("demote", &org.id),
    ] {
        for token in [&p.bob, &h.token] {
            let path = format!("/api/debug/recipes/{id}/{what}");
            let (status, body) = call(&h, reqwest::Method::POST, &path, token).await;
            assert_eq!(
                (status, &body["code"]),
                (403, &json!("ADMIN_REQUIRED")),
                "{what} {id}: {body}"
            );
            assert!(
                body["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("admin")),
                "{body}"
            );
        }
    }
    assert_eq!(state(&h, "acme").await, before, "nothing changed");
}

async fn an_admin_promotes_once_and_demotes_audited_under_their_user_id(dynamodb: bool) {
    let (h, p) = app(dynamodb, true).await;
    let bobs = recipe(&h, "acme", &p.bob_id, "buy {item}");
    let carls = recipe(&h, "acme", &p.carl_id, "buy {item}");
    put(&h, &bobs).await;
    put(&h, &carls).await;
    let store = h.app.ctx.store.as_ref();

    let (status, body) = promote(&h, &p.root, &bobs.id).await;
    assert_eq!(status, 200, "{body}");
    let copy_id = body["recipe"]["id"].as_str().expect("copy id").to_owned();
    assert_ne!(copy_id, bobs.id);
    assert_eq!(
        (
            &body["from"],
            &body["recipe"]["promoted"],
            &body["recipe"]["owner"]
        ),
        (&json!(bobs.id), &json!(true), &json!(p.bob_id))
    );
    assert_eq!(body["recipe"]["steps"].as_array().map(Vec::len), Some(4));
    let copy = store
        .recipe("acme", &copy_id)
        .await
        .expect("get")
        .expect("the organisation's copy");
    assert!(copy.promoted);
    assert_eq!(copy.steps, bobs.steps);
    assert_eq!(
        store.recipe("acme", &bobs.id).await.expect("get"),
        Some(bobs.clone()),
        "bob's own stays"
    );
    let audit = trail(&h, "acme").await;
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(
        (audit[0].action.as_str(), audit[0].user_id.as_str()),
        ("recipe.promote", p.root_id.as_str())
    );
    assert!(
        audit[0].target.contains(&copy_id) && audit[0].target.contains(&bobs.id),
        "{audit:?}"
    );

    // Again, its copy, or a colleague's recipe of the same task: the organisation has it.
    for id in [&bobs.id, &copy_id, &carls.id] {
        let (status, body) = promote(&h, &p.root, id).await;
        assert_eq!(
            (status, &body["code"]),
            (409, &json!("RECIPE_ALREADY_PROMOTED")),
            "{id}: {body}"
        );
    }
    assert_eq!(trail(&h, "acme").await.len(), 1, "no second audit entry");
    assert_eq!(
        store.recipe("acme", &copy_id).await.expect("get"),
        Some(copy.clone())
    );

    // A member's recipe is not the organisation's to take back: named in the answer.
    let (status, body) = demote(&h, &p.root, &bobs.id).await;
    assert_eq!(
        (status, &body["code"]),
        (404, &json!("RECIPE_NOT_FOUND")),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains(&bobs.id)),
        "{body}"
    );
    // Unknown, or no recipe id at all.
    let (status, body) = promote(&h, &p.root, "0123456789abcdef01234567").await;
    assert_eq!(
        (status, &body["code"]),
        (404, &json!("RECIPE_NOT_FOUND")),
        "{body}"
    );
    for bad in ["a.b", "%3Cscript%3E", &"f".repeat(65)] {
        let (status, body) = promote(&h, &p.root, bad).await;
        assert_eq!(
            (status, &body["details"][0]["field"]),
            (400, &json!("recipeId")),
            "{bad}: {body}"
        );
    }

    // (The trail is by time: the demotion a second later.)
    h.app.clock.advance(chrono::Duration::seconds(1));
    let (status, body) = demote(&h, &p.root, &copy_id).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({ "id": copy_id, "demoted": true }));
    assert_eq!(store.recipe("acme", &copy_id).await.expect("get"), None);
    // The member's own stays, marked so that its runs do not promote it again by agreeing.
    let mut kept = bobs.clone();
    kept.demoted = true;
    assert_eq!(
        store.recipe("acme", &bobs.id).await.expect("get"),
        Some(kept),
        "the members' own stay"
    );
    let audit = trail(&h, "acme").await;
    let actions: Vec<(&str, &str)> = audit
        .iter()
        .map(|e| (e.action.as_str(), e.user_id.as_str()))
        .collect();
    assert_eq!(
        actions,
        [
            ("recipe.demote", p.root_id.as_str()),
            ("recipe.promote", p.root_id.as_str())
        ]
    );
    assert_eq!(audit[0].target, copy_id);
    let (status, body) = demote(&h, &p.root, &copy_id).await;
    assert_eq!(
        (status, &body["code"]),
        (404, &json!("RECIPE_NOT_FOUND")),
        "{body}"
    );
    // Demoted, the task may be promoted again: a colleague's version this time.
    let (status, body) = promote(&h, &p.root, &carls.id).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["recipe"]["owner"], json!(p.carl_id));
}

async fn another_tenants_recipe_is_not_found_and_untouched(dynamodb: bool) {
    let (h, p) = app(dynamodb, true).await;
    let hanks = recipe(&h, "globex", &p.hank_id, "buy {item}");
    put(&h, &hanks).await;
    let (status, body) = promote(&h, &p.gina, &hanks.id).await;
    assert_eq!(status, 200, "globex's admin promotes it: {body}");
    let org_id = body["recipe"]["id"].as_str().expect("id").to_owned();
    let globex = state(&h, "globex").await;
    let acme = state(&h, "acme").await;

    for id in [&hanks.id, &org_id] {
        for (status, body) in [
            promote(&h, &p.root, id).await,
            demote(&h, &p.root, id).await,
        ] {
            assert_eq!(
                (status, &body["code"]),
                (404, &json!("RECIPE_NOT_FOUND")),
                "{id}: {body}"
            );
            assert!(
                !body.to_string().contains("globex") && !body.to_string().contains(&p.hank_id),
                "nothing of globex's in the answer: {body}"
            );
        }
    }
    assert_eq!(state(&h, "globex").await, globex, "globex's untouched");
    assert_eq!(state(&h, "acme").await, acme, "and nothing written in acme");
    assert!(ids(&list(&h, &p.root, "").await.1).is_empty());
    // Globex's admin still sees and demotes its own.
    assert_eq!(demote(&h, &p.gina, &org_id).await.0, 200);
}

async fn the_routes_refuse_while_the_debug_routes_are_off(dynamodb: bool) {
    let (h, p) = app(dynamodb, false).await;
    let bobs = recipe(&h, "acme", &p.bob_id, "buy {item}");
    put(&h, &bobs).await;
    let org = recipe(&h, "acme", &p.carl_id, "sell {item}").promoted(h.app.clock.now());
    put(&h, &org).await;
    let before = state(&h, "acme").await;
    for (status, body) in [
        list(&h, &p.root, "").await,
        list(&h, &p.bob, "?limit=0").await,
        promote(&h, &p.root, &bobs.id).await,
        demote(&h, &p.root, &org.id).await,
    ] {
        assert_eq!(
            (status, &body["code"]),
            (403, &json!("FORBIDDEN")),
            "{body}"
        );
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("DEBUG_ROUTES")),
            "{body}"
        );
    }
    assert_eq!(state(&h, "acme").await, before, "nothing changed");
}

async fn thirty_parallel_promotions_make_one_copy_and_one_audit_entry(dynamodb: bool) {
    let dir = tempfile::tempdir().expect("tmp");
    let (h, p) = app_on(dynamodb, true, (!dynamodb).then_some(dir.path())).await;
    let bobs = recipe(&h, "acme", &p.bob_id, "buy {item}");
    put(&h, &bobs).await;
    // Several rounds: thirty promotions at once, then thirty demotions at once (over
    // connections opened beforehand, so that the requests meet at the store).
    for round in 1..=5 {
        futures::future::join_all((0..30).map(|_| list(&h, &p.root, "?limit=1"))).await;
        let answers =
            futures::future::join_all((0..30).map(|_| promote(&h, &p.root, &bobs.id))).await;
        let ok: Vec<&Value> = answers
            .iter()
            .filter(|(s, _)| *s == 200)
            .map(|(_, b)| b)
            .collect();
        let refused = answers
            .iter()
            .filter(|(s, b)| *s == 409 && b["code"] == "RECIPE_ALREADY_PROMOTED")
            .count();
        assert_eq!((ok.len(), refused), (1, 29), "round {round}: {answers:?}");
        let (recipes, audited) = state(&h, "acme").await;
        assert_eq!(recipes.len(), 2, "bob's and one copy: {recipes:?}");
        assert_eq!(audited, 2 * round - 1, "one audit entry more");
        let copy_id = ok[0]["recipe"]["id"].as_str().expect("id").to_owned();
        assert!(recipes.iter().any(|r| r.id == copy_id && r.promoted));

        // One demotion takes it back, the others find nothing.
        futures::future::join_all((0..30).map(|_| list(&h, &p.root, "?limit=1"))).await;
        let answers =
            futures::future::join_all((0..30).map(|_| demote(&h, &p.root, &copy_id))).await;
        let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            (
                statuses.iter().filter(|s| **s == 200).count(),
                statuses.iter().filter(|s| **s == 404).count()
            ),
            (1, 29),
            "round {round}: {answers:?}"
        );
        let (recipes, audited) = state(&h, "acme").await;
        let mut kept = bobs.clone();
        kept.demoted = true;
        assert_eq!(recipes, vec![kept]);
        assert_eq!(audited, 2 * round);
    }
}

on_both_stores!(
    an_admin_lists_the_tenants_recipes_with_their_steps_a_member_only_their_own,
    a_member_cannot_promote_or_demote,
    an_admin_promotes_once_and_demotes_audited_under_their_user_id,
    another_tenants_recipe_is_not_found_and_untouched,
    the_routes_refuse_while_the_debug_routes_are_off,
    thirty_parallel_promotions_make_one_copy_and_one_audit_entry,
);
