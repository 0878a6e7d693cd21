//! The table of every variable read: name, default and meaning, in Markdown. The
//! configuration reference (`docs/configuration.md`) is generated from it
//! (`scripts/config-reference`), and a test fails when the document is stale.

/// Every variable read, with its default and meaning (Markdown), in the order the reference
/// lists them.
pub const VARIABLES: &[(&str, &str, &str)] = &[
    (
        "JWT_SECRET",
        "(required where tokens are signed or checked; local-api generates one)",
        "HS256 signing key for access tokens, at least 32 bytes",
    ),
    (
        "JWT_SECRET_ARN",
        "(unset)",
        "Secrets Manager secret (ARN or name) holding `JWT_SECRET`, read at cold start and again when a token's signature does not match (a rotation); the template sets this, never the value. `LLM_API_KEY_ARN`, `PUSHER_SECRET_ARN`, `TAVILY_API_KEY_ARN`, `EXTRACTION_SERVICE_TOKEN_ARN` and `FINGERPRINT_KEY_ARN` do the same for their settings",
    ),
    (
        "SECRET_REFRESH_SECONDS",
        "`300`",
        "longest a key read from Secrets Manager (token key, model key) is used before it is read again on its next use: the most a rotation takes to reach every warm function. A token signature that does not match, or a 401 from the model, reads it again at once (at most once a minute)",
    ),
    (
        "FINGERPRINT_KEY",
        "`JWT_SECRET`",
        "key of the fingerprints that recognise typed secrets on later pages, at least 32 bytes; needed where steps run. Kept apart from `JWT_SECRET` so rotating the token key does not blind running tasks",
    ),
    (
        "JWT_ISSUER",
        "`browser-agent`",
        "`iss` claim written and required",
    ),
    (
        "JWT_AUDIENCE",
        "`browser-agent-extension`",
        "`aud` claim written and required",
    ),
    (
        "ACCESS_TOKEN_TTL_SECONDS",
        "`43200`",
        "lifetime of an access token (60..=2592000)",
    ),
    (
        "ALLOWED_ORIGINS",
        "(none; local-api: `chrome-extension://*`)",
        "comma-separated CORS origins; `chrome-extension://*` allows any extension",
    ),
    (
        "MAX_BODY_BYTES",
        "`5242880`",
        "request bodies above this answer 413",
    ),
    (
        "STORE",
        "`embedded`",
        "`embedded` (single-file SQLite database in `DATA_DIR`, write-ahead log with SQLite's own checkpoints; commits do not wait for the disk, and a log left by a killed process is recovered at the next open), `memory` or `dynamodb` (DynamoDB + S3); functions built alone (release, SAM) have only `dynamodb` — see [deployment.md](deployment.md)",
    ),
    (
        "DATA_DIR",
        "`.data`",
        "directory of the embedded database, its snapshot blobs and local-api's generated key",
    ),
    (
        "TABLE_NAME",
        "(required with STORE=dynamodb)",
        "the DynamoDB table",
    ),
    (
        "SNAPSHOT_BUCKET",
        "(required with STORE=dynamodb)",
        "the S3 bucket for page snapshots",
    ),
    (
        "AWS_ENDPOINT_URL",
        "(AWS)",
        "endpoint override for DynamoDB and S3 (a local compatible server; S3 path-style)",
    ),
    (
        "AWS_REGION",
        "(from the environment)",
        "AWS region (Lambda sets it)",
    ),
    (
        "TASK_RETENTION_HOURS",
        "`168`",
        "how long tasks, steps, messages and snapshots are kept",
    ),
    (
        "TASK_IDLE_MINUTES",
        "`30`",
        "the cleanup marks active tasks untouched this long `interrupted`",
    ),
    (
        "LOGIN_MAX_FAILURES_PER_EMAIL",
        "`5`",
        "failed logins per email per window before 429",
    ),
    (
        "LOGIN_MAX_FAILURES_PER_ADDRESS",
        "`20`",
        "failed logins per client address per window before 429",
    ),
    (
        "LOGIN_FAILURE_WINDOW_SECONDS",
        "`900`",
        "length of the login-failure window",
    ),
    (
        "LLM_PROVIDER",
        "`openai`",
        "`openai`: an OpenAI-compatible chat-completions endpoint (`LLM_BASE_URL`, `LLM_API_KEY`, `LLM_MODEL`); `bedrock`: Amazon Bedrock's Converse API with the process's AWS credentials (the function's role; local-api: the SDK's whole chain, profiles and SSO included)",
    ),
    (
        "BEDROCK_MODEL_ID",
        "(required with `bedrock`)",
        "Bedrock model id, inference profile id or ARN, e.g. `global.anthropic.claude-haiku-4-5-20251001-v1:0`, `us.amazon.nova-lite-v1:0`",
    ),
    (
        "BEDROCK_VERIFY_MODEL_ID",
        "(the main model)",
        "a cheaper Bedrock model for verdicts and finish checks (`LLM_VERIFY_MODEL` for an OpenAI-compatible endpoint)",
    ),
    (
        "BEDROCK_ENDPOINT_URL",
        "(the region's)",
        "Bedrock runtime endpoint override: a VPC endpoint, or a local Converse-compatible server (tests)",
    ),
    (
        "LLM_API_KEY",
        "(none: interact answers 503)",
        "key of the OpenAI-compatible model endpoint (`OPENAI_API_KEY` also read)",
    ),
    (
        "LLM_BASE_URL",
        "`https://api.openai.com/v1`",
        "base URL of the chat-completions endpoint",
    ),
    (
        "LLM_MODEL",
        "`gpt-5-mini`",
        "model name sent with every request",
    ),
    (
        "LLM_TIMEOUT_MS",
        "`20000`",
        "longest single model call",
    ),
    (
        "LLM_MAX_RETRIES",
        "`2`",
        "retries on 429, 5xx and connection errors (within the step deadline)",
    ),
    (
        "LLM_MAX_TOKENS",
        "`800`; `4000` for reasoning models (o-series, GPT-5)",
        "completion token limit (a reasoning model's thinking counts against it; an answer cut at the limit with nothing usable is asked once more with twice the limit, at least 4000)",
    ),
    (
        "LLM_TOKEN_PARAM",
        "`auto`",
        "how the limit is sent: `max_completion_tokens` to OpenAI/Azure and their reasoning models, else `max_tokens`; or `max_tokens`, `max_completion_tokens`, `omit`",
    ),
    (
        "LLM_TEMPERATURE",
        "`auto`",
        "`0`, left out for reasoning models (o-series, GPT-5); or a number, or `omit`",
    ),
    (
        "LLM_REASONING_EFFORT",
        "`auto`",
        "`low` for reasoning models (o-series, GPT-5), not sent to other models; or a value, or `omit`",
    ),
    (
        "LLM_PROMPT_CACHE",
        "`auto`",
        "prompt-cache hints: `prompt_cache_key` (the task's id; the verifier's calls share one) for OpenAI and Azure, the system prompt marked `cache_control` for a Claude model behind an OpenAI-compatible gateway (not Anthropic's own endpoint); `on` sends both anywhere (a provider that refuses one by name gets it dropped), `off` neither",
    ),
    (
        "LLM_STRUCTURED_OUTPUT",
        "`off`",
        "how a decision is asked for: `off`, the tagged text the prompt describes (any model can give it); `json_schema`, a strict `response_format` schema with the same fields; `tool`, a forced `next_action` tool call. A provider that refuses either by name gets the tagged format from then on; the verifier always answers in tags",
    ),
    (
        "LLM_VISION",
        "`auto`",
        "the request's `screenshot` (base64 JPEG/PNG/WebP, at most 1.5 M characters; a larger one is not kept, a non-image is 400) goes with the page's message as an image part: `auto` for models that take images (GPT-4o/4.1/5, o3/o4, Claude, Gemini, `-vl`/vision/LLaVA/Pixtral), `on`, `off`; never once the task typed a password, code or card value, nor while a field on the page holds one; a model that refuses image parts gets the text alone from then on",
    ),
    (
        "LLM_API_KEY_HEADER",
        "`auto`",
        "`api-key` for Azure OpenAI hosts, else `Authorization: Bearer`; or `authorization`, `api-key`",
    ),
    (
        "LLM_API_VERSION",
        "(none)",
        "`api-version` query parameter (Azure OpenAI's dated API)",
    ),
    (
        "EXTRACTION_SERVICE_URL",
        "(none: no organisation knowledge)",
        "knowledge extraction service base URL",
    ),
    (
        "EXTRACTION_SERVICE_TOKEN",
        "(none)",
        "bearer token for the extraction service",
    ),
    (
        "KNOWLEDGE_TIMEOUT_MS",
        "`3000`",
        "timeout of a knowledge lookup",
    ),
    (
        "TAVILY_API_KEY",
        "(none: no web search)",
        "Tavily API key: pre-search for new tasks and the model's `googleSearch` tool; without it the prompt says no web search is available",
    ),
    (
        "TAVILY_BASE_URL",
        "`https://api.tavily.com`",
        "Tavily API base URL (a compatible server in tests)",
    ),
    (
        "SEARCH_DEPTH",
        "`basic`",
        "Tavily `search_depth`: `basic` or `advanced` (two credits, slower)",
    ),
    (
        "SEARCH_MAX_RESULTS",
        "`5`",
        "results asked for per search (1..=10)",
    ),
    (
        "SEARCH_TIMEOUT_MS",
        "`6000`",
        "longest single search attempt (also bounded by the step deadline)",
    ),
    (
        "SEARCH_MAX_RETRIES",
        "`2`",
        "search retries on 429, 5xx and connection errors (within the step deadline)",
    ),
    (
        "MAX_TASK_STEPS",
        "`50`",
        "steps per task before 400 `MAX_STEPS_EXCEEDED` (the task is marked failed)",
    ),
    (
        "READ_PAGE",
        "`off`",
        "`tavily` lets the model call `readPage(\"question\")`: Tavily's extract endpoint reads the current page (the server never fetches it) and the verifier model answers from its text; only public http(s) pages with a named host, never a page with a sign-in, code or card field or an address holding a typed secret; needs `TAVILY_API_KEY`",
    ),
    (
        "RECIPES",
        "`tenant`",
        "`tenant`: a member's verified run becomes that member's recipe for the task on that site, replayed for that member while the page still matches, and for every member once promoted (see [docs/recipes.md](recipes.md)); `off`",
    ),
    (
        "RECIPE_TTL_DAYS",
        "`30`",
        "days a recipe lasts after its last recorded run (1-365)",
    ),
    (
        "RECIPES_PER_MEMBER",
        "`50`",
        "most recipes one member's runs add to the tenant's",
    ),
    (
        "RECIPE_PROMOTE_AFTER_RUNS",
        "`0`",
        "verified runs of two members or more that agree step for step after which a recipe becomes the organisation's; `0`: only an administrator promotes",
    ),
    (
        "RECIPE_MATCH",
        "`exact`",
        "`exact`: an instruction matches a recipe after normalisation (case, spacing, final punctuation); `approximate` also lets other punctuation and filler words (please, the, a, now) through — every other word of the template must still come, in order",
    ),
    (
        "RECIPES_PER_TENANT",
        "`500`",
        "most recipes a tenant keeps; when it is full a new run is not recorded (expired ones make room)",
    ),
    (
        "CHAINED_ACTIONS",
        "`off`",
        "`on` sends an answer's form fills together as `chainedActions` to a client that sends `clientCapabilities: [\"chainedActions\"]` (the shipping extension does not run them); `off` keeps an answer's further fills and its final click on the server and sends them one per request, each checked against the page first",
    ),
    (
        "STEP_DEADLINE_MS",
        "`25000`",
        "time budget of one interact request (API Gateway cuts at 30 s)",
    ),
    (
        "ORCHESTRATOR",
        "`inprocess`",
        "who runs statemachine/interact-step.asl.json: inprocess or stepfunctions",
    ),
    (
        "STATE_MACHINE_ARN",
        "(unset)",
        "the Express state machine interact starts when `ORCHESTRATOR=stepfunctions`",
    ),
    (
        "STATE_SIZE_REPORT",
        "(unset)",
        "file the in-process executor appends each execution's largest state to (tests)",
    ),
    (
        "INTERACT_RATE_PER_USER",
        "`30`",
        "interact requests per user per window",
    ),
    (
        "INTERACT_RATE_PER_TENANT",
        "`300`",
        "interact requests per tenant per window",
    ),
    (
        "INTERACT_RATE_WINDOW_SECONDS",
        "`60`",
        "length of the interact rate window",
    ),
    (
        "PROMPT_PAGE_TOKENS",
        "`6000`",
        "token budget of the page in the prompt",
    ),
    (
        "PROMPT_CHARS_PER_TOKEN",
        "`2.5`",
        "characters per token assumed when budgeting (measured on rendered pages)",
    ),
    (
        "LLM_VERIFY_MODEL",
        "(the main model)",
        "model for verdicts the rules cannot make (ambiguous outcomes, `finish()` checks); a cheaper one is fine",
    ),
    (
        "TENANT_DAILY_TOKEN_BUDGET",
        "0 (no budget)",
        "tokens a tenant's model calls may use per UTC day; beyond it interact answers 429 `TOKEN_BUDGET_EXCEEDED` with `resetAt`",
    ),
    (
        "LLM_PRICES",
        "(the built-in table)",
        "USD per million tokens by model, as JSON: `{\"my-model\": {\"input\": 0.5, \"cachedInput\": 0.05, \"output\": 1.5, \"cacheWrite\": 0.6}}` (`cacheWrite` optional); replaces or adds entries of the built-in list prices (OpenAI; Bedrock's Anthropic and Nova models; as of 2025-08). A model is priced by the longest entry its name contains; a model without a price has no cost estimate",
    ),
    (
        "METRICS",
        "emf in Lambda, off elsewhere",
        "`emf`: CloudWatch Embedded Metric Format lines on standard output (steps, tasks, tokens, cost, interventions, verdicts, times, errors by code; see Operations); `off`: none",
    ),
    (
        "METRICS_NAMESPACE",
        "`BrowserAgent`",
        "CloudWatch namespace of the metrics (the template's dashboard and alarms read it)",
    ),
    (
        "METRICS_TENANT_DIMENSION",
        "`off`",
        "`on`: steps' metrics also carry a `Tenant` dimension (one metric per tenant: mind CloudWatch's cost with many tenants)",
    ),
    (
        "RISK_PAYMENT_WORDS",
        "(none)",
        "comma-separated phrases added to the risk gate's table as payment acts, `*` ending a stem (likewise `RISK_DELETION_WORDS`, `RISK_SENDING_WORDS`, `RISK_CREDENTIAL_WORDS`, `RISK_SHARING_WORDS`, `RISK_SECURITY_WORDS`, `RISK_SUBSCRIPTION_WORDS`)",
    ),
    (
        "PUSHER_APP_ID",
        "(none: no realtime events)",
        "Pusher/Sockudo app id (with PUSHER_KEY and PUSHER_SECRET)",
    ),
    (
        "PUSHER_KEY",
        "(none)",
        "Pusher/Sockudo app key",
    ),
    (
        "PUSHER_SECRET",
        "(none)",
        "Pusher/Sockudo app secret (signs events and channel auth)",
    ),
    (
        "PUSHER_HOST",
        "`api.pusherapp.com`",
        "Pusher HTTP API host (or `api-<PUSHER_CLUSTER>.pusher.com`; Sockudo's host)",
    ),
    (
        "PUSHER_PORT",
        "`443`",
        "Pusher HTTP API port (80 with http)",
    ),
    (
        "PUSHER_SCHEME",
        "`https`",
        "`https` or `http`",
    ),
    (
        "DEBUG_ROUTES",
        "false (local-api: true)",
        "whether `/api/debug/*` answers; 403 when off (after authentication: 401 first)",
    ),
    (
        "AGENT_TOOLS_ENABLED",
        "false (local-api: true)",
        "whether the server-hosted agent tools (`/api/v1/agent/*`) answer; 403 `AGENT_TOOLS_DISABLED` when off (after authentication: 401 first)",
    ),
    (
        "AGENT_WORKSPACES_DIR",
        "DATA_DIR/workspaces",
        "directory holding local (non-S3) workspace roots",
    ),
    (
        "AGENT_AUDIT_RETENTION_DAYS",
        "`90`",
        "days agent audit items, agent sessions and decided approvals are kept (TTL)",
    ),
    (
        "AGENT_APPROVAL_TTL_SECONDS",
        "`900`",
        "seconds a pending approval can be decided in; after that it has expired and never runs",
    ),
    (
        "AGENT_EXEC_RUNNER",
        "`local`",
        "where approved commands run: `local` (a child process, in the workspace directory) or `lambda` (the agent-exec function)",
    ),
    (
        "AGENT_EXEC_FUNCTION",
        "(required with AGENT_EXEC_RUNNER=lambda)",
        "name or ARN of the agent-exec function",
    ),
    (
        "AGENT_EXEC_MAX_SECONDS",
        "`120`",
        "longest a command may run (1..=840); a call may ask for less",
    ),
    (
        "AGENT_EXEC_OUTPUT_BYTES",
        "`1048576`",
        "stdout and stderr kept per command; beyond it the command is stopped",
    ),
    (
        "AGENT_MAX_FILE_BYTES",
        "`1048576`",
        "largest file the agent tools read, write, patch or search",
    ),
    (
        "AGENT_RATE_PER_USER",
        "`240`",
        "`/api/v1/agent/*` requests per user per window; beyond it `429` with `Retry-After` and `resetAt` (refused requests are not counted)",
    ),
    (
        "AGENT_RATE_PER_TENANT",
        "`2400`",
        "`/api/v1/agent/*` requests per tenant per window (counted only for requests within the user's limit)",
    ),
    (
        "AGENT_RATE_WINDOW_SECONDS",
        "`60`",
        "length of the agent tools' rate window",
    ),
    (
        "AGENT_SEARCH_CONCURRENCY",
        "`2`",
        "workspace searches (grep) one process runs at once (1..=64); others wait up to 10 s for a turn, then `503` with `Retry-After`",
    ),
    (
        "AGENT_MAX_PENDING_APPROVALS",
        "`20`",
        "pending (undecided) approvals a user may have (1..=1000); beyond it a call that needs an approval answers `429 TOO_MANY_PENDING_APPROVALS`",
    ),
    (
        "AGENT_MAX_PENDING_BYTES",
        "`8388608`",
        "bytes of arguments a user's pending approvals may hold in all (a write's content counts)",
    ),
    (
        "RUST_LOG",
        "`info`",
        "log filter: local-api and the tools take tracing's EnvFilter syntax; functions take `level` and `target=level` directives, and Lambda's `AWS_LAMBDA_LOG_LEVEL`, when set, is their default level",
    ),
    (
        "PORT",
        "`3000`",
        "local-api only: port on 127.0.0.1 (`0` picks a free one)",
    ),
];
