//! Where a function's own secrets live (the token signing key, the model's key, …): read by
//! name or ARN at cold start and again when a rotated one no longer verifies.

use async_trait::async_trait;
use secrecy::SecretString;

/// Why a secret could not be read. The messages name what to fix, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("no such secret (check the name or ARN, and the region)")]
    NotFound,
    #[error("access denied (grant secretsmanager:GetSecretValue on it to the function's role)")]
    Denied,
    #[error("it holds no text value (store it as SecretString)")]
    NotText,
    #[error("secrets service unavailable: {0}")]
    Unavailable(String),
}

/// Reads secrets' current values.
#[async_trait]
pub trait SecretSource: Send + Sync {
    /// The current value of the secret `id` (a name or an ARN).
    async fn current(&self, id: &str) -> Result<SecretString, SecretError>;
}

/// Secrets in memory, counting reads: the loader's and the key refresh's unit tests (the
/// adapter itself is tested against a local Secrets Manager).
#[cfg(test)]
pub(crate) mod memory {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    pub(crate) struct MemorySecrets {
        values: Mutex<HashMap<String, String>>,
        reads: AtomicUsize,
    }

    impl MemorySecrets {
        pub(crate) fn with(pairs: &[(&str, &str)]) -> Self {
            let me = Self::default();
            for (id, value) in pairs {
                me.set(id, value);
            }
            me
        }

        pub(crate) fn set(&self, id: &str, value: &str) {
            let mut values = self.values.lock().unwrap_or_else(|e| e.into_inner());
            values.insert(id.to_owned(), value.to_owned());
        }

        pub(crate) fn reads(&self) -> usize {
            self.reads.load(Ordering::SeqCst)
        }
    }

    #[async_trait]
    impl SecretSource for MemorySecrets {
        async fn current(&self, id: &str) -> Result<SecretString, SecretError> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            // Let concurrent readers interleave, as a network read would.
            tokio::task::yield_now().await;
            let values = self.values.lock().unwrap_or_else(|e| e.into_inner());
            values
                .get(id)
                .map(|v| SecretString::from(v.clone()))
                .ok_or(SecretError::NotFound)
        }
    }
}
