//! The in-process executor's cost: the step's definition run with Task states that do no
//! work (the "continue" path: 9 states), against the same nine phase calls made directly.

use std::time::Instant;

use async_trait::async_trait;
use serde_json::{json, Value};
use shared::agent::step::flow::DEFINITION;
use shared::asl::{execute, Failure, Machine, Options, TaskRunner};

use super::stats;

/// Each phase's summary on the "continue" path of a new task.
fn summary(state: &str) -> Value {
    match state {
        "Load" => json!({ "replay": false, "isNew": true, "knowledge": false }),
        "Verify" => json!({ "verdict": "none" }),
        "Plan" | "Correct" => json!({ "decided": false }),
        "Decide" => json!({ "next": "guard", "calls": 1 }),
        "Guard" => json!({ "next": "done", "tools": 0 }),
        "Persist" => json!({ "stored": true }),
        _ => {
            json!({ "status": 200, "body": { "thought": "t", "action": "click(1)" }, "headers": {} })
        }
    }
}

struct Idle;

#[async_trait]
impl TaskRunner for Idle {
    async fn run(&self, state: &str, _resource: &str, _input: Value) -> Result<Value, Failure> {
        Ok(json!({ "Payload": summary(state), "StatusCode": 200 }))
    }
}

pub async fn overhead(runs: usize) {
    let machine = Machine::parse(DEFINITION, shared::agent::step::flow::LOCAL_SUBSTITUTIONS)
        .expect("definition");
    let input =
        json!({ "run": { "id": "r", "tenant": "t" }, "decide": { "next": "start", "calls": 0 } });
    let n = runs.max(200) * 10;
    let (mut through, mut direct) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut states, mut largest) = (0, 0);
    for _ in 0..n {
        let t = Instant::now();
        let e = execute(&machine, input.clone(), &Idle, &Options::default()).await;
        through.push(t.elapsed().as_secs_f64() * 1000.0);
        states = e.path.len();
        largest = largest.max(e.largest_state);
        let t = Instant::now();
        for s in [
            "Load", "Verify", "Plan", "Decide", "Guard", "Persist", "Respond",
        ] {
            std::hint::black_box(Idle.run(s, "phase", input.clone()).await.ok());
        }
        direct.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!("step machine, continue path: {states} states entered, largest state {largest} bytes");
    stats("step machine: interpreter (phases doing nothing)", through);
    stats("step machine: the same phases called directly", direct);
}
