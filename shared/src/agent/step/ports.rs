//! What a step uses, borrowed for one request from what the function assembled at start
//! (`AppContext::step`): its ports — the store, the snapshots, the clock, the models,
//! knowledge, web search, realtime, the state machine's executions and metrics — and the settings it
//! reads. The step's phases take this set and nothing else.

use secrecy::SecretString;

use crate::clock::Clock;
use crate::config::{AgentConfig, Retention};
use crate::ports::executions::Executions;
use crate::ports::knowledge::Knowledge;
use crate::ports::llm::Llm;
use crate::ports::metrics::Metrics;
use crate::ports::realtime::Realtime;
use crate::ports::web_search::WebSearch;
use crate::ports::{SnapshotStore, Store};

/// The ports and settings of a step.
#[derive(Clone, Copy)]
pub struct StepPorts<'a> {
    pub store: &'a dyn Store,
    pub snapshots: &'a dyn SnapshotStore,
    pub clock: &'a dyn Clock,
    /// The model; `None` when no key is configured (the step is refused).
    pub llm: Option<&'a dyn Llm>,
    /// The model for verdicts (the main model when no other is set).
    pub verifier: Option<&'a dyn Llm>,
    pub knowledge: Option<&'a dyn Knowledge>,
    pub search: Option<&'a dyn WebSearch>,
    pub realtime: Option<&'a dyn Realtime>,
    /// Runs the step's state machine when the orchestrator is Step Functions.
    pub executions: &'a dyn Executions,
    pub agent: &'a AgentConfig,
    pub retention: &'a Retention,
    /// Keys the fingerprints of typed secrets.
    pub fingerprint_key: &'a SecretString,
    /// Where a stored step's figures go.
    pub metrics: &'a dyn Metrics,
}
