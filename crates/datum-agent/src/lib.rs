//! The parts of the Datum pull agent that reach outside the host's own
//! configuration: fetching a fleet from git remotes, checking who signed
//! it, and refusing to go back to an older input.
//!
//! # Map
//!
//! - [`sshsig`] — SSH signatures as `ssh-keygen -Y sign`/`verify` make and
//!   check them: [`sshsig::SigningKey`] signs, [`sshsig::AllowedSigners`]
//!   (an allowed-signers file) verifies.
//! - [`repo`] — [`repo::LocalRepo`], the agent's own bare repository, created
//!   on first use and opened without the host's git configuration.
//! - [`fetch`] — git mode: [`fetch::fetch`] brings one branch of a
//!   [`fetch::GitSource`] from the first remote that answers and reports
//!   the ones that did not.
//! - [`gitsig`] — [`gitsig::verify_commit`]: the commit carries an SSH
//!   signature (as `git commit -S` with `gpg.format=ssh` writes it) by an
//!   allowed signer.
//! - [`rollback`] — no going back: [`rollback::StateFile`] records the
//!   input applied last, [`rollback::check_git`] and
//!   [`rollback::check_bundle`] refuse an older one unless allowed.
//!
//! Every function reads and writes only the paths its caller gives: the
//! agent decides where its repository, keys and state live (under `--root`
//! in tests).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cause;
pub mod fetch;
pub mod gitsig;
pub mod repo;
pub mod rollback;
pub mod sshsig;
