//! The directory side of a local workspace: listings, walks (each directory opened relative to
//! its parent's handle), `mkdir` and deletions — all inside the root's capability handle.

use std::io::ErrorKind;
use std::path::Path;

use cap_std::fs::{Dir, Metadata};
use chrono::{DateTime, Utc};

use super::{existing_root, here, io_err, open_root, resolve};
use crate::adapters::workspace::{sorted_listing, MAX_SCANNED_ENTRIES};
use crate::domain::ws_path::{WsPath, MAX_DEPTH};
use crate::ports::workspace::{Entry, EntryKind, Listing, Walk, WsError, WsResult};

fn modified(meta: &Metadata) -> Option<DateTime<Utc>> {
    meta.modified()
        .ok()
        .map(|t| DateTime::<Utc>::from(t.into_std()))
}

fn entry_of(dir: &WsPath, name: String, meta: &Metadata) -> Option<Entry> {
    let path = dir.join(&name).ok()?;
    let ft = meta.file_type();
    let kind = if ft.is_symlink() {
        EntryKind::Symlink
    } else if ft.is_dir() {
        EntryKind::Dir
    } else if ft.is_file() {
        EntryKind::File
    } else {
        return None;
    };
    Some(Entry {
        name,
        path: path.to_string(),
        kind,
        size: (kind == EntryKind::File).then_some(meta.len()),
        modified: modified(meta),
    })
}

pub(super) fn list_dir(root: &Path, dir: &WsPath, limit: usize) -> WsResult<Listing> {
    let Some(handle) = open_root(root, false)? else {
        return match dir.is_root() {
            // A workspace nothing was written to yet.
            true => Ok(sorted_listing(Vec::new(), limit)),
            false => Err(WsError::NotFound(dir.to_string())),
        };
    };
    let path = resolve(&handle, dir)?;
    match handle.symlink_metadata(here(&path)) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(WsError::NotADirectory(dir.to_string())),
        // A workspace nothing was written to yet.
        Err(e) if e.kind() == ErrorKind::NotFound && dir.is_root() => {
            return Ok(sorted_listing(Vec::new(), limit))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(WsError::NotFound(dir.to_string()))
        }
        Err(e) => return Err(io_err("stat", &e)),
    }
    let mut entries = Vec::new();
    let mut scanned_all = true;
    for (n, item) in handle
        .read_dir(here(&path))
        .map_err(|e| io_err("list", &e))?
        .enumerate()
    {
        if n >= MAX_SCANNED_ENTRIES {
            scanned_all = false;
            break;
        }
        let item = item.map_err(|e| io_err("list", &e))?;
        let Ok(name) = item.file_name().into_string() else {
            continue;
        };
        if let Some(e) = item.metadata().ok().and_then(|m| entry_of(dir, name, &m)) {
            entries.push(e);
        }
    }
    let mut listing = sorted_listing(entries, limit);
    listing.truncated |= !scanned_all;
    Ok(listing)
}

pub(super) fn walk_dir(root: &Path, dir: &WsPath, max_files: usize) -> WsResult<Walk> {
    let empty = Walk {
        files: Vec::new(),
        truncated: false,
    };
    let Some(handle) = open_root(root, false)? else {
        return match dir.is_root() {
            true => Ok(empty),
            false => Err(WsError::NotFound(dir.to_string())),
        };
    };
    walk_in(&handle, dir, max_files)
}

/// Files under `dir`, each directory opened relative to its parent's handle (never by path).
fn walk_in(handle: &Dir, dir: &WsPath, max_files: usize) -> WsResult<Walk> {
    let start = resolve(handle, dir)?;
    match handle.symlink_metadata(here(&start)) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(WsError::NotADirectory(dir.to_string())),
        Err(e) if e.kind() == ErrorKind::NotFound && dir.is_root() => {
            return Ok(Walk {
                files: Vec::new(),
                truncated: false,
            })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(WsError::NotFound(dir.to_string()))
        }
        Err(e) => return Err(io_err("stat", &e)),
    }
    let mut files = Vec::new();
    let mut truncated = false;
    let first = handle
        .open_dir(here(&start))
        .map_err(|e| io_err("open dir", &e))?;
    let mut stack = vec![(dir.clone(), first)];
    let mut scanned = 0usize;
    while let Some((ws, current)) = stack.pop() {
        let Ok(read) = current.entries() else {
            continue;
        };
        for item in read.flatten() {
            scanned += 1;
            if scanned > MAX_SCANNED_ENTRIES * 10 || files.len() >= max_files {
                truncated = true;
                break;
            }
            let (Ok(name), Ok(ft)) = (item.file_name().into_string(), item.file_type()) else {
                continue;
            };
            let Ok(child) = ws.join(&name) else { continue };
            if ft.is_dir() {
                if child.depth() < MAX_DEPTH {
                    if let Ok(sub) = item.open_dir() {
                        stack.push((child, sub));
                    }
                } else {
                    truncated = true;
                }
            } else if ft.is_file() {
                let size = item.metadata().map(|m| m.len()).unwrap_or(0);
                files.push((child, size));
            }
        }
        if truncated {
            break;
        }
    }
    files.sort();
    Ok(Walk { files, truncated })
}

pub(super) fn make_dir(root: &Path, dir: &WsPath) -> WsResult<bool> {
    let handle = open_root(root, true)?.ok_or_else(|| WsError::Internal("no root".into()))?;
    let path = resolve(&handle, dir)?;
    match handle.symlink_metadata(&path) {
        Ok(m) if m.is_dir() => return Ok(false),
        Ok(_) => return Err(WsError::AlreadyExists(dir.to_string())),
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(io_err("stat", &e)),
    }
    handle.create_dir_all(&path).map_err(|e| match e.kind() {
        ErrorKind::NotADirectory | ErrorKind::AlreadyExists => {
            WsError::NotADirectory(dir.parent().to_string())
        }
        _ => io_err("mkdir", &e),
    })?;
    Ok(true)
}

pub(super) fn delete_path(root: &Path, p: &WsPath, recursive: bool) -> WsResult<u64> {
    let handle = existing_root(root, p)?;
    let path = resolve(&handle, &p.parent())?.join(p.name());
    let meta = match handle.symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Err(WsError::NotFound(p.to_string()))
        }
        Err(e) => return Err(io_err("stat", &e)),
    };
    if !meta.is_dir() {
        // A file, or a symbolic link itself (never its target).
        handle
            .remove_file(&path)
            .map_err(|e| io_err("delete", &e))?;
        return Ok(1);
    }
    if !recursive {
        return match handle.remove_dir(&path) {
            Ok(()) => Ok(0),
            Err(e) if e.kind() == ErrorKind::DirectoryNotEmpty => {
                Err(WsError::NotEmpty(p.to_string()))
            }
            Err(e) => Err(io_err("delete", &e)),
        };
    }
    let count = walk_in(&handle, p, usize::MAX)?.files.len() as u64;
    // Inside the root's handle, and not following symbolic links inside the tree.
    handle
        .remove_dir_all(&path)
        .map_err(|e| io_err("delete", &e))?;
    Ok(count)
}
