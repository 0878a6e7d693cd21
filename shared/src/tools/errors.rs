//! Workspace failures as the errors routes answer with (statuses and codes are then set in
//! `http::error`, the one mapping).

use crate::error::Error;
use crate::ports::workspace::WsError;
use crate::ports::StoreError;

impl From<WsError> for Error {
    fn from(e: WsError) -> Self {
        let conflict = |code, message: String| Error::Conflict { code, message };
        match e {
            WsError::NotFound(p) => Error::NotFound {
                code: "FILE_NOT_FOUND",
                message: format!("Nothing at `{p}` in the workspace"),
            },
            WsError::NotAFile(p) => conflict("NOT_A_FILE", format!("`{p}` is a directory")),
            WsError::NotADirectory(p) => {
                conflict("NOT_A_DIRECTORY", format!("`{p}` is not a directory"))
            }
            WsError::AlreadyExists(p) => {
                conflict("ALREADY_EXISTS", format!("`{p}` already exists"))
            }
            WsError::NotEmpty(p) => conflict(
                "DIRECTORY_NOT_EMPTY",
                format!("`{p}` is not empty; pass recursive: true to delete its content"),
            ),
            WsError::VersionMismatch(p) => conflict(
                "VERSION_CONFLICT",
                format!("`{p}` changed since the version given; read it again and retry"),
            ),
            WsError::TooLarge { size, limit } => Error::Unprocessable {
                code: "FILE_TOO_LARGE",
                message: format!("The file has {size} bytes; the limit is {limit}"),
            },
            WsError::Limit(what) => Error::Unprocessable {
                code: "LIMIT_EXCEEDED",
                message: format!("The operation goes beyond a limit: {what}"),
            },
            WsError::Symlink(_) => Error::field("path", "passes through a symbolic link"),
            WsError::Unavailable(d) => Error::Store(StoreError::Unavailable(d)),
            WsError::Internal(d) => Error::Internal(d),
        }
    }
}
