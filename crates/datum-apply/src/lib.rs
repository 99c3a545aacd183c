//! Applying a manifest to a machine: desired state (a host's manifest) and
//! observed state (the machine) give a plan, and the plan gives changes.
//!
//! - [`spec`]: a manifest's resources read into typed desired states ([`spec::items`]).
//! - [`graph`]: the order to apply them in, and the cycles that forbid any
//!   order (found by `datum_core::graph`, which resolution uses too).
//! - [`provider`]: one provider per resource type, behind traits
//!   ([`provider::Provider`], [`provider::ServiceProvider`]); [`provider::Providers::system`]
//!   gives the real ones (filesystem, dpkg/apt, systemd, shadow tools,
//!   commands through [`provider::exec::SystemRunner`]).
//! - [`engine`]: a run ([`engine::apply`]): lock, observe, compare, change,
//!   skip what follows a failure, restart what must restart; [`error`]:
//!   why one did not start.
//! - [`report`]: what a run tells, through a [`report::Reporter`]
//!   ([`report::HumanReporter`], [`report::JsonReporter`]).
//! - [`secret`]: a File's secret, decrypted with the host's key in a real
//!   run, compared by ciphertext hash under `--noop`.
//! - [`state`]: the lock, and the restarts and refreshes owed, under
//!   `/var/lib/datum`.
//! - [`root`]: `/` or the `--root` directory, its accounts, and the host's name.
//! - [`trust`]: who may hand a run as root a fleet ([`trust::check_fleet`]).
//! - [`confine`]: every path resolved inside the root, links included.
//! - [`spawn`]: a command entering the root as its user, in its own process.
//! - [`facts`]: what the host observes (OS release from the root, the
//!   machine's architecture, kernel, virtualization, CPUs, memory).
//!
//! `unsafe` is denied here, and allowed on one function: the steps a
//! command takes between fork and exec ([`spawn::Entry::prepare`]).
#![deny(unsafe_code)]

pub mod confine;
pub mod engine;
pub mod error;
pub mod facts;
pub mod graph;
pub mod provider;
pub mod report;
pub mod root;
pub mod secret;
pub mod spawn;
pub mod spec;
pub mod state;
pub mod trust;

pub use engine::{Options, apply};
pub use error::ApplyError;
pub use provider::Providers;
pub use report::{HumanReporter, JsonReporter, Reporter, RunStatus, Status, Summary};
pub use root::Root;
