//! Running a compiled machine: states in order, Parallel branches concurrently, Retry with
//! backoff, Catch, and a bound on transitions (a definition with a loop cannot run for ever).

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::states::{Kind, Machine, Retrier, State};
use super::Failure;

/// Runs the machine's Task states.
#[async_trait]
pub trait TaskRunner: Send + Sync {
    /// Runs `resource` with its effective input (after `InputPath` and `Parameters`).
    async fn run(&self, state: &str, resource: &str, input: Value) -> Result<Value, Failure>;
}

/// Limits and knobs of an execution.
#[derive(Debug, Clone)]
pub struct Options {
    /// States entered at most (all branches together).
    pub max_transitions: usize,
    /// Retry intervals are multiplied by this (tests shorten them).
    pub retry_scale: f64,
    /// The execution's name (`$$.Execution.Name`).
    pub name: String,
    /// The execution's time limit when longer than the definition's `TimeoutSeconds`.
    pub at_least: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_transitions: 500,
            retry_scale: 1.0,
            name: "execution".into(),
            at_least: None,
        }
    }
}

/// What an execution did.
#[derive(Debug)]
pub struct Execution {
    pub output: Result<Value, Failure>,
    /// The states entered, in order; a Parallel's branches follow it, branch by branch.
    pub path: Vec<String>,
    /// The largest state input or output seen, serialized (bytes).
    pub largest_state: usize,
}

struct Run<'a> {
    runner: &'a dyn TaskRunner,
    opts: &'a Options,
    context: Value,
    seen: Mutex<(usize, usize)>,
}

/// Bytes of `v` serialized, without building the text.
fn size_of(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Runs `machine` on `input`.
pub async fn execute(
    machine: &Machine,
    input: Value,
    runner: &dyn TaskRunner,
    opts: &Options,
) -> Execution {
    let run = Run {
        runner,
        opts,
        context: json!({ "Execution": { "Name": opts.name, "Input": input.clone() } }),
        seen: Mutex::new((0, 0)),
    };
    let mut path = Vec::new();
    let work = run.machine(machine, input, &mut path);
    let output = match machine
        .timeout
        .map(|t| t.max(opts.at_least.unwrap_or_default()))
    {
        Some(t) => tokio::time::timeout(t, work)
            .await
            .unwrap_or_else(|_| Err(Failure::new("States.Timeout", "the execution timed out"))),
        None => work.await,
    };
    let largest_state = run.seen.lock().map(|s| s.1).unwrap_or(0);
    Execution {
        output,
        path,
        largest_state,
    }
}

fn matches(names: &[String], error: &str, task: bool) -> bool {
    names.iter().any(|n| {
        n == "States.ALL"
            || n == error
            || (n == "States.TaskFailed" && task && error != "States.Timeout")
    })
}

fn delay(r: &Retrier, attempt: u32, scale: f64) -> Duration {
    let secs = r.interval.as_secs_f64() * r.backoff.powi(attempt as i32) * scale;
    let d = Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX);
    r.max_delay.map_or(d, |m| d.min(m.mul_f64(scale)))
}

type Boxed<'a> = Pin<Box<dyn Future<Output = Result<Value, Failure>> + Send + 'a>>;

impl Run<'_> {
    fn enter(&self, state: &Value) -> Result<(), Failure> {
        let mut seen = self
            .seen
            .lock()
            .map_err(|_| Failure::new("States.Runtime", "execution state poisoned"))?;
        seen.0 += 1;
        seen.1 = seen.1.max(size_of(state));
        if seen.0 > self.opts.max_transitions {
            return Err(Failure::new(
                "States.Runtime",
                format!("more than {} states entered", self.opts.max_transitions),
            ));
        }
        Ok(())
    }

    fn note(&self, state: &Value) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.1 = seen.1.max(size_of(state));
        }
    }

    /// Runs a machine (or branch) from its start to its end.
    fn machine<'s>(
        &'s self,
        machine: &'s Machine,
        mut data: Value,
        path: &'s mut Vec<String>,
    ) -> Boxed<'s> {
        Box::pin(async move {
            let mut name = machine.start_at.as_str();
            loop {
                let state = machine
                    .states
                    .get(name)
                    .ok_or_else(|| Failure::new("States.Runtime", format!("no state {name}")))?;
                self.enter(&data)?;
                path.push(name.to_owned());
                let (next, output) = match self.state(name, state, data.clone(), path).await {
                    Ok(r) => r,
                    Err(f) => {
                        let task = matches!(state.kind, Kind::Task { .. } | Kind::Parallel { .. });
                        match state
                            .catch
                            .iter()
                            .find(|c| matches(&c.errors, &f.error, task))
                        {
                            Some(c) => {
                                let info = json!({ "Error": f.error, "Cause": f.cause });
                                (Some(c.next.as_str()), c.result_path.place(data, info)?)
                            }
                            None => return Err(f),
                        }
                    }
                };
                self.note(&output);
                match next {
                    Some(n) => {
                        name = n;
                        data = output;
                    }
                    None => return Ok(output),
                }
            }
        })
    }

    /// Runs one state: the next state's name (none at the end) and the output.
    async fn state<'s>(
        &'s self,
        name: &str,
        state: &'s State,
        raw: Value,
        path: &mut Vec<String>,
    ) -> Result<(Option<&'s str>, Value), Failure> {
        let ctx = &self.context;
        let input = state.input_path.apply(raw.clone(), ctx)?;
        let effective = |input: &Value| match &state.parameters {
            Some(t) => t.render(input, ctx),
            None => Ok(input.clone()),
        };
        let result = match &state.kind {
            Kind::Choice { choices, default } => {
                let mut chosen = default.as_deref();
                for (rule, next) in choices {
                    if rule.holds(&input, ctx)? {
                        chosen = Some(next);
                        break;
                    }
                }
                let next = chosen.ok_or_else(|| {
                    Failure::new(
                        "States.NoChoiceMatched",
                        format!("{name}: no choice matched"),
                    )
                })?;
                return Ok((Some(next), state.output_path.apply(input, ctx)?));
            }
            Kind::Succeed => return Ok((None, state.output_path.apply(input, ctx)?)),
            Kind::Fail { error, cause } => return Err(Failure::new(error, cause)),
            Kind::Pass { result } => match result {
                Some(r) => r.clone(),
                None => effective(&input)?,
            },
            Kind::Task { resource } => {
                let input = effective(&input)?;
                let mut counts = vec![0u32; state.retry.len()];
                loop {
                    match self.runner.run(name, resource, input.clone()).await {
                        Ok(v) => break v,
                        Err(f) => self.backoff(state, &mut counts, f).await?,
                    }
                }
            }
            Kind::Parallel { branches } => {
                let input = effective(&input)?;
                let mut counts = vec![0u32; state.retry.len()];
                loop {
                    match self.parallel(branches, &input, path).await {
                        Ok(v) => break v,
                        Err(f) => self.backoff(state, &mut counts, f).await?,
                    }
                }
            }
        };
        let result = match &state.result_selector {
            Some(t) => t.render(&result, ctx)?,
            None => result,
        };
        let output = state.result_path.place(raw, result)?;
        Ok((state.next.as_deref(), state.output_path.apply(output, ctx)?))
    }

    /// Runs the branches at once; the first failure fails the state.
    async fn parallel(
        &self,
        branches: &[Machine],
        input: &Value,
        path: &mut Vec<String>,
    ) -> Result<Value, Failure> {
        let mut paths = vec![Vec::new(); branches.len()];
        let runs = branches
            .iter()
            .zip(paths.iter_mut())
            .map(|(b, p)| self.machine(b, input.clone(), p));
        let outputs = futures::future::try_join_all(runs).await;
        path.extend(paths.into_iter().flatten());
        Ok(Value::Array(outputs?))
    }

    /// Waits before the next attempt when a retrier of the state takes `f` and has attempts
    /// left; otherwise gives the failure back.
    async fn backoff(&self, state: &State, counts: &mut [u32], f: Failure) -> Result<(), Failure> {
        let Some(i) = state
            .retry
            .iter()
            .position(|r| matches(&r.errors, &f.error, true))
        else {
            return Err(f);
        };
        let r = &state.retry[i];
        if counts[i] >= r.max_attempts {
            return Err(f);
        }
        tokio::time::sleep(delay(r, counts[i], self.opts.retry_scale)).await;
        counts[i] += 1;
        Ok(())
    }
}
