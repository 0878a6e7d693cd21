//! Every function is wired everywhere it must be: a `functions/*` crate with an HTTP route is
//! in local-api's table, `template.yaml` declares it with the same method and path (and its
//! CORS preflight), and `events/expected.tsv` invokes it at least once with event files that
//! exist. A forgotten entry anywhere fails here, naming the function.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

/// Functions without an HTTP route, and the event source the template must give each.
const NOT_HTTP: [(&str, &str); 3] = [
    ("cleanup-expired", "ScheduleV2"),
    ("agent-phase", "(Step Functions)"),
    ("agent-exec", "(invoked by agent-exec-start)"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn function_dirs() -> BTreeSet<String> {
    std::fs::read_dir(root().join("functions"))
        .expect("functions/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// One function resource of the template: its code directory and its HTTP API events.
#[derive(Debug, Default)]
struct TemplateFunction {
    resource: String,
    binary: Option<String>,
    events: BTreeSet<(String, String)>,
    event_types: BTreeSet<String>,
}

/// `template.yaml` as YAML (CloudFormation's short tags such as `!Ref` read as their
/// scalar or list).
fn template(root: &Path) -> Yaml {
    let text = std::fs::read_to_string(root.join("template.yaml")).expect("template.yaml");
    YamlLoader::load_from_str(&text)
        .expect("template.yaml is YAML")
        .into_iter()
        .next()
        .expect("one document")
}

/// The template's function resources by code directory.
fn template_functions() -> BTreeMap<String, TemplateFunction> {
    template_functions_in(&root())
}

fn template_functions_in(root: &Path) -> BTreeMap<String, TemplateFunction> {
    let doc = template(root);
    let mut out = BTreeMap::new();
    for (name, resource) in doc["Resources"].as_hash().expect("Resources") {
        if resource["Type"].as_str() != Some("AWS::Serverless::Function") {
            continue;
        }
        let name = name.as_str().expect("a resource name").to_owned();
        let dir = resource["Properties"]["CodeUri"]
            .as_str()
            .and_then(|u| u.strip_prefix("functions/"))
            .map(|d| d.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| panic!("{name}: CodeUri is not functions/<dir>"));
        let mut f = TemplateFunction {
            resource: name,
            binary: resource["Metadata"]["BuildProperties"]["Binary"]
                .as_str()
                .map(str::to_owned),
            ..TemplateFunction::default()
        };
        let events = resource["Properties"]["Events"].as_hash();
        for event in events.into_iter().flat_map(|h| h.values()) {
            let ty = event["Type"].as_str().unwrap_or_default().to_owned();
            if ty == "HttpApi" {
                let props = &event["Properties"];
                match (props["Method"].as_str(), props["Path"].as_str()) {
                    (Some(m), Some(p)) => {
                        f.events.insert((m.to_owned(), p.to_owned()));
                    }
                    _ => panic!("{}: an HttpApi event without Method and Path", f.resource),
                }
            }
            f.event_types.insert(ty);
        }
        out.insert(dir, f);
    }
    out
}

#[test]
fn every_function_is_routed_declared_and_invoked() {
    let dirs = function_dirs();
    let template = template_functions();
    let routes = local_api::routes();
    let not_http: BTreeMap<&str, &str> = NOT_HTTP.into_iter().collect();
    let mut problems = Vec::new();

    for dir in &dirs {
        let Some(f) = template.get(dir) else {
            problems.push(format!(
                "{dir}: no function in template.yaml with CodeUri functions/{dir}"
            ));
            continue;
        };
        if f.binary.as_deref() != Some(dir.as_str()) {
            problems.push(format!(
                "{dir}: template resource {} builds binary {:?}",
                f.resource, f.binary
            ));
        }
        if let Some(source) = not_http.get(dir.as_str()) {
            if routes.iter().any(|r| r.spec.name == dir) {
                problems.push(format!(
                    "{dir}: not an HTTP function, yet routed in local-api"
                ));
            }
            if !f.events.is_empty() {
                problems.push(format!(
                    "{dir}: not an HTTP function, yet has HttpApi events"
                ));
            }
            if source.starts_with(|c: char| c.is_ascii_alphabetic())
                && !f.event_types.contains(*source)
            {
                problems.push(format!("{dir}: the template gives it no {source} event"));
            }
            continue;
        }
        let Some(route) = routes.iter().find(|r| r.spec.name == dir) else {
            problems.push(format!(
                "{dir}: not in local-api's route table (local/src/lib.rs)"
            ));
            continue;
        };
        let want: BTreeSet<(String, String)> = route
            .spec
            .methods
            .iter()
            .map(|m| (m.to_string(), route.spec.path.to_owned()))
            .collect();
        let mut got = f.events.clone();
        got.remove(&("OPTIONS".to_owned(), route.spec.path.to_owned()));
        if got != want {
            problems.push(format!(
                "{dir}: template.yaml ({}) declares {:?}, local-api routes {:?}",
                f.resource, f.events, want
            ));
        }
    }
    // Each path answers its CORS preflight through exactly one function (API Gateway refuses
    // two routes for one method and path).
    let paths: BTreeSet<&str> = routes.iter().map(|r| r.spec.path).collect();
    for path in paths {
        let preflights: Vec<&str> = template
            .values()
            .filter(|f| f.events.contains(&("OPTIONS".to_owned(), path.to_owned())))
            .map(|f| f.resource.as_str())
            .collect();
        if preflights.len() != 1 {
            problems.push(format!(
                "{path}: the preflight (OPTIONS) is declared by {preflights:?}, want exactly one"
            ));
        }
    }
    for (dir, f) in &template {
        if !dirs.contains(dir) {
            problems.push(format!(
                "template.yaml {}: no crate functions/{dir}",
                f.resource
            ));
        }
    }
    for r in &routes {
        if !dirs.contains(r.spec.name) {
            problems.push(format!(
                "local-api routes {}: no crate functions/{}",
                r.spec.name, r.spec.name
            ));
        }
    }

    // Every function is invoked by scripts/lambda-events, with event files that exist, and
    // every event file is used.
    let events = root().join("events");
    let tsv = std::fs::read_to_string(events.join("expected.tsv")).expect("events/expected.tsv");
    let mut invoked = BTreeSet::new();
    let mut used = BTreeSet::new();
    for (n, line) in tsv.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [function, file, expected] = cols[..] else {
            problems.push(format!(
                "events/expected.tsv line {}: want 3 tab-separated columns",
                n + 1
            ));
            continue;
        };
        if !dirs.contains(function) {
            problems.push(format!(
                "events/expected.tsv line {}: no function {function}",
                n + 1
            ));
        }
        if !events.join(file).is_file() {
            problems.push(format!(
                "events/expected.tsv line {}: no file events/{file}",
                n + 1
            ));
        }
        let status = expected
            .parse::<u16>()
            .is_ok_and(|s| (100..600).contains(&s));
        let error = expected
            .strip_prefix("error:")
            .is_some_and(|e| !e.is_empty());
        if expected != "report" && !status && !error {
            problems.push(format!(
                "events/expected.tsv line {}: bad expectation {expected}",
                n + 1
            ));
        }
        invoked.insert(function.to_owned());
        used.insert(file.to_owned());
    }
    for dir in dirs.difference(&invoked) {
        problems.push(format!("{dir}: no row in events/expected.tsv"));
    }
    for e in std::fs::read_dir(&events)
        .expect("events/")
        .filter_map(|e| e.ok())
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && !used.contains(&name) {
            problems.push(format!("events/{name}: not used in events/expected.tsv"));
        }
    }
    assert!(
        problems.is_empty(),
        "inconsistencies:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_workspace_lists_every_function() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let all = manifest.contains("\"functions/*\"");
    for dir in function_dirs() {
        assert!(
            all || manifest.contains(&format!("\"functions/{dir}\"")),
            "functions/{dir} is not a workspace member"
        );
    }
}

/// The functions that can start a command or reach an MCP server, and so link the MCP client
/// and the command runners (`run_tools_http`). Every other function runs without them: a
/// route that never makes such a call gains nothing from them but megabytes and cold start.
const LINKS_TOOL_ADAPTERS: [(&str, &str); 5] = [
    (
        "agent-status",
        "checks the command runner and each MCP server",
    ),
    ("agent-approval", "runs the approved command or MCP call"),
    (
        "agent-exec-start",
        "starts a command an admin lowered to auto",
    ),
    ("agent-mcp-tools", "lists each server's tools"),
    ("agent-mcp-call", "calls a tool an admin lowered to auto"),
];

/// Parts of `shared` that reach the snapshot store or S3 workspaces: a table-only function
/// must not name them.
const REACH_OBJECTS: [&str; 11] = [
    "shared::agent",
    "shared::debug::export",
    "shared::cleanup",
    "shared::tools::approvals",
    "shared::tools::decide",
    "shared::adapters::runner",
    "shared::tools::recorded_run",
    "shared::tools::session",
    "shared::tools::status",
    "http::agent::query_call",
    "http::agent::body_call",
];

#[test]
fn table_only_functions_touch_no_object() {
    let mut problems = Vec::new();
    for dir in function_dirs() {
        let src = root().join("functions").join(&dir).join("src");
        let main = std::fs::read_to_string(src.join("main.rs")).expect("main.rs");
        // A function that reads and writes only the table (`run_table_http`) links no S3
        // client (1.1 MB of code with its checksums): its handler must not reach one.
        if !main.contains("run_table_http(") {
            continue;
        }
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
        for reach in REACH_OBJECTS {
            if lib.contains(reach) {
                problems.push(format!("{dir}: table-only, yet its handler uses {reach}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn functions_link_only_what_they_serve() {
    let linked: BTreeSet<&str> = LINKS_TOOL_ADAPTERS.iter().map(|(f, _)| *f).collect();
    let mut problems = Vec::new();
    for dir in function_dirs() {
        let main = std::fs::read_to_string(root().join("functions").join(&dir).join("src/main.rs"))
            .expect("main.rs");
        let manifest =
            std::fs::read_to_string(root().join("functions").join(&dir).join("Cargo.toml"))
                .expect("Cargo.toml");
        let wants = linked.contains(dir.as_str());
        if wants != main.contains("run_tools_http(") {
            problems.push(format!(
                "{dir}: main.rs must {}call shared::runtime::run_tools_http",
                if wants { "" } else { "not " }
            ));
        }
        // These build every adapter (and need the embedded store's SQLite to open one).
        for whole in [
            "ToolAdapters::linked",
            "Links::ALL",
            "AppContext::from_env",
            "from_config(",
        ] {
            if main.contains(whole) {
                problems.push(format!("{dir}: main.rs builds its context with {whole}"));
            }
        }
        if manifest.contains("embedded") {
            problems.push(format!(
                "{dir}: Cargo.toml turns on the embedded store (SQLite)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// No secret's value is in the template or in a function's configuration: each secret setting
/// is given only as `<NAME>_ARN` (the secret's name or ARN), read with the function's role.
#[test]
fn the_template_gives_secrets_by_name_never_by_value() {
    let text = std::fs::read_to_string(root().join("template.yaml")).expect("template.yaml");
    assert!(
        !text.contains("{{resolve:secretsmanager"),
        "a dynamic reference writes the value into the function's configuration"
    );
    for (setting, by_arn) in shared::config::SECRET_SETTINGS {
        let as_value = format!(" {setting}:");
        assert!(
            !text
                .lines()
                .any(|l| l.trim_start().starts_with(&as_value[1..])),
            "template.yaml sets {setting} itself; give {by_arn} instead"
        );
    }
}

/// Every `${Name}` in the step's state machine definition is substituted by the template
/// (DefinitionSubstitutions) and by the in-process executor alike.
#[test]
fn the_state_machine_substitutions_agree_with_the_template_and_the_executor() {
    let definition = shared::agent::step::flow::DEFINITION;
    let named: BTreeSet<&str> = definition
        .split("${")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .collect();
    assert!(named.contains("Partition"), "{named:?}");
    let local: BTreeSet<&str> = shared::agent::step::flow::LOCAL_SUBSTITUTIONS
        .iter()
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(named, local, "the in-process executor's substitutions");
    let text = std::fs::read_to_string(root().join("template.yaml")).expect("template.yaml");
    let block = text
        .split("DefinitionSubstitutions:\n")
        .nth(1)
        .expect("the state machine's DefinitionSubstitutions");
    let given: BTreeSet<&str> = block
        .lines()
        .take_while(|l| l.starts_with("        "))
        .filter_map(|l| l.trim().split_once(':').map(|(k, _)| k))
        .collect();
    assert_eq!(named, given, "the template's DefinitionSubstitutions");
}

/// `scripts/new-function` wires a route everywhere this file checks: a crate with the route,
/// the template's function with its event and preflight, an event and its row, its operation
/// in the OpenAPI document, local-api's manifest and route list. Bad input is refused before
/// anything is written.
#[test]
fn a_new_function_is_wired_in_one_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = |rel: &str| {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(root().join(rel), to).expect("copy");
    };
    for rel in [
        "template.yaml",
        "events/session-get.json",
        "events/expected.tsv",
        "local/Cargo.toml",
        "local/src/lib.rs",
        "openapi.json",
    ] {
        copy(rel);
    }
    let run = |args: &[&str]| {
        std::process::Command::new("python3")
            .arg(root().join("scripts/new-function"))
            .args(args)
            .arg("--root")
            .arg(dir.path())
            .output()
            .expect("python3 runs scripts/new-function")
    };
    let made = run(&["zz-example-get", "GET", "/api/zz-example/{exampleId}"]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );

    let functions = template_functions_in(dir.path());
    let f = functions
        .get("zz-example-get")
        .expect("the template declares it");
    assert_eq!(f.binary.as_deref(), Some("zz-example-get"));
    let path = "/api/zz-example/{exampleId}".to_owned();
    assert!(
        f.events.contains(&("GET".to_owned(), path.clone())),
        "{f:?}"
    );
    assert!(
        f.events.contains(&("OPTIONS".to_owned(), path.clone())),
        "{f:?}"
    );
    let read = |rel: &str| std::fs::read_to_string(dir.path().join(rel)).expect(rel);
    let lib = read("functions/zz-example-get/src/lib.rs");
    assert!(lib.contains("path: \"/api/zz-example/{exampleId}\"") && lib.contains("Method::GET"));
    assert!(read("functions/zz-example-get/src/main.rs")
        .contains("run_table_http(\"zz-example-get\", zz_example_get::handle)"));
    let event: serde_json::Value =
        serde_json::from_str(&read("events/zz-example-get.json")).expect("event JSON");
    assert_eq!(event["routeKey"], "GET /api/zz-example/{exampleId}");
    // Its event runs before the logout revokes the token the events share.
    let rows = read("events/expected.tsv");
    let row = rows
        .find("zz-example-get\tzz-example-get.json\t200\n")
        .expect("its row");
    assert!(row < rows.find("auth-logout\t").expect("the logout's row"));
    assert!(read("local/Cargo.toml")
        .contains("zz-example-get = { path = \"../functions/zz-example-get\" }"));
    let routes = read("local/src/lib.rs");
    let listed: Vec<&str> = routes
        .lines()
        .skip_while(|l| !l.contains("routes!["))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with(']'))
        .map(|l| l.trim().trim_end_matches(','))
        .collect();
    assert!(listed.contains(&"zz_example_get"), "{listed:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&read("openapi.json")).expect("openapi.json is JSON");
    let op = &doc["paths"]["/api/zz-example/{exampleId}"]["get"];
    assert_eq!(op["operationId"], "zz-example-get");
    assert_eq!(op["parameters"][0]["name"], "exampleId");
    let mut dangling = Vec::new();
    dangling_refs(&doc, op, &mut dangling);
    assert!(dangling.is_empty(), "{dangling:?}");
    assert!(
        listed.windows(2).all(|w| w[0] < w[1]),
        "kept sorted: {listed:?}"
    );

    // Another method on the same path: the path's one preflight is already routed.
    let put = run(&["zz-example-put", "PUT", "/api/zz-example/{exampleId}"]);
    assert!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    let functions = template_functions_in(dir.path());
    let put = functions.get("zz-example-put").expect("declared");
    assert_eq!(
        put.events,
        BTreeSet::from([("PUT".to_owned(), path.clone())]),
        "no second preflight"
    );
    let event: serde_json::Value =
        serde_json::from_str(&read("events/zz-example-put.json")).expect("event JSON");
    assert_eq!(event["body"], "{}");

    let before = read("template.yaml");
    let before_doc = read("openapi.json");
    for bad in [
        ["zz-example-get", "GET", "/api/other"].as_slice(),
        &["Note_Get", "GET", "/api/x"],
        &["zz-example-post", "FETCH", "/api/x"],
        &["zz-example-post", "POST", "/api/zz-example/{exampleId"],
        &["zz-example-again", "GET", "/api/zz-example/{exampleId}"],
    ] {
        let refused = run(bad);
        assert_eq!(refused.status.code(), Some(2), "{bad:?}");
        assert!(!String::from_utf8_lossy(&refused.stderr).is_empty());
    }
    assert_eq!(
        read("template.yaml"),
        before,
        "nothing written for bad input"
    );
    assert_eq!(
        read("openapi.json"),
        before_doc,
        "nothing documented for bad input"
    );
}

/// The operations `openapi.json` documents, as (METHOD, path).
fn documented_operations(doc: &serde_json::Value) -> BTreeSet<(String, String)> {
    const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];
    let paths = doc["paths"].as_object().expect("openapi.json has paths");
    paths
        .iter()
        .flat_map(|(path, item)| {
            METHODS
                .iter()
                .filter(|m| item.get(**m).is_some())
                .map(|m| (m.to_uppercase(), path.clone()))
        })
        .collect()
}

/// Every `$ref` in `value` that does not point at something in `doc`.
fn dangling_refs(doc: &serde_json::Value, value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(|r| r.as_str()) {
                let found = r
                    .strip_prefix('#')
                    .and_then(|pointer| doc.pointer(pointer))
                    .is_some();
                if !found {
                    out.push(r.to_owned());
                }
            }
            map.values().for_each(|v| dangling_refs(doc, v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| dangling_refs(doc, v, out)),
        _ => {}
    }
}

/// `openapi.json` documents every route local-api routes and the template declares, and no
/// other; each operation is named, answers something, and every reference in it resolves.
#[test]
fn the_openapi_document_is_every_route_and_only_those() {
    let doc: serde_json::Value =
        serde_json::from_str(local_api::OPENAPI).expect("openapi.json is JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    let documented = documented_operations(&doc);
    let routed: BTreeSet<(String, String)> = local_api::routes()
        .iter()
        .flat_map(|r| {
            r.spec
                .methods
                .iter()
                .map(|m| (m.to_string(), r.spec.path.to_owned()))
        })
        .collect();
    let declared: BTreeSet<(String, String)> = template_functions()
        .values()
        .flat_map(|f| f.events.iter().cloned())
        .filter(|(method, _)| method != "OPTIONS")
        .collect();
    let mut problems = Vec::new();
    for (m, p) in routed.difference(&documented) {
        problems.push(format!(
            "{m} {p}: routed by local-api, missing from openapi.json"
        ));
    }
    for (m, p) in documented.difference(&routed) {
        problems.push(format!(
            "{m} {p}: in openapi.json, but no function routes it"
        ));
    }
    for (m, p) in declared.symmetric_difference(&documented) {
        problems.push(format!("{m} {p}: template.yaml and openapi.json differ"));
    }
    let mut ids = BTreeSet::new();
    for (m, p) in &documented {
        let op = &doc["paths"][p][m.to_lowercase()];
        match op["operationId"].as_str() {
            Some(id) if ids.insert(id.to_owned()) => {}
            Some(id) => problems.push(format!("{m} {p}: operationId {id} is used twice")),
            None => problems.push(format!("{m} {p}: no operationId")),
        }
        let answers = op["responses"].as_object().map_or(0, |r| r.len());
        if answers == 0 {
            problems.push(format!("{m} {p}: no responses"));
        }
    }
    let mut dangling = Vec::new();
    dangling_refs(&doc, &doc, &mut dangling);
    problems.extend(dangling.into_iter().map(|r| format!("{r}: nothing there")));
    assert!(
        problems.is_empty(),
        "openapi.json:\n{}",
        problems.join("\n")
    );
}

/// Every metric the template's dashboard and alarms read is one the functions emit, and every
/// metric they emit is on the dashboard: a renamed metric cannot leave a graph or an alarm
/// silently empty.
#[test]
fn the_dashboard_and_alarms_read_the_metrics_the_functions_emit() {
    use shared::domain::intervention::Intervention as I;
    use shared::metrics::{Emitter, RequestFigures, StepFigures, Verdict};
    let emitter = Emitter {
        namespace: "BrowserAgent".into(),
        function: "agent-interact".into(),
        model: "m".into(),
        tenant_dimension: false,
    };
    let kinds = [
        I::FailedVerdict,
        I::Correction,
        I::ForcedAction,
        I::GaveUp,
        I::Refused,
        I::Loop,
        I::FinishRefused,
        I::AskUser,
        I::Confirmation,
        I::Blocker,
        I::CookieBanner,
    ];
    let mut emitted = BTreeSet::new();
    let mut names = |doc: serde_json::Value| {
        for d in doc["_aws"]["CloudWatchMetrics"]
            .as_array()
            .into_iter()
            .flatten()
        {
            for m in d["Metrics"].as_array().into_iter().flatten() {
                emitted.insert(m["Name"].as_str().unwrap_or_default().to_owned());
            }
        }
    };
    for verdict in [Verdict::Passed, Verdict::Failed, Verdict::Unconfirmed] {
        names(emitter.step(
            &StepFigures {
                tenant_id: "t",
                task_id: "x",
                step_index: 0,
                started_task: true,
                status: shared::domain::TaskStatus::Completed,
                usage: shared::domain::TokenUsage {
                    cost_micros: Some(1),
                    ..Default::default()
                },
                llm_calls: 1,
                llm_ms: 1,
                step_ms: 2,
                interventions: &kinds,
                verdict: Some(verdict),
            },
            0,
        ));
    }
    names(emitter.cleanup(&shared::domain::sweep::CleanupReport::default(), 0));
    names(emitter.request(
        "agent-interact",
        &RequestFigures {
            status: 502,
            code: Some("LLM_ERROR"),
            latency_ms: 1.0,
        },
        0,
    ));

    let t = template(&root());
    let resources = t["Resources"].as_hash().expect("resources");
    let mut read = BTreeSet::new();
    let mut on_dashboard = BTreeSet::new();
    for (_, r) in resources {
        let props = &r["Properties"];
        match r["Type"].as_str() {
            Some("AWS::CloudWatch::Dashboard") => {
                let body = props["DashboardBody"].as_str().expect("a !Sub body");
                let body = body
                    .replace("${AWS::Region}", "us-east-1")
                    .replace("${MetricsNamespace}", "BrowserAgent");
                let dash: serde_json::Value =
                    serde_json::from_str(&body).expect("the dashboard body is JSON");
                for w in dash["widgets"].as_array().expect("widgets") {
                    for row in w["properties"]["metrics"].as_array().expect("metrics") {
                        for cell in row.as_array().expect("row") {
                            match cell {
                                serde_json::Value::String(s) if s != "." && s != "BrowserAgent" => {
                                    on_dashboard.insert(s.clone());
                                }
                                serde_json::Value::Object(o) => {
                                    let e = o.get("expression").and_then(|e| e.as_str());
                                    if let Some(name) = e.and_then(|e| {
                                        e.split("MetricName=\"").nth(1)?.split('"').next()
                                    }) {
                                        on_dashboard.insert(name.to_owned());
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
            Some("AWS::CloudWatch::Alarm") if props["Namespace"].as_str() != Some("AWS/SQS") => {
                if let Some(m) = props["MetricName"].as_str() {
                    read.insert(m.to_owned());
                }
                for m in props["Metrics"].as_vec().into_iter().flatten() {
                    if let Some(name) = m["MetricStat"]["Metric"]["MetricName"].as_str() {
                        read.insert(name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    assert!(read.len() >= 4, "the alarms read {read:?}");
    read.extend(on_dashboard.iter().cloned());
    let unknown: Vec<_> = read.difference(&emitted).collect();
    assert!(unknown.is_empty(), "read but never emitted: {unknown:?}");
    let missing: Vec<_> = emitted.difference(&on_dashboard).collect();
    assert!(
        missing.is_empty(),
        "emitted but not on the dashboard: {missing:?}"
    );
}
