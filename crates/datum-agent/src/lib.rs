//! The agent: each host fetches its own configuration, checks where it came
//! from, refuses to go back to an older input, converges on a schedule and
//! tells how it went.
//!
//! # Map
//!
//! - [`sshsig`]: SSH signatures as `ssh-keygen -Y sign`/`verify` make and
//!   check them: [`sshsig::SigningKey`] signs, [`sshsig::AllowedSigners`]
//!   (an allowed-signers file) verifies.
//! - [`repo`]: [`repo::LocalRepo`], the agent's own bare repository, created
//!   on first use and opened without the host's git configuration.
//! - [`fetch`]: git mode: [`fetch::fetch`] brings one branch of a
//!   [`fetch::GitSource`] from the first remote that answers and reports
//!   the ones that did not.
//! - [`gitsig`]: [`gitsig::verify_commit`]: the commit carries an SSH
//!   signature (as `git commit -S` with `gpg.format=ssh` writes it) by an
//!   allowed signer.
//! - [`rollback`]: no going back: [`rollback::StateFile`] records the
//!   input applied last, [`rollback::check_git`] and
//!   [`rollback::check_bundle`] refuse an older one unless allowed.
//! - [`bundle`]: making a host's bundle ([`bundle::make`]) and checking
//!   one before applying it ([`bundle::open`], [`bundle::Opened::items`]).
//! - [`config`]: `/etc/datum/agent.yaml`, read into a [`config::Config`].
//! - [`cycle`]: one run of the agent ([`cycle::Agent::run_once`]): fetch,
//!   verify, refuse going back, apply, record, report.
//! - [`local`]: `datum apply`'s run: a bundle file opened with the agent's
//!   checks ([`local::open_bundle_file`]), applied, and recorded as the
//!   agent records its runs ([`local::apply`]).
//! - [`http`]: bundle mode: one URL or path to bytes, bounded in size and time.
//! - [`file`]: a local file's bytes, bounded in size (a bundle path, the
//!   configuration, the CA file).
//! - [`ca`]: `ca_file`, the CAs trusted for HTTPS instead of the platform's.
//! - [`report`]: run records under `/var/lib/datum/reports`, and posting them.
//! - [`metrics`]: the Prometheus textfile-collector file.
//! - [`facts`]: the host's labels checked against what it observes before
//!   anything is applied, and what a run records of it.
//! - [`reported`]: `datum check --reports DIR`, the reports collected from
//!   hosts checked against the fleet's labels.
//! - `calendar`: UTC dates to and from seconds since the epoch (`jiff`),
//!   for report times and allowed-signers validity.
//! - [`schedule`]: when the next cycle runs: interval, per-host splay,
//!   jitter and backoff.
//!
//! Every function reads and writes only the paths its caller gives: the
//! agent decides where its repository, keys and state live (under `--root`
//! in tests).

#![forbid(unsafe_code)]

pub mod bundle;
pub mod ca;
mod calendar;
mod cause;
pub mod config;
pub mod cycle;
pub mod facts;
pub mod fetch;
pub mod file;
pub mod gitsig;
pub mod http;
pub mod local;
pub mod metrics;
pub mod repo;
pub mod report;
pub mod reported;
pub mod rollback;
pub mod schedule;
pub mod sshsig;
