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
//! - [`GitError`] — repository and revision problems, worded for operators;
//!   [`BlobError`] — why one file of a revision could not be read, the typed
//!   source of the core's `ReadError::Store`.
//!
//! The tree is walked once when the reader is made; reads are a map lookup
//! and one object read, safe from many threads at once.
//!
//! # Where it knowingly differs from `DirReader` on a checkout
//!
//! - A hidden name is skipped even when a `.gitignore` negation matches it
//!   (`!.z.yaml`); `DirReader`, through the `ignore` crate, lets it through.
//!   The specification says hidden names are skipped.
//! - Only `.gitignore` files inside the repository count, as in git;
//!   `DirReader` also reads any above the work tree's top directory.
//! - A `.gitignore` that is a symbolic link is not read, as in git (since
//!   2.32); `DirReader` follows it.
//! - `read_source` refuses a link chain that leaves the fleet root even if
//!   it comes back in (`../fleet/files/x`); `DirReader` checks only where
//!   the path finally lands.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod reader;
mod repo;
mod revision;
mod walk;

pub use error::{At, BlobError, GitError};
pub use reader::GitReader;
pub use repo::Repo;
pub use revision::Revision;
