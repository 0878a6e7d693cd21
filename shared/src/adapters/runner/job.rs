//! Running an approved command. The workspace is copied into a scratch directory (a local
//! directory and an S3 prefix alike — so the command sees regular files only, never a link out)
//! inside a private directory of the run's own (with its `HOME` and `TMPDIR`), the program runs
//! there with a cleared environment, no shell, its own process group, a time limit, an output
//! limit and cancellation; stdout and stderr are stored as ordered chunks (and
//! pushed as `exec_output` events), and only an allowlisted writer's changes are written back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;

use super::dirs::{scratch_dir, RunDirs};
use super::record::{failed, finish, RunEnv};
use crate::adapters::workspace::{md5_version, DirWorkspace};
use crate::domain::agent_tools::{ExecRecord, ExecStatus};
use crate::domain::ws_path::WsPath;
use crate::ports::workspace::{Precondition, Workspace, WsError};

/// Most files copied into a command's scratch directory.
pub const MAX_COPIED_FILES: usize = 5_000;
/// Most bytes copied into a command's scratch directory.
pub const MAX_COPIED_BYTES: u64 = 256 * 1024 * 1024;
/// Files read at once while copying a workspace.
const COPY_READS: usize = 16;
/// Largest single file copied or written back.
const MAX_COPIED_FILE: u64 = 16 * 1024 * 1024;
/// A run whose start is older than this when its runner gets it is refused (a delayed
/// asynchronous invocation must not start a command long after it was approved).
const MAX_START_DELAY_SECONDS: i64 = 120;

/// Files of the workspace as copied (path → version), to find what a writer changed.
type Copied = HashMap<WsPath, String>;

/// Copies the workspace into `dir` (bounded in files and bytes).
async fn materialize(ws: &dyn Workspace, dir: &Path) -> Result<Copied, String> {
    let walk = ws
        .walk(&WsPath::root(), MAX_COPIED_FILES)
        .await
        .map_err(|e| format!("the workspace could not be listed: {e}"))?;
    if walk.truncated {
        return Err(format!(
            "the workspace has more than {MAX_COPIED_FILES} files"
        ));
    }
    let total: u64 = walk.files.iter().map(|(_, s)| *s).sum();
    if total > MAX_COPIED_BYTES {
        return Err("the workspace is larger than 256 MiB".into());
    }
    // Reads overlap (S3 round trips); files are written as they arrive.
    let mut reads = futures::stream::iter(walk.files.into_iter().map(|(path, _)| async move {
        let content = ws.read(&path, MAX_COPIED_FILE).await;
        (path, content)
    }))
    .buffer_unordered(COPY_READS);
    let mut copied = HashMap::new();
    while let Some((path, content)) = reads.next().await {
        let content = match content {
            Ok(c) => c,
            Err(WsError::TooLarge { .. } | WsError::NotFound(_)) => continue,
            Err(e) => return Err(format!("`{path}` could not be read: {e}")),
        };
        let target = path
            .segments()
            .iter()
            .fold(dir.to_path_buf(), |p, s| p.join(s));
        if let Some(parent) = target.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| format!("scratch directory: {}", e.kind()))?;
        }
        tokio::fs::write(&target, &content.bytes)
            .await
            .map_err(|e| format!("scratch directory: {}", e.kind()))?;
        copied.insert(path, md5_version(&content.bytes));
    }
    Ok(copied)
}

/// Writes a writer's changes back: changed and new files (conditional on the version copied,
/// so a concurrent edit is not overwritten) and files it deleted. Everything is read and
/// planned first; nothing is written unless the whole scratch copy could be read.
async fn write_back(ws: &dyn Workspace, dir: &Path, copied: &Copied) -> Result<usize, String> {
    let scratch = DirWorkspace::open(dir);
    let now = scratch
        .walk(&WsPath::root(), MAX_COPIED_FILES)
        .await
        .map_err(|e| format!("scratch directory: {e}"))?;
    if now.truncated {
        return Err(format!(
            "the command left more than {MAX_COPIED_FILES} files; nothing was written back"
        ));
    }
    let mut writes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (path, _) in &now.files {
        seen.insert(path.clone());
        let content = scratch
            .read(path, MAX_COPIED_FILE)
            .await
            .map_err(|e| format!("`{path}` cannot be written back ({e}); nothing was"))?;
        let pre = match copied.get(path) {
            Some(v) if *v == content.version => continue,
            Some(v) => Precondition::Version(v.clone()),
            None => Precondition::Absent,
        };
        writes.push((path.clone(), content.bytes, pre));
    }
    // Deleted: gone from the copy (not merely replaced by something the walk skips).
    let mut deletes = Vec::new();
    for path in copied.keys().filter(|p| !seen.contains(*p)) {
        let on_disk = path
            .segments()
            .iter()
            .fold(dir.to_path_buf(), |p, s| p.join(s));
        if matches!(tokio::fs::symlink_metadata(&on_disk).await, Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        {
            deletes.push(path.clone());
        }
    }
    let changed = writes.len() + deletes.len();
    for (path, bytes, pre) in writes {
        ws.write(&path, bytes, pre)
            .await
            .map_err(|e| format!("`{path}` was not written back: {e}"))?;
    }
    for path in deletes {
        match ws.delete(&path, false).await {
            Ok(_) | Err(WsError::NotFound(_)) => {}
            Err(e) => return Err(format!("`{path}` was not deleted: {e}")),
        }
    }
    Ok(changed)
}

/// Removes a scratch directory, making read-only directories a program left writable first.
async fn remove_scratch(dir: PathBuf) {
    let result = tokio::task::spawn_blocking(move || {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::remove_dir_all(&dir).is_ok() || !dir.exists() {
            return Ok(());
        }
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
            if let Ok(entries) = std::fs::read_dir(&d) {
                for e in entries.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                }
            }
        }
        std::fs::remove_dir_all(&dir)
    })
    .await;
    if !matches!(result, Ok(Ok(()))) {
        tracing::warn!("a command's scratch directory could not be removed");
    }
}

/// Runs `exec` in a copy of `ws` and records everything; never fails (a failure is the run's
/// recorded end). The run is claimed first: a second delivery of the same run does nothing.
pub async fn run_job(env: &RunEnv, ws: Arc<dyn Workspace>, exec: ExecRecord, writes: bool) {
    let started = Instant::now();
    let now = env.clock.now();
    match env.store.claim_exec(&exec.tenant_id, &exec.id, now).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::error!(exec = %exec.id, error = %e, "a command could not be claimed");
            return;
        }
    }
    if (now - exec.started_at).num_seconds() > MAX_START_DELAY_SECONDS {
        let end = failed(env, started, "the command was not started in time".into());
        return finish(env, &exec, end).await;
    }
    let root = scratch_dir(&exec.id);
    let made = tokio::task::spawn_blocking({
        let root = root.clone();
        move || RunDirs::make(&root)
    })
    .await
    .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    let end = match made {
        Err(e) => failed(env, started, format!("scratch directory: {}", e.kind())),
        Ok(run) => match materialize(ws.as_ref(), &run.work).await {
            Err(e) => failed(env, started, e),
            Ok(copied) => {
                let mut end = super::process::run_process(env, &exec, &run, started).await;
                if writes && end.status == ExecStatus::Exited {
                    if let Err(e) = write_back(ws.as_ref(), &run.work, &copied).await {
                        end.error = Some(e);
                    }
                }
                end
            }
        },
    };
    remove_scratch(root).await;
    finish(env, &exec, end).await;
}
