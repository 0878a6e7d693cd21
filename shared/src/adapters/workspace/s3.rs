//! A workspace under an S3 prefix (the cloud). Directories are key prefixes, plus an empty
//! `dir/` marker object for one made empty by `mkdir`. Versions are ETags and conditional
//! writes use S3's own `If-Match` / `If-None-Match`, so parallel writers on several Lambda
//! instances still cannot overwrite each other's changes.

use async_trait::async_trait;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::ServerSideEncryption;
use chrono::{DateTime, Utc};

use crate::ports::workspace::{
    FileContent, Listing, Precondition, Walk, Workspace, WsError, WsResult,
};
use crate::tools::path::WsPath;

/// A workspace at `s3://bucket/prefix`.
#[derive(Debug, Clone)]
pub struct S3Workspace {
    pub(super) client: aws_sdk_s3::Client,
    pub(super) bucket: String,
    prefix: String,
}

pub(super) fn err<E: ProvideErrorMetadata + std::fmt::Debug>(
    op: &str,
    path: &WsPath,
    e: SdkError<E, HttpResponse>,
) -> WsError {
    match &e {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
            WsError::Unavailable(format!("{op}: S3 unreachable"))
        }
        _ => match e.code() {
            Some("PreconditionFailed" | "ConditionalRequestConflict") => {
                WsError::VersionMismatch(path.to_string())
            }
            Some("NoSuchKey" | "NotFound") => WsError::NotFound(path.to_string()),
            Some(c @ ("SlowDown" | "ServiceUnavailable" | "InternalError" | "RequestTimeout")) => {
                WsError::Unavailable(format!("{op}: {c}"))
            }
            Some(c) => WsError::Internal(format!("{op}: {c}")),
            None => match &e {
                SdkError::ServiceError(s) if s.raw().status().as_u16() == 404 => {
                    WsError::NotFound(path.to_string())
                }
                SdkError::ServiceError(s) if s.raw().status().as_u16() == 412 => {
                    WsError::VersionMismatch(path.to_string())
                }
                _ => WsError::Internal(format!("{op}: {e:?}")),
            },
        },
    }
}

fn etag(raw: Option<&str>) -> String {
    raw.unwrap_or_default().trim_matches('"').to_owned()
}

pub(super) fn time_of(t: Option<&aws_sdk_s3::primitives::DateTime>) -> Option<DateTime<Utc>> {
    t.and_then(|t| DateTime::from_timestamp(t.secs(), t.subsec_nanos()))
}

impl S3Workspace {
    pub fn new(client: aws_sdk_s3::Client, bucket: String, prefix: String) -> Self {
        Self {
            client,
            bucket,
            prefix,
        }
    }

    pub(super) fn key(&self, p: &WsPath) -> String {
        match (self.prefix.is_empty(), p.is_root()) {
            (true, _) => p.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}/{p}", self.prefix),
        }
    }

    /// The key prefix of everything inside directory `p`.
    pub(super) fn dir_prefix(&self, p: &WsPath) -> String {
        let k = self.key(p);
        if k.is_empty() {
            k
        } else {
            format!("{k}/")
        }
    }

    /// Whether a file object exists at `p` (never for the root).
    pub(super) async fn is_file(&self, p: &WsPath) -> WsResult<bool> {
        if p.is_root() {
            return Ok(false);
        }
        match self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(self.key(p))
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) => match err("HeadObject", p, e) {
                WsError::NotFound(_) => Ok(false),
                other => Err(other),
            },
        }
    }

    /// Whether anything (a marker or a file) is inside directory `p`.
    pub(super) async fn dir_exists(&self, p: &WsPath) -> WsResult<bool> {
        if p.is_root() {
            return Ok(true);
        }
        let out = self
            .client
            .list_objects_v2()
            .bucket(&self.bucket)
            .prefix(self.dir_prefix(p))
            .max_keys(1)
            .send()
            .await
            .map_err(|e| err("ListObjectsV2", p, e))?;
        Ok(out.key_count.unwrap_or(0) > 0)
    }

    /// `NotADirectory` when a file sits where any of `p`'s ancestor directories should be
    /// (checked in parallel; at most 32 levels).
    async fn check_parent(&self, p: &WsPath) -> WsResult<()> {
        let mut ancestors = Vec::new();
        let mut cur = p.parent();
        while !cur.is_root() {
            ancestors.push(cur.clone());
            cur = cur.parent();
        }
        let found = futures::future::join_all(ancestors.iter().map(|a| self.is_file(a))).await;
        for (a, file) in ancestors.iter().zip(found) {
            if file? {
                return Err(WsError::NotADirectory(a.to_string()));
            }
        }
        Ok(())
    }

    /// What is missing at `p`: a directory there means "not a file", else "not found".
    async fn missing_file(&self, p: &WsPath) -> WsError {
        match self.dir_exists(p).await {
            Ok(true) => WsError::NotAFile(p.to_string()),
            Ok(false) => WsError::NotFound(p.to_string()),
            Err(e) => e,
        }
    }

    /// Why `dir` has nothing to list or walk: a file there, or nothing at all.
    pub(super) async fn missing_dir(&self, dir: &WsPath) -> WsError {
        match self.is_file(dir).await {
            Ok(true) => WsError::NotADirectory(dir.to_string()),
            Ok(false) => WsError::NotFound(dir.to_string()),
            Err(e) => e,
        }
    }
}

#[async_trait]
impl Workspace for S3Workspace {
    async fn list(&self, dir: &WsPath, limit: usize) -> WsResult<Listing> {
        self.list_entries(dir, limit).await
    }

    async fn read(&self, file: &WsPath, max_bytes: u64) -> WsResult<FileContent> {
        let out = match self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(self.key(file))
            .send()
            .await
        {
            Ok(o) => o,
            Err(e) => {
                return Err(match err("GetObject", file, e) {
                    WsError::NotFound(_) => self.missing_file(file).await,
                    other => other,
                })
            }
        };
        let size = out.content_length.unwrap_or(0).max(0) as u64;
        if size > max_bytes {
            return Err(WsError::TooLarge {
                size,
                limit: max_bytes,
            });
        }
        let version = etag(out.e_tag.as_deref());
        let bytes = out
            .body
            .collect()
            .await
            .map_err(|e| WsError::Unavailable(format!("GetObject body: {e}")))?
            .into_bytes()
            .to_vec();
        if bytes.len() as u64 > max_bytes {
            return Err(WsError::TooLarge {
                size: bytes.len() as u64,
                limit: max_bytes,
            });
        }
        Ok(FileContent { bytes, version })
    }

    async fn write(&self, file: &WsPath, bytes: Vec<u8>, pre: Precondition) -> WsResult<String> {
        let (is_dir, parent) = tokio::join!(self.dir_exists(file), self.check_parent(file));
        if is_dir? {
            return Err(WsError::NotAFile(file.to_string()));
        }
        parent?;
        let mut put = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(self.key(file))
            .server_side_encryption(ServerSideEncryption::Aes256)
            .body(ByteStream::from(bytes));
        put = match &pre {
            Precondition::Any => put,
            Precondition::Version(v) => put.if_match(format!("\"{v}\"")),
            Precondition::Absent => put.if_none_match("*"),
        };
        match put.send().await {
            Ok(out) => Ok(etag(out.e_tag.as_deref())),
            Err(e) => Err(match (err("PutObject", file, e), pre) {
                (WsError::VersionMismatch(p), Precondition::Absent) => WsError::AlreadyExists(p),
                // If-Match on a key that is gone: the version asked for is not there either.
                (WsError::NotFound(p), _) => WsError::VersionMismatch(p),
                (other, _) => other,
            }),
        }
    }

    async fn mkdir(&self, dir: &WsPath) -> WsResult<bool> {
        if dir.is_root() {
            return Ok(false);
        }
        let (file, exists, parent) = tokio::join!(
            self.is_file(dir),
            self.dir_exists(dir),
            self.check_parent(dir)
        );
        if file? {
            return Err(WsError::AlreadyExists(dir.to_string()));
        }
        if exists? {
            return Ok(false);
        }
        parent?;
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(self.dir_prefix(dir))
            .server_side_encryption(ServerSideEncryption::Aes256)
            .body(ByteStream::from_static(b""))
            .send()
            .await
            .map_err(|e| err("PutObject", dir, e))?;
        Ok(true)
    }

    async fn delete(&self, path: &WsPath, recursive: bool) -> WsResult<u64> {
        self.delete_tree(path, recursive).await
    }

    async fn walk(&self, dir: &WsPath, max_files: usize) -> WsResult<Walk> {
        self.walk_files(dir, max_files).await
    }

    async fn check(&self) -> Result<(), String> {
        self.client
            .head_bucket()
            .bucket(&self.bucket)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| match &e {
                SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
                    "S3 is unreachable".to_owned()
                }
                _ => format!(
                    "the workspace bucket answered {}",
                    e.code().unwrap_or("an error")
                ),
            })
    }
}
