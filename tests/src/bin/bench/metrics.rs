//! The cost of metrics: building and writing one step's and one answer's Embedded Metric
//! Format line (what every step and every HTTP answer adds), with a sample of each.

use std::sync::Arc;
use std::time::Instant;

use shared::adapters::emf::EmfLines;
use shared::clock::SystemClock;
use shared::config::{MetricsConfig, DEFAULT_NAMESPACE};
use shared::domain::intervention::Intervention;
use shared::domain::{TaskStatus, TokenUsage};
use shared::ports::metrics::{Metrics, RequestFigures, StepFigures, Verdict};

pub fn emission(runs: usize) {
    let cfg = MetricsConfig {
        emf: true,
        namespace: DEFAULT_NAMESPACE.into(),
        tenant_dimension: false,
    };
    let written = Arc::new(std::sync::Mutex::new((0usize, String::new())));
    let sink = written.clone();
    // Writes go to a sink that keeps the byte count and the last line (not to the terminal,
    // whose speed is not the function's: Lambda reads standard output through a pipe).
    let emf = EmfLines::to(
        &cfg,
        "agent-interact",
        "gpt-5-mini",
        Arc::new(SystemClock),
        Box::new(move |line| {
            let mut s = sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.0 += line.len();
            s.1 = String::from_utf8_lossy(line).into_owned();
        }),
    );
    let kinds = [Intervention::Correction, Intervention::Confirmation];
    let step = StepFigures {
        tenant_id: "acme",
        task_id: "5f0c6f3e-4d7a-4a55-9a59-3b8f3f0f2b11",
        step_index: 3,
        started_task: false,
        status: TaskStatus::Executing,
        usage: TokenUsage {
            prompt_tokens: 6_420,
            completion_tokens: 96,
            cached_tokens: 4_864,
            cost_micros: Some(705),
            unpriced: false,
        },
        llm_calls: 2,
        llm_ms: 2_310,
        step_ms: 2_402,
        interventions: &kinds,
        verdict: Some(Verdict::Failed),
    };
    let answer = RequestFigures {
        status: 200,
        code: None,
        latency_ms: 2_402.7,
    };
    let n = runs.max(1) * 500;
    let started = Instant::now();
    for _ in 0..n {
        emf.step(&step);
    }
    let step_us = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    let (step_bytes, step_line) = {
        let s = written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (s.0 / n, s.1.clone())
    };
    let started = Instant::now();
    for _ in 0..n {
        emf.request("agent-interact", &answer);
    }
    let answer_us = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    let answer_line = written
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .1
        .clone();
    println!(
        "metrics: a step's EMF line {step_us:.1} µs ({step_bytes} bytes), an answer's {answer_us:.1} µs, \
         per step {:.1} µs (n={n})",
        step_us + answer_us
    );
    // The same lines written to a file (/dev/null): one write(2) each, as to Lambda's pipe.
    if let Ok(file) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::io::Write;
        let file = std::sync::Mutex::new(file);
        let written = EmfLines::to(
            &cfg,
            "agent-interact",
            "gpt-5-mini",
            Arc::new(SystemClock),
            Box::new(move |line| {
                if let Ok(mut f) = file.lock() {
                    let _ = f.write_all(line);
                }
            }),
        );
        let started = Instant::now();
        for _ in 0..n {
            written.step(&step);
            written.request("agent-interact", &answer);
        }
        println!(
            "  written to a file: {:.1} µs per step (both lines)",
            started.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
    println!("  step line:   {}", step_line.trim_end());
    println!("  answer line: {}", answer_line.trim_end());
}
