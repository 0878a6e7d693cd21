//! S3 for the snapshot store, S3 workspaces and `agent-admin init`: the SDK's client
//! (`aws-sdk-s3`) over the project's reqwest connector, behind the few operations they use and
//! one error type they map in their own terms.
//!
//! Checksums are computed only where S3 requires them (DeleteObjects) and answers are not
//! checked against them: every object is written and read by this process over TLS. Calls are
//! retried by the SDK's standard mode (three attempts, pauses below 200 then 400 ms, a retry
//! quota); an object's body reaches its reader as a stream read to a limit.

use std::time::Duration;

use aws_credential_types::provider::SharedCredentialsProvider;
use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::timeout::TimeoutConfig;
use aws_sdk_s3::config::{
    BehaviorVersion, Region, RequestChecksumCalculation, ResponseChecksumValidation,
};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{
    BucketLocationConstraint, CreateBucketConfiguration, Delete, ObjectIdentifier,
    ServerSideEncryption,
};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use chrono::{DateTime, Utc};

/// An S3 client; cheap to clone.
#[derive(Clone)]
pub struct S3Client {
    sdk: aws_sdk_s3::Client,
    region: String,
    /// Whether credentials were configured: without them every call says so before sending.
    signed: bool,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Client")
            .field("region", &self.region)
            .finish()
    }
}

/// Why an S3 call failed.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    /// No answer: the connection failed, timed out or was cut, on every attempt.
    #[error("S3 is unreachable: {0}")]
    Unreachable(String),
    /// S3 answered with an error status (and, unless the request was a HEAD, a code).
    #[error("S3 answered {status} {}", code.as_deref().unwrap_or("without a code"))]
    Service { status: u16, code: Option<String> },
    /// The request could not be made (no credentials, a key that cannot be signed).
    #[error("S3 request: {0}")]
    Request(String),
    /// A successful answer that could not be read.
    #[error("S3 answer: {0}")]
    Answer(String),
}

impl S3Error {
    /// The error code S3 gave (`NoSuchKey`, `PreconditionFailed`, ...).
    pub fn code(&self) -> Option<&str> {
        match self {
            S3Error::Service { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// The status S3 answered with.
    pub fn status(&self) -> Option<u16> {
        match self {
            S3Error::Service { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether S3 was unreachable, throttling or failing on its side even after retries: a
    /// moment later the same call may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            S3Error::Unreachable(_) | S3Error::Answer(_) => true,
            S3Error::Service { status, code } => retryable(*status, code.as_deref()),
            S3Error::Request(_) => false,
        }
    }

    /// Whether the object asked for is not there (a GET's `NoSuchKey`, a HEAD's bare 404).
    pub fn is_not_found(&self) -> bool {
        match self.code() {
            Some(code) => matches!(code, "NoSuchKey" | "NotFound"),
            None => self.status() == Some(404),
        }
    }
}

/// Whether S3's answer says to try again: throttling, a timeout on its side, a server error.
fn retryable(status: u16, code: Option<&str>) -> bool {
    matches!(status, 500 | 502 | 503 | 504)
        || matches!(
            code,
            Some(
                "SlowDown"
                    | "RequestTimeout"
                    | "InternalError"
                    | "ServiceUnavailable"
                    | "Throttling"
                    | "ThrottlingException"
            )
        )
}

/// An SDK failure in the client's terms.
fn failed<E>(e: SdkError<E, HttpResponse>) -> S3Error
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match &e {
        SdkError::ServiceError(s) => S3Error::Service {
            status: s.raw().status().as_u16(),
            code: s.err().code().map(str::to_owned),
        },
        SdkError::TimeoutError(_) => S3Error::Unreachable(DisplayErrorContext(&e).to_string()),
        // No answer because of the network; anything else that stopped the call before it
        // was sent (no credentials, a request that cannot be made) is not worth trying again.
        SdkError::DispatchFailure(d) if d.is_io() || d.is_timeout() => {
            S3Error::Unreachable(DisplayErrorContext(&e).to_string())
        }
        SdkError::DispatchFailure(_) => S3Error::Request(DisplayErrorContext(&e).to_string()),
        SdkError::ConstructionFailure(_) => S3Error::Request(DisplayErrorContext(&e).to_string()),
        _ => S3Error::Answer(DisplayErrorContext(&e).to_string()),
    }
}

/// Options of a PutObject.
#[derive(Debug, Default, Clone)]
pub struct Put<'a> {
    pub content_type: Option<&'a str>,
    /// Write only over this ETag.
    pub if_match: Option<&'a str>,
    /// Write only where no object is.
    pub if_none_match: bool,
}

/// A ListObjectsV2 request.
#[derive(Debug, Default, Clone)]
pub struct List<'a> {
    pub prefix: &'a str,
    pub delimiter: Option<&'a str>,
    pub token: Option<String>,
    pub max_keys: Option<u32>,
}

/// One object in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
    pub last_modified: Option<DateTime<Utc>>,
}

/// One page of ListObjectsV2.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ListPage {
    pub contents: Vec<ObjectInfo>,
    /// "Directories" under the prefix, when a delimiter was given.
    pub common_prefixes: Vec<String>,
    pub key_count: u64,
    /// The token for the next page, when the listing was cut.
    pub next_token: Option<String>,
}

/// An object being read: its announced length and ETag; the body is read on demand.
#[derive(Debug)]
pub struct Object {
    pub length: Option<u64>,
    pub etag: Option<String>,
    body: ByteStream,
}

/// Why an object's body was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the object is larger than {limit} bytes")]
    TooLarge { read: u64, limit: u64 },
    #[error("the object's body was cut short: {0}")]
    Failed(String),
}

impl Object {
    /// The body, refused as soon as its announced length or the bytes arrived pass `limit`.
    pub async fn bytes(mut self, limit: u64) -> Result<Vec<u8>, ReadError> {
        if let Some(read) = self.length.filter(|n| *n > limit) {
            return Err(ReadError::TooLarge { read, limit });
        }
        let mut out = Vec::new();
        while let Some(chunk) = self.body.next().await {
            let chunk =
                chunk.map_err(|e| ReadError::Failed(DisplayErrorContext(&e).to_string()))?;
            let read = (out.len() + chunk.len()) as u64;
            if read > limit {
                return Err(ReadError::TooLarge { read, limit });
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

/// An ETag as the callers keep it: unquoted.
fn unquoted(etag: Option<&str>) -> Option<String> {
    etag.map(|v| v.trim_matches('"').to_owned())
}

impl S3Client {
    /// A client for Amazon S3 in `region`, or for the S3-compatible server at `endpoint`
    /// (`http://127.0.0.1:5055`, buckets in the path), signing with `credentials` (none: every
    /// call fails, saying so). Connections time out after 3.1 s, a silent answer after 30 s.
    pub fn new(
        endpoint: Option<String>,
        region: impl Into<String>,
        credentials: Option<SharedCredentialsProvider>,
    ) -> Self {
        let region = region.into();
        let signed = credentials.is_some();
        let mut config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region.clone()))
            .http_client(crate::adapters::aws::https_client())
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(Duration::from_millis(3100))
                    .read_timeout(Duration::from_secs(30))
                    .build(),
            )
            // Three attempts, pauses drawn below 200 then 400 ms (the SDK's default first
            // pause, 1 s, is long for a call inside a step).
            .retry_config(
                RetryConfig::standard()
                    .with_max_attempts(3)
                    .with_initial_backoff(Duration::from_millis(200)),
            )
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired)
            .force_path_style(endpoint.is_some());
        config.set_credentials_provider(credentials);
        config.set_endpoint_url(endpoint);
        let config = config.build();
        Self {
            sdk: aws_sdk_s3::Client::from_conf(config),
            region,
            signed,
        }
    }

    fn ready(&self) -> Result<&aws_sdk_s3::Client, S3Error> {
        if self.signed {
            Ok(&self.sdk)
        } else {
            Err(S3Error::Request("no AWS credentials are configured".into()))
        }
    }

    /// Whether the bucket exists and can be reached.
    pub async fn head_bucket(&self, bucket: &str) -> Result<(), S3Error> {
        self.ready()?
            .head_bucket()
            .bucket(bucket)
            .send()
            .await
            .map(drop)
            .map_err(failed)
    }

    /// Creates a bucket (in the client's region).
    pub async fn create_bucket(&self, bucket: &str) -> Result<(), S3Error> {
        let mut call = self.ready()?.create_bucket().bucket(bucket);
        if self.region != "us-east-1" {
            call = call.create_bucket_configuration(
                CreateBucketConfiguration::builder()
                    .location_constraint(BucketLocationConstraint::from(self.region.as_str()))
                    .build(),
            );
        }
        call.send().await.map(drop).map_err(failed)
    }

    /// Writes an object, encrypted at rest (SSE-S3); its new ETag, unquoted.
    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
        put: &Put<'_>,
    ) -> Result<String, S3Error> {
        let out = self
            .ready()?
            .put_object()
            .bucket(bucket)
            .key(key)
            .body(ByteStream::from(body))
            .server_side_encryption(ServerSideEncryption::Aes256)
            .set_content_type(put.content_type.map(str::to_owned))
            .set_if_match(put.if_match.map(|v| format!("\"{v}\"")))
            .set_if_none_match(put.if_none_match.then(|| "*".to_owned()))
            .send()
            .await
            .map_err(failed)?;
        Ok(unquoted(out.e_tag()).unwrap_or_default())
    }

    /// Starts reading an object.
    pub async fn get_object(&self, bucket: &str, key: &str) -> Result<Object, S3Error> {
        let out = self
            .ready()?
            .get_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map_err(failed)?;
        Ok(Object {
            length: out.content_length().and_then(|n| u64::try_from(n).ok()),
            etag: unquoted(out.e_tag()),
            body: out.body,
        })
    }

    /// Whether an object exists (`Err` with [`S3Error::is_not_found`] when not).
    pub async fn head_object(&self, bucket: &str, key: &str) -> Result<(), S3Error> {
        self.ready()?
            .head_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map(drop)
            .map_err(failed)
    }

    /// Deletes one object (done also when it was not there).
    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), S3Error> {
        self.ready()?
            .delete_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map(drop)
            .map_err(failed)
    }

    /// One page of the objects under a prefix.
    pub async fn list_objects_v2(
        &self,
        bucket: &str,
        list: &List<'_>,
    ) -> Result<ListPage, S3Error> {
        let out = self
            .ready()?
            .list_objects_v2()
            .bucket(bucket)
            .prefix(list.prefix)
            .set_delimiter(list.delimiter.map(str::to_owned))
            .set_continuation_token(list.token.clone())
            .set_max_keys(list.max_keys.map(|n| i32::try_from(n).unwrap_or(i32::MAX)))
            .send()
            .await
            .map_err(failed)?;
        let next_token = match (out.is_truncated(), out.next_continuation_token()) {
            (Some(true), None) => {
                return Err(S3Error::Answer(
                    "a cut listing without a continuation token".into(),
                ))
            }
            (Some(true), Some(token)) => Some(token.to_owned()),
            _ => None,
        };
        Ok(ListPage {
            contents: out
                .contents()
                .iter()
                .filter_map(|o| {
                    Some(ObjectInfo {
                        key: o.key()?.to_owned(),
                        size: o.size().and_then(|n| u64::try_from(n).ok()).unwrap_or(0),
                        last_modified: o
                            .last_modified()
                            .and_then(|t| DateTime::from_timestamp(t.secs(), t.subsec_nanos())),
                    })
                })
                .collect(),
            common_prefixes: out
                .common_prefixes()
                .iter()
                .filter_map(|p| p.prefix().map(str::to_owned))
                .collect(),
            key_count: out
                .key_count()
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0),
            next_token,
        })
    }

    /// Deletes up to 1 000 keys in one call; the keys not deleted, each with its error code.
    pub async fn delete_objects(
        &self,
        bucket: &str,
        keys: &[String],
    ) -> Result<Vec<(String, String)>, S3Error> {
        if keys.len() > 1000 {
            return Err(S3Error::Request(format!(
                "{} keys in one DeleteObjects (at most 1000)",
                keys.len()
            )));
        }
        let request = |e: aws_sdk_s3::error::BuildError| S3Error::Request(e.to_string());
        let objects = keys
            .iter()
            .map(|k| ObjectIdentifier::builder().key(k).build().map_err(request))
            .collect::<Result<Vec<_>, _>>()?;
        let delete = Delete::builder()
            .set_objects(Some(objects))
            .quiet(true)
            .build()
            .map_err(request)?;
        let out = self
            .ready()?
            .delete_objects()
            .bucket(bucket)
            .delete(delete)
            .send()
            .await
            .map_err(failed)?;
        Ok(out
            .errors()
            .iter()
            .map(|e| {
                (
                    e.key().unwrap_or_default().to_owned(),
                    e.code().unwrap_or("error").to_owned(),
                )
            })
            .collect())
    }

    /// A URL anyone can GET the object with for `ttl`.
    pub async fn presign_get(
        &self,
        bucket: &str,
        key: &str,
        ttl: Duration,
    ) -> Result<String, S3Error> {
        let config =
            PresigningConfig::expires_in(ttl).map_err(|e| S3Error::Request(e.to_string()))?;
        let presigned = self
            .ready()?
            .get_object()
            .bucket(bucket)
            .key(key)
            .presigned(config)
            .await
            .map_err(failed)?;
        Ok(presigned.uri().to_owned())
    }
}

#[cfg(test)]
pub(crate) mod tests;
