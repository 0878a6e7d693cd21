//! The agent: page model, prompt rendering, action grammar, LLM output parsing, and the
//! phases of one interact step.

pub mod action;
pub mod output;
pub mod page;
pub mod promotion;
pub mod prompt;
pub mod recipe;
pub mod render;
pub mod request;
pub mod step;
