//! Test support only: what the tests of datum-apply, datum-secrets,
//! datum-agent and datum-cli share. It is a dev-dependency of those crates
//! and nothing else; no shipped code may use it.
//!
//! - [`command`]: commands the tests run, `git` without the machine's
//!   configuration.
//! - [`http`]: HTTP(S) servers on 127.0.0.1.
//! - [`machine`]: a machine root real commands run in.
//! - [`metrics`]: a Prometheus text file read back.
//! - [`packages`]: rpms built here, a dnf repository of them, a Rocky-like root.
//! - [`tools`]: the system tools a test needs, and root: run, or skipped
//!   out loud, and never skipped in CI (`DATUM_TEST_REQUIRE_TOOLS`).
#![forbid(unsafe_code)]

pub mod command;
pub mod http;
pub mod machine;
pub mod metrics;
pub mod packages;
pub mod tools;
