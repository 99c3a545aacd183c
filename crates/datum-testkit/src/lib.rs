//! Test support only: what the integration tests of Datum's crates share.
//! It is a dev-dependency and nothing else; no shipped code may use it.
//!
//! - [`command`]: commands the tests run, `git` without the machine's
//!   configuration.
//! - [`http`]: HTTP(S) servers on 127.0.0.1.
//! - [`metrics`]: a Prometheus text file read back.
//! - [`tools`]: the system tools a test needs, and root: run, or skipped
//!   out loud, and never skipped in CI (`DATUM_TEST_REQUIRE_TOOLS`).

pub mod command;
pub mod http;
pub mod metrics;
pub mod tools;
