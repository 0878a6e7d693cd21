//! `AppContext`: what a function builds once per container (configuration, store, clock,
//! token service, password hasher) and hands to every request. Nothing here does network
//! I/O at start-up, so a cold start stays in single-digit milliseconds.

use std::sync::Arc;

use crate::adapters::dynamo::DynamoTable;
use crate::adapters::http_knowledge::HttpKnowledge;
use crate::adapters::not_linked::NotLinked;
use crate::adapters::openai::OpenAiLlm;
use crate::adapters::runner::runner_for;
use crate::adapters::snapshots::S3SnapshotStore;
use crate::adapters::tavily::TavilySearch;
use crate::adapters::workspace::WorkspaceOpener;
use crate::adapters::TableStore;
use crate::auth::{PasswordHasher, TokenService};
use crate::clock::{Clock, SystemClock};
use crate::config::{AwsStoreConfig, Config, ConfigError, StoreConfig};
use crate::ports::knowledge::Knowledge;
use crate::ports::llm::Llm;
use crate::ports::mcp::McpClient;
use crate::ports::runner::CommandRunner;
use crate::ports::web_search::WebSearch;
use crate::ports::{SnapshotStore, Store, StoreError};
use crate::realtime::{PusherRealtime, Realtime};
use crate::tools::runner::RunEnv;
use crate::tools::status::StatusCache;

/// Why a function could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// Everything a handler needs, built once.
pub struct AppContext {
    pub config: Config,
    pub store: Arc<dyn Store>,
    pub snapshots: Arc<dyn SnapshotStore>,
    pub clock: Arc<dyn Clock>,
    pub tokens: TokenService,
    pub passwords: PasswordHasher,
    /// The model; `None` when no key is configured.
    pub llm: Option<Arc<dyn Llm>>,
    /// The model for verdicts (`LLM_VERIFY_MODEL`; the main model when unset).
    pub verifier: Option<Arc<dyn Llm>>,
    /// The knowledge extraction service; `None` when unconfigured.
    pub knowledge: Option<Arc<dyn Knowledge>>,
    /// Web search; `None` when unconfigured (the step goes without).
    pub search: Option<Arc<dyn WebSearch>>,
    /// Realtime events; `None` when unconfigured (nothing is sent).
    pub realtime: Option<Arc<dyn Realtime>>,
    /// Opens agent-tool workspaces by root (local directories, S3 prefixes).
    pub workspaces: WorkspaceOpener,
    /// Recent workspace-storage checks of the agent tools' status route.
    pub tools_status: StatusCache,
    /// Where approved commands run.
    pub runner: Arc<dyn CommandRunner>,
    /// The tenants' MCP servers, reached over Streamable HTTP.
    pub mcp: Arc<dyn McpClient>,
}

impl std::fmt::Debug for AppContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppContext")
            .field("config", &self.config.summary())
            .finish_non_exhaustive()
    }
}

impl AppContext {
    /// Builds the stores named by `config` with the system clock, and every adapter.
    pub async fn from_config(config: Config) -> Result<Self, StartupError> {
        Self::build(config, ToolAdapters::linked).await
    }

    /// A function's context: from the environment, with the agent tools' adapters `tools`
    /// makes. A function that passes [`ToolAdapters::not_linked`] does not link them.
    pub async fn for_function(tools: ToolsFactory) -> Result<Self, StartupError> {
        Self::build(Config::from_env()?, tools).await
    }

    async fn build(config: Config, tools: ToolsFactory) -> Result<Self, StartupError> {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let stores = open_stores(&config.store, clock.clone()).await?;
        Ok(Self::with_tools(config, stores, clock, tools))
    }

    /// Assembles a context from ready parts (tests inject a manual clock or shared stores).
    pub fn with_parts(config: Config, stores: Stores, clock: Arc<dyn Clock>) -> Self {
        Self::with_tools(config, stores, clock, ToolAdapters::linked)
    }

    fn with_tools(
        config: Config,
        stores: Stores,
        clock: Arc<dyn Clock>,
        tools: ToolsFactory,
    ) -> Self {
        let tokens = TokenService::new(&config.jwt);
        let llm = config
            .agent
            .llm
            .clone()
            .map(|c| Arc::new(OpenAiLlm::new(c)) as Arc<dyn Llm>);
        let verifier = match (&config.agent.llm, &config.agent.verify_model) {
            (Some(c), Some(model)) if *model != c.model => {
                let mut c = c.clone();
                c.model = model.clone();
                Some(Arc::new(OpenAiLlm::new(c)) as Arc<dyn Llm>)
            }
            _ => llm.clone(),
        };
        let knowledge = config.agent.knowledge.as_ref().map(|k| {
            Arc::new(HttpKnowledge::new(
                k.base_url.clone(),
                k.token.clone(),
                std::time::Duration::from_millis(k.timeout_ms),
            )) as Arc<dyn Knowledge>
        });
        let search = config
            .agent
            .search
            .clone()
            .map(|c| Arc::new(TavilySearch::new(c)) as Arc<dyn WebSearch>);
        let realtime = config
            .realtime
            .clone()
            .map(|r| Arc::new(PusherRealtime::new(r)) as Arc<dyn Realtime>);
        let workspaces = WorkspaceOpener {
            dir: config.tools.workspaces_dir.clone(),
            s3: stores.s3.clone(),
        };
        let ToolAdapters { runner, mcp } = tools(
            &config,
            RunEnv {
                store: stores.store.clone(),
                realtime: realtime.clone(),
                clock: clock.clone(),
                retention_days: config.tools.audit_retention_days,
                output_cap: config.tools.exec_output_bytes,
            },
            &workspaces,
        );
        Self {
            config,
            store: stores.store,
            snapshots: stores.snapshots,
            clock,
            tokens,
            passwords: PasswordHasher::new(),
            llm,
            verifier,
            knowledge,
            search,
            realtime,
            workspaces,
            tools_status: StatusCache::default(),
            runner,
            mcp,
        }
    }
}

/// The agent tools' adapters that bring large dependencies (the MCP SDK, the Lambda client).
pub struct ToolAdapters {
    pub runner: Arc<dyn CommandRunner>,
    pub mcp: Arc<dyn McpClient>,
}

/// Makes a context's [`ToolAdapters`]. Each binary names one; the linker drops the other.
pub type ToolsFactory = fn(&Config, RunEnv, &WorkspaceOpener) -> ToolAdapters;

impl ToolAdapters {
    /// The MCP client and the configured command runner (agent-tool routes, local-api).
    pub fn linked(config: &Config, env: RunEnv, opener: &WorkspaceOpener) -> Self {
        Self {
            runner: runner_for(&config.tools.exec_runner, env, opener.clone()),
            mcp: Arc::new(crate::adapters::mcp::RmcpClient),
        }
    }

    /// Stand-ins that refuse (every function that serves no agent-tool route).
    pub fn not_linked(_: &Config, _: RunEnv, _: &WorkspaceOpener) -> Self {
        Self {
            runner: Arc::new(NotLinked),
            mcp: Arc::new(NotLinked),
        }
    }
}

/// The table store and the snapshot store that go with it.
#[derive(Clone)]
pub struct Stores {
    pub store: Arc<dyn Store>,
    pub snapshots: Arc<dyn SnapshotStore>,
    /// The S3 client (DynamoDB/S3 stores only), for S3 workspaces.
    pub s3: Option<aws_sdk_s3::Client>,
}

/// Opens the stores a configuration names. For DynamoDB/S3 the SDK clients are built here,
/// once per container; nothing is sent over the network.
/// The embedded and memory stores exist only in builds with the `embedded` feature (local-api,
/// agent-admin, the tests; not the functions' release builds).
pub async fn open_stores(cfg: &StoreConfig, clock: Arc<dyn Clock>) -> Result<Stores, StoreError> {
    Ok(match cfg {
        #[cfg(not(feature = "embedded"))]
        StoreConfig::Embedded { .. } | StoreConfig::Memory => {
            return Err(StoreError::Internal(
                "STORE=embedded and STORE=memory need a build with the embedded store \
                 (local-api, or `--features shared/embedded`); functions in the cloud use \
                 STORE=dynamodb"
                    .into(),
            ))
        }
        #[cfg(feature = "embedded")]
        StoreConfig::Embedded { data_dir } => Stores {
            store: Arc::new(TableStore::embedded(data_dir, clock)?),
            snapshots: Arc::new(crate::adapters::snapshots::DirSnapshotStore::new(
                &data_dir.join("blobs"),
            )),
            s3: None,
        },
        #[cfg(feature = "embedded")]
        StoreConfig::Memory => Stores {
            store: Arc::new(TableStore::memory(clock)?),
            snapshots: Arc::new(crate::adapters::snapshots::MemorySnapshotStore::default()),
            s3: None,
        },
        StoreConfig::DynamoDb(aws) => {
            let (ddb, s3) = aws_clients(aws).await;
            Stores {
                store: Arc::new(TableStore::new(
                    Arc::new(DynamoTable::new(ddb, &aws.table)),
                    clock,
                )),
                snapshots: Arc::new(S3SnapshotStore::new(s3.clone(), &aws.bucket)),
                s3: Some(s3),
            }
        }
    })
}

/// DynamoDB and S3 clients for a configuration (endpoint override and path-style S3 when a
/// local server is named).
pub async fn aws_clients(aws: &AwsStoreConfig) -> (aws_sdk_dynamodb::Client, aws_sdk_s3::Client) {
    let sdk = crate::adapters::aws::sdk_config(aws.region.as_deref()).await;
    let mut ddb = aws_sdk_dynamodb::config::Builder::from(&sdk);
    let mut s3 = aws_sdk_s3::config::Builder::from(&sdk);
    if let Some(endpoint) = &aws.endpoint {
        ddb = ddb.endpoint_url(endpoint);
        s3 = s3.endpoint_url(endpoint).force_path_style(true);
    }
    (
        aws_sdk_dynamodb::Client::from_conf(ddb.build()),
        aws_sdk_s3::Client::from_conf(s3.build()),
    )
}

#[cfg(all(test, not(feature = "embedded")))]
mod without_the_embedded_store {
    use super::*;

    /// As the functions are built: the embedded and memory stores refuse to open, saying why.
    #[tokio::test]
    async fn the_embedded_and_memory_stores_are_refused_with_the_reason() {
        let dir = std::env::temp_dir();
        for cfg in [StoreConfig::Memory, StoreConfig::Embedded { data_dir: dir }] {
            let refused = open_stores(&cfg, Arc::new(SystemClock)).await.err();
            let message = refused.expect("refused").to_string();
            assert!(message.contains("STORE=dynamodb"), "{message}");
        }
    }
}
