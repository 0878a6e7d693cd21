//! A workspace's files: one port, two adapters (a local directory, an S3 prefix), one
//! conformance suite. Paths arrive validated ([`WsPath`]); versions are opaque strings that
//! change whenever the content does (the MD5 of the content on both adapters, S3's ETag for a
//! single-part upload), so a write can be made conditional on what the caller last read.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::ws_path::WsPath;

/// What a workspace operation fails with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WsError {
    #[error("not found: {0}")]
    NotFound(String),
    /// A file was expected and a directory is there (or the reverse).
    #[error("not a file: {0}")]
    NotAFile(String),
    #[error("not a directory: {0}")]
    NotADirectory(String),
    /// `mkdir` over a file, or `create only` over an existing file.
    #[error("already exists: {0}")]
    AlreadyExists(String),
    #[error("directory not empty: {0}")]
    NotEmpty(String),
    /// The stored version is not the one the write was conditional on.
    #[error("version mismatch: {0}")]
    VersionMismatch(String),
    #[error("file of {size} bytes exceeds the limit of {limit}")]
    TooLarge { size: u64, limit: u64 },
    /// A symbolic link on the way (local workspaces never follow one).
    #[error("symbolic link: {0}")]
    Symlink(String),
    /// The operation would go beyond a fixed limit (objects in one delete, ...).
    #[error("limit: {0}")]
    Limit(String),
    /// The storage is down or throttling; retryable.
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("workspace failure: {0}")]
    Internal(String),
}

pub type WsResult<T> = Result<T, WsError>;

/// Kind of a directory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    /// Shown in listings, never followed, read or written.
    Symlink,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub name: String,
    pub path: String,
    pub kind: EntryKind,
    /// Bytes (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<DateTime<Utc>>,
}

/// A directory listing, sorted by name; `truncated` when the limit cut it short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub truncated: bool,
}

/// A file's content with the version it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    pub bytes: Vec<u8>,
    pub version: String,
}

/// What a write requires of the file currently stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// Overwrite or create.
    Any,
    /// Only if the stored file has this version.
    Version(String),
    /// Only if there is no file yet.
    Absent,
}

/// Files found under a directory, for search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// Files (path, size), sorted by path.
    pub files: Vec<(WsPath, u64)>,
    /// The file or depth limit stopped the walk early.
    pub truncated: bool,
}

/// A workspace's file storage.
#[async_trait]
pub trait Workspace: Send + Sync {
    /// The entries of a directory, at most `limit`.
    async fn list(&self, dir: &WsPath, limit: usize) -> WsResult<Listing>;
    /// A file's bytes and version; `TooLarge` beyond `max_bytes` (nothing is read).
    async fn read(&self, file: &WsPath, max_bytes: u64) -> WsResult<FileContent>;
    /// Writes a file (creating its parent directories) when `pre` holds; returns the new
    /// version. Parallel writes conditional on the same version: one wins, the rest get
    /// `VersionMismatch`.
    async fn write(&self, file: &WsPath, bytes: Vec<u8>, pre: Precondition) -> WsResult<String>;
    /// Creates a directory (and its parents); `false` when it was already there.
    async fn mkdir(&self, dir: &WsPath) -> WsResult<bool>;
    /// Deletes a file, or a directory (its content too only when `recursive`); returns how
    /// many files went.
    async fn delete(&self, path: &WsPath, recursive: bool) -> WsResult<u64>;
    /// Files under `dir`, depth first, at most `max_files`.
    async fn walk(&self, dir: &WsPath, max_files: usize) -> WsResult<Walk>;
    /// Whether the storage answers (for the status route).
    async fn check(&self) -> Result<(), String>;
}

/// Opens a workspace by its root (see [`crate::domain::ws_root::Root`]).
pub trait Workspaces: Send + Sync {
    fn open(&self, root: &str) -> WsResult<Arc<dyn Workspace>>;
}
