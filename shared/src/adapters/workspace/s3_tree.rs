//! The directory side of an S3 workspace: listings (delimiter `/`), walks and deletions by
//! key prefix, bounded in keys.

use super::s3::{err, S3Workspace};
use super::sorted_listing;
use crate::adapters::s3::{List, ObjectInfo};
use crate::adapters::s3_list::{delete_keys, DeleteFailure};
use crate::domain::ws_path::{WsPath, MAX_DEPTH};
use crate::ports::workspace::{Entry, EntryKind, Listing, Walk, WsError, WsResult};

/// Most keys one recursive delete removes.
const MAX_DELETE_KEYS: usize = 10_000;

impl S3Workspace {
    /// Objects under directory `dir`, at most `max`; `true` when more were left.
    async fn keys_under(&self, dir: &WsPath, max: usize) -> WsResult<(Vec<ObjectInfo>, bool)> {
        crate::adapters::s3_list::objects_under(
            &self.client,
            &self.bucket,
            &self.dir_prefix(dir),
            max,
        )
        .await
        .map_err(|e| err("ListObjectsV2", dir, e))
    }

    pub(super) async fn list_entries(&self, dir: &WsPath, limit: usize) -> WsResult<Listing> {
        let prefix = self.dir_prefix(dir);
        let mut entries = Vec::new();
        let mut any = false;
        let mut token = None;
        let mut more = false;
        for page_number in 1.. {
            let list = List {
                prefix: &prefix,
                delimiter: Some("/"),
                token: token.take(),
                max_keys: None,
            };
            let page = self
                .client
                .list_objects_v2(&self.bucket, &list)
                .await
                .map_err(|e| err("ListObjectsV2", dir, e))?;
            any |=
                page.key_count > 0 || !page.contents.is_empty() || !page.common_prefixes.is_empty();
            for cp in page.common_prefixes {
                let name = cp
                    .strip_prefix(prefix.as_str())
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
            for o in page.contents {
                let name = o.key.strip_prefix(prefix.as_str());
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
                    size: Some(o.size),
                    modified: o.last_modified,
                });
            }
            if entries.len() > super::MAX_SCANNED_ENTRIES
                || page_number >= crate::adapters::s3_list::MAX_PAGES
            {
                more = true;
                break;
            }
            match page.next_token {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        if !any && !dir.is_root() {
            return Err(self.missing_dir(dir).await);
        }
        let mut listing = sorted_listing(entries, limit);
        listing.truncated |= more;
        Ok(listing)
    }

    pub(super) async fn delete_tree(&self, path: &WsPath, recursive: bool) -> WsResult<u64> {
        if self.is_file(path).await? {
            self.client
                .delete_object(&self.bucket, &self.key(path))
                .await
                .map_err(|e| err("DeleteObject", path, e))?;
            return Ok(1);
        }
        let (objects, more) = self.keys_under(path, MAX_DELETE_KEYS).await?;
        if objects.is_empty() {
            return Err(WsError::NotFound(path.to_string()));
        }
        let marker = self.dir_prefix(path);
        let files = objects.iter().filter(|o| !o.key.ends_with('/')).count() as u64;
        let nested_dirs = objects
            .iter()
            .any(|o| o.key.ends_with('/') && o.key != marker);
        if !recursive && (files > 0 || nested_dirs) {
            return Err(WsError::NotEmpty(path.to_string()));
        }
        if more {
            return Err(WsError::Limit(format!(
                "more than {MAX_DELETE_KEYS} objects to delete at once"
            )));
        }
        let keys: Vec<String> = objects.into_iter().map(|o| o.key).collect();
        delete_keys(&self.client, &self.bucket, &keys)
            .await
            .map_err(|e| match e {
                DeleteFailure::Call(e) => err("DeleteObjects", path, e),
                // Per-key failures come back inside a successful answer.
                DeleteFailure::Keys(n, code) => {
                    WsError::Unavailable(format!("DeleteObjects: {n} keys not deleted ({code})"))
                }
            })?;
        Ok(files)
    }

    pub(super) async fn walk_files(&self, dir: &WsPath, max_files: usize) -> WsResult<Walk> {
        let prefix = self.dir_prefix(dir);
        let (objects, mut truncated) = self.keys_under(dir, max_files.saturating_add(1)).await?;
        if objects.is_empty() && !dir.is_root() {
            return Err(self.missing_dir(dir).await);
        }
        let mut files = Vec::new();
        for o in objects {
            let rel = o.key.strip_prefix(prefix.as_str());
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
            files.push((path, o.size));
        }
        files.sort();
        Ok(Walk { files, truncated })
    }
}
