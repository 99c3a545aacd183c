//! The agent: each host fetches its own configuration, checks where it came
//! from, converges on a schedule and tells how it went.
//!
//! - [`http`]: one URL or path to bytes, bounded in size and time.
//! - [`report`]: run records under `/var/lib/datum/reports`, and posting them.
//! - [`metrics`]: the Prometheus textfile-collector file.
//! - [`schedule`]: when the next cycle runs: interval, per-host splay,
//!   jitter and backoff.
#![forbid(unsafe_code)]

pub mod http;
pub mod metrics;
pub mod report;
pub mod schedule;
