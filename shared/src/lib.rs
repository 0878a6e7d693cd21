//! The common library of every function: domain types and rules, ports (storage, clock),
//! their adapters, authentication, and the HTTP plumbing that turns handler results into the
//! contract's responses. Functions, `local-api`, the admin CLI and the tests all build on it.

pub mod adapters;
pub mod agent;
pub mod asl;
pub mod auth;
pub mod cleanup;
pub mod clock;
pub mod config;
pub mod context;
pub mod debug;
pub mod domain;
pub mod error;
pub mod http;
pub mod metrics;
pub mod ports;
pub mod preferences;
pub mod provisioning;
pub mod realtime;
pub mod realtime_auth;
pub mod retry;
pub mod runtime;
pub mod sessions;
pub mod telemetry;
pub mod text;
pub mod time;
pub mod tools;
pub mod upstream;
pub mod views;

pub use context::AppContext;
pub use error::Error;
