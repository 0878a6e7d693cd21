//! Runs one (validated, approved) workspace tool call and shapes its result.

use base64::Engine;
use futures::StreamExt;
use serde_json::{json, Value};

use super::calls::{path_arg, Encoding, PatchArgs, SearchArgs, ToolCall, WriteArgs};
use super::patch;
use super::search::{Match, Matcher, MAX_FILES, MAX_SCANNED_BYTES};
use crate::error::Error;
use crate::ports::workspace::{Precondition, Workspace, WsError};

/// Most entries one listing returns.
pub const MAX_LIST_ENTRIES: usize = 1_000;
/// Files a search holds at once: read ahead (S3 round trips overlap) while one is scanned off
/// the async workers. With each file at most `AGENT_MAX_FILE_BYTES`, this bounds a search's
/// memory (4 MiB at the default), however many bytes it reads in all.
pub const SEARCH_READS: usize = 4;

/// Runs `call` in `ws` (its arguments were validated when it was asked for; what depends on
/// the workspace — paths, sizes — is checked here as it runs).
pub async fn run(ws: &dyn Workspace, call: &ToolCall, max_file_bytes: u64) -> Result<Value, Error> {
    match call {
        ToolCall::List(a) => {
            let dir = path_arg(&a.path, false)?;
            let listing = ws.list(&dir, MAX_LIST_ENTRIES).await?;
            Ok(
                json!({ "path": dir.to_string(), "entries": listing.entries, "truncated": listing.truncated }),
            )
        }
        ToolCall::Read(a) => {
            let file = path_arg(&a.path, true)?;
            let content = ws.read(&file, max_file_bytes).await?;
            let size = content.bytes.len();
            let (text, encoding) = match String::from_utf8(content.bytes) {
                Ok(s) => (s, "utf-8"),
                Err(e) => (
                    base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                    "base64",
                ),
            };
            Ok(
                json!({ "path": file.to_string(), "content": text, "encoding": encoding,
                "size": size, "version": content.version }),
            )
        }
        ToolCall::Exec(_) | ToolCall::Mcp(_) => Err(Error::internal(
            "commands and MCP calls do not run in a workspace",
        )),
        ToolCall::Write(a) => write(ws, a).await,
        ToolCall::Patch(a) => apply_patch(ws, a, max_file_bytes).await,
        ToolCall::Grep(a) | ToolCall::Glob(a) => search(ws, a, max_file_bytes).await,
        ToolCall::Mkdir(a) => {
            let dir = path_arg(&a.path, true)?;
            let created = ws.mkdir(&dir).await?;
            Ok(json!({ "path": dir.to_string(), "created": created }))
        }
        ToolCall::Delete(a) => {
            let path = path_arg(&a.path, true)?;
            let deleted = ws.delete(&path, a.recursive).await?;
            Ok(json!({ "path": path.to_string(), "deletedFiles": deleted }))
        }
    }
}

async fn write(ws: &dyn Workspace, a: &WriteArgs) -> Result<Value, Error> {
    let file = path_arg(&a.path, true)?;
    let bytes = match a.encoding {
        Encoding::Utf8 => a.content.clone().into_bytes(),
        Encoding::Base64 => base64::engine::general_purpose::STANDARD
            .decode(&a.content)
            .map_err(|_| Error::field("content", "is not valid base64"))?,
    };
    let pre = match (&a.expected_version, a.create_only) {
        (Some(v), _) => Precondition::Version(v.clone()),
        (None, true) => Precondition::Absent,
        (None, false) => Precondition::Any,
    };
    let size = bytes.len();
    let version = ws.write(&file, bytes, pre).await?;
    Ok(json!({ "path": file.to_string(), "version": version, "size": size }))
}

async fn apply_patch(ws: &dyn Workspace, a: &PatchArgs, max: u64) -> Result<Value, Error> {
    let file = path_arg(&a.path, true)?;
    let (base, pre) = match ws.read(&file, max).await {
        Ok(c) => {
            if a.expected_version.as_ref().is_some_and(|v| *v != c.version) {
                return Err(WsError::VersionMismatch(file.to_string()).into());
            }
            let text = String::from_utf8(c.bytes).map_err(|_| Error::Unprocessable {
                code: "PATCH_FAILED",
                message: "The file is not UTF-8 text; it cannot be patched".into(),
            })?;
            (text, Precondition::Version(c.version))
        }
        Err(WsError::NotFound(_)) if patch::creates_file(&a.patch) => {
            (String::new(), Precondition::Absent)
        }
        Err(e) => return Err(e.into()),
    };
    let text = a.patch.clone();
    let patched = tokio::task::spawn_blocking(move || patch::apply(&base, &text))
        .await
        .map_err(|e| Error::internal(format!("patch task: {e}")))??;
    if patched.text.len() as u64 > max {
        return Err(WsError::TooLarge {
            size: patched.text.len() as u64,
            limit: max,
        }
        .into());
    }
    let size = patched.text.len();
    let version = ws
        .write(&file, patched.text.into_bytes(), pre)
        .await
        .map_err(|e| match e {
            // Someone else created or changed it between our read and write.
            WsError::AlreadyExists(p) => WsError::VersionMismatch(p),
            other => other,
        })?;
    Ok(
        json!({ "path": file.to_string(), "version": version, "size": size, "hunks": patched.hunks }),
    )
}

async fn search(ws: &dyn Workspace, a: &SearchArgs, max_file: u64) -> Result<Value, Error> {
    let dir = path_arg(&a.path, false)?;
    let matcher = Matcher::compile(a)?;
    let walk = ws.walk(&dir, MAX_FILES).await?;
    let wanted: Vec<_> = walk
        .files
        .into_iter()
        .filter(|(p, _)| matcher.wants(&p.to_string()))
        .collect();
    if !matcher.greps() {
        let truncated = walk.truncated || wanted.len() > matcher.max_matches;
        let files: Vec<String> = wanted
            .iter()
            .take(matcher.max_matches)
            .map(|(p, _)| p.to_string())
            .collect();
        return Ok(json!({ "files": files, "filesScanned": wanted.len(), "truncated": truncated }));
    }
    let mut matches: Vec<Match> = Vec::new();
    let mut budget = MAX_SCANNED_BYTES;
    let mut scanned = 0usize;
    let mut truncated = walk.truncated;
    let mut readable = Vec::new();
    for (p, size) in wanted {
        if size > max_file {
            continue;
        }
        if size > budget {
            truncated = true;
            break;
        }
        budget -= size;
        readable.push(p);
    }
    // Each file is scanned as it arrives and dropped; at most SEARCH_READS are held at once.
    let mut reads = futures::stream::iter(readable)
        .map(|p| async move {
            match ws.read(&p, max_file).await {
                Ok(c) => Ok(Some((p.to_string(), c.bytes))),
                // Changed or removed since the walk: skip it.
                Err(WsError::NotFound(_) | WsError::TooLarge { .. } | WsError::NotAFile(_)) => {
                    Ok(None)
                }
                Err(e) => Err(e),
            }
        })
        .buffered(SEARCH_READS);
    while let Some(read) = reads.next().await {
        let Some((path, bytes)) = read? else {
            continue;
        };
        let m = matcher.clone();
        let found = std::mem::take(&mut matches);
        let (found, full) = tokio::task::spawn_blocking(move || {
            let mut out = found;
            let full = m.scan(&path, &bytes, &mut out);
            (out, full)
        })
        .await
        .map_err(|e| Error::internal(format!("search task: {e}")))?;
        matches = found;
        scanned += 1;
        if full {
            truncated = true;
            break;
        }
    }
    Ok(json!({ "matches": matches, "filesScanned": scanned, "truncated": truncated }))
}
