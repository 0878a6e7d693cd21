//! A small S3 client: the operations the snapshot store, S3 workspaces and `agent-admin init`
//! use, over reqwest and the SDK's SigV4 signer.
//!
//! The SDK's S3 client is 0.4 MB of generated code, and its flexible checksums link 0.7 MB of
//! CRC tables into every function that keeps snapshots; none of it is needed for eight
//! operations on objects this process writes itself. Like the SDK, the client retries a call
//! that got no answer, was throttled or met a server error (three attempts, backoff with
//! jitter), and hands back answer bodies as a stream read to a limit.

mod call;
mod sign;
mod xml;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_credential_types::Credentials;
use base64::Engine;
use md5::{Digest, Md5};
use reqwest::Method;

use call::Call;
pub use sign::Endpoint;
pub use xml::{ListPage, ObjectInfo};

/// Most bytes of a listing or delete answer read (S3 sends at most 1 000 keys a page).
const MAX_XML_ANSWER: u64 = 16 << 20;

/// An S3 client; cheap to clone.
#[derive(Clone)]
pub struct S3Client {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` when reqwest could not build a client (no TLS backend); every call says so.
    http: Option<reqwest::Client>,
    endpoint: Endpoint,
    region: String,
    credentials: Option<SharedCredentialsProvider>,
    /// The last credentials and when to ask the provider again.
    cached: Mutex<Option<(Credentials, SystemTime)>>,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Client")
            .field("endpoint", &self.inner.endpoint)
            .field("region", &self.inner.region)
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
            S3Error::Service { status, code } => call::retryable(*status, code.as_deref()),
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

/// An object being read: its announced length and ETag; the body is read on demand.
#[derive(Debug)]
pub struct Object {
    pub length: Option<u64>,
    pub etag: Option<String>,
    response: reqwest::Response,
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
    /// The body, refused once more than `limit` bytes arrive.
    pub async fn bytes(self, limit: u64) -> Result<Vec<u8>, ReadError> {
        call::read_limited(self.response, limit).await
    }
}

impl S3Client {
    /// A client for `endpoint` signing for `region` with `credentials` (none: every call
    /// fails, saying so).
    pub fn new(
        endpoint: Endpoint,
        region: impl Into<String>,
        credentials: Option<SharedCredentialsProvider>,
    ) -> Self {
        let http = crate::adapters::aws::reqwest_client(
            Some(Duration::from_millis(3100)),
            Some(Duration::from_secs(30)),
        );
        Self {
            inner: Arc::new(Inner {
                http,
                endpoint,
                region: region.into(),
                credentials,
                cached: Mutex::new(None),
            }),
        }
    }

    /// Credentials, asked of the provider again five minutes before they expire (or every
    /// five minutes when they do not say).
    async fn credentials(&self) -> Result<Credentials, S3Error> {
        let now = SystemTime::now();
        let lock = || self.inner.cached.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((c, until)) = lock().as_ref() {
            if now < *until {
                return Ok(c.clone());
            }
        }
        let provider = self
            .inner
            .credentials
            .as_ref()
            .ok_or_else(|| S3Error::Request("no AWS credentials are configured".into()))?;
        let creds = provider
            .provide_credentials()
            .await
            .map_err(|e| S3Error::Request(format!("AWS credentials: {e}")))?;
        let margin = Duration::from_secs(300);
        let until = match creds.expiry() {
            Some(expiry) => expiry.checked_sub(margin).unwrap_or(now),
            None => now + margin,
        };
        *lock() = Some((creds.clone(), until));
        Ok(creds)
    }

    async fn send(&self, call: Call<'_>) -> Result<reqwest::Response, S3Error> {
        let http = self
            .inner
            .http
            .as_ref()
            .ok_or_else(|| S3Error::Request("the S3 HTTPS client could not be built".into()))?;
        let creds = self.credentials().await?;
        call.send(http, &self.inner.endpoint, &self.inner.region, &creds)
            .await
    }

    /// Whether the bucket exists and can be reached.
    pub async fn head_bucket(&self, bucket: &str) -> Result<(), S3Error> {
        self.send(Call::new(Method::HEAD, bucket, ""))
            .await
            .map(drop)
    }

    /// Creates a bucket (in the client's region).
    pub async fn create_bucket(&self, bucket: &str) -> Result<(), S3Error> {
        let mut call = Call::new(Method::PUT, bucket, "");
        if self.inner.region != "us-east-1" {
            call = call.body(
                format!(
                    "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
                     <LocationConstraint>{}</LocationConstraint></CreateBucketConfiguration>",
                    self.inner.region
                )
                .into_bytes(),
            );
        }
        self.send(call).await.map(drop)
    }

    /// Writes an object, encrypted at rest (SSE-S3); its new ETag, unquoted.
    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
        put: &Put<'_>,
    ) -> Result<String, S3Error> {
        let mut call = Call::new(Method::PUT, bucket, key)
            .header("x-amz-server-side-encryption", "AES256".into())
            .body(body);
        if let Some(t) = put.content_type {
            call = call.header("content-type", t.into());
        }
        if let Some(v) = put.if_match {
            call = call.header("if-match", format!("\"{v}\""));
        }
        if put.if_none_match {
            call = call.header("if-none-match", "*".into());
        }
        let response = self.send(call).await?;
        Ok(etag(&response).unwrap_or_default())
    }

    /// Starts reading an object.
    pub async fn get_object(&self, bucket: &str, key: &str) -> Result<Object, S3Error> {
        let response = self.send(Call::new(Method::GET, bucket, key)).await?;
        Ok(Object {
            length: response.content_length(),
            etag: etag(&response),
            response,
        })
    }

    /// Whether an object exists (`Err` with [`S3Error::is_not_found`] when not).
    pub async fn head_object(&self, bucket: &str, key: &str) -> Result<(), S3Error> {
        self.send(Call::new(Method::HEAD, bucket, key))
            .await
            .map(drop)
    }

    /// Deletes one object (done also when it was not there).
    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), S3Error> {
        self.send(Call::new(Method::DELETE, bucket, key))
            .await
            .map(drop)
    }

    /// One page of the objects under a prefix.
    pub async fn list_objects_v2(
        &self,
        bucket: &str,
        list: &List<'_>,
    ) -> Result<ListPage, S3Error> {
        let mut call = Call::new(Method::GET, bucket, "")
            .query("list-type", "2".into())
            .query("prefix", list.prefix.into());
        if let Some(d) = list.delimiter {
            call = call.query("delimiter", d.into());
        }
        if let Some(t) = &list.token {
            call = call.query("continuation-token", t.clone());
        }
        if let Some(n) = list.max_keys {
            call = call.query("max-keys", n.to_string());
        }
        let body = self.xml_answer(call).await?;
        xml::list_page(&body).map_err(S3Error::Answer)
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
        let body = xml::delete_request(keys).into_bytes();
        let md5 = base64::engine::general_purpose::STANDARD.encode(Md5::digest(&body));
        let call = Call::new(Method::POST, bucket, "")
            .query("delete", String::new())
            .header("content-md5", md5)
            .header("content-type", "application/xml".into())
            .body(body);
        let answer = self.xml_answer(call).await?;
        xml::delete_errors(&answer).map_err(S3Error::Answer)
    }

    async fn xml_answer(&self, call: Call<'_>) -> Result<Vec<u8>, S3Error> {
        let response = self.send(call).await?;
        call::read_limited(response, MAX_XML_ANSWER)
            .await
            .map_err(|e| S3Error::Answer(e.to_string()))
    }

    /// A URL anyone can GET the object with for `ttl`.
    pub async fn presign_get(
        &self,
        bucket: &str,
        key: &str,
        ttl: Duration,
    ) -> Result<String, S3Error> {
        let creds = self.credentials().await?;
        let url = self.inner.endpoint.url(bucket, key, &[]);
        sign::presigned(&url, &creds, &self.inner.region, SystemTime::now(), ttl)
            .map_err(S3Error::Request)
    }
}

fn etag(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(reqwest::header::ETAG)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches('"').to_owned())
}

#[cfg(test)]
pub(crate) mod tests;
