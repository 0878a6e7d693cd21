//! Running an approved command. The workspace is copied into a scratch directory (a local
//! directory and an S3 prefix alike — so the command sees regular files only, never a link out),
//! the program runs there with a cleared environment, no shell, its own process group, a time
//! limit, an output limit and cancellation; stdout and stderr are stored as ordered chunks (and
//! pushed as `exec_output` events), and only an allowlisted writer's changes are written back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use super::exec::{environment, resolve_program, utf8_prefix};
use super::model::{AuditEntry, Chunk, ExecRecord, ExecStatus, Stream};
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
/// Largest single file copied or written back.
const MAX_COPIED_FILE: u64 = 16 * 1024 * 1024;
/// Output is stored at least this often while a command runs.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// A buffered stream is stored once it holds this much.
const FLUSH_BYTES: usize = 16 * 1024;
/// How often a running command looks for a cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(250);
/// How long output still draining after the process ended is awaited.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

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
    fn expires(&self) -> chrono::DateTime<chrono::Utc> {
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
    let mut copied = HashMap::new();
    for (path, _) in walk.files {
        let content = match ws.read(&path, MAX_COPIED_FILE).await {
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
/// so a concurrent edit is not overwritten) and deleted ones. Returns how many changed.
async fn write_back(ws: &dyn Workspace, dir: &Path, copied: &Copied) -> Result<usize, String> {
    let scratch = crate::adapters::workspace::DirWorkspace::open(dir);
    let now = scratch
        .walk(&WsPath::root(), MAX_COPIED_FILES)
        .await
        .map_err(|e| format!("scratch directory: {e}"))?;
    let mut changed = 0;
    let mut seen = std::collections::HashSet::new();
    for (path, _) in &now.files {
        seen.insert(path.clone());
        let content = scratch
            .read(path, MAX_COPIED_FILE)
            .await
            .map_err(|e| format!("`{path}`: {e}"))?;
        let pre = match copied.get(path) {
            Some(v) if *v == content.version => continue,
            Some(v) => Precondition::Version(v.clone()),
            None => Precondition::Absent,
        };
        ws.write(path, content.bytes, pre)
            .await
            .map_err(|e| format!("`{path}` was not written back: {e}"))?;
        changed += 1;
    }
    for path in copied.keys().filter(|p| !seen.contains(*p)) {
        match ws.delete(path, false).await {
            Ok(_) | Err(WsError::NotFound(_)) => changed += 1,
            Err(e) => return Err(format!("`{path}` was not deleted: {e}")),
        }
    }
    Ok(changed)
}

/// Runs `exec` in a copy of `ws` and records everything; never fails (a failure is the run's
/// recorded end).
pub async fn run_job(env: &RunEnv, ws: Arc<dyn Workspace>, exec: ExecRecord, writes: bool) {
    let started = Instant::now();
    let dir = scratch_dir(&exec.id);
    let end = match tokio::fs::create_dir_all(&dir).await {
        Err(e) => failed(env, started, format!("scratch directory: {}", e.kind())),
        Ok(()) => match materialize(ws.as_ref(), &dir).await {
            Err(e) => failed(env, started, e),
            Ok(copied) => {
                let mut end = run_process(env, &exec, &dir, started).await;
                if writes && end.status == ExecStatus::Exited {
                    if let Err(e) = write_back(ws.as_ref(), &dir, &copied).await {
                        end.error = Some(e);
                    }
                }
                end
            }
        },
    };
    let _ = tokio::fs::remove_dir_all(&dir).await;
    finish(env, &exec, end).await;
}

fn failed(env: &RunEnv, started: Instant, why: String) -> ExecEnd {
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
async fn finish(env: &RunEnv, exec: &ExecRecord, end: ExecEnd) {
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

async fn announce(env: &RunEnv, exec: &ExecRecord, event: &str, data: serde_json::Value) {
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

/// Buffered output and the chunks made of it.
struct Output<'a> {
    env: &'a RunEnv,
    exec: &'a ExecRecord,
    buffers: [(Stream, Vec<u8>); 2],
    seq: u64,
    total: u64,
}

impl Output<'_> {
    /// Takes bytes read from `stream`; `false` once the output limit is reached (the rest is
    /// dropped).
    fn take(&mut self, stream: Stream, bytes: &[u8]) -> bool {
        let room = self.env.output_cap.saturating_sub(self.total) as usize;
        let kept = &bytes[..bytes.len().min(room)];
        self.total += kept.len() as u64;
        let i = usize::from(stream == Stream::Stderr);
        self.buffers[i].1.extend_from_slice(kept);
        kept.len() == bytes.len()
    }

    fn full(&self) -> bool {
        self.buffers.iter().any(|(_, b)| b.len() >= FLUSH_BYTES)
    }

    /// Stores what is buffered (whole UTF-8 only, unless `all`) as chunks, in order.
    async fn flush(&mut self, all: bool) {
        let mut chunks = Vec::new();
        for (stream, buf) in self.buffers.iter_mut() {
            let n = if all { buf.len() } else { utf8_prefix(buf) };
            if n == 0 {
                continue;
            }
            let bytes: Vec<u8> = buf.drain(..n).collect();
            self.seq += 1;
            chunks.push(Chunk {
                seq: self.seq,
                stream: *stream,
                data: String::from_utf8_lossy(&bytes).into_owned(),
                at: self.env.clock.now(),
            });
        }
        if chunks.is_empty() {
            return;
        }
        let (tenant, id) = (&self.exec.tenant_id, &self.exec.id);
        if let Err(e) = self
            .env
            .store
            .append_chunks(tenant, id, &chunks, self.env.expires())
            .await
        {
            tracing::warn!(exec = %id, error = %e, "command output was not stored");
        }
        for c in &chunks {
            let data = json!({ "execId": id, "seq": c.seq, "stream": c.stream, "data": c.data });
            announce(self.env, self.exec, "exec_output", data).await;
        }
    }
}

fn kill_group(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        // The whole process group: what the command started dies with it.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
}

async fn read_pipe(
    mut pipe: impl tokio::io::AsyncRead + Unpin,
    stream: Stream,
    tx: mpsc::Sender<(Stream, Vec<u8>)>,
) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 || tx.send((stream, buf[..n].to_vec())).await.is_err() {
            break;
        }
    }
}

/// Runs the program in `dir` until it exits, times out, is cancelled or fills its output.
pub async fn run_process(env: &RunEnv, exec: &ExecRecord, dir: &Path, started: Instant) -> ExecEnd {
    let Some(program) = resolve_program(&exec.program) else {
        return failed(
            env,
            started,
            format!("`{}` is not installed on the server", exec.program),
        );
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&exec.args)
        .current_dir(dir)
        .env_clear()
        .envs(environment(dir))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return failed(
                env,
                started,
                format!("it could not be started ({})", e.kind()),
            )
        }
    };
    let (tx, mut rx) = mpsc::channel(64);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(read_pipe(out, Stream::Stdout, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(read_pipe(err, Stream::Stderr, tx.clone()));
    }
    drop(tx);
    let mut out = Output {
        env,
        exec,
        buffers: [(Stream::Stdout, Vec::new()), (Stream::Stderr, Vec::new())],
        seq: 0,
        total: 0,
    };
    let deadline = tokio::time::sleep(Duration::from_secs(exec.timeout_seconds));
    tokio::pin!(deadline);
    let mut flush = tokio::time::interval(FLUSH_EVERY);
    let mut poll = tokio::time::interval(CANCEL_POLL);
    let mut stopped: Option<ExecStatus> = None;
    let mut exit: Option<std::process::ExitStatus> = None;
    let mut drained = false;
    let mut drain_until: Option<tokio::time::Instant> = None;
    while !(drained && exit.is_some()) {
        let drain_deadline = drain_until
            .unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400));
        tokio::select! {
            got = rx.recv(), if !drained => match got {
                Some((stream, bytes)) => {
                    if !out.take(stream, &bytes) && stopped.is_none() {
                        stopped = Some(ExecStatus::OutputLimit);
                        kill_group(&mut child);
                    }
                    if out.full() {
                        out.flush(false).await;
                    }
                }
                None => drained = true,
            },
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(-1)));
                drain_until = Some(tokio::time::Instant::now() + DRAIN_WAIT);
            }
            _ = flush.tick() => out.flush(false).await,
            _ = poll.tick(), if stopped.is_none() => {
                if let Ok(Some(e)) = env.store.exec(&exec.tenant_id, &exec.id).await {
                    if e.cancel_requested {
                        stopped = Some(ExecStatus::Cancelled);
                        kill_group(&mut child);
                    }
                }
            }
            _ = &mut deadline, if stopped.is_none() && exit.is_none() => {
                stopped = Some(ExecStatus::TimedOut);
                kill_group(&mut child);
            }
            // Something the command started still holds its pipes: stop waiting for it.
            _ = tokio::time::sleep_until(drain_deadline), if drain_until.is_some() => {
                kill_group(&mut child);
                drained = true;
            }
        }
    }
    out.flush(true).await;
    let code = exit.and_then(|s| s.code());
    ExecEnd {
        status: stopped.unwrap_or(ExecStatus::Exited),
        exit_code: if stopped.is_none() { code } else { None },
        ended_at: env.clock.now(),
        duration_ms: started.elapsed().as_millis() as u64,
        output_bytes: out.total,
        error: None,
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
    let ws = ctx
        .store
        .workspace(tenant_id, &exec.workspace_id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("the command's workspace is gone")?;
    let args = super::exec::ExecArgs {
        program: exec.program.clone(),
        args: exec.args.clone(),
        timeout_seconds: Some(exec.timeout_seconds),
    };
    let env = env_of(ctx);
    let Some(rule) = args.allowed(&ws.allowed_commands) else {
        let end = failed(
            &env,
            Instant::now(),
            "the command is no longer allowed".into(),
        );
        finish(&env, &exec, end).await;
        return Ok(());
    };
    let files = ctx.workspaces.open(&ws.root).map_err(|e| e.to_string())?;
    run_job(&env, files, exec, rule.writes).await;
    Ok(())
}

/// The scratch directory of a run (for tests that look for leftovers).
pub fn scratch_dir(exec_id: &str) -> PathBuf {
    std::env::temp_dir().join(format!("agent-exec-{exec_id}"))
}
