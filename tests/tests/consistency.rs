//! Every function is wired everywhere it must be: a `functions/*` crate with an HTTP route is
//! in local-api's table, `template.yaml` declares it with the same method and path (and its
//! CORS preflight), and `events/expected.tsv` invokes it at least once with event files that
//! exist. A forgotten entry anywhere fails here, naming the function.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// The template's function resources by code directory, read line by line (the template
/// keeps each HttpApi event's properties on one line, which this relies on and checks).
fn template_functions() -> BTreeMap<String, TemplateFunction> {
    let text = std::fs::read_to_string(root().join("template.yaml")).expect("template.yaml");
    let mut out = BTreeMap::new();
    let mut current: Option<(String, TemplateFunction)> = None;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let resource_start = line.starts_with("  ")
            && !line.starts_with("   ")
            && line.trim_end().ends_with(':')
            && !line.trim().starts_with('#');
        if resource_start {
            if let Some((dir, f)) = current.take() {
                out.insert(dir, f);
            }
            let name = line.trim().trim_end_matches(':').to_owned();
            if lines
                .peek()
                .is_some_and(|l| l.trim() == "Type: AWS::Serverless::Function")
            {
                current = Some((
                    String::new(),
                    TemplateFunction {
                        resource: name,
                        ..TemplateFunction::default()
                    },
                ));
            }
            continue;
        }
        let Some((dir, f)) = current.as_mut() else {
            continue;
        };
        let t = line.trim();
        if let Some(uri) = t.strip_prefix("CodeUri: functions/") {
            *dir = uri.trim_end_matches('/').to_owned();
        } else if let Some(b) = t.strip_prefix("Binary: ") {
            f.binary = Some(b.to_owned());
        } else if let Some(ty) = t.strip_prefix("Type: ") {
            f.event_types.insert(ty.to_owned());
            if ty == "HttpApi" {
                let props = lines.next().unwrap_or_default().trim();
                let method = between(props, "Method: ", ",");
                let path = between(props, "Path: ", " }").map(|p| p.trim_matches('"'));
                match (method, path) {
                    (Some(m), Some(p)) => {
                        f.events.insert((m.to_owned(), p.to_owned()));
                    }
                    _ => panic!(
                        "{}: an HttpApi event's properties must be one line \
                         `Properties: {{ ApiId: !Ref Api, Method: M, Path: P }}`, got `{props}`",
                        f.resource
                    ),
                }
            }
        }
    }
    if let Some((dir, f)) = current.take() {
        out.insert(dir, f);
    }
    out
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = &s[s.find(start)? + start.len()..];
    Some(rest[..rest.find(end)?].trim())
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
    for dir in function_dirs() {
        assert!(
            manifest.contains(&format!("\"functions/{dir}\"")),
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

/// The functions that read and write only the table (`run_table_http`): they link no S3
/// client (1.1 MB of code with its checksums). Any other function keeps the snapshot store.
const TABLE_ONLY: [&str; 19] = [
    "auth-login",
    "auth-logout",
    "auth-session",
    "preferences-get",
    "preferences-save",
    "pusher-auth",
    "knowledge-resolve",
    "session-archive",
    "session-by-domain",
    "session-get",
    "session-init",
    "session-latest",
    "session-list",
    "session-messages",
    "session-rename",
    "debug-logs",
    "task-resume",
    "agent-exec-get",
    "agent-exec-cancel",
];

/// Parts of `shared` that reach the snapshot store or S3 workspaces: a table-only function
/// must not name them.
const REACH_OBJECTS: [&str; 10] = [
    "shared::agent",
    "shared::debug::export",
    "shared::cleanup",
    "shared::tools::approvals",
    "shared::tools::decide",
    "shared::tools::runner",
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
        let wants = TABLE_ONLY.contains(&dir.as_str());
        if wants != main.contains("run_table_http(") {
            problems.push(format!(
                "{dir}: main.rs must {}call shared::runtime::run_table_http",
                if wants { "" } else { "not " }
            ));
        }
        if !wants {
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
