//! The `SecretSource` adapter for AWS Secrets Manager (`GetSecretValue`, with the function's
//! role), over the project's HTTPS client and credentials like the other SDK clients. The
//! SDK's standard retries cover throttling and transport failures; what is left maps to a
//! message that names what to fix. A value is never logged or put in an error.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_secretsmanager::error::{ProvideErrorMetadata, SdkError};
use secrecy::SecretString;

use crate::ports::secrets::{SecretError, SecretSource};

/// Secrets Manager in the function's region (or at `endpoint`, a local compatible server).
#[derive(Debug, Clone)]
pub struct SecretsManager {
    client: aws_sdk_secretsmanager::Client,
}

impl SecretsManager {
    /// A client for `region` (else the environment's), at `endpoint` when given. No network
    /// I/O happens here.
    pub async fn new(region: Option<&str>, endpoint: Option<&str>) -> Self {
        let sdk = super::aws::sdk_config(region).await;
        // Bounded: a cold start must not spend Lambda's 10 s init on a stalled read.
        let timeouts = aws_sdk_secretsmanager::config::timeout::TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs(2))
            .operation_attempt_timeout(Duration::from_secs(2))
            .operation_timeout(Duration::from_secs(5))
            .build();
        let mut conf = aws_sdk_secretsmanager::config::Builder::from(&sdk).timeout_config(timeouts);
        if let Some(endpoint) = endpoint {
            conf = conf.endpoint_url(endpoint);
        }
        Self {
            client: aws_sdk_secretsmanager::Client::from_conf(conf.build()),
        }
    }
}

#[async_trait]
impl SecretSource for SecretsManager {
    async fn current(&self, id: &str) -> Result<SecretString, SecretError> {
        let out = self
            .client
            .get_secret_value()
            .secret_id(id)
            .send()
            .await
            .map_err(map_err)?;
        out.secret_string
            .map(SecretString::from)
            .ok_or(SecretError::NotText)
    }
}

fn map_err<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    e: SdkError<E, R>,
) -> SecretError {
    match &e {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
            return SecretError::Unavailable("Secrets Manager unreachable".into())
        }
        SdkError::ResponseError(_) => return SecretError::Unavailable("malformed response".into()),
        _ => {}
    }
    match e.code() {
        Some("ResourceNotFoundException") => SecretError::NotFound,
        Some("AccessDeniedException") | Some("AccessDenied") => SecretError::Denied,
        // A secret scheduled for deletion, or encrypted with a key the role cannot use.
        Some(code @ ("InvalidRequestException" | "DecryptionFailure")) => {
            SecretError::Unavailable(format!("{code}: {}", e.message().unwrap_or("")))
        }
        Some(code) => SecretError::Unavailable(code.to_owned()),
        None => SecretError::Unavailable("unknown error".into()),
    }
}
