//! Tool calls as data: each route's arguments, the tool's name (the extension's MCP names),
//! its approval tier and what it acts on. Arguments are checked here, before a call runs or is
//! parked for approval, so a bad path is a 400 at once and never a pending approval. Fields a
//! tool does not know are ignored, as everywhere in the contract (and dropped: an approval
//! stores the arguments as parsed).

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::search::{SearchArgs, MAX_MATCHES, MAX_PATTERN_BYTES};
use crate::domain::agent_tools::Tier;
use crate::domain::ws_path::WsPath;
use crate::error::{Error, FieldProblem};

/// Largest unified diff accepted, in bytes.
pub const MAX_PATCH_BYTES: usize = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PathArgs {
    #[serde(default)]
    pub path: String,
}

/// How a write's `content` is encoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    #[default]
    #[serde(rename = "utf-8")]
    Utf8,
    Base64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteArgs {
    pub path: String,
    pub content: String,
    #[serde(default)]
    pub encoding: Encoding,
    /// Write only over this version (what the caller last read); 409 otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<String>,
    /// Write only if there is no file yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchArgs {
    pub path: String,
    /// A unified diff of this one file.
    pub patch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteArgs {
    pub path: String,
    #[serde(default)]
    pub recursive: bool,
}

/// One call of a workspace tool, tagged as it is stored in an approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "toolName", content = "args")]
pub enum ToolCall {
    #[serde(rename = "fs.list")]
    List(PathArgs),
    #[serde(rename = "fs.read")]
    Read(PathArgs),
    #[serde(rename = "fs.write")]
    Write(WriteArgs),
    #[serde(rename = "fs.apply_patch")]
    Patch(PatchArgs),
    #[serde(rename = "search.grep")]
    Grep(SearchArgs),
    #[serde(rename = "search.glob")]
    Glob(SearchArgs),
    #[serde(rename = "fs.mkdir")]
    Mkdir(PathArgs),
    #[serde(rename = "fs.delete")]
    Delete(DeleteArgs),
    #[serde(rename = "exec.run")]
    Exec(super::exec::ExecArgs),
    #[serde(rename = "mcp.call")]
    Mcp(super::mcp::McpArgs),
}

/// One tool's arguments, with the failing field named (`body` when the arguments are not an
/// object).
fn parse_args<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, Error> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        if let Some(name) = msg
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            return Error::field(name, "is required");
        }
        let field = if path == "." { "body".to_owned() } else { path };
        Error::Validation(vec![FieldProblem::new(field, msg)])
    })
}

/// A path argument, validated.
pub fn path_arg(raw: &str, entry: bool) -> Result<WsPath, Error> {
    let parsed = if entry {
        WsPath::parse_entry(raw)
    } else {
        WsPath::parse(raw)
    };
    parsed.map_err(|e| Error::field("path", e.0))
}

impl ToolCall {
    /// Builds a call from a tool name and its JSON arguments, naming the field that is wrong.
    pub fn from_args(tool: &str, args: Value) -> Result<Self, Error> {
        Ok(match tool {
            "fs.list" => ToolCall::List(parse_args(args)?),
            "fs.read" => ToolCall::Read(parse_args(args)?),
            "fs.write" => ToolCall::Write(parse_args(args)?),
            "fs.apply_patch" => ToolCall::Patch(parse_args(args)?),
            "search.grep" => ToolCall::Grep(parse_args(args)?),
            "search.glob" => ToolCall::Glob(parse_args(args)?),
            "fs.mkdir" => ToolCall::Mkdir(parse_args(args)?),
            "fs.delete" => ToolCall::Delete(parse_args(args)?),
            "exec.run" => ToolCall::Exec(parse_args(args)?),
            "mcp.call" => ToolCall::Mcp(parse_args(args)?),
            other => return Err(Error::field("toolName", format!("`{other}` is not a tool"))),
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::List(_) => "fs.list",
            ToolCall::Read(_) => "fs.read",
            ToolCall::Write(_) => "fs.write",
            ToolCall::Patch(_) => "fs.apply_patch",
            ToolCall::Grep(_) => "search.grep",
            ToolCall::Glob(_) => "search.glob",
            ToolCall::Mkdir(_) => "fs.mkdir",
            ToolCall::Delete(_) => "fs.delete",
            ToolCall::Exec(_) => "exec.run",
            ToolCall::Mcp(_) => "mcp.call",
        }
    }

    /// The approval tier (the extension's `TOOL_TIERS`).
    pub fn tier(&self) -> Tier {
        tier_of(self.name())
    }

    /// The path the call acts on, or the command line it runs.
    pub fn target(&self) -> String {
        match self {
            ToolCall::List(a) | ToolCall::Read(a) | ToolCall::Mkdir(a) => a.path.clone(),
            ToolCall::Write(a) => a.path.clone(),
            ToolCall::Patch(a) => a.path.clone(),
            ToolCall::Grep(a) | ToolCall::Glob(a) => a.path.clone(),
            ToolCall::Delete(a) => a.path.clone(),
            ToolCall::Exec(a) => a.display(),
            ToolCall::Mcp(a) => format!("{}/{}", a.server, a.tool),
        }
    }

    /// The arguments as JSON (what an approval shows and stores).
    pub fn args(&self) -> Value {
        serde_json::to_value(self)
            .ok()
            .and_then(|mut v| v.get_mut("args").map(Value::take))
            .unwrap_or(Value::Null)
    }

    /// Checks every argument without touching the workspace (`max_seconds`: the longest a
    /// command may run).
    pub fn validate(&self, max_file_bytes: u64, max_seconds: u64) -> Result<(), Error> {
        match self {
            ToolCall::Exec(a) => return a.validate(max_seconds),
            ToolCall::Mcp(a) => return a.validate(),
            _ => {}
        }
        let entry = !matches!(
            self,
            ToolCall::List(_) | ToolCall::Grep(_) | ToolCall::Glob(_)
        );
        path_arg(&self.target(), entry)?;
        match self {
            ToolCall::Write(a) => {
                // Base64 is 4/3 of the bytes it carries.
                let bytes = match a.encoding {
                    Encoding::Utf8 => a.content.len() as u64,
                    Encoding::Base64 => a.content.len() as u64 / 4 * 3,
                };
                if bytes > max_file_bytes {
                    return Err(Error::field(
                        "content",
                        format!("is larger than the limit of {max_file_bytes} bytes"),
                    ));
                }
                check_version(a.expected_version.as_deref())?;
                if a.expected_version.is_some() && a.create_only {
                    return Err(Error::field(
                        "createOnly",
                        "cannot be combined with expectedVersion",
                    ));
                }
            }
            ToolCall::Patch(a) => {
                if a.patch.len() > MAX_PATCH_BYTES {
                    return Err(Error::field("patch", "is larger than 1 MiB"));
                }
                check_version(a.expected_version.as_deref())?;
            }
            ToolCall::Grep(a) | ToolCall::Glob(a) => {
                super::search::Matcher::compile(a)?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// A version as reads return it: 32 hex digits (an MD5), or an S3 multipart ETag
/// (`<hex>-<parts>`). Anything else could not have come from a read.
fn check_version(v: Option<&str>) -> Result<(), Error> {
    let Some(v) = v else { return Ok(()) };
    let (hash, parts) = v.split_once('-').unwrap_or((v, "1"));
    let ok = hash.len() == 32
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && !parts.is_empty()
        && parts.len() <= 5
        && parts.bytes().all(|b| b.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(Error::field(
            "expectedVersion",
            "must be a version as fs/read returns it",
        ))
    }
}

/// The tier of a tool by name; unknown tools need an individual approval.
pub fn tier_of(tool: &str) -> Tier {
    match tool {
        "workspace.list" | "workspace.pwd" | "workspace.chdir" | "fs.list" | "fs.read"
        | "search.grep" | "search.glob" | "git.status" | "git.diff" | "git.log" | "git.branch" => {
            Tier::Auto
        }
        "fs.write" | "fs.apply_patch" | "fs.mkdir" | "git.add" | "git.commit" => Tier::Batch,
        _ => Tier::Individual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tiers_follow_the_extension() {
        assert_eq!(tier_of("fs.read"), Tier::Auto);
        assert_eq!(tier_of("search.grep"), Tier::Auto);
        assert_eq!(tier_of("fs.write"), Tier::Batch);
        assert_eq!(tier_of("fs.apply_patch"), Tier::Batch);
        assert_eq!(tier_of("fs.delete"), Tier::Individual);
        assert_eq!(tier_of("exec.run"), Tier::Individual);
        assert_eq!(tier_of("something.new"), Tier::Individual);
    }

    #[test]
    fn calls_round_trip_through_their_stored_form() {
        let call = ToolCall::from_args(
            "fs.write",
            json!({ "path": "a/b.txt", "content": "hi", "expectedVersion": "v1" }),
        )
        .expect("call");
        assert_eq!(call.name(), "fs.write");
        assert_eq!(call.target(), "a/b.txt");
        let again = ToolCall::from_args(call.name(), call.args()).expect("again");
        assert_eq!(again, call);
    }

    #[test]
    fn bad_arguments_name_the_field() {
        let e = ToolCall::from_args("fs.write", json!({ "path": "a" })).unwrap_err();
        assert!(
            matches!(&e, Error::Validation(p) if p[0].field == "content"),
            "{e:?}"
        );
        let e = ToolCall::from_args("fs.read", json!({ "path": 3 })).unwrap_err();
        assert!(
            matches!(&e, Error::Validation(p) if p[0].field == "path"),
            "{e:?}"
        );
        // Unknown fields are ignored (the contract), and never stored with the call.
        let known = ToolCall::from_args("fs.read", json!({ "path": "a", "x": 1 })).unwrap();
        assert_eq!(known.args(), json!({ "path": "a" }));
        let bad = ToolCall::from_args("fs.read", json!({ "path": "../etc/passwd" })).unwrap();
        assert!(
            matches!(bad.validate(1024, 60), Err(Error::Validation(p)) if p[0].field == "path")
        );
        let v = ToolCall::from_args(
            "fs.write",
            json!({ "path": "a", "content": "", "expectedVersion": "x\r\ny" }),
        )
        .unwrap();
        assert!(
            matches!(v.validate(1024, 60), Err(Error::Validation(p)) if p[0].field == "expectedVersion")
        );
        let ok = ToolCall::from_args(
            "fs.write",
            json!({ "path": "a", "content": "", "expectedVersion": "c4ca4238a0b923820dcc509a6f75849b" }),
        )
        .unwrap();
        assert!(ok.validate(1024, 60).is_ok());
        let root = ToolCall::from_args("fs.delete", json!({ "path": "." })).unwrap();
        assert!(root.validate(1024, 60).is_err());
        let big = ToolCall::from_args(
            "fs.write",
            json!({ "path": "a", "content": "x".repeat(2000) }),
        )
        .unwrap();
        assert!(
            matches!(big.validate(1024, 60), Err(Error::Validation(p)) if p[0].field == "content")
        );
    }
}
