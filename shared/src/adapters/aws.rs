//! The AWS SDK's shared configuration: region and credentials from the environment, and one
//! HTTPS client (rustls on ring, the crypto provider the rest of the process already links).

use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};

/// Loads the SDK configuration (credentials, region) with the process's HTTPS client. No
/// network I/O happens here; credentials are resolved on the first call.
pub async fn sdk_config(region: Option<&str>) -> aws_config::SdkConfig {
    let mut loader =
        aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(https_client());
    if let Some(region) = region {
        loader = loader.region(aws_config::Region::new(region.to_owned()));
    }
    loader.load().await
}

/// The SDK's HTTP client: hyper with rustls on ring, trusting the system's roots. Every SDK
/// client needs one set (the SDK's own default, on aws-lc, is not compiled in).
pub fn https_client() -> aws_sdk_dynamodb::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .build_https()
}
