//! Listing S3 objects under a prefix, page by page, bounded: shared by the snapshot store and
//! the S3 workspace, which map the SDK's error each in its own terms.

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::SdkError;
use aws_sdk_s3::operation::list_objects_v2::ListObjectsV2Error;
use aws_sdk_s3::types::Object;

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
