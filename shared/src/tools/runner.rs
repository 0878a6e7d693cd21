//! Running an approved command. The workspace is copied into a scratch directory (a local
//! directory and an S3 prefix alike — so the command sees regular files only, never a link out)
//! inside a private directory of the run's own (with its `HOME` and `TMPDIR`), the program runs
//! there with a cleared environment, no shell, its own process group, a time limit, an output
//! limit and cancellation; stdout and stderr are stored as ordered chunks (and
//! pushed as `exec_output` events), and only an allowlisted writer's changes are written back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use super::model::{AuditEntry, ExecRecord, ExecStatus};
use crate::adapters::workspace::md5_version;
use crate::clock::Clock;
use crate::ports::workspace::{Precondition, Workspace, WsError};
use crate::ports::{ExecEnd, Store};
use crate::realtime::Realtime;
use crate::tools::path::WsPath;

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

/// What a run needs besides the command: where to record it and how.
#[derive(Clone)]
pub struct RunEnv {
    pub store: Arc<dyn Store>,
    pub realtime: Option<Arc<dyn Realtime>>,
    pub clock: Arc<dyn Clock>,
    pub retention_days: i64,
    pub output_cap: u64,
}

impl RunEnv {
    pub(super) fn expires(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now() + chrono::Duration::days(self.retention_days)
    }
}

/// The realtime channel of an agent session (signed by `/api/pusher/auth` for its owner).
pub fn agent_channel(session_id: &str) -> String {
    format!("private-agent-{session_id}")
}

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
    let scratch = crate::adapters::workspace::DirWorkspace::open(dir);
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

pub(super) fn failed(env: &RunEnv, started: Instant, why: String) -> ExecEnd {
    ExecEnd {
        status: ExecStatus::Failed,
        exit_code: None,
        ended_at: env.clock.now(),
        duration_ms: started.elapsed().as_millis() as u64,
        output_bytes: 0,
        error: Some(why),
    }
}

/// Records the end, audits it and announces it.
pub(super) async fn finish(env: &RunEnv, exec: &ExecRecord, end: ExecEnd) {
    if let Err(e) = env.store.finish_exec(&exec.tenant_id, &exec.id, &end).await {
        tracing::error!(exec = %exec.id, error = %e, "the end of a command was not recorded");
    }
    let outcome = match (end.status, end.exit_code) {
        (ExecStatus::Exited, Some(code)) => format!("exited:{code}"),
        (s, _) => s.as_str().to_owned(),
    };
    let entry = AuditEntry {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: exec.session_id.clone(),
        user_id: exec.user_id.clone(),
        action: "exec.end".into(),
        target: exec.id.clone(),
        approved: Some(true),
        timestamp: env.clock.now(),
        outcome,
        duration_ms: end.duration_ms,
        approval_id: None,
    };
    if let Err(e) = env
        .store
        .append_audit(&exec.tenant_id, &entry, env.expires())
        .await
    {
        tracing::error!(exec = %exec.id, error = %e, "the end of a command was not audited");
    }
    announce(
        env,
        exec,
        "exec_exit",
        json!({ "execId": exec.id, "status": end.status, "exitCode": end.exit_code,
            "durationMs": end.duration_ms }),
    )
    .await;
}

pub(super) async fn announce(
    env: &RunEnv,
    exec: &ExecRecord,
    event: &str,
    data: serde_json::Value,
) {
    if let Some(rt) = &env.realtime {
        let channel = agent_channel(&exec.session_id);
        let send = rt.trigger(&channel, event, &data);
        match tokio::time::timeout(Duration::from_secs(1), send).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "realtime {event} failed"),
            Err(_) => tracing::warn!("realtime {event} timed out"),
        }
    }
}

/// What a run records with, from the context.
pub fn env_of(ctx: &crate::context::AppContext) -> RunEnv {
    RunEnv {
        store: ctx.store.clone(),
        realtime: ctx.realtime.clone(),
        clock: ctx.clock.clone(),
        retention_days: ctx.config.tools.audit_retention_days,
        output_cap: ctx.config.tools.exec_output_bytes,
    }
}

/// Runs the recorded run `exec_id` of `tenant_id` (the cloud runner's entry): the command, its
/// workspace and whether it writes are read from the store, not from whoever asked.
pub async fn run_recorded(
    ctx: &crate::context::AppContext,
    tenant_id: &str,
    exec_id: &str,
) -> Result<(), String> {
    let exec = ctx
        .store
        .exec(tenant_id, exec_id)
        .await
        .map_err(|e| e.to_string())?
        .filter(|e| e.status == ExecStatus::Running)
        .ok_or("no such running command")?;
    let env = env_of(ctx);
    let ws = match ctx.store.workspace(tenant_id, &exec.workspace_id).await {
        Ok(Some(ws)) => ws,
        Ok(None) => {
            finish(
                &env,
                &exec,
                failed(&env, Instant::now(), "the workspace is gone".into()),
            )
            .await;
            return Ok(());
        }
        Err(e) => {
            finish(
                &env,
                &exec,
                failed(&env, Instant::now(), "the store is unavailable".into()),
            )
            .await;
            return Err(e.to_string());
        }
    };
    let args = super::exec::ExecArgs {
        program: exec.program.clone(),
        args: exec.args.clone(),
        timeout_seconds: Some(exec.timeout_seconds),
    };
    let Some(rule) = args.allowed(&ws.allowed_commands) else {
        let end = failed(
            &env,
            Instant::now(),
            "the command is no longer allowed".into(),
        );
        finish(&env, &exec, end).await;
        return Ok(());
    };
    let files = match ctx.workspaces.open(&ws.root) {
        Ok(f) => f,
        Err(e) => {
            finish(
                &env,
                &exec,
                failed(
                    &env,
                    Instant::now(),
                    format!("the workspace cannot be opened: {e}"),
                ),
            )
            .await;
            return Ok(());
        }
    };
    run_job(&env, files, exec, rule.writes).await;
    Ok(())
}

/// Where runs' private directories are made: one directory, readable by this user only.
fn runs_root() -> PathBuf {
    std::env::temp_dir().join("agent-exec-runs")
}

/// The private directory of a run (removed when it ends; tests look for leftovers).
pub fn scratch_dir(exec_id: &str) -> PathBuf {
    runs_root().join(exec_id)
}

/// A run's private directories: the workspace copy it runs in, its `HOME` and its `TMPDIR`,
/// all inside one directory of its own (mode 0700, made new for the run), so nothing a run
/// reaches through `..` or its temporary files is another run's.
pub struct RunDirs {
    pub work: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
}

impl RunDirs {
    /// Makes the run's directory `root` (which must not exist yet) and its parts.
    fn make(root: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let parent = runs_root();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&parent)?;
        // Refuse a parent someone else planted (a link, another owner's directory).
        let meta = std::fs::symlink_metadata(&parent)?;
        if !meta.is_dir() {
            return Err(std::io::ErrorKind::AlreadyExists.into());
        }
        std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o700))?;
        std::fs::DirBuilder::new().mode(0o700).create(root)?;
        let dirs = Self {
            work: root.join("work"),
            home: root.join("home"),
            tmp: root.join("tmp"),
        };
        for d in [&dirs.work, &dirs.home, &dirs.tmp] {
            std::fs::DirBuilder::new().mode(0o700).create(d)?;
        }
        Ok(dirs)
    }
}
