//! The agent's own git repository: a bare repository the agent creates and
//! fetches into (by default `/var/lib/datum/repo`), read straight from its
//! object database, never checked out.
//!
//! It is opened isolated from the host's git configuration (no system or
//! user gitconfig, no `GIT_*` variables), so what the agent fetches and
//! trusts depends only on the paths and settings its caller passes.

use datum_core::hint::Hinted;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub use gix::ObjectId;

/// The agent's local repository.
pub struct LocalRepo {
    repo: gix::Repository,
    path: PathBuf,
}

impl std::fmt::Debug for LocalRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRepo")
            .field("path", &self.path)
            .finish()
    }
}

/// The local repository cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The directory could not be created, or a repository not initialised in it.
    #[error("cannot create the agent's repository at {}: {}", path.display(), crate::cause::chain(source))]
    Create {
        /// The repository directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: gix::Error,
    },
    /// The directory exists and holds something, but not a git repository
    /// gix can open.
    #[error("cannot open the agent's repository at {}: {}", path.display(), crate::cause::chain(source))]
    Open {
        /// The repository directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: gix::Error,
    },
    /// A commit the caller named is not in the repository, or is not a commit.
    #[error("commit {id} is not in the agent's repository at {}: {}", path.display(), crate::cause::chain(source))]
    MissingCommit {
        /// The commit.
        id: ObjectId,
        /// The repository directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: gix::Error,
    },
}

/// What would fix it.
impl Hinted for RepoError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::Create { .. } => "check that the parent directory exists and is writable",
            Self::Open { .. } => {
                "the agent's repository is only a cache of what it fetched: move it aside and the next run fetches afresh"
            }
            Self::MissingCommit { .. } => {
                "the commit was fetched into another repository, or the repository was replaced; fetch again"
            }
        }))
    }
}

impl LocalRepo {
    /// Opens the repository at `path`, creating a bare one when `path` does
    /// not exist or is an empty directory.
    pub fn open_or_init(path: &Path) -> Result<LocalRepo, RepoError> {
        let fresh = match std::fs::read_dir(path) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            // Anything else (a file, no permission) is for open to explain.
            Err(_) => false,
        };
        let repo = if fresh {
            std::fs::create_dir_all(path).map_err(|e| RepoError::Create {
                path: path.to_owned(),
                source: gix::Error::from_error(e),
            })?;
            gix::ThreadSafeRepository::init_opts(
                path,
                gix::create::Kind::Bare,
                gix::create::Options::default(),
                options(),
            )
            .map_err(|source| RepoError::Create {
                path: path.to_owned(),
                source,
            })?
            .to_thread_local()
        } else {
            gix::open_opts(path, options().open_path_as_is(true)).map_err(|source| {
                RepoError::Open {
                    path: path.to_owned(),
                    source,
                }
            })?
        };
        Ok(LocalRepo {
            repo,
            path: path.to_owned(),
        })
    }

    /// The directory given to [`LocalRepo::open_or_init`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The repository, for reading trees and commits with gix.
    pub fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    /// The committer time of `id`, in seconds since the epoch.
    pub fn commit_time(&self, id: ObjectId) -> Result<i64, RepoError> {
        self.repo
            .find_commit(id)
            .and_then(|commit| commit.time())
            .map(|time| time.seconds)
            .map_err(|source| self.missing(id, source))
    }

    pub(crate) fn missing(&self, id: ObjectId, source: gix::Error) -> RepoError {
        RepoError::MissingCommit {
            id,
            path: self.path.clone(),
            source,
        }
    }
}

fn options() -> gix::open::Options {
    gix::open::Options::isolated().strict_config(true)
}
