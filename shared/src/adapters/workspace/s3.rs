//! A workspace under an S3 prefix (the cloud). Directories are key prefixes, plus an empty
//! `dir/` marker object for one made empty by `mkdir`. Versions are ETags and conditional
//! writes use S3's own `If-Match` / `If-None-Match`, so parallel writers on several Lambda
//! instances still cannot overwrite each other's changes.

use async_trait::async_trait;

use crate::adapters::s3::{List, Put, ReadError, S3Client, S3Error};

use crate::domain::ws_path::WsPath;
use crate::ports::workspace::{
    FileContent, Listing, Precondition, Walk, Workspace, WsError, WsResult,
};

/// The object the storage check reads: the only key of the bucket the status route may read
/// or write (outside every tenant's prefix).
pub const CHECK_KEY: &str = "health/workspace-check";

/// A workspace at `s3://bucket/prefix`.
#[derive(Debug, Clone)]
pub struct S3Workspace {
    pub(super) client: S3Client,
    pub(super) bucket: String,
    prefix: String,
}

pub(super) fn err(op: &str, path: &WsPath, e: S3Error) -> WsError {
    match e.code() {
        _ if matches!(e, S3Error::Unreachable(_)) => {
            WsError::Unavailable(format!("{op}: S3 unreachable"))
        }
        Some("PreconditionFailed" | "ConditionalRequestConflict") => {
            WsError::VersionMismatch(path.to_string())
        }
        _ if e.is_not_found() => WsError::NotFound(path.to_string()),
        None if e.status() == Some(412) => WsError::VersionMismatch(path.to_string()),
        _ if e.is_transient() => WsError::Unavailable(format!("{op}: {e}")),
        _ => WsError::Internal(format!("{op}: {e}")),
    }
}

impl S3Workspace {
    pub fn new(client: S3Client, bucket: String, prefix: String) -> Self {
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
        match self.client.head_object(&self.bucket, &self.key(p)).await {
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
        let prefix = self.dir_prefix(p);
        let list = List {
            prefix: &prefix,
            max_keys: Some(1),
            ..List::default()
        };
        let out = self
            .client
            .list_objects_v2(&self.bucket, &list)
            .await
            .map_err(|e| err("ListObjectsV2", p, e))?;
        Ok(out.key_count > 0 || !out.contents.is_empty())
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
        let out = match self.client.get_object(&self.bucket, &self.key(file)).await {
            Ok(o) => o,
            Err(e) => {
                return Err(match err("GetObject", file, e) {
                    WsError::NotFound(_) => self.missing_file(file).await,
                    other => other,
                })
            }
        };
        let size = out.length.unwrap_or(0);
        if size > max_bytes {
            return Err(WsError::TooLarge {
                size,
                limit: max_bytes,
            });
        }
        let version = out.etag.clone().unwrap_or_default();
        let bytes = out.bytes(max_bytes).await.map_err(|e| match e {
            ReadError::TooLarge { read, limit } => WsError::TooLarge { size: read, limit },
            ReadError::Failed(why) => WsError::Unavailable(format!("GetObject body: {why}")),
        })?;
        Ok(FileContent { bytes, version })
    }

    async fn write(&self, file: &WsPath, bytes: Vec<u8>, pre: Precondition) -> WsResult<String> {
        let (is_dir, parent) = tokio::join!(self.dir_exists(file), self.check_parent(file));
        if is_dir? {
            return Err(WsError::NotAFile(file.to_string()));
        }
        parent?;
        let put = Put {
            if_match: match &pre {
                Precondition::Version(v) => Some(v.as_str()),
                _ => None,
            },
            if_none_match: matches!(pre, Precondition::Absent),
            ..Put::default()
        };
        let key = self.key(file);
        match self
            .client
            .put_object(&self.bucket, &key, bytes, &put)
            .await
        {
            Ok(version) => Ok(version),
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
            .put_object(
                &self.bucket,
                &self.dir_prefix(dir),
                Vec::new(),
                &Put::default(),
            )
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
        // A HEAD on one fixed key needs s3:GetObject on that key alone; HeadBucket needed
        // s3:ListBucket, which also lists every tenant's keys. Without ListBucket a missing
        // key answers 403 like a refused one, so either is settled by writing it (empty, only
        // where no object is: a key that is there but cannot be read answers 412, and is
        // never written again).
        let describe = |e: S3Error| match &e {
            S3Error::Unreachable(_) => "S3 is unreachable".to_owned(),
            S3Error::Service { status, code } => format!(
                "the workspace bucket answered {}",
                code.clone().unwrap_or_else(|| status.to_string())
            ),
            _ => e.to_string(),
        };
        match self.client.head_object(&self.bucket, CHECK_KEY).await {
            Ok(()) => Ok(()),
            Err(S3Error::Service {
                status: 403 | 404, ..
            }) => {
                let put = Put {
                    if_none_match: true,
                    ..Put::default()
                };
                match self
                    .client
                    .put_object(&self.bucket, CHECK_KEY, Vec::new(), &put)
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(S3Error::Service { status: 412, .. }) => Err(format!(
                        "the workspace bucket refuses reads of {CHECK_KEY} (s3:GetObject)"
                    )),
                    Err(e) => Err(describe(e)),
                }
            }
            Err(e) => Err(describe(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::loopback::answer_each;
    use crate::adapters::s3::tests::{answer, client};

    /// Where the check's key is there but may not be read (403 without ListBucket looks like
    /// a missing key), the write where no object is answers 412: reported, nothing written.
    #[tokio::test]
    async fn a_check_key_that_cannot_be_read_is_reported_not_overwritten() {
        let exists = "<Error><Code>PreconditionFailed</Code></Error>";
        let (url, served) = answer_each(
            vec![
                answer("403 Forbidden", ""),
                answer("412 Precondition Failed", exists),
            ],
            false,
        )
        .await;
        let ws = S3Workspace::new(client(&url), "b".into(), "workspaces/t/w".into());
        let err = ws.check().await.expect_err("reads refused");
        assert!(err.contains("refuses reads"), "{err}");
        let requests = served.await.expect("served");
        assert!(
            requests[0].starts_with("HEAD /b/health/workspace-check"),
            "{}",
            requests[0]
        );
        assert!(requests[1].starts_with("PUT /b/health/workspace-check"));
        assert!(requests[1]
            .to_ascii_lowercase()
            .contains("if-none-match: *"));
    }
}
