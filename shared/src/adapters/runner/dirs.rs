//! A run's private directories, made new for each run and removed when it ends.

use std::path::{Path, PathBuf};

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
    pub fn make(root: &Path) -> std::io::Result<Self> {
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
