//! Who signed a git commit: the SSH signature git writes with
//! `gpg.format=ssh` (`git commit -S`), checked in process against the
//! host's allowed signers.
//!
//! Git keeps the signature in the commit's `gpgsig` header and signs the
//! commit object without that header, in namespace `git`; this is what
//! `git verify-commit` checks with `gpg.ssh.allowedSignersFile`. Only SSH
//! signatures are accepted: an OpenPGP or X.509 signature is refused by
//! name, since verifying it would mean calling gpg.

use std::borrow::Cow;

use datum_core::hint::Hinted;

use crate::repo::{LocalRepo, ObjectId, RepoError};
use crate::sshsig::{AllowedSigners, Signer, VerifyError};

/// The namespace git signs commits in.
pub const NAMESPACE: &str = "git";

/// A commit that does not carry a valid signature by an allowed signer.
#[derive(Debug, thiserror::Error)]
pub enum CommitSignatureError {
    /// The commit cannot be read from the repository.
    #[error(transparent)]
    Read(#[from] RepoError),
    /// The commit object is not one gix can parse.
    #[error("commit {commit} cannot be parsed: {}", crate::cause::chain(source))]
    Parse {
        /// The commit.
        commit: ObjectId,
        /// What gix reported.
        #[source]
        source: gix::Error,
    },
    /// The commit has no signature at all.
    #[error("commit {commit} is not signed, and allowed signers are configured")]
    Unsigned {
        /// The commit.
        commit: ObjectId,
    },
    /// The commit is signed, but not with an SSH key.
    #[error("commit {commit} carries an {format} signature; datum verifies SSH signatures only")]
    NotSsh {
        /// The commit.
        commit: ObjectId,
        /// `OpenPGP` or `X.509`.
        format: &'static str,
    },
    /// The SSH signature does not verify, or its signer is not allowed.
    #[error("commit {commit}: {source}")]
    Signature {
        /// The commit.
        commit: ObjectId,
        /// Why the signature was refused.
        #[source]
        source: VerifyError,
    },
}

/// What would fix it.
impl Hinted for CommitSignatureError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            Self::Read(e) => e.hint(),
            Self::Parse { .. } => {
                Some("the commit object is damaged; refetch from a remote you trust".into())
            }
            Self::Unsigned { .. } | Self::NotSsh { .. } => Some(
                "sign commits with an SSH key: git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub; git commit -S".into(),
            ),
            Self::Signature { source, .. } => source.hint(),
        }
    }
}

/// Checks that `commit` carries a valid SSH signature, namespace `git`, by
/// a key `signers` allows at `at` (seconds since the epoch).
///
/// Pass the time of the run. `git verify-commit` judges a key's validity
/// window at the commit's own date, which the signer chooses: an expired
/// key could then still bless a commit by backdating it.
pub fn verify_commit(
    repo: &LocalRepo,
    commit: ObjectId,
    signers: &AllowedSigners,
    at: i64,
) -> Result<Signer, CommitSignatureError> {
    let object = repo
        .gix()
        .find_commit(commit)
        .map_err(|source| repo.missing(commit, source))?;
    let parse = |source| CommitSignatureError::Parse { commit, source };
    let (signature, signed) = object
        .signature()
        .map_err(parse)?
        .ok_or(CommitSignatureError::Unsigned { commit })?;
    let signature = String::from_utf8_lossy(&signature);
    let first_line = signature.lines().next().unwrap_or_default().trim();
    let format = match first_line {
        "-----BEGIN PGP SIGNATURE-----" => Some("OpenPGP"),
        "-----BEGIN SIGNED MESSAGE-----" => Some("X.509"),
        _ => None,
    };
    if let Some(format) = format {
        return Err(CommitSignatureError::NotSsh { commit, format });
    }
    signers
        .verify(NAMESPACE, &signed.to_bstring(), &signature, at)
        .map_err(|source| CommitSignatureError::Signature { commit, source })
}
