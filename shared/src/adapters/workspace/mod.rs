//! Workspace storage: a local directory (`dir`) or an S3 prefix (`s3`), chosen by the
//! workspace's root — `s3://bucket/prefix`, or a directory relative to `AGENT_WORKSPACES_DIR`.

mod dir;
mod s3;
mod s3_tree;

pub use dir::DirWorkspace;
pub use s3::{S3Workspace, CHECK_KEY as S3_CHECK_KEY};

use std::path::PathBuf;
use std::sync::Arc;

use md5::{Digest, Md5};

use crate::domain::ws_path::WsPath;
use crate::ports::workspace::{Entry, Listing, Workspace, WsError, WsResult};

/// Most directory entries looked at for one listing (a directory may hold more; the listing
/// then says it is truncated).
pub const MAX_SCANNED_ENTRIES: usize = 100_000;

/// A content version: the hex MD5 of the bytes (what S3 reports as the ETag of a single-part
/// upload).
pub fn md5_version(bytes: &[u8]) -> String {
    hex::encode(Md5::digest(bytes))
}

/// Entries sorted by name, cut at `limit`.
pub(crate) fn sorted_listing(mut entries: Vec<Entry>, limit: usize) -> Listing {
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let truncated = entries.len() > limit;
    entries.truncate(limit);
    Listing { entries, truncated }
}

/// Where a workspace root points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// A directory under the workspaces directory (validated relative path).
    Dir(WsPath),
    /// A bucket and a key prefix (no leading or trailing `/`; may be empty).
    S3 { bucket: String, prefix: String },
}

impl Root {
    /// Parses a root as an administrator gives it.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if let Some(rest) = raw.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            let bucket_ok = (3..=63).contains(&bucket.len())
                && bucket
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
            if !bucket_ok {
                return Err(format!("`{bucket}` is not an S3 bucket name"));
            }
            let prefix = WsPath::parse(prefix).map_err(|e| format!("the S3 prefix {e}"))?;
            return Ok(Root::S3 {
                bucket: bucket.to_owned(),
                prefix: prefix.to_string(),
            });
        }
        let dir = WsPath::parse(raw).map_err(|e| {
            format!("a local root is a directory relative to AGENT_WORKSPACES_DIR; it {e}")
        })?;
        if dir.is_root() {
            return Err("a local root must name a directory inside AGENT_WORKSPACES_DIR".into());
        }
        Ok(Root::Dir(dir))
    }
}

impl Root {
    /// Whether the root lies in `tenant`'s own area — `<tenant>/...` locally,
    /// `workspaces/<tenant>/...` on S3 — so no two tenants' roots can overlap.
    pub fn belongs_to(&self, tenant: &str) -> bool {
        match self {
            Root::Dir(rel) => rel.segments().first().is_some_and(|s| s == tenant),
            Root::S3 { prefix, .. } => {
                let mut segs = prefix.split('/');
                segs.next() == Some("workspaces") && segs.next() == Some(tenant)
            }
        }
    }
}

/// Opens workspaces by root: local ones under `dir`, S3 ones with the shared client.
#[derive(Clone)]
pub struct WorkspaceOpener {
    pub dir: PathBuf,
    pub s3: Option<crate::adapters::s3::S3Client>,
}

impl std::fmt::Debug for WorkspaceOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceOpener")
            .field("dir", &self.dir)
            .field("s3", &self.s3.is_some())
            .finish()
    }
}

impl WorkspaceOpener {
    pub fn open(&self, root: &str) -> WsResult<Arc<dyn Workspace>> {
        match Root::parse(root).map_err(WsError::Internal)? {
            Root::Dir(rel) => {
                let mut path = self.dir.clone();
                for seg in rel.segments() {
                    path.push(seg);
                }
                Ok(Arc::new(DirWorkspace::open(&path)))
            }
            Root::S3 { bucket, prefix } => match &self.s3 {
                Some(client) => Ok(Arc::new(S3Workspace::new(client.clone(), bucket, prefix))),
                None => Err(WsError::Unavailable(
                    "S3 workspaces need STORE=dynamodb (an S3 client)".into(),
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_s3_prefixes_or_relative_directories() {
        assert_eq!(
            Root::parse("s3://my-bucket/ws/acme").unwrap(),
            Root::S3 {
                bucket: "my-bucket".into(),
                prefix: "ws/acme".into()
            }
        );
        assert_eq!(
            Root::parse("s3://my-bucket").unwrap(),
            Root::S3 {
                bucket: "my-bucket".into(),
                prefix: String::new()
            }
        );
        assert!(matches!(Root::parse("demo/project"), Ok(Root::Dir(_))));
        for bad in ["/etc", "../x", "", ".", "s3://Bad_Bucket/x", "s3://b/../x"] {
            assert!(Root::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(md5_version(b"1"), "c4ca4238a0b923820dcc509a6f75849b");
        let owned = |raw: &str, t: &str| Root::parse(raw).unwrap().belongs_to(t);
        assert!(owned("acme/site", "acme"));
        assert!(owned("acme", "acme"));
        assert!(!owned("acme-site", "acme"));
        assert!(!owned("other/acme", "acme"));
        assert!(owned("s3://bkt/workspaces/acme/docs", "acme"));
        assert!(!owned("s3://bkt/workspaces", "acme"));
        assert!(!owned("s3://bkt/workspaces/acme2", "acme"));
        assert!(!owned("s3://bkt/snapshots/acme", "acme"));
    }
}
