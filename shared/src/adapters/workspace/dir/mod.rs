//! A workspace in a local directory (local-api). Every operation runs inside a capability
//! handle on the root (`cap-std`: `openat2`/`RESOLVE_BENEATH` on Linux), so no path — not
//! even a symbolic link swapped in between a check and its use — can reach outside the root.
//! On top, every component of a path is checked and a symbolic link anywhere is refused;
//! files are opened `O_NOFOLLOW | O_NONBLOCK` (a FIFO cannot block) and must be regular,
//! written to a temporary file and renamed into place, and conditional writes are serialised
//! by one process-wide lock so a stale version can never overwrite. All file system work runs
//! on the blocking pool, never on the async workers.

mod tree;

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

use super::md5_version;
use crate::domain::ws_path::WsPath;
use crate::ports::workspace::{
    FileContent, Listing, Precondition, Walk, Workspace, WsError, WsResult,
};
use tree::{delete_path, list_dir, make_dir, walk_dir};

/// Largest file whose version a conditional write computes (the largest file a read returns).
const MAX_VERSIONED_BYTES: u64 = 16 * 1024 * 1024;

/// Serialises check-then-write sections of conditional writes in this process.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// A workspace rooted at a local directory.
#[derive(Debug, Clone)]
pub struct DirWorkspace {
    root: PathBuf,
}

impl DirWorkspace {
    /// A workspace at `root`. No I/O: the root is made when the workspace is provisioned
    /// (and by the first write), and `check` reports it missing.
    pub fn open(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Path) -> WsResult<T> + Send + 'static,
    ) -> WsResult<T> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || f(&root))
            .await
            .map_err(|e| WsError::Internal(format!("blocking task: {e}")))?
    }
}

/// The capability handle on the root; `None` when the root does not exist yet (unless
/// `create`, which makes it).
pub(super) fn open_root(root: &Path, create: bool) -> WsResult<Option<Dir>> {
    if create {
        std::fs::create_dir_all(root).map_err(|e| io_err("create root", &e))?;
    }
    match Dir::open_ambient_dir(root, cap_std::ambient_authority()) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("open root", &e)),
    }
}

/// The root handle, or the error for `p` in a workspace nothing was written to yet.
pub(super) fn existing_root(root: &Path, p: &WsPath) -> WsResult<Dir> {
    open_root(root, false)?.ok_or_else(|| WsError::NotFound(p.to_string()))
}

pub(super) fn io_err(op: &str, e: &std::io::Error) -> WsError {
    WsError::Internal(format!("{op}: {}", e.kind()))
}

/// `p` relative to the root, refusing any symbolic link among its existing components.
pub(super) fn resolve(dir: &Dir, p: &WsPath) -> WsResult<PathBuf> {
    let mut cur = PathBuf::new();
    let mut exists = true;
    for seg in p.segments() {
        cur.push(seg);
        if !exists {
            continue;
        }
        match dir.symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Err(WsError::Symlink(p.to_string())),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => exists = false,
            Err(e) if e.kind() == ErrorKind::NotADirectory => {
                return Err(WsError::NotADirectory(p.parent().to_string()))
            }
            Err(e) => return Err(io_err("stat", &e)),
        }
    }
    Ok(cur)
}

/// The path of the root itself inside its handle.
pub(super) fn here(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

fn open_nofollow(dir: &Dir, path: &Path, p: &WsPath) -> WsResult<std::fs::File> {
    // Non-blocking so a FIFO cannot hang the open; the caller then refuses anything but a
    // regular file.
    dir.open_with(
        path,
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK),
    )
    .map(|f| f.into_std())
    .map_err(|e| match e.kind() {
        ErrorKind::NotFound => WsError::NotFound(p.to_string()),
        // ELOOP: the last component is a symbolic link.
        _ if e.raw_os_error() == Some(libc::ELOOP) => WsError::Symlink(p.to_string()),
        _ => io_err("open", &e),
    })
}

fn read_file(root: &Path, p: &WsPath, max: u64) -> WsResult<FileContent> {
    let dir = existing_root(root, p)?;
    read_in(&dir, p, max)
}

fn read_in(dir: &Dir, p: &WsPath, max: u64) -> WsResult<FileContent> {
    let path = resolve(dir, p)?;
    let file = open_nofollow(dir, &path, p)?;
    let meta = file.metadata().map_err(|e| io_err("stat", &e))?;
    if !meta.is_file() {
        return Err(WsError::NotAFile(p.to_string()));
    }
    if meta.len() > max {
        return Err(WsError::TooLarge {
            size: meta.len(),
            limit: max,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_err("read", &e))?;
    if bytes.len() as u64 > max {
        return Err(WsError::TooLarge {
            size: bytes.len() as u64,
            limit: max,
        });
    }
    let version = md5_version(&bytes);
    Ok(FileContent { bytes, version })
}

fn write_file(root: &Path, p: &WsPath, bytes: &[u8], pre: &Precondition) -> WsResult<String> {
    let dir = open_root(root, true)?.ok_or_else(|| WsError::Internal("no root".into()))?;
    let path = resolve(&dir, p)?;
    let parent = resolve(&dir, &p.parent())?;
    // The lock guards no data, so a panic elsewhere while holding it leaves nothing broken.
    let _guard = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let current = match dir.symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => return Err(WsError::Symlink(p.to_string())),
        Ok(m) if m.is_dir() => return Err(WsError::NotAFile(p.to_string())),
        // The version is only needed to check one; a file larger than any read allows cannot
        // have the version a caller read.
        Ok(_) if matches!(pre, Precondition::Version(_)) => {
            match read_in(&dir, p, MAX_VERSIONED_BYTES) {
                Ok(c) => Some(c.version),
                Err(WsError::TooLarge { .. }) => Some(String::new()),
                Err(e) => return Err(e),
            }
        }
        Ok(_) => Some(String::new()),
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) if e.kind() == ErrorKind::NotADirectory => {
            return Err(WsError::NotADirectory(p.parent().to_string()))
        }
        Err(e) => return Err(io_err("stat", &e)),
    };
    match (pre, &current) {
        (Precondition::Version(want), Some(have)) if want == have => {}
        (Precondition::Version(_), _) => return Err(WsError::VersionMismatch(p.to_string())),
        (Precondition::Absent, Some(_)) => return Err(WsError::AlreadyExists(p.to_string())),
        _ => {}
    }
    if !p.parent().is_root() {
        dir.create_dir_all(&parent).map_err(|e| match e.kind() {
            ErrorKind::NotADirectory | ErrorKind::AlreadyExists => {
                WsError::NotADirectory(p.parent().to_string())
            }
            _ => io_err("create parent", &e),
        })?;
    }
    // A short name of its own: the target's name may already use all 255 bytes.
    let tmp = parent.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
    let written = dir
        .open_with(&tmp, OpenOptions::new().write(true).create_new(true))
        .map(|f| f.into_std())
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_data()))
        .and_then(|_| dir.rename(&tmp, &dir, &path));
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        return Err(io_err("write", &e));
    }
    Ok(md5_version(bytes))
}

#[async_trait]
impl Workspace for DirWorkspace {
    async fn list(&self, dir: &WsPath, limit: usize) -> WsResult<Listing> {
        let dir = dir.clone();
        self.blocking(move |root| list_dir(root, &dir, limit)).await
    }

    async fn read(&self, file: &WsPath, max_bytes: u64) -> WsResult<FileContent> {
        let file = file.clone();
        self.blocking(move |root| read_file(root, &file, max_bytes))
            .await
    }

    async fn write(&self, file: &WsPath, bytes: Vec<u8>, pre: Precondition) -> WsResult<String> {
        let file = file.clone();
        self.blocking(move |root| write_file(root, &file, &bytes, &pre))
            .await
    }

    async fn mkdir(&self, dir: &WsPath) -> WsResult<bool> {
        let dir = dir.clone();
        self.blocking(move |root| make_dir(root, &dir)).await
    }

    async fn delete(&self, path: &WsPath, recursive: bool) -> WsResult<u64> {
        let path = path.clone();
        self.blocking(move |root| delete_path(root, &path, recursive))
            .await
    }

    async fn walk(&self, dir: &WsPath, max_files: usize) -> WsResult<Walk> {
        let dir = dir.clone();
        self.blocking(move |root| walk_dir(root, &dir, max_files))
            .await
    }

    async fn check(&self) -> Result<(), String> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || {
            // A root nothing was written to yet is fine if it can be made: look at the
            // nearest directory that exists.
            let mut at = root.as_path();
            loop {
                match std::fs::metadata(at) {
                    Ok(m) if m.is_dir() && !m.permissions().readonly() => return Ok(()),
                    Ok(_) => {
                        return Err("the workspace directory is not a writable directory".to_owned())
                    }
                    Err(e) if e.kind() == ErrorKind::NotFound => match at.parent() {
                        Some(p) if !p.as_os_str().is_empty() => at = p,
                        _ => return Err("the workspace directory cannot be created".to_owned()),
                    },
                    Err(e) => {
                        return Err(format!(
                            "the workspace directory is unavailable ({})",
                            e.kind()
                        ))
                    }
                }
            }
        })
        .await
        .map_err(|e| e.to_string())?
    }
}
