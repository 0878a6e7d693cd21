//! A workspace under an S3 prefix (the cloud). Directories are key prefixes, plus an empty
//! `dir/` marker object for one made empty by `mkdir`. Versions are ETags and conditional
//! writes use S3's own `If-Match` / `If-None-Match`, so parallel writers on several Lambda
//! instances still cannot overwrite each other's changes.

use async_trait::async_trait;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{Delete, ObjectIdentifier, ServerSideEncryption};
use chrono::{DateTime, Utc};

use super::sorted_listing;
use crate::ports::workspace::{
    Entry, EntryKind, FileContent, Listing, Precondition, Walk, Workspace, WsError, WsResult,
};
use crate::tools::path::{WsPath, MAX_DEPTH};

/// Most keys one recursive delete removes.
const MAX_DELETE_KEYS: usize = 10_000;

/// A workspace at `s3://bucket/prefix`.
#[derive(Debug, Clone)]
pub struct S3Workspace {
    client: aws_sdk_s3::Client,
    bucket: String,
    prefix: String,
}

fn err<E: ProvideErrorMetadata + std::fmt::Debug>(
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

fn time_of(t: Option<&aws_sdk_s3::primitives::DateTime>) -> Option<DateTime<Utc>> {
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

    fn key(&self, p: &WsPath) -> String {
        match (self.prefix.is_empty(), p.is_root()) {
            (true, _) => p.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}/{p}", self.prefix),
        }
    }

    /// The key prefix of everything inside directory `p`.
    fn dir_prefix(&self, p: &WsPath) -> String {
        let k = self.key(p);
        if k.is_empty() {
            k
        } else {
            format!("{k}/")
        }
    }

    /// Whether a file object exists at `p` (never for the root).
    async fn is_file(&self, p: &WsPath) -> WsResult<bool> {
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
    async fn dir_exists(&self, p: &WsPath) -> WsResult<bool> {
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
    async fn missing_dir(&self, dir: &WsPath) -> WsError {
        match self.is_file(dir).await {
            Ok(true) => WsError::NotADirectory(dir.to_string()),
            Ok(false) => WsError::NotFound(dir.to_string()),
            Err(e) => e,
        }
    }

    /// Keys under a prefix, following pages, at most `max`; `true` when more were left.
    async fn keys_under(
        &self,
        dir: &WsPath,
        max: usize,
    ) -> WsResult<(Vec<aws_sdk_s3::types::Object>, bool)> {
        let mut out = Vec::new();
        let mut token = None;
        loop {
            let page = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(self.dir_prefix(dir))
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| err("ListObjectsV2", dir, e))?;
            for o in page.contents.unwrap_or_default() {
                if out.len() >= max {
                    return Ok((out, true));
                }
                out.push(o);
            }
            match page.next_continuation_token {
                Some(t) if page.is_truncated == Some(true) => token = Some(t),
                _ => return Ok((out, false)),
            }
        }
    }
}

#[async_trait]
impl Workspace for S3Workspace {
    async fn list(&self, dir: &WsPath, limit: usize) -> WsResult<Listing> {
        let prefix = self.dir_prefix(dir);
        let mut entries = Vec::new();
        let mut any = false;
        let mut token = None;
        let mut more = false;
        loop {
            let page = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(&prefix)
                .delimiter("/")
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| err("ListObjectsV2", dir, e))?;
            any |= page.key_count.unwrap_or(0) > 0;
            for cp in page.common_prefixes.unwrap_or_default() {
                let name = cp
                    .prefix
                    .as_deref()
                    .and_then(|p| p.strip_prefix(&prefix))
                    .map(|n| n.trim_end_matches('/').to_owned());
                if let Some(path) = name.as_deref().and_then(|n| dir.join(n).ok()) {
                    entries.push(Entry {
                        name: path.name().to_owned(),
                        path: path.to_string(),
                        kind: EntryKind::Dir,
                        size: None,
                        modified: None,
                    });
                }
            }
            for o in page.contents.unwrap_or_default() {
                let name = o.key.as_deref().and_then(|k| k.strip_prefix(&prefix));
                let Some(path) = name
                    .filter(|n| !n.is_empty())
                    .and_then(|n| dir.join(n).ok())
                else {
                    continue;
                };
                entries.push(Entry {
                    name: path.name().to_owned(),
                    path: path.to_string(),
                    kind: EntryKind::File,
                    size: o.size.map(|s| s.max(0) as u64),
                    modified: time_of(o.last_modified.as_ref()),
                });
            }
            if entries.len() > super::MAX_SCANNED_ENTRIES {
                more = true;
                break;
            }
            match page.next_continuation_token {
                Some(t) if page.is_truncated == Some(true) => token = Some(t),
                _ => break,
            }
        }
        if !any && !dir.is_root() {
            return Err(self.missing_dir(dir).await);
        }
        let mut listing = sorted_listing(entries, limit);
        listing.truncated |= more;
        Ok(listing)
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
        if self.is_file(path).await? {
            self.client
                .delete_object()
                .bucket(&self.bucket)
                .key(self.key(path))
                .send()
                .await
                .map_err(|e| err("DeleteObject", path, e))?;
            return Ok(1);
        }
        let (objects, more) = self.keys_under(path, MAX_DELETE_KEYS).await?;
        if objects.is_empty() {
            return Err(WsError::NotFound(path.to_string()));
        }
        let marker = self.dir_prefix(path);
        let files = objects
            .iter()
            .filter(|o| o.key.as_deref().is_some_and(|k| !k.ends_with('/')))
            .count() as u64;
        let nested_dirs = objects.iter().any(|o| {
            o.key
                .as_deref()
                .is_some_and(|k| k.ends_with('/') && k != marker)
        });
        if !recursive && (files > 0 || nested_dirs) {
            return Err(WsError::NotEmpty(path.to_string()));
        }
        if more {
            return Err(WsError::Limit(format!(
                "more than {MAX_DELETE_KEYS} objects to delete at once"
            )));
        }
        for chunk in objects.chunks(1000) {
            let ids = chunk
                .iter()
                .filter_map(|o| o.key.clone())
                .map(|k| ObjectIdentifier::builder().key(k).build())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| WsError::Internal(format!("DeleteObjects: {e}")))?;
            let delete = Delete::builder()
                .set_objects(Some(ids))
                .quiet(true)
                .build()
                .map_err(|e| WsError::Internal(format!("DeleteObjects: {e}")))?;
            let out = self
                .client
                .delete_objects()
                .bucket(&self.bucket)
                .delete(delete)
                .send()
                .await
                .map_err(|e| err("DeleteObjects", path, e))?;
            // Per-key failures come back inside a successful answer.
            let failed = out.errors.unwrap_or_default();
            if let Some(first) = failed.first() {
                return Err(WsError::Unavailable(format!(
                    "DeleteObjects: {} keys not deleted ({})",
                    failed.len(),
                    first.code.as_deref().unwrap_or("error")
                )));
            }
        }
        Ok(files)
    }

    async fn walk(&self, dir: &WsPath, max_files: usize) -> WsResult<Walk> {
        let prefix = self.dir_prefix(dir);
        let (objects, mut truncated) = self.keys_under(dir, max_files.saturating_add(1)).await?;
        if objects.is_empty() && !dir.is_root() {
            return Err(self.missing_dir(dir).await);
        }
        let mut files = Vec::new();
        for o in objects {
            let rel = o.key.as_deref().and_then(|k| k.strip_prefix(&prefix));
            let Some(rel) = rel.filter(|r| !r.is_empty() && !r.ends_with('/')) else {
                continue;
            };
            let Ok(path) = dir.join(rel) else { continue };
            if path.depth() > MAX_DEPTH {
                truncated = true;
                continue;
            }
            if files.len() >= max_files {
                truncated = true;
                break;
            }
            files.push((path, o.size.unwrap_or(0).max(0) as u64));
        }
        files.sort();
        Ok(Walk { files, truncated })
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
