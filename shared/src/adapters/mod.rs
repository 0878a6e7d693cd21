//! Adapters: implementations of the ports on concrete technology. Storage ports are
//! implemented once (`table_store`) over a single-table backend: SQLite (`sqlite`) or
//! DynamoDB (`dynamo`); snapshots go to a blob directory, memory or S3 (`snapshots`).

pub mod dynamo;
pub mod keys;
pub mod snapshots;
pub mod sqlite;
pub mod table;
pub mod table_store;

pub use table_store::TableStore;
