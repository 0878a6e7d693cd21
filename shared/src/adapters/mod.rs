//! Adapters: implementations of the ports on concrete technology. Storage ports are
//! implemented once (`table_store`) over a single-table backend: SQLite (`sqlite`) or
//! DynamoDB (`dynamo`); snapshots go to a blob directory, memory or S3 (`snapshots`). The
//! model is any OpenAI-compatible endpoint (`openai`) or Bedrock (`bedrock`), web search is
//! Tavily (`tavily`), organisation knowledge the extraction service (`http_knowledge`), the
//! step's machine Step Functions (`step_functions`), realtime Pusher (`pusher`). The agent
//! tools' workspaces are directories or S3 prefixes (`workspace`), their commands child
//! processes or the `agent-exec` function (`runner`), their MCP servers `rmcp` (`mcp`).

pub mod aws;
pub mod bedrock;
pub mod dynamo;
pub mod emf;
pub mod http_knowledge;
pub mod keys;
pub mod llm_answer;
#[cfg(test)]
pub(crate) mod loopback;
pub mod mcp;
pub mod not_linked;
pub mod openai;
pub mod pusher;
pub mod runner;
pub mod s3;
pub mod s3_list;
pub mod secrets_manager;
pub mod snapshots;
#[cfg(feature = "embedded")]
pub mod sqlite;
pub mod step_functions;
pub mod table;
pub mod table_store;
pub mod tavily;
pub mod tls;
pub mod workspace;

pub use table_store::TableStore;
