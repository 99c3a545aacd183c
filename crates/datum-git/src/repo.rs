//! Finding the repository that holds a fleet, and naming its commits.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{GitError, first_line};
use crate::reader::GitReader;
use crate::revision::Revision;

/// The git repository containing a fleet, and where in it the fleet lives.
pub struct Repo {
    shared: gix::ThreadSafeRepository,
    workdir: PathBuf,
    prefix: String,
}

impl fmt::Debug for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Repo")
            .field("workdir", &self.workdir)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Repo {
    /// Finds the repository containing `fleet_dir` (searching upwards, as
    /// `git` does) and remembers where the fleet sits in its work tree.
    ///
    /// `GIT_DIR` and similar variables are not consulted: the repository is
    /// the one the fleet directory is in.
    pub fn discover(fleet_dir: &Path) -> Result<Repo, GitError> {
        let fleet = std::fs::canonicalize(fleet_dir).map_err(|e| GitError::FleetDir {
            path: fleet_dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let shared = gix::ThreadSafeRepository::discover(&fleet).map_err(|e| {
            if e.downcast_any_ref::<gix::discover::upwards::Error>()
                .is_some()
            {
                GitError::NotARepository {
                    path: fleet_dir.to_path_buf(),
                }
            } else {
                GitError::Open {
                    path: fleet_dir.to_path_buf(),
                    message: e.to_string(),
                }
            }
        })?;
        let Some(workdir) = shared.work_tree.clone() else {
            return Err(GitError::Bare {
                path: fleet_dir.to_path_buf(),
                git_dir: shared.git_dir().to_path_buf(),
            });
        };
        let workdir = std::fs::canonicalize(&workdir).map_err(|e| GitError::Open {
            path: fleet_dir.to_path_buf(),
            message: format!("cannot resolve the work tree {}: {e}", workdir.display()),
        })?;
        let Ok(relative) = fleet.strip_prefix(&workdir) else {
            return Err(GitError::OutsideWorkTree {
                path: fleet_dir.to_path_buf(),
                workdir,
            });
        };
        let mut parts = Vec::new();
        for component in relative.components() {
            match component {
                std::path::Component::Normal(name) => match name.to_str() {
                    Some(name) => parts.push(name),
                    None => {
                        return Err(GitError::NotUtf8 {
                            path: relative.to_string_lossy().into_owned(),
                        });
                    }
                },
                _ => {
                    return Err(GitError::OutsideWorkTree {
                        path: fleet_dir.to_path_buf(),
                        workdir,
                    });
                }
            }
        }
        // A fleet inside the repository's own git directory is no fleet.
        if parts.first() == Some(&".git") {
            return Err(GitError::OutsideWorkTree {
                path: fleet_dir.to_path_buf(),
                workdir,
            });
        }
        let prefix = parts.join("/");
        Ok(Repo {
            shared,
            workdir,
            prefix,
        })
    }

    /// Opens the bare repository at `git_dir` (the agent's own, which it
    /// fetches into) holding a fleet at `prefix` (`/`-separated, empty for
    /// the top of the repository). The host's git configuration and `GIT_*`
    /// variables are not read. Messages name `git_dir` where they would
    /// name a work tree.
    pub fn open_bare(git_dir: &Path, prefix: &str) -> Result<Repo, GitError> {
        let open = |message: String| GitError::Open {
            path: git_dir.to_path_buf(),
            message,
        };
        let options = gix::open::Options::isolated().open_path_as_is(true);
        let shared = gix::ThreadSafeRepository::open_opts(git_dir, options)
            .map_err(|e| open(first_line(&e.to_string())))?;
        let valid = prefix
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && part != ".git");
        if !prefix.is_empty() && !valid {
            return Err(GitError::OutsideWorkTree {
                path: PathBuf::from(prefix),
                workdir: git_dir.to_path_buf(),
            });
        }
        Ok(Repo {
            shared,
            workdir: git_dir.to_path_buf(),
            prefix: prefix.to_owned(),
        })
    }

    /// The top directory of the repository's work tree.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The fleet root relative to [`Repo::workdir`], `/`-separated; empty when
    /// the fleet is at the top of the repository.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Resolves any revision git accepts for a commit: `HEAD`, a branch, a
    /// tag (annotated tags are peeled), a full or abbreviated id, `HEAD~1`,
    /// `main^2`, … Trees and blobs (`HEAD:path`) are refused.
    pub fn resolve(&self, rev: &str) -> Result<Revision, GitError> {
        let repo = self.shared.to_thread_local();
        let unknown = |reason: String| GitError::UnknownRevision {
            rev: rev.to_owned(),
            repo: self.workdir.clone(),
            reason,
        };
        if rev.trim().is_empty() {
            return Err(unknown("the revision is empty".to_owned()));
        }
        let id = repo
            .rev_parse_single(rev)
            .map_err(|e| unknown(revspec_reason(&e)))?;
        let object = id
            .object()
            .map_err(|e| unknown(first_line(&e.to_string())))?;
        let kind = object.kind;
        let commit = object.peel_to_commit().map_err(|_| {
            unknown(format!(
                "it names a {kind}, and datum diff compares commits"
            ))
        })?;
        let time = commit
            .time()
            .map_err(|e| unknown(first_line(&e.to_string())))?
            .seconds;
        let id = commit.id();
        let short = id.shorten_or_id().to_string();
        Ok(Revision::new(rev, id.detach(), short, time))
    }

    /// How many commits lead to `rev` along first parents, itself
    /// included: 1 for a root commit, one more for each commit made on the
    /// branch since. A merge counts once, however many commits it brings
    /// in, so the number only grows as a branch moves forward and no clock
    /// decides it (`datum bundle`'s default serial).
    pub fn first_parent_depth(&self, rev: &Revision) -> Result<u64, GitError> {
        let repo = self.shared.to_thread_local();
        let unknown = |reason: String| GitError::UnknownRevision {
            rev: rev.spec().to_owned(),
            repo: self.workdir.clone(),
            reason,
        };
        let mut depth = 0u64;
        let mut next = Some(rev.object_id());
        while let Some(id) = next {
            let commit = repo
                .find_commit(id)
                .map_err(|e| unknown(first_line(&e.to_string())))?;
            depth += 1;
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(depth)
    }

    /// A reader over the fleet as committed at `rev`: the tree of that
    /// commit at [`Repo::prefix`]. Fails with [`GitError::NoFleet`] when the
    /// fleet's directory does not exist in that commit.
    pub fn reader(&self, rev: &Revision) -> Result<GitReader, GitError> {
        GitReader::load(self.shared.clone(), &self.workdir, &self.prefix, rev)
    }
}

/// Why gix could not parse a revision: its first cause when there is one
/// ("Commit 3f2a9c1 has 0 ancestors along the first parent…", "Reference
/// \"nope\" could not be found"), which says more than the summary.
fn revspec_reason(e: &gix::Error) -> String {
    let mut errors = e.iter_errors();
    let top = errors.next().map(ToString::to_string);
    let cause = errors.next().map(ToString::to_string);
    first_line(&cause.or(top).unwrap_or_else(|| e.to_string()))
}
