//! Reading a Datum fleet as committed at a git revision, straight from the
//! object database: no checkout, no temporary work tree. This is what
//! `datum diff OLD NEW` compares.
//!
//! # Map
//!
//! - [`Repo`] — the repository containing a fleet directory, and the fleet's
//!   path inside it ([`Repo::prefix`]; fleets may live in a subdirectory of
//!   a bigger repository).
//!   - [`Repo::discover`] finds it from the fleet directory.
//!   - [`Repo::resolve`] turns a revision (`HEAD`, `main`, `HEAD~1`, a tag, a
//!     full or abbreviated id) into a [`Revision`].
//!   - [`Repo::reader`] gives a [`GitReader`] over the fleet at a revision.
//! - [`GitReader`] — a [`datum_core::reader::Reader`] over one commit's tree
//!   at the fleet prefix. Discovery matches [`datum_core::reader::DirReader`]
//!   on a checkout of the same commit: regular `*.yaml`/`*.yml` blobs only
//!   (no symbolic links, no submodules), hidden names skipped, `.gitignore`
//!   files honoured in the fleet and in the directories above it up to the
//!   top of the repository. `source` payloads follow symbolic links only
//!   while they stay inside the fleet root.
//! - [`GitError`] — repository and revision problems, worded for operators.
//!
//! The tree is walked once when the reader is made; reads are a map lookup
//! and one object read, safe from many threads at once.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod reader;
mod repo;

pub use error::GitError;
pub use reader::GitReader;
pub use repo::{Repo, Revision};
