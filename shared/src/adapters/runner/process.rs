//! One command as a child process: no shell, a cleared environment, its own process group
//! (killed as a whole at the end, whatever happened), a time limit, an output limit and
//! cancellation polled from the run's record. Output is kept in arrival order across stdout
//! and stderr and stored as chunks of at most 8 KiB (a Pusher message stays under 10 KB). The
//! program is looked up on a fixed search path, never the server's `PATH`, and gets an
//! environment of its own (nothing of the server's).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;

use super::dirs::RunDirs;
use super::record::{announce, failed, RunEnv};
use crate::domain::agent_tools::{Chunk, ExecRecord, ExecStatus, Stream};
use crate::ports::ExecEnd;

/// Output is stored at least this often while a command runs.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// Largest chunk stored (and pushed).
pub const CHUNK_BYTES: usize = 8 * 1024;
/// How often a running command looks for a cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(250);
/// After the process ended: how long the pipes may stay silent before reading stops.
const DRAIN_IDLE: Duration = Duration::from_secs(2);

/// Output not yet stored, in arrival order (adjacent reads of one stream merged).
struct Output<'a> {
    env: &'a RunEnv,
    exec: &'a ExecRecord,
    pending: Vec<(Stream, Vec<u8>)>,
    seq: u64,
    total: u64,
    lost: bool,
}

impl Output<'_> {
    /// Takes bytes read from `stream`; `false` once the output limit is reached (the rest is
    /// dropped).
    fn take(&mut self, stream: Stream, bytes: &[u8]) -> bool {
        let room = self.env.output_cap.saturating_sub(self.total) as usize;
        let kept = &bytes[..bytes.len().min(room)];
        self.total += kept.len() as u64;
        match self.pending.last_mut() {
            Some((s, buf)) if *s == stream => buf.extend_from_slice(kept),
            _ if kept.is_empty() => {}
            _ => self.pending.push((stream, kept.to_vec())),
        }
        kept.len() == bytes.len()
    }

    fn buffered(&self) -> usize {
        self.pending.iter().map(|(_, b)| b.len()).sum()
    }

    /// Cuts what is pending into chunks (a character cut at the very end waits for the next
    /// read, unless `all`).
    fn cut(&mut self, all: bool) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        let segments = std::mem::take(&mut self.pending);
        let last = segments.len().saturating_sub(1);
        for (i, (stream, mut bytes)) in segments.into_iter().enumerate() {
            if i == last && !all {
                let keep = utf8_prefix(&bytes);
                let tail = bytes.split_off(keep);
                if !tail.is_empty() {
                    self.pending.push((stream, tail));
                }
            }
            let mut rest = bytes.as_slice();
            while !rest.is_empty() {
                let mut n = rest.len().min(CHUNK_BYTES);
                // Never split a character between two chunks.
                while n < rest.len() && n > 0 && (rest[n] & 0xC0) == 0x80 {
                    n -= 1;
                }
                if n == 0 {
                    n = rest.len().min(CHUNK_BYTES);
                }
                self.seq += 1;
                chunks.push(Chunk {
                    seq: self.seq,
                    stream,
                    data: String::from_utf8_lossy(&rest[..n]).into_owned(),
                    at: self.env.clock.now(),
                });
                rest = &rest[n..];
            }
        }
        chunks
    }

    /// Stores what is pending as chunks, in order, retrying a busy store; then pushes them.
    async fn flush(&mut self, all: bool) {
        let chunks = self.cut(all);
        if chunks.is_empty() {
            return;
        }
        let (tenant, id) = (&self.exec.tenant_id, &self.exec.id);
        let store = |_| {
            self.env
                .store
                .append_chunks(tenant, id, &chunks, self.env.expires())
        };
        if let Err(e) = crate::retry::retry(&crate::retry::BUSY_STORE, store, |_| true).await {
            self.lost = true;
            tracing::warn!(exec = %id, error = %e, "command output was not stored");
        }
        for c in &chunks {
            let data = json!({ "execId": id, "seq": c.seq, "stream": c.stream, "data": c.data });
            announce(self.env, self.exec, "exec_output", data).await;
        }
    }
}

/// Kills the whole process group `pgid` (the command and everything it started that did not
/// leave the group).
fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid.filter(|p| *p > 1) {
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
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

/// Runs the program in the run's `work` directory (its `home` and `tmp` as `HOME` and
/// `TMPDIR`) until it exits, times out, is cancelled or fills its output.
pub async fn run_process(
    env: &RunEnv,
    exec: &ExecRecord,
    run: &RunDirs,
    started: Instant,
) -> ExecEnd {
    let Some(program) = resolve_program(&exec.program) else {
        return failed(
            env,
            started,
            format!("`{}` is not installed on the server", exec.program),
        );
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&exec.args)
        .current_dir(&run.work)
        .env_clear()
        .envs(environment(&run.home, &run.tmp))
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
    // The group's id is the child's pid; kept, because the child's id is gone once reaped.
    let pgid = child.id().and_then(|p| i32::try_from(p).ok());
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
        pending: Vec::new(),
        seq: 0,
        total: 0,
        lost: false,
    };
    let deadline = tokio::time::sleep(Duration::from_secs(exec.timeout_seconds));
    tokio::pin!(deadline);
    let mut flush = tokio::time::interval(FLUSH_EVERY);
    flush.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut poll = tokio::time::interval(CANCEL_POLL);
    poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut stopped: Option<ExecStatus> = None;
    let mut exit: Option<std::process::ExitStatus> = None;
    let mut drained = false;
    let idle = tokio::time::sleep(Duration::from_secs(86_400));
    tokio::pin!(idle);
    while !(drained && exit.is_some()) {
        tokio::select! {
            got = rx.recv(), if !drained => match got {
                Some((stream, bytes)) => {
                    if exit.is_some() {
                        idle.as_mut().reset(tokio::time::Instant::now() + DRAIN_IDLE);
                    }
                    if !out.take(stream, &bytes) && stopped.is_none() {
                        stopped = Some(ExecStatus::OutputLimit);
                        kill_group(pgid);
                    }
                    if out.buffered() >= CHUNK_BYTES {
                        out.flush(false).await;
                    }
                }
                None => drained = true,
            },
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(-1)));
                // What it started dies with it; the pipes then close.
                kill_group(pgid);
                idle.as_mut().reset(tokio::time::Instant::now() + DRAIN_IDLE);
            }
            _ = flush.tick() => out.flush(false).await,
            _ = poll.tick(), if stopped.is_none() && exit.is_none() => {
                if let Ok(Some(e)) = env.store.exec(&exec.tenant_id, &exec.id).await {
                    if e.cancel_requested {
                        stopped = Some(ExecStatus::Cancelled);
                        kill_group(pgid);
                    }
                }
            }
            _ = &mut deadline, if stopped.is_none() && exit.is_none() => {
                stopped = Some(ExecStatus::TimedOut);
                kill_group(pgid);
            }
            // A process that left the group still holds the pipes: stop reading (it is not
            // killed by group here: once the group is empty its id may be reused).
            _ = &mut idle, if exit.is_some() => drained = true,
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
        error: out
            .lost
            .then(|| "part of the output could not be stored".to_owned()),
    }
}

/// Where programs are looked up (the server's own `PATH` is never used); `/opt/bin` is where
/// Lambda layers put programs.
pub const SEARCH_PATH: &str = "/opt/bin:/usr/local/bin:/usr/bin:/bin";

/// The executable `program` names on the search path.
pub fn resolve_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    SEARCH_PATH.split(':').find_map(|dir| {
        let p = PathBuf::from(dir).join(program);
        let meta = std::fs::metadata(&p).ok()?;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(p)
    })
}

/// The whole environment a command gets (the server's is cleared first): `HOME` and `TMPDIR`
/// are the run's own directories.
pub fn environment(home: &std::path::Path, tmp: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", SEARCH_PATH.to_owned()),
        ("HOME", home.display().to_string()),
        ("TMPDIR", tmp.display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        ("TERM", "dumb".to_owned()),
        ("NO_COLOR", "1".to_owned()),
    ]
}

/// How much of `buf` is whole UTF-8 (a character cut at the end waits for the next read).
pub fn utf8_prefix(buf: &[u8]) -> usize {
    match std::str::from_utf8(buf) {
        Ok(_) => buf.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => buf.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_resolve_on_the_fixed_path_and_utf8_is_cut_whole() {
        assert!(resolve_program("sh").is_some());
        assert!(resolve_program("no-such-program-xyz").is_none());
        let s = "héllo".as_bytes();
        assert_eq!(utf8_prefix(&s[..2]), 1, "the é is not complete yet");
        assert_eq!(utf8_prefix(s), s.len());
        assert_eq!(utf8_prefix(b"\xff\xfe"), 2, "invalid bytes are passed on");
    }
}
