//! SDK errors → store errors: a failed condition or a cancelled transaction is `Conflict`,
//! throttling and transport trouble `Unavailable` (retryable), anything else `Internal`.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;

use crate::ports::StoreError;

const RETRYABLE: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
];

/// Maps an SDK error: failed conditions are conflicts, throttling and transport failures are
/// retryable, the rest internal.
pub(super) fn map_err<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    op: &str,
    e: SdkError<E, R>,
) -> StoreError {
    match &e {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
            return StoreError::Unavailable(format!("{op}: DynamoDB unreachable"));
        }
        SdkError::ResponseError(_) => {
            return StoreError::Unavailable(format!("{op}: malformed response"))
        }
        _ => {}
    }
    match e.code() {
        Some("ConditionalCheckFailedException") => {
            StoreError::Conflict(format!("{op}: condition failed"))
        }
        Some(code) if RETRYABLE.contains(&code) => StoreError::Unavailable(format!("{op}: {code}")),
        Some("ResourceNotFoundException") => StoreError::Internal(format!("{op}: table not found")),
        Some(code) => StoreError::Internal(format!("{op}: {code}: {}", e.message().unwrap_or(""))),
        None => StoreError::Internal(format!("{op}: {e:?}")),
    }
}

pub(super) fn map_transact_err<R: std::fmt::Debug>(
    e: SdkError<TransactWriteItemsError, R>,
) -> StoreError {
    if let Some(TransactWriteItemsError::TransactionCanceledException(t)) = e.as_service_error() {
        let codes: Vec<&str> = t
            .cancellation_reasons()
            .iter()
            .filter_map(|r| r.code())
            .collect();
        if codes
            .iter()
            .any(|c| *c == "ThrottlingError" || *c == "ProvisionedThroughputExceeded")
        {
            return StoreError::Unavailable("transaction throttled".into());
        }
        // ConditionalCheckFailed, or TransactionConflict with a concurrent writer.
        return StoreError::Conflict(format!("transaction cancelled: {codes:?}"));
    }
    map_err("TransactWriteItems", e)
}

pub(super) fn build_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(format!("request build: {e}"))
}
