//! Test support only: what the tests of datum-apply, datum-agent and
//! datum-cli share. It is a dev-dependency of those crates and nothing
//! else; no shipped code may use it.
#![forbid(unsafe_code)]

pub mod command;
pub mod http;
pub mod machine;
pub mod metrics;
