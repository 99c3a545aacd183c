//! Datum's writes to the filesystem, in one place: every file Datum
//! writes is replaced all at once and never through a symbolic link.
//!
//! - [`atomic`]: one file replaced atomically ([`write_atomic`],
//!   [`write_atomic_in`]): a new temporary file with a random name beside
//!   it (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600 until renamed), flushed,
//!   renamed, the directory flushed; a link repointed the same way
//!   ([`symlink_atomic_in`]); what a killed write left
//!   ([`remove_stale_temps`]).
//! - [`outdir`]: a directory filled with many files at once ([`OutDir`]),
//!   flushed once at the end.
//! - [`manifests`]: `render --all`, every host's manifest written into a
//!   directory ([`manifests::render_all`]).
//! - [`kind`]: what kind of file stands at a path, for messages ([`kind_of`]).
//!
//! The core stays pure: it reads through its `Reader` and writes to any
//! `io::Write`; the files are written here, by the crates above it
//! (secrets, apply, the agent and the CLI).
#![forbid(unsafe_code)]

pub mod atomic;
pub mod kind;
pub mod manifests;
pub mod outdir;

pub use atomic::{
    Attrs, output_mode, remove_stale_temps, set_attrs, stale_temps, symlink_atomic_in,
    write_atomic, write_atomic_in,
};
pub use kind::kind_of;
pub use outdir::OutDir;
