//! What can go wrong finding a repository, naming a revision or reading a
//! tree, worded for the operator who ran `datum diff`.

use std::path::PathBuf;

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
