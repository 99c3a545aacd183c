//! Test support only: what the integration tests of datum-agent and
//! datum-cli share. It is a dev-dependency of those two crates and nothing
//! else; no shipped code may use it.

pub mod command;
pub mod http;
pub mod metrics;
