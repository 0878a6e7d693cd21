//! The real-browser end-to-end harness: headless Chromium driven over the DevTools protocol
//! the way the extension drives a tab, against pages served on loopback, with local-api as
//! the server. Used by the end-to-end test (with a scripted model) and by `agent-eval` (with
//! whatever model `LLM_*` points at).

pub mod actions;
pub mod cdp;
pub mod corpus;
pub mod extension;
pub mod judge;
pub mod lab;
pub mod miniwob;
pub mod mistakes;
pub mod model;
pub mod page;
pub mod policy;
pub mod rig;
pub mod run;
pub mod scenario;
pub mod shop;
pub mod site;
pub mod solve;
