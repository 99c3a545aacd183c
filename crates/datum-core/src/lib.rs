//! Datum's core: from the files of a fleet repository to resolved manifests,
//! with the provenance of every value.
//!
//! Nothing here prints, reads the environment or the clock, or runs a process:
//! callers pass in a [`reader::Reader`] and get data back.
//!
//! The modules stand in layers, each using only its own and lower ones,
//! with no import cycle (`docs/architecture.md`, "Layers of the core";
//! `scripts/cycles.py` counts them). From the bottom:
//!
//! 1. Foundations: [`source`] (the file table and positions), [`printable`]
//!    (what a fleet wrote, made safe to show), [`diagnostic`] (problems as
//!    data), [`reader`] (where bytes come from: a directory, memory; git is
//!    `datum-git`), [`intern`], [`distinct`] (repeats found in one pass),
//!    [`graph`], [`hint`] (what every library error of every crate
//!    suggests, and whose doing it is).
//! 2. YAML and documents, the only modules that parse YAML: `yaml`
//!    (private), [`emit`] (every YAML and JSON output), [`schema`]
//!    (resource types, fields, normalisation, suggestions), [`names`],
//!    [`cron`] (a Cron's schedule), [`facts`] (labels tied to what a host
//!    observes, and a host whose labels disagree with it), [`vars`], [`document`] (Fleet, Host and Layer documents, every value
//!    with its place), [`settings`] (small YAML files that are not fleet
//!    documents), [`json_schema`] (the JSON Schema editors check with).
//! 3. The fleet model: [`matcher`] (labels and which layers they match),
//!    [`fleet`] (the loaded model, and every `impl Fleet`), [`loader`]
//!    ([`loader::load`]: a reader to a fleet, every problem a diagnostic).
//! 4. Resolution: [`sensitive`] (the one rule for content never shown),
//!    [`template`], [`resolve`] (the fold, per distinct set of matching
//!    layers; [`resolve::resolve_all`] for the fleet), [`manifest`],
//!    [`report`] (resolution problems as diagnostics), [`host`].
//! 5. Questions asked of a resolution: [`explain`], [`check`] (its warning
//!    rules under `check/rules/`), [`diff`], [`query`], [`selector`],
//!    [`secret`], [`bundle`], [`rollout`] (the waves a change reaches the
//!    fleet in).
//! 6. Presentation: [`present`], every answer drawn as text through a
//!    writer that takes tagged spans, and diagnostics drawn.
//!
//! `fuzz`, the fuzzing harness shared by `fuzz/` and the property tests,
//! is built only with the `fuzz` feature.
#![forbid(unsafe_code)]

/// The version of Datum's formats this build reads and writes: every
/// document says it (`datum: v1alpha1`) and every JSON report opens with
/// it. It lives here, above every module, because the document reader
/// (`document`) and the output writer (`emit`) both need it and the writer
/// must not reach into the reader.
pub const VERSION: &str = "v1alpha1";

mod beneath;
pub mod bundle;
pub mod check;
pub mod cron;
pub mod diagnostic;
pub mod diff;
mod discover;
pub mod distinct;
pub mod document;
pub mod emit;
pub mod explain;
pub mod facts;
pub mod fleet;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod graph;
pub mod hint;
pub mod host;
pub mod intern;
pub mod json_schema;
pub mod loader;
pub mod manifest;
pub mod matcher;
pub mod names;
pub mod present;
pub mod printable;
pub mod query;
pub mod reader;
pub mod report;
pub mod resolve;
pub mod rollout;
pub mod schema;
pub mod secret;
pub mod selector;
pub mod sensitive;
pub mod settings;
pub mod source;
pub mod template;
#[cfg(test)]
mod testkit;
pub mod vars;
mod yaml;
