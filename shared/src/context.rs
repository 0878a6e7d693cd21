//! `AppContext`: what a function assembles once per container — the configuration, the
//! adapters behind every port, the token service and password hasher — and nothing else. The
//! HTTP glue takes it; the use cases never do: they get the ports they use from it, a step its
//! [`StepPorts`] (`step()`), the agent tools their [`ToolPorts`] (`tools()`), the others single
//! ports. Nothing here does network I/O at start-up, so a cold start stays in single-digit
//! milliseconds.

use std::sync::Arc;

use crate::adapters::bedrock::BedrockLlm;
use crate::adapters::dynamo::DynamoTable;
use crate::adapters::http_knowledge::HttpKnowledge;
use crate::adapters::not_linked::NotLinked;
use crate::adapters::openai::OpenAiLlm;
use crate::adapters::pusher::PusherRealtime;
use crate::adapters::runner::runner_for;
use crate::adapters::runner::RunEnv;
use crate::adapters::s3::S3Client;
use crate::adapters::secrets_manager::SecretsManager;
use crate::adapters::snapshots::S3SnapshotStore;
use crate::adapters::step_functions::StepFunctions;
use crate::adapters::tavily::TavilySearch;
use crate::adapters::workspace::WorkspaceOpener;
use crate::adapters::TableStore;
use crate::agent::step::StepPorts;
use crate::auth::{PasswordHasher, TokenService};
use crate::clock::{Clock, SystemClock};
use crate::config::{
    secret_references, AwsStoreConfig, Config, ConfigError, KeyRefresh, LlmConfig, LlmProvider,
    LoadedSecrets, Rereads, RotatingKey, StoreConfig,
};
use crate::ports::knowledge::Knowledge;
use crate::ports::llm::Llm;
use crate::ports::mcp::McpClient;
use crate::ports::metrics::Metrics;
use crate::ports::realtime::Realtime;
use crate::ports::runner::CommandRunner;
use crate::ports::secrets::SecretSource;
use crate::ports::web_search::WebSearch;
use crate::ports::workspace::Workspaces;
use crate::ports::{SnapshotStore, Store, StoreError};
use crate::sessions::SessionPorts;
use crate::tools::health::StatusCache;
use crate::tools::ToolPorts;

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
    pub workspaces: Arc<dyn Workspaces>,
    /// Recent workspace-storage checks of the agent tools' status route.
    pub tools_status: StatusCache,
    /// Turns of the workspace searches this process runs at once (`AGENT_SEARCH_CONCURRENCY`).
    pub search_turns: Arc<tokio::sync::Semaphore>,
    /// Where approved commands run.
    pub runner: Arc<dyn CommandRunner>,
    /// The tenants' MCP servers, reached over Streamable HTTP.
    pub mcp: Arc<dyn McpClient>,
    /// Where steps' and requests' figures go (`METRICS`).
    pub metrics: Arc<dyn Metrics>,
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
        Self::build(config, Links::ALL, None).await
    }

    /// A function's context: from the environment, with the adapters `links` names. A
    /// function that does not name one (its factory is `not_linked`) does not link it.
    pub async fn for_function(links: Links) -> Result<Self, StartupError> {
        Self::from_environment(|k| std::env::var(k).ok(), links).await
    }

    /// A function's context from the variables `env` gives: the secrets named by ARN are
    /// read from Secrets Manager first (one concurrent round at cold start, kept for the
    /// container's life; the token key is read again when a signature does not match it).
    pub async fn from_environment(
        env: impl Fn(&str) -> Option<String>,
        links: Links,
    ) -> Result<Self, StartupError> {
        let mut refs = secret_references(&env)?;
        // A function that checks no tokens is not granted the signing key: it is not read.
        refs.retain(|r| links.tokens || r.setting != "JWT_SECRET");
        let source: Option<Arc<dyn SecretSource>> = match refs.is_empty() {
            true => None,
            false => Some(Arc::new(
                SecretsManager::new(
                    env("AWS_REGION").as_deref(),
                    env("AWS_ENDPOINT_URL").as_deref(),
                )
                .await,
            )),
        };
        let loaded = match &source {
            Some(source) => LoadedSecrets::load(refs, source.as_ref()).await?,
            None => LoadedSecrets::default(),
        };
        let config = Config::from_lookup(loaded.over(&env))?;
        if links.tokens {
            config.require_token_key()?;
        }
        // Keys read from Secrets Manager are read again (a rotation, or their maximum age).
        let rereads = Rereads::every(config.secret_max_age);
        let reread = |setting: &str| {
            let id = loaded.id_of(setting)?;
            Some(KeyRefresh::new(source.clone()?, id.to_owned(), rereads))
        };
        let model_key = match config.agent.llm.as_ref().map(|c| &c.provider) {
            Some(LlmProvider::OpenAi(endpoint)) => reread("LLM_API_KEY")
                .map(|r| Arc::new(RotatingKey::rotating(endpoint.api_key.clone(), r))),
            _ => None,
        };
        let token_key = reread("JWT_SECRET");
        let mut ctx = Self::build(config, links, model_key).await?;
        if let Some(refresh) = token_key {
            ctx.tokens.set_refresh(refresh);
        }
        Ok(ctx)
    }

    async fn build(
        config: Config,
        links: Links,
        model_key: Option<Arc<RotatingKey>>,
    ) -> Result<Self, StartupError> {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let stores = open_stores_with(&config.store, clock.clone(), links.objects).await?;
        Ok(Self::with_tools(config, stores, clock, links, model_key))
    }

    /// Assembles a context from ready parts (tests inject a manual clock or shared stores).
    pub fn with_parts(config: Config, stores: Stores, clock: Arc<dyn Clock>) -> Self {
        Self::with_tools(config, stores, clock, Links::ALL, None)
    }

    /// `model_key`: the model's key when it is read from Secrets Manager (read again on a 401).
    fn with_tools(
        config: Config,
        stores: Stores,
        clock: Arc<dyn Clock>,
        links: Links,
        model_key: Option<Arc<RotatingKey>>,
    ) -> Self {
        let tokens = TokenService::new(&config.jwt);
        let (llm, verifier) = models(&config, model_key);
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
        let opener = WorkspaceOpener {
            dir: config.tools.workspaces_dir.clone(),
            s3: stores.s3.clone(),
        };
        let ToolAdapters { runner, mcp } = (links.tools)(
            &config,
            run_env(&config, &stores.store, &realtime, &clock),
            &opener,
        );
        let workspaces = (links.workspaces)(opener);
        let search_turns = Arc::new(tokio::sync::Semaphore::new(config.tools.search_concurrency));
        let metrics = metrics_for(&config, "local-api", &clock);
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
            search_turns,
            runner,
            mcp,
            metrics,
        }
    }

    /// Names the metrics of this process after `function` (contexts start as `local-api`).
    pub fn name_metrics(&mut self, function: &str) {
        self.metrics = metrics_for(&self.config, function, &self.clock);
    }
}

/// The metrics the configuration asks for, named for `function` and the main model.
fn metrics_for(config: &Config, function: &str, clock: &Arc<dyn Clock>) -> Arc<dyn Metrics> {
    let model = config
        .agent
        .llm
        .as_ref()
        .map_or("none", |l| l.model.as_str());
    crate::adapters::emf::metrics(&config.metrics, function, model, clock.clone())
}

/// The Step Functions adapter: a process-wide one made on the first step (its SDK client on
/// the first execution), so only the functions that run steps link the Step Functions client.
static EXECUTIONS: std::sync::OnceLock<StepFunctions> = std::sync::OnceLock::new();

/// The ports each use case takes, borrowed for one request.
impl AppContext {
    /// The ports and settings a step uses.
    pub fn step(&self) -> StepPorts<'_> {
        StepPorts {
            store: self.store.as_ref(),
            snapshots: self.snapshots.as_ref(),
            clock: self.clock.as_ref(),
            llm: self.llm.as_deref(),
            verifier: self.verifier.as_deref(),
            knowledge: self.knowledge.as_deref(),
            search: self.search.as_deref(),
            realtime: self.realtime.as_deref(),
            executions: EXECUTIONS.get_or_init(StepFunctions::default),
            agent: &self.config.agent,
            retention: &self.config.retention,
            fingerprint_key: &self.config.fingerprint_key,
            metrics: self.metrics.as_ref(),
        }
    }

    /// What changing a session uses.
    pub fn sessions(&self) -> SessionPorts<'_> {
        SessionPorts {
            store: self.store.as_ref(),
            clock: self.clock.as_ref(),
            retention: &self.config.retention,
        }
    }

    /// The ports and settings the agent tools use.
    pub fn tools(&self) -> ToolPorts<'_> {
        ToolPorts {
            store: self.store.as_ref(),
            snapshots: self.snapshots.as_ref(),
            clock: self.clock.as_ref(),
            workspaces: self.workspaces.as_ref(),
            runner: self.runner.as_ref(),
            mcp: self.mcp.as_ref(),
            search_turns: &self.search_turns,
            tools_status: &self.tools_status,
            tools: &self.config.tools,
        }
    }

    /// Runs recorded commands in this process (the command runner function).
    pub fn jobs(&self) -> RunEnv {
        run_env(&self.config, &self.store, &self.realtime, &self.clock)
    }
}

/// What a run records with.
fn run_env(
    config: &Config,
    store: &Arc<dyn Store>,
    realtime: &Option<Arc<dyn Realtime>>,
    clock: &Arc<dyn Clock>,
) -> RunEnv {
    RunEnv {
        store: store.clone(),
        realtime: realtime.clone(),
        clock: clock.clone(),
        retention_days: config.tools.audit_retention_days,
        output_cap: config.tools.exec_output_bytes,
    }
}

/// A context's model adapter, `None` when no model is configured.
type Model = Option<Arc<dyn Llm>>;

/// The model and the verifier's model (`LLM_VERIFY_MODEL` or `BEDROCK_VERIFY_MODEL_ID`; the
/// main model when unset). An OpenAI-compatible model sends `key` when it is read from Secrets
/// Manager (both take a rotation together); Bedrock is called with the function's role.
fn models(config: &Config, key: Option<Arc<RotatingKey>>) -> (Model, Model) {
    let adapter = |c: LlmConfig| match c.provider.clone() {
        LlmProvider::OpenAi(endpoint) => {
            let llm = OpenAiLlm::new(c, endpoint);
            let llm = match &key {
                Some(key) => llm.with_key(key.clone()),
                None => llm,
            };
            Arc::new(llm) as Arc<dyn Llm>
        }
        LlmProvider::Bedrock(endpoint) => Arc::new(BedrockLlm::new(c, endpoint)) as Arc<dyn Llm>,
    };
    let llm = config.agent.llm.clone().map(adapter);
    let verifier = match (&config.agent.llm, &config.agent.verify_model) {
        (Some(c), Some(model)) if *model != c.model => {
            let mut c = c.clone();
            c.model = model.clone();
            Some(adapter(c))
        }
        _ => llm.clone(),
    };
    (llm, verifier)
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
    pub s3: Option<S3Client>,
}

/// Where a context keeps objects: page snapshots and S3 workspaces.
pub struct Objects {
    pub snapshots: Arc<dyn SnapshotStore>,
    pub s3: Option<S3Client>,
}

/// Makes a context's [`Objects`] for its store (with the SDK configuration when the store is
/// DynamoDB). Each binary names one; the linker drops the other.
pub type ObjectsFactory = fn(&StoreConfig, Option<&aws_config::SdkConfig>) -> Objects;

impl Objects {
    /// Snapshots beside the store: S3 (and the S3 client for workspaces) with DynamoDB, a
    /// blob directory with the embedded store, memory with the memory store.
    pub fn linked(cfg: &StoreConfig, sdk: Option<&aws_config::SdkConfig>) -> Self {
        match (cfg, sdk) {
            (StoreConfig::DynamoDb(aws), Some(sdk)) => {
                let s3 = s3_client(aws, sdk);
                Self {
                    snapshots: Arc::new(S3SnapshotStore::new(s3.clone(), &aws.bucket)),
                    s3: Some(s3),
                }
            }
            #[cfg(feature = "embedded")]
            (StoreConfig::Embedded { data_dir }, _) => Self {
                snapshots: Arc::new(crate::adapters::snapshots::DirSnapshotStore::new(
                    &data_dir.join("blobs"),
                )),
                s3: None,
            },
            #[cfg(feature = "embedded")]
            (StoreConfig::Memory, _) => Self {
                snapshots: Arc::new(crate::adapters::snapshots::MemorySnapshotStore::default()),
                s3: None,
            },
            _ => Self::not_linked(cfg, sdk),
        }
    }

    /// A stand-in that refuses (functions that touch only the table: their binaries link
    /// neither the S3 client nor its checksums).
    pub fn not_linked(_: &StoreConfig, _: Option<&aws_config::SdkConfig>) -> Self {
        Self {
            snapshots: Arc::new(NotLinked),
            s3: None,
        }
    }
}

/// Makes a context's workspace opener. Each binary names one; the linker drops the other.
pub type WorkspacesFactory = fn(WorkspaceOpener) -> Arc<dyn Workspaces>;

/// Local directories and S3 prefixes.
fn linked_workspaces(opener: WorkspaceOpener) -> Arc<dyn Workspaces> {
    Arc::new(opener)
}

/// Which adapters with large dependencies a binary builds, and whether it checks tokens.
#[derive(Clone, Copy)]
pub struct Links {
    pub tools: ToolsFactory,
    pub objects: ObjectsFactory,
    /// Opens agent-tool workspaces: a function that serves no route reaching a workspace does
    /// not link the workspace adapters (nor, through them, S3).
    pub workspaces: WorkspacesFactory,
    /// Whether the function signs or checks access tokens (every HTTP route): it then needs
    /// the signing key to start.
    pub tokens: bool,
}

impl Links {
    /// Every adapter (local-api, agent-admin, the tests, the agent-tool functions).
    pub const ALL: Self = Self {
        tools: ToolAdapters::linked,
        objects: Objects::linked,
        workspaces: linked_workspaces,
        tokens: true,
    };
    /// Objects but not the agent tools' adapters (most functions).
    pub const OBJECTS: Self = Self {
        tools: ToolAdapters::not_linked,
        objects: Objects::linked,
        workspaces: linked_workspaces,
        tokens: true,
    };
    /// The table alone (functions that read and write only the table).
    pub const TABLE: Self = Self {
        tools: ToolAdapters::not_linked,
        objects: Objects::not_linked,
        workspaces: |_| Arc::new(NotLinked),
        tokens: true,
    };

    /// The same adapters for a function that neither signs nor checks tokens (the command
    /// runner, the Step Functions phase): it starts without the signing key.
    pub const fn without_tokens(self) -> Self {
        Self {
            tokens: false,
            ..self
        }
    }
}

/// Opens the stores a configuration names, with every adapter.
pub async fn open_stores(cfg: &StoreConfig, clock: Arc<dyn Clock>) -> Result<Stores, StoreError> {
    open_stores_with(cfg, clock, Objects::linked).await
}

/// Opens the stores a configuration names, the objects as `objects` makes them. For
/// DynamoDB/S3 the SDK clients are built here, once per container; nothing is sent over the
/// network. The embedded and memory stores exist only in builds with the `embedded` feature
/// (local-api, agent-admin, the tests; not the functions' release builds).
pub async fn open_stores_with(
    cfg: &StoreConfig,
    clock: Arc<dyn Clock>,
    objects: ObjectsFactory,
) -> Result<Stores, StoreError> {
    let (store, objects): (Arc<dyn Store>, Objects) = match cfg {
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
        StoreConfig::Embedded { data_dir } => (
            Arc::new(TableStore::embedded(data_dir, clock)?),
            objects(cfg, None),
        ),
        #[cfg(feature = "embedded")]
        StoreConfig::Memory => (Arc::new(TableStore::memory(clock)?), objects(cfg, None)),
        StoreConfig::DynamoDb(aws) => {
            let sdk = crate::adapters::aws::sdk_config(aws.region.as_deref()).await;
            let table = DynamoTable::new(dynamodb_client(aws, &sdk), &aws.table);
            (
                Arc::new(TableStore::new(Arc::new(table), clock)),
                objects(cfg, Some(&sdk)),
            )
        }
    };
    Ok(Stores {
        store,
        snapshots: objects.snapshots,
        s3: objects.s3,
    })
}

/// DynamoDB and S3 clients for a configuration (endpoint override and path-style S3 when a
/// local server is named).
pub async fn aws_clients(aws: &AwsStoreConfig) -> (aws_sdk_dynamodb::Client, S3Client) {
    let sdk = crate::adapters::aws::sdk_config(aws.region.as_deref()).await;
    (dynamodb_client(aws, &sdk), s3_client(aws, &sdk))
}

fn dynamodb_client(aws: &AwsStoreConfig, sdk: &aws_config::SdkConfig) -> aws_sdk_dynamodb::Client {
    let mut ddb = aws_sdk_dynamodb::config::Builder::from(sdk);
    if let Some(endpoint) = &aws.endpoint {
        ddb = ddb.endpoint_url(endpoint);
    }
    aws_sdk_dynamodb::Client::from_conf(ddb.build())
}

fn s3_client(aws: &AwsStoreConfig, sdk: &aws_config::SdkConfig) -> S3Client {
    let region = sdk.region().map_or("us-east-1", |r| r.as_ref());
    S3Client::new(aws.endpoint.clone(), region, sdk.credentials_provider())
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

#[cfg(all(test, feature = "embedded"))]
mod links {
    use super::*;

    /// A table-only context keeps the table and refuses snapshots, saying why.
    #[tokio::test]
    async fn a_table_only_store_keeps_the_table_and_refuses_snapshots() {
        let stores = open_stores_with(
            &StoreConfig::Memory,
            Arc::new(SystemClock),
            Objects::not_linked,
        )
        .await
        .expect("stores");
        assert!(stores.s3.is_none());
        let refused = stores
            .snapshots
            .put_snapshot("acme", "task", 1, b"<p>page</p>")
            .await;
        let message = refused.expect_err("refused").to_string();
        assert!(message.contains("not part of this function"), "{message}");
        let linked = open_stores(&StoreConfig::Memory, Arc::new(SystemClock))
            .await
            .expect("stores");
        let stored = linked
            .snapshots
            .put_snapshot("acme", "task", 1, b"<p>page</p>")
            .await;
        assert!(stored.is_ok(), "{stored:?}");
        let email = crate::domain::Email::parse("nobody@acme.com").expect("email");
        let found = stores.store.user_by_email(&email).await;
        assert!(matches!(found, Ok(None)), "{found:?}");
    }
}

/// The cloud flow's run records, through a whole context (the layer that assembles one; the
/// step below it never builds its own).
#[cfg(all(test, feature = "embedded"))]
mod run_records {
    use std::sync::Arc;

    use crate::agent::request::read;
    use crate::agent::step::flow::cloud::{record_of, restore, save};
    use crate::agent::step::flow::RunState;
    use crate::agent::step::StepInput;
    use crate::auth::Principal;
    use crate::clock::{Clock, SystemClock};
    use crate::config::Config;
    use crate::domain::Role;
    use serde_json::Value;

    #[tokio::test]
    async fn a_run_record_gives_the_phases_the_request_as_sent_unknown_fields_and_all() {
        let config = Config::from_lookup(|k| match k {
            "JWT_SECRET" => Some("0123456789abcdef0123456789abcdef".into()),
            "STORE" => Some("memory".into()),
            _ => None,
        })
        .expect("config");
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let stores = crate::context::open_stores(&config.store, clock.clone())
            .await
            .expect("stores");
        let app = crate::context::AppContext::with_parts(config, stores, clock);
        let ctx = app.step();
        // Fields no JSON value holds, where the server reads nothing: the phases in other
        // processes read the body as the interact function did.
        let body = format!(
            r#"{{"url":"about:blank","query":"go","dom":"<a id=1>x</a>","later":1e400,"deep":{}1{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let request = read(body.as_bytes()).expect("object").expect("valid");
        let principal = Principal {
            user_id: "u1".into(),
            tenant_id: "acme".into(),
            email: "ada@acme.com".into(),
            jti: "j1".into(),
            expires_at: chrono::Utc::now(),
            role: Role::Member,
        };
        let input = StepInput {
            principal,
            request: request.clone(),
            request_id: "r1".into(),
            idempotency_key: None,
            request_hash: String::new(),
        };
        let raw = serde_json::value::RawValue::from_string(body).expect("JSON");
        let run = RunState::new(input.clone(), Some(raw), 30_000);
        save(&ctx, &run).await.expect("saved");
        // The version before read the record's body as a JSON value: it still can (a body
        // whose every number fits one).
        let plain = r#"{"url":"about:blank","query":"go","dom":"<a id=1>x</a>","later":[[1]]}"#;
        let raw = serde_json::value::RawValue::from_string(plain.into()).expect("JSON");
        let earlier = RunState::new(input, Some(raw), 30_000);
        save(&ctx, &earlier).await.expect("saved");
        let record = ctx
            .snapshots
            .snapshot("acme", &record_of(&earlier.id), 0)
            .await;
        let record: Value = serde_json::from_slice(&record.ok().flatten().unwrap_or_default())
            .expect("the record is JSON");
        assert_eq!(record["body"]["later"], serde_json::json!([[1]]));
        let event = serde_json::json!({ "run": { "id": run.id, "tenant": "acme" } });
        let back = restore(&ctx, &event, false).await.expect("restored");
        assert_eq!(back.input.map(|i| i.request), Some(request));
        // Another tenant's name for the run finds nothing.
        let other = serde_json::json!({ "run": { "id": run.id, "tenant": "globex" } });
        assert!(restore(&ctx, &other, false).await.is_err());
    }
}
