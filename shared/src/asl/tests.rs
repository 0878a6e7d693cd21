//! The interpreter against the specification's examples: the flow of a machine, Pass and
//! Task input/output processing, Retry and Catch, Parallel, Fail, and the bounds.

use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::*;

/// Tasks by resource name: `add` sums `$.a` and `$.b`, `flaky` fails twice with
/// `Flaky.Error`, `broken` always fails with `Broken.Error`, `echo` returns its input.
#[derive(Default)]
struct Tasks {
    flaky_calls: AtomicU32,
}

#[async_trait]
impl TaskRunner for Tasks {
    async fn run(&self, _state: &str, resource: &str, input: Value) -> Result<Value, Failure> {
        match resource {
            "add" => Ok(json!(
                input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0)
            )),
            "flaky" => {
                let n = self.flaky_calls.fetch_add(1, Ordering::SeqCst);
                if n < 2 {
                    Err(Failure::new("Flaky.Error", format!("attempt {n}")))
                } else {
                    Ok(json!({ "attempts": n + 1 }))
                }
            }
            "broken" => Err(Failure::new("Broken.Error", "it is broken")),
            _ => Ok(input),
        }
    }
}

async fn run(definition: Value, input: Value) -> (Execution, Tasks) {
    let machine = Machine::parse(&definition.to_string(), &[]).expect("definition compiles");
    let tasks = Tasks::default();
    let opts = Options {
        retry_scale: 0.001,
        ..Options::default()
    };
    let e = execute(&machine, input, &tasks, &opts).await;
    (e, tasks)
}

#[tokio::test]
async fn the_specifications_example_machine_runs_its_states_in_order() {
    // "Example: Hello World", extended with a Task whose result is placed by ResultPath.
    let def = json!({
        "StartAt": "Hello",
        "States": {
            "Hello": { "Type": "Pass", "Result": "Hello", "ResultPath": "$.greeting", "Next": "Sum" },
            "Sum": {
                "Type": "Task", "Resource": "add",
                "InputPath": "$.numbers",
                "ResultPath": "$.sum",
                "Next": "World"
            },
            "World": { "Type": "Pass", "OutputPath": "$.sum", "End": true }
        }
    });
    let (e, _) = run(def, json!({ "numbers": { "a": 3, "b": 4 } })).await;
    assert_eq!(e.output.unwrap(), json!(7));
    assert_eq!(e.path, ["Hello", "Sum", "World"]);
    assert!(e.largest_state > 10);
}

#[tokio::test]
async fn parameters_result_selector_and_null_paths() {
    let def = json!({
        "StartAt": "T",
        "States": {
            "T": {
                "Type": "Task", "Resource": "echo",
                "Parameters": { "fixed": 1, "x.$": "$.in.x" },
                "ResultSelector": { "picked.$": "$.x", "also.$": "$.fixed" },
                "ResultPath": "$.out",
                "Next": "Discard"
            },
            "Discard": { "Type": "Pass", "Result": "ignored", "ResultPath": null, "Next": "Empty" },
            "Empty": { "Type": "Pass", "InputPath": null, "ResultPath": "$.was", "End": true }
        }
    });
    let (e, _) = run(def, json!({ "in": { "x": "X" } })).await;
    // "Empty" has no Parameters and no Result: its result is its (discarded, so empty) input.
    assert_eq!(
        e.output.unwrap(),
        json!({ "in": { "x": "X" }, "out": { "picked": "X", "also": 1 }, "was": {} })
    );
}

#[tokio::test]
async fn retry_backs_off_and_catch_routes_with_the_error() {
    let def = json!({
        "StartAt": "Flaky",
        "States": {
            "Flaky": {
                "Type": "Task", "Resource": "flaky",
                "Retry": [{ "ErrorEquals": ["Flaky.Error"], "IntervalSeconds": 1, "MaxAttempts": 2, "BackoffRate": 2.0 }],
                "ResultPath": "$.flaky",
                "Next": "Broken"
            },
            "Broken": {
                "Type": "Task", "Resource": "broken",
                "Retry": [{ "ErrorEquals": ["Other.Error"], "MaxAttempts": 5 }],
                "Catch": [
                    { "ErrorEquals": ["Nope"], "Next": "Unreached" },
                    { "ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.error", "Next": "Recovered" }
                ],
                "Next": "Unreached"
            },
            "Recovered": { "Type": "Succeed" },
            "Unreached": { "Type": "Fail", "Error": "Wrong", "Cause": "should not get here" }
        }
    });
    let (e, tasks) = run(def, json!({})).await;
    assert_eq!(tasks.flaky_calls.load(Ordering::SeqCst), 3);
    assert_eq!(
        e.output.unwrap(),
        json!({
            "flaky": { "attempts": 3 },
            "error": { "Error": "Broken.Error", "Cause": "it is broken" }
        })
    );
    assert_eq!(e.path, ["Flaky", "Broken", "Recovered"]);
}

#[tokio::test]
async fn retries_run_out_and_the_failure_ends_the_execution() {
    let def = json!({
        "StartAt": "Flaky",
        "States": {
            "Flaky": {
                "Type": "Task", "Resource": "flaky",
                "Retry": [{ "ErrorEquals": ["States.ALL"], "MaxAttempts": 1 }],
                "End": true
            }
        }
    });
    let (e, tasks) = run(def, json!({})).await;
    assert_eq!(tasks.flaky_calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        e.output.unwrap_err(),
        Failure::new("Flaky.Error", "attempt 1")
    );
}

#[tokio::test]
async fn parallel_branches_give_an_array_and_a_failing_branch_is_caught() {
    let def = json!({
        "StartAt": "Both",
        "States": {
            "Both": {
                "Type": "Parallel",
                "Branches": [
                    { "StartAt": "Add", "States": { "Add": { "Type": "Task", "Resource": "add", "End": true } } },
                    { "StartAt": "Which", "States": {
                        "Which": { "Type": "Choice", "Choices": [
                            { "Variable": "$.fail", "BooleanEquals": true, "Next": "Fails" }
                        ], "Default": "Echo" },
                        "Echo": { "Type": "Pass", "Parameters": { "b.$": "$.b" }, "End": true },
                        "Fails": { "Type": "Fail", "Error": "Branch.Failed", "Cause": "asked to" }
                    } }
                ],
                "ResultPath": "$.results",
                "Catch": [{ "ErrorEquals": ["Branch.Failed"], "ResultPath": "$.error", "Next": "Done" }],
                "Next": "Done"
            },
            "Done": { "Type": "Succeed" }
        }
    });
    let (e, _) = run(def.clone(), json!({ "a": 1, "b": 2, "fail": false })).await;
    assert_eq!(e.output.unwrap()["results"], json!([3, { "b": 2 }]));
    assert_eq!(e.path, ["Both", "Add", "Which", "Echo", "Done"]);
    let (e, _) = run(def, json!({ "a": 1, "b": 2, "fail": true })).await;
    assert_eq!(e.output.unwrap()["error"]["Error"], "Branch.Failed");
}

#[tokio::test]
async fn no_choice_matched_and_endless_loops_are_errors() {
    let def = json!({
        "StartAt": "C",
        "States": { "C": { "Type": "Choice", "Choices": [
            { "Variable": "$.n", "NumericEquals": 1, "Next": "C" }
        ] } }
    });
    let (e, _) = run(def.clone(), json!({ "n": 2 })).await;
    assert_eq!(e.output.unwrap_err().error, "States.NoChoiceMatched");
    let (e, _) = run(def, json!({ "n": 1 })).await;
    assert_eq!(e.output.unwrap_err().error, "States.Runtime");
    assert_eq!(e.path.len(), Options::default().max_transitions);
}

#[test]
fn definitions_outside_the_subset_are_refused() {
    let bad = [
        json!({ "StartAt": "M", "States": { "M": { "Type": "Map", "End": true } } }),
        json!({ "StartAt": "W", "States": { "W": { "Type": "Wait", "Seconds": 1, "End": true } } }),
        json!({ "StartAt": "T", "States": { "T": { "Type": "Task", "Resource": "x", "TimeoutSeconds": 3, "End": true } } }),
        json!({ "StartAt": "P", "States": { "P": { "Type": "Pass", "Next": "Nowhere" } } }),
        json!({ "StartAt": "P", "States": { "P": { "Type": "Pass" } } }),
        json!({ "StartAt": "Q", "States": { "P": { "Type": "Succeed" } } }),
        json!({ "StartAt": "T", "States": { "T": { "Type": "Task", "Resource": "x", "End": true,
            "Retry": [{ "ErrorEquals": ["States.ALL", "X"] }] } } }),
    ];
    for def in bad {
        assert!(Machine::parse(&def.to_string(), &[]).is_err(), "{def}");
    }
    let def = r#"{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${Arn}","End":true}}}"#;
    let m = Machine::parse(def, &[("Arn", "arn:aws:lambda:x")]).unwrap();
    assert!(
        matches!(&m.states["T"].kind, states::Kind::Task { resource } if resource == "arn:aws:lambda:x")
    );
}
