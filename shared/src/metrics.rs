//! Metrics as CloudWatch Embedded Metric Format documents: one JSON object per line that
//! CloudWatch Logs turns into metrics, so emitting one costs a line of output and no network
//! call. Two documents exist:
//!
//! - a step's ([`StepFigures`], written when a step is stored): steps, tasks started /
//!   completed / failed, model calls, prompt / completion / cached tokens, estimated cost,
//!   interventions by kind, verdicts by outcome, server, model and whole-step time;
//! - a request's ([`RequestFigures`], every HTTP answer): requests, 4xx and 5xx, model
//!   failures, latency, and the error count by contract code;
//! - a cleanup run's ([`CleanupReport`]): tasks expired and interrupted, items and snapshots
//!   deleted, failures, and whether the run ran out of time.
//!
//! Dimensions hold no tenant by default: `Function` and `Model` (steps), `Function` and
//! `Code` (errors), and an empty set that sums every function (what the template's alarms
//! watch). `METRICS_TENANT_DIMENSION=on` adds `Tenant` to a step's sets (one metric per tenant:
//! mind the cost of many tenants). Pure: the `metrics` port writes the line.

use serde_json::{json, Map, Value};

use crate::domain::intervention::Intervention;
use crate::domain::{TaskStatus, TokenUsage};

/// What one stored step counts.
#[derive(Debug, Clone)]
pub struct StepFigures<'a> {
    pub tenant_id: &'a str,
    pub task_id: &'a str,
    pub step_index: u32,
    /// The step started its task.
    pub started_task: bool,
    /// The task's status after the step.
    pub status: TaskStatus,
    pub usage: TokenUsage,
    pub llm_calls: u32,
    pub llm_ms: u64,
    /// The whole request, model time included.
    pub step_ms: u64,
    pub interventions: &'a [Intervention],
    /// The verdict on the previous action: passed, failed, or unconfirmed.
    pub verdict: Option<Verdict>,
}

/// A verdict's outcome, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Failed,
    Unconfirmed,
}

/// What one HTTP answer counts.
#[derive(Debug, Clone, Copy)]
pub struct RequestFigures<'a> {
    pub status: u16,
    /// The contract's error code of a 4xx or 5xx.
    pub code: Option<&'a str>,
    pub latency_ms: f64,
}

use crate::domain::sweep::CleanupReport;

/// Who emits: the namespace, the function's name, the model, and whether steps carry the
/// tenant as a dimension.
#[derive(Debug, Clone)]
pub struct Emitter {
    pub namespace: String,
    pub function: String,
    pub model: String,
    pub tenant_dimension: bool,
}

/// The error codes that mean the model failed.
const MODEL_FAILURE_CODES: &[&str] = &["LLM_ERROR"];

impl Emitter {
    /// The document of a stored step at `timestamp_ms`.
    pub fn step(&self, f: &StepFigures<'_>, timestamp_ms: i64) -> Value {
        let mut metrics = vec![
            ("Steps", "Count", 1.0),
            ("TasksStarted", "Count", flag(f.started_task)),
            (
                "TasksCompleted",
                "Count",
                flag(f.status == TaskStatus::Completed),
            ),
            ("TasksFailed", "Count", flag(f.status == TaskStatus::Failed)),
            ("ModelCalls", "Count", f64::from(f.llm_calls)),
            ("PromptTokens", "Count", f.usage.prompt_tokens as f64),
            (
                "CompletionTokens",
                "Count",
                f.usage.completion_tokens as f64,
            ),
            ("CachedTokens", "Count", f.usage.cached_tokens as f64),
            ("StepTime", "Milliseconds", f.step_ms as f64),
            ("ModelTime", "Milliseconds", f.llm_ms as f64),
            (
                "ServerTime",
                "Milliseconds",
                f.step_ms.saturating_sub(f.llm_ms) as f64,
            ),
        ];
        if let Some(usd) = f.usage.cost_usd() {
            metrics.push(("CostUSD", "None", usd));
        }
        if let Some(v) = f.verdict {
            let name = match v {
                Verdict::Passed => "VerdictPassed",
                Verdict::Failed => "VerdictFailed",
                Verdict::Unconfirmed => "VerdictUnconfirmed",
            };
            metrics.push((name, "Count", 1.0));
        }
        for kind in f.interventions {
            metrics.push((intervention_metric(*kind), "Count", 1.0));
        }
        let mut sets = vec![vec!["Function", "Model"], vec![]];
        let mut dims = vec![
            ("Function", self.function.as_str()),
            ("Model", self.model.as_str()),
        ];
        if self.tenant_dimension {
            sets.push(vec!["Function", "Model", "Tenant"]);
            dims.push(("Tenant", f.tenant_id));
        }
        let mut doc = document(
            &self.namespace,
            timestamp_ms,
            &[Directive {
                sets: &sets,
                metrics: &metrics,
            }],
            &dims,
        );
        // Properties (not metrics) for CloudWatch Logs Insights.
        if let Some(o) = doc.as_object_mut() {
            o.insert("TaskId".into(), json!(f.task_id));
            o.insert("StepIndex".into(), json!(f.step_index));
        }
        doc
    }

    /// The document of an HTTP answer of `route` at `timestamp_ms`.
    pub fn request(&self, route: &str, r: &RequestFigures<'_>, timestamp_ms: i64) -> Value {
        let class = |range: std::ops::Range<u16>| flag(range.contains(&r.status));
        let model_failure = r.code.is_some_and(|c| MODEL_FAILURE_CODES.contains(&c));
        let metrics = [
            ("Requests", "Count", 1.0),
            ("Errors4xx", "Count", class(400..500)),
            ("Errors5xx", "Count", class(500..600)),
            ("ModelFailures", "Count", flag(model_failure)),
            ("Latency", "Milliseconds", r.latency_ms),
        ];
        let totals: &[Vec<&str>] = &[vec!["Function"], vec![]];
        let by_code: &[Vec<&str>] = &[vec!["Function", "Code"], vec!["Code"]];
        let errors = [("Errors", "Count", 1.0)];
        let mut directives = vec![Directive {
            sets: totals,
            metrics: &metrics,
        }];
        let mut dims = vec![("Function", route)];
        if let Some(code) = r.code.filter(|_| r.status >= 400) {
            directives.push(Directive {
                sets: by_code,
                metrics: &errors,
            });
            dims.push(("Code", code));
        }
        document(&self.namespace, timestamp_ms, &directives, &dims)
    }

    /// The document of a cleanup run at `timestamp_ms`.
    pub fn cleanup(&self, f: &CleanupReport, timestamp_ms: i64) -> Value {
        let metrics = [
            ("TasksExpired", "Count", f.expired_tasks as f64),
            ("TasksInterrupted", "Count", f.interrupted_tasks as f64),
            ("ItemsDeleted", "Count", f.deleted_items as f64),
            ("SnapshotsDeleted", "Count", f.deleted_snapshots as f64),
            ("CleanupFailures", "Count", f.failures as f64),
            ("CleanupIncomplete", "Count", flag(f.incomplete)),
        ];
        document(
            &self.namespace,
            timestamp_ms,
            &[Directive {
                sets: &[vec!["Function"], vec![]],
                metrics: &metrics,
            }],
            &[("Function", self.function.as_str())],
        )
    }
}

/// The metric of an intervention kind (`InterventionLoop`, `InterventionConfirmation`, …).
pub fn intervention_metric(kind: Intervention) -> &'static str {
    match kind {
        Intervention::FailedVerdict => "InterventionFailedVerdict",
        Intervention::Correction => "InterventionCorrection",
        Intervention::ForcedAction => "InterventionForcedAction",
        Intervention::GaveUp => "InterventionGaveUp",
        Intervention::Refused => "InterventionRefused",
        Intervention::Loop => "InterventionLoop",
        Intervention::FinishRefused => "InterventionFinishRefused",
        Intervention::AskUser => "InterventionAskUser",
        Intervention::Confirmation => "InterventionConfirmation",
        Intervention::Blocker => "InterventionBlocker",
        Intervention::CookieBanner => "InterventionCookieBanner",
    }
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// Metrics (name, unit, value) under dimension sets.
struct Directive<'a> {
    sets: &'a [Vec<&'a str>],
    metrics: &'a [(&'a str, &'a str, f64)],
}

/// One EMF document: `_aws` names the metrics and their dimension sets; the dimension values
/// and metric values are members of the root.
fn document(
    namespace: &str,
    timestamp_ms: i64,
    directives: &[Directive<'_>],
    dims: &[(&str, &str)],
) -> Value {
    let mut root = Map::new();
    let mut listed = Vec::new();
    for d in directives {
        let names: Vec<Value> = d
            .metrics
            .iter()
            .map(|(name, unit, _)| json!({ "Name": name, "Unit": unit }))
            .collect();
        listed.push(json!({ "Namespace": namespace, "Dimensions": d.sets, "Metrics": names }));
        for (name, _, value) in d.metrics {
            root.insert((*name).to_owned(), json!(value));
        }
    }
    for (k, v) in dims {
        root.insert((*k).to_owned(), json!(v));
    }
    root.insert(
        "_aws".into(),
        json!({ "Timestamp": timestamp_ms, "CloudWatchMetrics": listed }),
    );
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emitter(tenant_dimension: bool) -> Emitter {
        Emitter {
            namespace: "BrowserAgent".into(),
            function: "agent-interact".into(),
            model: "gpt-5-mini".into(),
            tenant_dimension,
        }
    }

    fn figures<'a>(interventions: &'a [Intervention]) -> StepFigures<'a> {
        StepFigures {
            tenant_id: "t1",
            task_id: "task-1",
            step_index: 3,
            started_task: false,
            status: TaskStatus::Completed,
            usage: TokenUsage {
                prompt_tokens: 4_000,
                completion_tokens: 120,
                cached_tokens: 3_000,
                cost_micros: Some(1_215),
                unpriced: false,
            },
            llm_calls: 2,
            llm_ms: 1_800,
            step_ms: 1_950,
            interventions,
            verdict: Some(Verdict::Failed),
        }
    }

    /// Every metric a directive names has a number at the root, and every dimension of every
    /// set a string: what CloudWatch needs to extract the document.
    fn assert_well_formed(doc: &Value) {
        let aws = &doc["_aws"];
        assert!(aws["Timestamp"].is_i64());
        for d in aws["CloudWatchMetrics"].as_array().expect("directives") {
            assert!(d["Namespace"].is_string());
            for m in d["Metrics"].as_array().expect("metrics") {
                let name = m["Name"].as_str().expect("name");
                assert!(doc[name].is_number(), "{name} has no value in {doc}");
            }
            for set in d["Dimensions"].as_array().expect("sets") {
                for k in set.as_array().expect("set") {
                    let k = k.as_str().expect("key");
                    assert!(doc[k].is_string(), "dimension {k} has no value in {doc}");
                }
            }
        }
    }

    #[test]
    fn a_step_counts_its_tokens_cost_times_verdict_and_interventions_without_the_tenant() {
        let kinds = [Intervention::Correction, Intervention::Confirmation];
        let doc = emitter(false).step(&figures(&kinds), 1_700_000_000_000);
        assert_well_formed(&doc);
        assert_eq!(doc["Steps"], 1.0);
        assert_eq!(doc["TasksCompleted"], 1.0);
        assert_eq!(doc["TasksStarted"], 0.0);
        assert_eq!(doc["CachedTokens"], 3_000.0);
        assert_eq!(doc["CostUSD"], 0.001215);
        assert_eq!(doc["ServerTime"], 150.0);
        assert_eq!(doc["VerdictFailed"], 1.0);
        assert_eq!(doc["InterventionCorrection"], 1.0);
        assert_eq!(doc["InterventionConfirmation"], 1.0);
        assert!(doc.get("InterventionLoop").is_none());
        assert_eq!(doc["Model"], "gpt-5-mini");
        let text = doc.to_string();
        assert!(!text.contains("t1"), "no tenant by default: {text}");
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([["Function", "Model"], []])
        );
    }

    #[test]
    fn the_tenant_dimension_is_added_only_when_switched_on() {
        let doc = emitter(true).step(&figures(&[]), 0);
        assert_well_formed(&doc);
        assert_eq!(doc["Tenant"], "t1");
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"][2],
            json!(["Function", "Model", "Tenant"])
        );
    }

    #[test]
    fn a_cleanup_run_counts_what_it_deleted_and_interrupted() {
        let doc = emitter(false).cleanup(
            &CleanupReport {
                expired_tasks: 3,
                deleted_items: 40,
                deleted_snapshots: 9,
                interrupted_tasks: 2,
                failures: 1,
                incomplete: true,
            },
            0,
        );
        assert_well_formed(&doc);
        assert_eq!(
            (
                &doc["TasksExpired"],
                &doc["TasksInterrupted"],
                &doc["ItemsDeleted"]
            ),
            (&json!(3.0), &json!(2.0), &json!(40.0))
        );
        assert_eq!(
            (&doc["CleanupFailures"], &doc["CleanupIncomplete"]),
            (&json!(1.0), &json!(1.0))
        );
    }

    #[test]
    fn an_unpriced_step_has_no_cost_metric() {
        let mut f = figures(&[]);
        f.usage.cost_micros = None;
        let doc = emitter(false).step(&f, 0);
        assert!(doc.get("CostUSD").is_none());
        let names = doc["_aws"]["CloudWatchMetrics"][0]["Metrics"].to_string();
        assert!(!names.contains("CostUSD"), "{names}");
    }

    #[test]
    fn an_error_answer_counts_by_class_and_code_and_a_model_failure_apart() {
        let e = emitter(false);
        let ok = e.request(
            "session-list",
            &RequestFigures {
                status: 200,
                code: None,
                latency_ms: 12.5,
            },
            0,
        );
        assert_well_formed(&ok);
        assert_eq!(
            (&ok["Requests"], &ok["Errors4xx"], &ok["Errors5xx"]),
            (&json!(1.0), &json!(0.0), &json!(0.0))
        );
        assert_eq!(
            ok["_aws"]["CloudWatchMetrics"].as_array().map(Vec::len),
            Some(1)
        );
        let failed = e.request(
            "agent-interact",
            &RequestFigures {
                status: 502,
                code: Some("LLM_ERROR"),
                latency_ms: 30.0,
            },
            0,
        );
        assert_well_formed(&failed);
        assert_eq!(failed["Errors5xx"], 1.0);
        assert_eq!(failed["ModelFailures"], 1.0);
        assert_eq!(failed["Code"], "LLM_ERROR");
        assert_eq!(
            failed["_aws"]["CloudWatchMetrics"][1]["Dimensions"],
            json!([["Function", "Code"], ["Code"]])
        );
        let refused = e.request(
            "agent-interact",
            &RequestFigures {
                status: 429,
                code: Some("RATE_LIMITED"),
                latency_ms: 3.0,
            },
            0,
        );
        assert_eq!(
            (&refused["Errors4xx"], &refused["ModelFailures"]),
            (&json!(1.0), &json!(0.0))
        );
    }
}
