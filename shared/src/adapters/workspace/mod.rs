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

use crate::domain::ws_root::Root;
use crate::ports::workspace::{Entry, Listing, Workspace, Workspaces, WsError, WsResult};

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

impl Workspaces for WorkspaceOpener {
    fn open(&self, root: &str) -> WsResult<Arc<dyn Workspace>> {
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
    fn versions_are_hex_md5() {
        assert_eq!(md5_version(b"1"), "c4ca4238a0b923820dcc509a6f75849b");
    }
}
