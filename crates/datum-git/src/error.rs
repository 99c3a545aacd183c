//! What can go wrong finding a repository, naming a revision or reading a
//! tree, worded for the operator who ran `datum diff`.

use std::borrow::Cow;
use std::path::PathBuf;

use datum_core::hint::{Fault, Hinted};

/// A problem with the git repository or a revision in it (not a problem in a
/// fleet document).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// No repository contains the fleet directory.
    #[error("not inside a git repository: {path} (datum diff reads revisions from git)")]
    NotARepository {
        /// The fleet directory that was searched from.
        path: PathBuf,
    },

    /// A repository was found but could not be opened.
    #[error("cannot open the git repository containing {path}: {message}")]
    Open {
        /// The fleet directory that was searched from.
        path: PathBuf,
        /// What git reported.
        message: String,
    },

    /// The fleet directory itself cannot be resolved on disk.
    #[error("cannot read the fleet directory {path}: {message}")]
    FleetDir {
        /// The fleet directory as given.
        path: PathBuf,
        /// What the operating system reported.
        message: String,
    },

    /// The repository has no work tree, so the fleet cannot be placed in it.
    #[error(
        "{path} is inside the bare git repository {git_dir}, which has no work tree to hold a fleet"
    )]
    Bare {
        /// The fleet directory.
        path: PathBuf,
        /// The repository's git directory.
        git_dir: PathBuf,
    },

    /// The fleet directory is not inside the repository's work tree (for
    /// instance, it is inside the `.git` directory).
    #[error(
        "the fleet directory {path} is not inside the work tree {workdir} of its git repository"
    )]
    OutsideWorkTree {
        /// The fleet directory.
        path: PathBuf,
        /// The repository's work tree.
        workdir: PathBuf,
    },

    /// A path in the repository or the fleet is not valid UTF-8.
    #[error("the path {path} is not valid UTF-8, which datum cannot name in a fleet")]
    NotUtf8 {
        /// The path, with invalid bytes replaced.
        path: String,
    },

    /// A revision does not name a commit.
    #[error("`{rev}` does not name a commit in {repo} ({reason})")]
    UnknownRevision {
        /// The revision as the operator wrote it.
        rev: String,
        /// The repository's work tree.
        repo: PathBuf,
        /// Why, as git explains it.
        reason: String,
    },

    /// The fleet's directory does not exist at a revision: the fleet has no
    /// `datum.yaml` there.
    #[error("{rev} has no directory `{path}`, so the fleet does not exist at that revision")]
    NoFleet {
        /// The revision, as [`crate::Revision::describe`] shows it.
        rev: String,
        /// The fleet's path relative to the repository's top directory.
        path: String,
    },

    /// An object could not be read from the object database.
    #[error("cannot read {what} from the git repository {repo}: {message}")]
    Object {
        /// Which object, in the operator's terms.
        what: String,
        /// The repository's work tree.
        repo: PathBuf,
        /// What git reported.
        message: String,
    },
}

/// Bad usage when the operator named something that is not there (a
/// fleet outside any work tree, a revision that names no commit), with
/// what to do instead; a failure when git could not be read.
impl Hinted for GitError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            GitError::NotARepository { .. }
            | GitError::Bare { .. }
            | GitError::OutsideWorkTree { .. } => Some(
                "datum diff compares git revisions: run it on a fleet inside a git work tree".into(),
            ),
            GitError::UnknownRevision { .. } => Some(
                "name a commit: HEAD~1, a branch, a tag or an id; in CI, fetch enough history for the base revision (actions/checkout: fetch-depth: 0)".into(),
            ),
            _ => None,
        }
    }

    fn fault(&self) -> Fault {
        match self {
            GitError::NotARepository { .. }
            | GitError::Bare { .. }
            | GitError::OutsideWorkTree { .. }
            | GitError::UnknownRevision { .. } => Fault::Usage,
            _ => Fault::Failed,
        }
    }
}

/// Where in a repository a file was being read: its revision and work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// The revision, as the operator named it.
    pub rev: String,
    /// The repository's work tree.
    pub repo: PathBuf,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {} in {}", self.rev, self.repo.display())
    }
}

/// Why one file of a revision could not be read: the typed source of the
/// [`datum_core::reader::ReadError::Store`] a [`crate::GitReader`] returns.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// The path names a directory, a link or a submodule.
    #[error("not a regular file ({at})")]
    NotAFile {
        /// The revision and repository.
        at: At,
    },
    /// The revision has nothing at the path.
    #[error("no such file ({at})")]
    Missing {
        /// The revision and repository.
        at: At,
    },
    /// A candidate's name cannot be a fleet path.
    #[error("the file name is not valid UTF-8")]
    NameNotUtf8,
    /// The object database could not give the blob.
    #[error("{message} ({at})", message = first_line(&.source.to_string()))]
    Object {
        /// The revision and repository.
        at: At,
        /// What git reported.
        #[source]
        source: gix::Error,
    },
}

/// The first line of a possibly multi-line error report.
pub(crate) fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or_default().trim().to_owned()
}
