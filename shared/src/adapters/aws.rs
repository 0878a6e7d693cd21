//! The AWS SDK's shared configuration: region and credentials from the environment (what
//! Lambda gives a function), and one HTTPS client for every SDK client.
//!
//! The HTTPS client is reqwest, the one the model, search and Pusher adapters already use, behind
//! the SDK's connector interface. The SDK's own client (hyper with HTTP/2, the system's root
//! store) would link a second HTTP stack into every function: h2 alone was 0.75 MB of a
//! function's code, and none of DynamoDB, S3 or Step Functions needs HTTP/2.

use std::sync::Mutex;
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use http_body_util::BodyExt;

/// The SDK configuration for `region` (else `AWS_REGION`/`AWS_DEFAULT_REGION`), with the
/// credentials Lambda puts in the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`). No network I/O happens here.
///
/// Built with the `aws-profiles` feature (local-api, agent-admin), the SDK's whole default
/// chain is used instead: profiles, SSO, web identity, container and instance credentials.
pub async fn sdk_config(region: Option<&str>) -> SdkConfig {
    #[cfg(feature = "aws-profiles")]
    {
        let mut loader =
            aws_config::defaults(BehaviorVersion::latest()).http_client(https_client());
        if let Some(region) = region {
            loader = loader.region(Region::new(region.to_owned()));
        }
        loader.load().await
    }
    #[cfg(not(feature = "aws-profiles"))]
    {
        use aws_config::environment::credentials::EnvironmentVariableCredentialsProvider;
        use aws_config::environment::region::EnvironmentVariableRegionProvider;
        use aws_config::meta::region::ProvideRegion;
        use aws_sdk_dynamodb::config::SharedCredentialsProvider;
        let region = match region {
            Some(region) => Some(Region::new(region.to_owned())),
            None => EnvironmentVariableRegionProvider::new().region().await,
        };
        SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(region)
            .credentials_provider(SharedCredentialsProvider::new(
                EnvironmentVariableCredentialsProvider::new(),
            ))
            .http_client(https_client())
            .build()
    }
}

/// The SDK's HTTP client: reqwest over rustls (HTTP/1.1, Mozilla's roots), answers streamed
/// to the SDK, no redirects followed (the SDK reads a redirect as the error it is), the SDK's connect and read timeouts.
pub fn https_client() -> SharedHttpClient {
    SharedHttpClient::new(ReqwestClient::default())
}

/// A reqwest client for AWS endpoints: no redirects followed (AWS answers a redirect as the
/// error it is), the timeouts given; `None`, logged, when it cannot be built (no TLS backend).
pub fn reqwest_client(
    connect: Option<Duration>,
    read: Option<Duration>,
) -> Option<reqwest::Client> {
    let mut builder =
        crate::adapters::tls::client_builder().redirect(reqwest::redirect::Policy::none());
    if let Some(timeout) = connect {
        builder = builder.connect_timeout(timeout);
    }
    if let Some(timeout) = read {
        builder = builder.read_timeout(timeout);
    }
    builder
        .build()
        .inspect_err(|e| tracing::error!(error = %e, "the AWS HTTPS client could not be built"))
        .ok()
}

/// One connector per distinct timeout setting (the SDK asks for a connector per operation).
#[derive(Debug, Default)]
struct ReqwestClient {
    connectors: Mutex<Vec<(Timeouts, SharedHttpConnector)>>,
}

type Timeouts = (Option<Duration>, Option<Duration>);

impl HttpClient for ReqwestClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        let key = (settings.connect_timeout(), settings.read_timeout());
        let mut connectors = self
            .connectors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, connector)) = connectors.iter().find(|(k, _)| *k == key) {
            return connector.clone();
        }
        let connector = SharedHttpConnector::new(ReqwestConnector::new(key));
        connectors.push((key, connector.clone()));
        connector
    }
}

#[derive(Debug, Clone)]
struct ReqwestConnector {
    /// `None` when reqwest could not build a client (no TLS backend); every call says so.
    client: Option<reqwest::Client>,
}

impl ReqwestConnector {
    fn new((connect, read): Timeouts) -> Self {
        Self {
            client: reqwest_client(connect, read),
        }
    }
}

impl HttpConnector for ReqwestConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let client = self.client.clone();
        HttpConnectorFuture::new(async move {
            let client = client.ok_or_else(|| {
                ConnectorError::other("the AWS HTTPS client could not be built".into(), None)
            })?;
            let response = client
                .execute(into_reqwest(request).await?)
                .await
                .map_err(connector_error)?;
            from_reqwest(response)
        })
    }
}

/// The SDK's request as reqwest's, its body read whole (the SDK's bodies are in memory, or
/// streams this process made from bounded content, such as S3's aws-chunked uploads).
///
/// The body is always read through its stream, never taken by `bytes()`: the SDK's stalled
/// upload protection wraps that stream and counts the upload done only when the stream ends.
/// Taken by `bytes()`, an in-memory body was never read, so any answer slower than the
/// protection's 5 s grace period was counted as a stalled upload and the request sent again:
/// a conditional write that had succeeded then failed its own condition.
async fn into_reqwest(request: HttpRequest) -> Result<reqwest::Request, ConnectorError> {
    let request = request
        .try_into_http1x()
        .map_err(|e| ConnectorError::user(e.into()))?;
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map_err(ConnectorError::user)?
        .to_bytes()
        .to_vec();
    reqwest::Request::try_from(http::Request::from_parts(parts, body))
        .map_err(|e| ConnectorError::user(e.into()))
}

/// reqwest's response as the SDK's, its body still streaming: the SDK reads it as it needs
/// (an S3 object larger than a caller's limit is refused on its length, never read whole).
fn from_reqwest(response: reqwest::Response) -> Result<HttpResponse, ConnectorError> {
    let response = http::Response::<reqwest::Body>::from(response).map(SdkBody::from_body_1_x);
    HttpResponse::try_from(response).map_err(|e| ConnectorError::other(e.into(), None))
}

/// Timeouts and broken connections (also mid-answer) are the SDK's retryable kinds; the rest
/// are not.
fn connector_error(e: reqwest::Error) -> ConnectorError {
    if e.is_timeout() {
        ConnectorError::timeout(e.into())
    } else if e.is_connect() || e.is_request() || e.is_body() || e.is_decode() {
        ConnectorError::io(e.into())
    } else {
        ConnectorError::other(e.into(), None)
    }
}

#[cfg(test)]
#[path = "aws_tests.rs"]
mod tests;
