//! The step's state machine on two executors: for each scenario (continue, correct, blocker,
//! risky, pre-search, tool loop, retry, replay, error) the definition runs on the in-process
//! interpreter with the scenario's phase results, and a copy of it — every Task a Pass state
//! with the same results — runs on moto's Step Functions executor; both must take the same
//! path of states. Also: the definition's bounds agree with the code's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use shared::agent::step::flow::DEFINITION;
use shared::asl::{execute, Failure, Machine, Options, TaskRunner};

/// Per Task state, the results of its visits in order (the last repeats); `Err` fails it.
type Script = Vec<(&'static str, Vec<Result<Value, &'static str>>)>;

struct Scenario {
    name: &'static str,
    script: Script,
    /// Extra fields of the execution input (the tool loop counts its tools in the state).
    input: Value,
}

fn scenarios() -> Vec<Scenario> {
    let load = |is_new: bool, knowledge: bool| {
        (
            "Load",
            vec![Ok(
                json!({ "replay": false, "isNew": is_new, "knowledge": knowledge }),
            )],
        )
    };
    let verdict = |v: &str| ("Verify", vec![Ok(json!({ "verdict": v }))]);
    let persist = ("Persist", vec![Ok(json!({ "stored": true }))]);
    let respond = (
        "Respond",
        vec![Ok(json!({ "status": 200, "body": {}, "headers": {} }))],
    );
    let release = (
        "Release",
        vec![Ok(json!({ "status": 502, "body": {}, "headers": {} }))],
    );
    let ruled = |name: &'static str, decided: bool| (name, vec![Ok(json!({ "decided": decided }))]);
    let decide =
        |next: &str, calls: u32| ("Decide", vec![Ok(json!({ "next": next, "calls": calls }))]);
    let guard = |next: &str| ("Guard", vec![Ok(json!({ "next": next, "tools": 0 }))]);
    vec![
        Scenario {
            name: "continue",
            script: vec![
                load(true, false),
                verdict("none"),
                ruled("Plan", false),
                decide("guard", 1),
                guard("done"),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "correct",
            script: vec![
                load(false, false),
                verdict("failed"),
                ruled("Correct", true),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "blocker",
            script: vec![
                load(false, false),
                verdict("passed"),
                ruled("Plan", true),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "risky",
            script: vec![
                load(false, true),
                verdict("passed"),
                ruled("Plan", false),
                ("Knowledge", vec![Ok(json!({ "chunks": [] }))]),
                decide("guard", 1),
                guard("done"),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "pre-search",
            script: vec![
                load(true, false),
                verdict("none"),
                ruled("Plan", false),
                (
                    "Decide",
                    vec![
                        Ok(json!({ "next": "search", "calls": 1 })),
                        Ok(json!({ "next": "guard", "calls": 2 })),
                    ],
                ),
                ("WebSearch", vec![Ok(json!({ "search": { "query": "q" } }))]),
                guard("done"),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "tool loop",
            script: vec![
                load(false, false),
                verdict("passed"),
                ruled("Plan", false),
                decide("guard", 1),
                // The moto copy computes these from the state (see `pass_copy`).
                (
                    "Guard",
                    vec![
                        Ok(json!({ "next": "tool", "tools": 0 })),
                        Ok(json!({ "next": "tool", "tools": 1 })),
                        Ok(json!({ "next": "tool", "tools": 2 })),
                        Ok(json!({ "next": "tool", "tools": 3 })),
                    ],
                ),
                (
                    "RunTool",
                    vec![
                        Ok(json!({ "tools": 1 })),
                        Ok(json!({ "tools": 2 })),
                        Ok(json!({ "tools": 3 })),
                    ],
                ),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({ "tool": { "tools": 0 } }),
        },
        Scenario {
            name: "retry",
            script: vec![
                load(false, false),
                verdict("passed"),
                ruled("Plan", false),
                (
                    "Decide",
                    vec![
                        Ok(json!({ "next": "guard", "calls": 1 })),
                        Ok(json!({ "next": "guard", "calls": 2 })),
                    ],
                ),
                (
                    "Guard",
                    vec![
                        Ok(json!({ "next": "retry", "tools": 0 })),
                        Ok(json!({ "next": "done", "tools": 0 })),
                    ],
                ),
                persist.clone(),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "replay",
            script: vec![
                (
                    "Load",
                    vec![Ok(
                        json!({ "replay": true, "isNew": false, "knowledge": false }),
                    )],
                ),
                respond.clone(),
            ],
            input: json!({}),
        },
        Scenario {
            name: "error",
            script: vec![
                load(false, false),
                verdict("passed"),
                ruled("Plan", false),
                ("Decide", vec![Err("Step.Failed")]),
                release,
            ],
            input: json!({}),
        },
    ]
}

/// Answers each Task as the scenario says, visit by visit.
struct Scripted {
    script: HashMap<&'static str, Vec<Result<Value, &'static str>>>,
    visits: Mutex<HashMap<String, usize>>,
}

#[async_trait]
impl TaskRunner for Scripted {
    async fn run(&self, state: &str, _resource: &str, _input: Value) -> Result<Value, Failure> {
        let results = self
            .script
            .get(state)
            .unwrap_or_else(|| panic!("the scenario has no result for {state}"));
        let n = {
            let mut v = self.visits.lock().unwrap();
            let n = v.entry(state.to_owned()).or_default();
            *n += 1;
            *n - 1
        };
        match &results[n.min(results.len() - 1)] {
            Ok(v) => Ok(json!({ "Payload": v, "StatusCode": 200 })),
            Err(name) => Err(Failure::new(*name, "scripted failure")),
        }
    }
}

fn base_input(extra: &Value) -> Value {
    let mut input =
        json!({ "run": { "id": "r1", "tenant": "t1" }, "decide": { "next": "start", "calls": 0 } });
    for (k, v) in extra.as_object().into_iter().flatten() {
        input[k] = v.clone();
    }
    input
}

async fn in_process(s: &Scenario) -> Vec<String> {
    let machine = Machine::parse(DEFINITION, shared::agent::step::flow::LOCAL_SUBSTITUTIONS)
        .expect("definition");
    let runner = Scripted {
        script: s.script.iter().cloned().collect(),
        visits: Mutex::default(),
    };
    let e = execute(&machine, base_input(&s.input), &runner, &Options::default()).await;
    assert!(e.output.is_ok(), "{}: {:?}", s.name, e.output);
    assert!(
        e.largest_state < 4_096,
        "{}: state of {} bytes",
        s.name,
        e.largest_state
    );
    e.path
}

/// The definition with every Task a Pass state giving the scenario's (selected) result.
fn pass_copy(s: &Scenario) -> Value {
    let mut def: Value = serde_json::from_str(DEFINITION).unwrap();
    let script: HashMap<_, _> = s.script.iter().cloned().collect();
    fn visit(
        states: &mut serde_json::Map<String, Value>,
        script: &HashMap<&str, Vec<Result<Value, &str>>>,
        tool_loop: bool,
    ) {
        for (name, st) in states.iter_mut() {
            if st["Type"] == "Parallel" {
                for b in st["Branches"].as_array_mut().unwrap() {
                    visit(b["States"].as_object_mut().unwrap(), script, tool_loop);
                }
                continue;
            }
            if st["Type"] != "Task" {
                continue;
            }
            let o = st.as_object_mut().unwrap();
            let catch_next = o.get("Catch").map(|c| c[0]["Next"].clone());
            for k in ["Resource", "Parameters", "ResultSelector", "Retry", "Catch"] {
                o.remove(k);
            }
            o.insert("Type".into(), json!("Pass"));
            let first = script.get(name.as_str()).map(|r| r[0].clone());
            match first {
                Some(Err(error)) => {
                    o.insert(
                        "Result".into(),
                        json!({ "Error": error, "Cause": "scripted failure" }),
                    );
                    o.insert("ResultPath".into(), json!("$.error"));
                    o.insert("Next".into(), catch_next.unwrap());
                    o.remove("End");
                }
                Some(Ok(v)) => {
                    o.insert("Result".into(), v);
                }
                None => {
                    o.insert("Result".into(), json!({}));
                }
            }
            // Visits that differ are computed from the state (intrinsic functions).
            if tool_loop && name == "Guard" {
                o.remove("Result");
                o.insert(
                    "Parameters".into(),
                    json!({ "next": "tool", "tools.$": "$.tool.tools" }),
                );
            }
            if tool_loop && name == "RunTool" {
                o.remove("Result");
                o.insert(
                    "Parameters".into(),
                    json!({ "tools.$": "States.MathAdd($.guard.tools, 1)" }),
                );
            }
        }
    }
    let tool_loop = s.name == "tool loop";
    visit(def["States"].as_object_mut().unwrap(), &script, tool_loop);
    // Visits of Decide and Guard that differ (pre-search, retry) are told apart by the count
    // of model calls kept in the state.
    if s.name == "pre-search" || s.name == "retry" {
        let d = def["States"]["Decide"].as_object_mut().unwrap();
        d.remove("Result");
        let second = "guard";
        let first = if s.name == "pre-search" {
            "search"
        } else {
            "guard"
        };
        d.insert("Type".into(), json!("Choice"));
        d.remove("ResultPath");
        d.remove("Next");
        d.insert(
            "Choices".into(),
            json!([{ "Variable": "$.decide.calls", "NumericEquals": 0, "Next": "DecideFirst" }]),
        );
        d.insert("Default".into(), json!("DecideAgain"));
        let states = def["States"].as_object_mut().unwrap();
        states.insert("DecideFirst".into(), json!({ "Type": "Pass", "Result": { "next": first, "calls": 1 }, "ResultPath": "$.decide", "Next": "Answered" }));
        states.insert("DecideAgain".into(), json!({ "Type": "Pass", "Result": { "next": second, "calls": 2 }, "ResultPath": "$.decide", "Next": "Answered" }));
        if s.name == "retry" {
            states.insert("Guard".into(), json!({ "Type": "Pass", "Parameters": { "tools": 0, "calls.$": "$.decide.calls" }, "ResultPath": "$.guard", "Next": "GuardVerdict" }));
            states.insert("GuardVerdict".into(), json!({ "Type": "Choice", "Choices": [{ "Variable": "$.guard.calls", "NumericEquals": 1, "Next": "GuardRetry" }], "Default": "GuardDone" }));
            states.insert("GuardRetry".into(), json!({ "Type": "Pass", "Result": { "next": "retry", "tools": 0 }, "ResultPath": "$.guard", "Next": "Reviewed" }));
            states.insert("GuardDone".into(), json!({ "Type": "Pass", "Result": { "next": "done", "tools": 0 }, "ResultPath": "$.guard", "Next": "Reviewed" }));
        }
    }
    def
}

/// Names added by the copy to tell visits apart; they are not states of the definition.
fn helper_state(name: &str) -> bool {
    matches!(
        name,
        "DecideFirst" | "DecideAgain" | "GuardVerdict" | "GuardRetry" | "GuardDone"
    )
}

async fn sfn(client: &reqwest::Client, endpoint: &str, action: &str, body: Value) -> Value {
    let r = client
        .post(endpoint)
        .header("X-Amz-Target", format!("AWSStepFunctions.{action}"))
        .header("Content-Type", "application/x-amz-json-1.0")
        .header(
            "Authorization",
            "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/states/aws4_request, SignedHeaders=host, Signature=0",
        )
        .json(&body)
        .send()
        .await
        .expect("moto answers");
    let status = r.status();
    let v: Value = r.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{action}: {status} {v}");
    v
}

async fn on_moto(s: &Scenario, endpoint: &str) -> Vec<String> {
    let client = shared::adapters::tls::client();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let created = sfn(
        &client,
        endpoint,
        "CreateStateMachine",
        json!({
            "name": format!("interact-step-{unique}"),
            "definition": pass_copy(s).to_string(),
            "roleArn": "arn:aws:iam::123456789012:role/step",
            "type": "STANDARD",
        }),
    )
    .await;
    let arn = created["stateMachineArn"].as_str().unwrap().to_owned();
    let mut input = base_input(&s.input);
    if s.name == "tool loop" {
        input["guard"] = json!({ "tools": 0 });
    }
    let started = sfn(
        &client,
        endpoint,
        "StartExecution",
        json!({
            "stateMachineArn": arn, "name": format!("run-{unique}"), "input": input.to_string(),
        }),
    )
    .await;
    let exec = started["executionArn"].as_str().unwrap().to_owned();
    for _ in 0..200 {
        let d = sfn(
            &client,
            endpoint,
            "DescribeExecution",
            json!({ "executionArn": exec }),
        )
        .await;
        if d["status"] != "RUNNING" {
            assert_eq!(d["status"], "SUCCEEDED", "{}: {d}", s.name);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let history = sfn(
        &client,
        endpoint,
        "GetExecutionHistory",
        json!({ "executionArn": exec, "maxResults": 1000 }),
    )
    .await;
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("StateEntered"))
        })
        .filter_map(|e| {
            e["stateEnteredEventDetails"]["name"]
                .as_str()
                .map(str::to_owned)
        })
        .filter(|n| !helper_state(n))
        .collect()
}

/// The path with each Parallel's branch states in a fixed order (branches interleave).
fn normalised(mut path: Vec<String>) -> Vec<String> {
    let branch = [
        "KnowledgeWanted",
        "Knowledge",
        "NoKnowledge",
        "SearchWanted",
        "WebSearch",
        "NoSearch",
    ];
    let mut i = 0;
    while i < path.len() {
        if branch.contains(&path[i].as_str()) {
            let mut j = i;
            while j < path.len() && branch.contains(&path[j].as_str()) {
                j += 1;
            }
            path[i..j].sort();
            i = j;
        } else {
            i += 1;
        }
    }
    path
}

#[tokio::test]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn both_executors_take_the_same_path_in_every_scenario() {
    let endpoint =
        std::env::var("MOTO_ENDPOINT").expect("MOTO_ENDPOINT (scripts/test starts moto)");
    for s in scenarios() {
        let local = in_process(&s).await;
        let remote = on_moto(&s, &endpoint).await;
        assert_eq!(
            normalised(local.clone()),
            normalised(remote),
            "scenario {}",
            s.name
        );
        println!("{:<11} {}", s.name, local.join(" > "));
    }
}

#[test]
fn the_definition_bounds_agree_with_the_code() {
    let def: Value = serde_json::from_str(DEFINITION).unwrap();
    let tools = &def["States"]["ToolsLeft"]["Choices"][0]["Or"][1]["NumericLessThan"];
    assert_eq!(
        tools.as_u64(),
        Some(shared::agent::step::MAX_TOOLS_PER_REQUEST as u64)
    );
    let calls = &def["States"]["Reviewed"]["Choices"][1]["And"][1]["NumericLessThan"];
    assert_eq!(
        calls.as_u64(),
        Some(shared::agent::step::MAX_MODEL_CALLS as u64)
    );
    // Every Task but the last two is caught and released.
    for (name, s) in def["States"].as_object().unwrap() {
        if s["Type"] == "Task" && name != "Respond" && name != "Release" {
            assert_eq!(s["Catch"][0]["Next"], "Release", "{name}");
        }
    }
}
