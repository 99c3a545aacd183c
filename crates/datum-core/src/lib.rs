//! Datum's core: from the files of a fleet repository to resolved manifests,
//! with the provenance of every value.
//!
//! Nothing here prints, reads the environment or the clock, or runs a process:
//! callers pass in a [`reader::Reader`] and get data back.
//!
//! The data flows in this order:
//!
//! - [`reader`]: where bytes come from (a directory, memory; git lives in `datum-git`).
//! - [`source`]: the file table and positions (`path:line:column`).
//! - `yaml` (private) then [`document`]: YAML text to Fleet, Host and Layer
//!   documents, every value with its place; the only modules that know YAML.
//! - [`schema`]: resource types, fields, normalisation, suggestions;
//!   [`vars`]: the values layers declare for templates.
//! - [`loader`]: [`loader::load`] reads the repository through a reader,
//!   decodes every document file, runs the fleet-wide checks (one Fleet
//!   document, unique hosts and layers, declared labels, payload digests)
//!   and assembles the fleet.
//! - [`fleet`]: the loaded model: hosts by name, layers in fold order,
//!   interned labels ([`intern`]) and resource ids, and which hosts each
//!   broken document holds back.
//! - [`matcher`]: the layers matching a host, through an index, and why a
//!   layer does or does not match.
//! - [`resolve`]: the fold, per distinct set of matching layers; every field
//!   keeps all its contributions. [`resolve::resolve_all`] for the fleet.
//!   [`graph`] finds its dependency cycles (and apply's).
//! - [`host`]: one named host for `render`, `explain` and `apply`: its
//!   resolution with its problems as diagnostics, or why it has none.
//! - [`template`]: a File's `template` rendered for one host, from a
//!   closed context, recording what it read.
//! - [`manifest`]: the final-value view of a resolution and its serialisation.
//! - [`explain`]: the origin of every value, and why a layer did not match.
//! - [`selector`], [`query`]: fleet-wide questions (`hosts`, `query`).
//! - [`sensitive`]: the one rule for content that is never shown.
//! - [`secret`]: who receives each secret, and through which layer.
//! - [`diff`]: what a change does to every host, field by field.
//! - [`check`] (its warning rules under `check/rules/`), [`report`],
//!   [`diagnostic`]: problems as data and as text.
//! - [`emit`]: the ordered tree every YAML and JSON output goes through;
//!   [`printable`]: what a fleet wrote, escaped for every text output.
//! - [`bundle`]: one host's manifest and payloads as one signable file.
//! - [`settings`]: the YAML tree of a small file that is not a fleet
//!   document (the agent's configuration), with the same rules and places.
//! - [`json_schema`]: the JSON Schema editors check documents with,
//!   generated from the decoder's keys and the [`schema`] table.
//! - [`hint`]: [`hint::Hinted`], what every library error of every crate
//!   suggests and whose doing it is ([`hint::Fault`]), for the binary to map.
//! - [`fuzz`]: the fuzzing harness, shared by `fuzz/` and the property tests.
#![forbid(unsafe_code)]

mod beneath;
pub mod bundle;
pub mod check;
pub mod diagnostic;
pub mod diff;
mod discover;
pub mod document;
pub mod emit;
pub mod explain;
pub mod fleet;
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
pub mod printable;
pub mod query;
pub mod reader;
pub mod report;
pub mod resolve;
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
