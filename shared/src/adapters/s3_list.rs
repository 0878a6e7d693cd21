//! Listing S3 objects under a prefix, page by page, bounded, and deleting keys in batches:
//! shared by the snapshot store and the S3 workspace, which map the SDK's error each in its
//! own terms.

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::SdkError;
use aws_sdk_s3::operation::delete_objects::DeleteObjectsError;
use aws_sdk_s3::operation::list_objects_v2::ListObjectsV2Error;
use aws_sdk_s3::types::{Delete, Object, ObjectIdentifier};

/// Objects under `prefix`, following continuation tokens, at most `max`; `true` when more
/// were left.
pub async fn objects_under(
    client: &aws_sdk_s3::Client,
    bucket: &str,
    prefix: &str,
    max: usize,
) -> Result<(Vec<Object>, bool), SdkError<ListObjectsV2Error, HttpResponse>> {
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix(prefix)
            .set_continuation_token(token.take())
            .send()
            .await?;
        for o in page.contents.unwrap_or_default() {
            if out.len() >= max {
                return Ok((out, true));
            }
            out.push(o);
        }
        match page.next_continuation_token {
            Some(t) if page.is_truncated == Some(true) => token = Some(t),
            _ => return Ok((out, false)),
        }
    }
}

/// Why deleting keys stopped.
#[derive(Debug)]
pub enum DeleteFailure {
    /// The request could not be built (a key the SDK refuses).
    Build(String),
    /// The call failed.
    Call(Box<SdkError<DeleteObjectsError, HttpResponse>>),
    /// The call succeeded but some keys were not deleted (reported inside the answer):
    /// how many, and the first one's error code.
    Keys(usize, String),
}

/// Deletes `keys`, in calls of at most 1 000 (DeleteObjects' limit), stopping at the first
/// failure.
pub async fn delete_keys(
    client: &aws_sdk_s3::Client,
    bucket: &str,
    keys: &[String],
) -> Result<(), DeleteFailure> {
    let build = |e: aws_sdk_s3::error::BuildError| DeleteFailure::Build(e.to_string());
    for chunk in keys.chunks(1000) {
        let ids = chunk
            .iter()
            .map(|k| ObjectIdentifier::builder().key(k).build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(build)?;
        let delete = Delete::builder()
            .set_objects(Some(ids))
            .quiet(true)
            .build()
            .map_err(build)?;
        let out = client
            .delete_objects()
            .bucket(bucket)
            .delete(delete)
            .send()
            .await
            .map_err(|e| DeleteFailure::Call(Box::new(e)))?;
        let failed = out.errors.unwrap_or_default();
        if let Some(first) = failed.first() {
            let code = first.code.clone().unwrap_or_else(|| "error".into());
            return Err(DeleteFailure::Keys(failed.len(), code));
        }
    }
    Ok(())
}
