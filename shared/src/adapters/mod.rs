//! Adapters: implementations of the ports on concrete technology.

pub mod embedded;
pub mod keys;

pub use embedded::EmbeddedStore;
