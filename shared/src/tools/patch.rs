//! Unified diffs applied with `diffy`: all hunks or nothing, and a refusal that says which
//! hunk did not apply.

use crate::error::Error;

/// The result of applying a patch to a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patched {
    pub text: String,
    pub hunks: usize,
}

/// Whether the patch creates its file (`--- /dev/null`).
pub fn creates_file(patch: &str) -> bool {
    patch
        .lines()
        .find(|l| l.starts_with("--- "))
        .is_some_and(|l| l[4..].trim_start().starts_with("/dev/null"))
}

/// Most hunks in one patch.
pub const MAX_HUNKS: usize = 1_000;
/// Bound on matching work: file lines times the patch's lines. Matching a hunk may try every
/// position of the file, so this keeps a hostile patch from burning the CPU (a 50 000-line
/// file with a 2 000-line patch is well inside).
pub const MAX_MATCH_WORK: u64 = 200_000_000;

/// Applies `patch` to `base` (CPU-bound: call it off the async workers).
pub fn apply(base: &str, patch: &str) -> Result<Patched, Error> {
    let work = (base.lines().count() as u64 + 1) * (patch.lines().count() as u64 + 1);
    if work > MAX_MATCH_WORK {
        return Err(Error::Unprocessable {
            code: "PATCH_TOO_LARGE",
            message: "The patch is too large for this file; split it into smaller patches".into(),
        });
    }
    let parsed = diffy::Patch::from_str(patch).map_err(|e| Error::Unprocessable {
        code: "PATCH_INVALID",
        message: format!("The patch is not a unified diff: {e}"),
    })?;
    let hunks = parsed.hunks().len();
    if hunks > MAX_HUNKS {
        return Err(Error::Unprocessable {
            code: "PATCH_TOO_LARGE",
            message: format!("The patch has more than {MAX_HUNKS} hunks"),
        });
    }
    if hunks == 0 {
        return Err(Error::Unprocessable {
            code: "PATCH_INVALID",
            message: "The patch has no hunks".into(),
        });
    }
    let text = diffy::apply(base, &parsed).map_err(|e| Error::Unprocessable {
        code: "PATCH_FAILED",
        message: format!("The patch does not apply ({e}); the file is unchanged"),
    })?;
    Ok(Patched { text, hunks })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "one\ntwo\nthree\nfour\n";

    #[test]
    fn applies_a_unified_diff() {
        let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n four\n";
        let p = apply(BASE, patch).expect("applies");
        assert_eq!(p.text, "one\n2\nthree\nfour\n");
        assert_eq!(p.hunks, 1);
        assert!(!creates_file(patch));
        assert!(creates_file(
            "--- /dev/null\n+++ b/new\n@@ -0,0 +1 @@\n+x\n"
        ));
    }

    #[test]
    fn a_patch_that_does_not_apply_names_the_hunk() {
        let patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n one\n-TWO\n+2\n";
        match apply(BASE, patch) {
            Err(Error::Unprocessable { code, message }) => {
                assert_eq!(code, "PATCH_FAILED");
                assert!(message.contains("hunk"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let huge = "a\n".repeat(500_000);
        let hostile = format!(
            "--- a/f\n+++ b/f\n@@ -1,400000 +1,400000 @@\n{}",
            " b\n".repeat(400_000)
        );
        assert!(matches!(
            apply(&huge, &hostile),
            Err(Error::Unprocessable {
                code: "PATCH_TOO_LARGE",
                ..
            })
        ));
        assert!(matches!(
            apply(BASE, "not a diff"),
            Err(Error::Unprocessable {
                code: "PATCH_INVALID",
                ..
            })
        ));
    }
}
