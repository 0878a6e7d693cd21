//! Where a workspace's files are: a directory under `AGENT_WORKSPACES_DIR` or an S3 prefix,
//! as an administrator gives it, and whether it lies in a tenant's own area.

use super::ws_path::WsPath;

/// Where a workspace root points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// A directory under the workspaces directory (validated relative path).
    Dir(WsPath),
    /// A bucket and a key prefix (no leading or trailing `/`; may be empty).
    S3 { bucket: String, prefix: String },
}

impl Root {
    /// Parses a root as an administrator gives it.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if let Some(rest) = raw.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            let bucket_ok = (3..=63).contains(&bucket.len())
                && bucket
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
            if !bucket_ok {
                return Err(format!("`{bucket}` is not an S3 bucket name"));
            }
            let prefix = WsPath::parse(prefix).map_err(|e| format!("the S3 prefix {e}"))?;
            return Ok(Root::S3 {
                bucket: bucket.to_owned(),
                prefix: prefix.to_string(),
            });
        }
        let dir = WsPath::parse(raw).map_err(|e| {
            format!("a local root is a directory relative to AGENT_WORKSPACES_DIR; it {e}")
        })?;
        if dir.is_root() {
            return Err("a local root must name a directory inside AGENT_WORKSPACES_DIR".into());
        }
        Ok(Root::Dir(dir))
    }
}

impl Root {
    /// Whether the root lies in `tenant`'s own area — `<tenant>/...` locally,
    /// `workspaces/<tenant>/...` on S3 — so no two tenants' roots can overlap.
    pub fn belongs_to(&self, tenant: &str) -> bool {
        match self {
            Root::Dir(rel) => rel.segments().first().is_some_and(|s| s == tenant),
            Root::S3 { prefix, .. } => {
                let mut segs = prefix.split('/');
                segs.next() == Some("workspaces") && segs.next() == Some(tenant)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_s3_prefixes_or_relative_directories() {
        assert_eq!(
            Root::parse("s3://my-bucket/ws/acme").unwrap(),
            Root::S3 {
                bucket: "my-bucket".into(),
                prefix: "ws/acme".into()
            }
        );
        assert_eq!(
            Root::parse("s3://my-bucket").unwrap(),
            Root::S3 {
                bucket: "my-bucket".into(),
                prefix: String::new()
            }
        );
        assert!(matches!(Root::parse("demo/project"), Ok(Root::Dir(_))));
        for bad in ["/etc", "../x", "", ".", "s3://Bad_Bucket/x", "s3://b/../x"] {
            assert!(Root::parse(bad).is_err(), "{bad:?}");
        }
        let owned = |raw: &str, t: &str| Root::parse(raw).unwrap().belongs_to(t);
        assert!(owned("acme/site", "acme"));
        assert!(owned("acme", "acme"));
        assert!(!owned("acme-site", "acme"));
        assert!(!owned("other/acme", "acme"));
        assert!(owned("s3://bkt/workspaces/acme/docs", "acme"));
        assert!(!owned("s3://bkt/workspaces", "acme"));
        assert!(!owned("s3://bkt/workspaces/acme2", "acme"));
        assert!(!owned("s3://bkt/snapshots/acme", "acme"));
    }
}
