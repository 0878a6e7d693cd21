//! `AppContext`: what a function builds once per container (configuration, store, clock,
//! token service, password hasher) and hands to every request. Nothing here does network
//! I/O at start-up, so a cold start stays in single-digit milliseconds.

use std::sync::Arc;

use crate::adapters::TableStore;
use crate::auth::{PasswordHasher, TokenService};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigError, StoreConfig};
use crate::ports::{Store, StoreError};

/// Why a function could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// Everything a handler needs, built once.
pub struct AppContext {
    pub config: Config,
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub tokens: TokenService,
    pub passwords: PasswordHasher,
}

impl std::fmt::Debug for AppContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppContext")
            .field("config", &self.config.summary())
            .finish_non_exhaustive()
    }
}

impl AppContext {
    /// Reads the environment and builds the context with the system clock.
    pub fn from_env() -> Result<Self, StartupError> {
        Self::from_config(Config::from_env()?)
    }

    /// Builds the store named by `config` with the system clock.
    pub fn from_config(config: Config) -> Result<Self, StartupError> {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let store = open_store(&config.store, clock.clone())?;
        Ok(Self::with_parts(config, store, clock))
    }

    /// Assembles a context from ready parts (tests inject a manual clock or a shared store).
    pub fn with_parts(config: Config, store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Self {
        let tokens = TokenService::new(&config.jwt);
        Self {
            config,
            store,
            clock,
            tokens,
            passwords: PasswordHasher::new(),
        }
    }
}

/// Opens the store a configuration names.
pub fn open_store(cfg: &StoreConfig, clock: Arc<dyn Clock>) -> Result<Arc<dyn Store>, StoreError> {
    Ok(match cfg {
        StoreConfig::Embedded { data_dir } => Arc::new(TableStore::embedded(data_dir, clock)?),
        StoreConfig::Memory => Arc::new(TableStore::memory(clock)?),
    })
}
