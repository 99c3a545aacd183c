//! Datum's core: from the files of a fleet repository to resolved manifests,
//! with the provenance of every value.
//!
//! Nothing here prints, reads the environment or the clock, or runs a process:
//! callers pass in a [`reader::Reader`] and get data back.
//!
//! - [`source`]: the file table and positions (`path:line:column`).
//! - [`diagnostic`]: errors and warnings as data, drawn as text on request.
#![forbid(unsafe_code)]

pub mod check;
pub mod diagnostic;
pub mod diff;
pub mod document;
pub mod emit;
pub mod explain;
pub mod fleet;
pub mod intern;
pub mod manifest;
pub mod query;
pub mod reader;
pub mod report;
pub mod resolve;
pub mod schema;
pub mod selector;
pub mod source;
#[cfg(test)]
mod testkit;
mod yaml;
