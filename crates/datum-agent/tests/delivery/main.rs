//! The delivery half of the agent, through its public API: fetching over
//! HTTP (and HTTPS with a private CA) and from files, run reports and the Prometheus file.

mod http;
mod metrics;
mod report;
mod tls;
