//! Git mode's way in: fetch one branch from a list of remotes, in order,
//! into the agent's own repository, and say which commit came back.
//!
//! The remotes are mirrors in order of preference, and every one is asked:
//! a mirror that keeps serving an old tip (frozen, or lagging) must not
//! hide a newer one further down the list. Each answer is a [`Tip`]; one
//! that is down, refuses, or lacks the branch is recorded with its reason,
//! so a dead mirror never stops a run on its own. The agent then takes the
//! newest tip that verifies and descends from the commit applied last
//! (see [`crate::rollback`]).
//!
//! Transports are gix's: plain paths and `file://` (through the host's
//! `git-upload-pack`, as git does), `https://` (rustls, no OpenSSL) and
//! `ssh://` or `user@host:path` (through the host's `ssh` program, which must
//! work without a prompt: a known host key and a key without passphrase).

use std::any::Any;
use std::borrow::Cow;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use datum_core::hint::Hinted;
use gix::bstr::ByteSlice;
use gix::protocol::transport::client::blocking_io::http;
use gix::remote::Direction;

use crate::repo::{LocalRepo, ObjectId};

/// Where git mode fetches from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    remotes: Vec<String>,
    branch: String,
    /// How long an `http://` or `https://` remote may send nothing.
    timeout: Duration,
}

/// A git source that cannot be fetched from whatever the network does.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The list of remotes is empty.
    #[error("git mode needs at least one remote")]
    NoRemotes,
    /// The branch is not a branch name git accepts.
    #[error("`{branch}` is not a git branch name")]
    BadBranch {
        /// The branch as written.
        branch: String,
    },
    /// A remote is not a URL or path gix reads.
    #[error("`{remote}` is not a git URL or path: {}", crate::cause::chain(source))]
    BadRemote {
        /// The remote as written.
        remote: String,
        /// What the URL parser reported.
        #[source]
        source: gix::Error,
    },
}

/// What would fix it.
impl Hinted for SourceError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::NoRemotes => {
                "list remotes as in remotes: [\"https://git.example.net/fleet.git\"]"
            }
            Self::BadBranch { .. } => {
                "write the branch's short name, as in `main` or `release/2025`"
            }
            Self::BadRemote { .. } => {
                "write a path, file://, https:// or ssh:// URL, or user@host:path"
            }
        }))
    }
}

impl GitSource {
    /// Checks the remotes (in order of preference) and the branch.
    pub fn new(remotes: Vec<String>, branch: String) -> Result<GitSource, SourceError> {
        if remotes.is_empty() {
            return Err(SourceError::NoRemotes);
        }
        for remote in &remotes {
            gix::url::parse(remote.as_bytes().as_bstr()).map_err(|source| {
                SourceError::BadRemote {
                    remote: remote.clone(),
                    source,
                }
            })?;
        }
        let full = format!("refs/heads/{branch}");
        if branch.is_empty()
            || branch.starts_with("refs/")
            || gix::refs::FullName::try_from(full.as_str()).is_err()
        {
            return Err(SourceError::BadBranch { branch });
        }
        Ok(GitSource {
            remotes,
            branch,
            timeout: STALL_TIMEOUT,
        })
    }

    /// The same source, giving up on an `http://` or `https://` remote that
    /// sends nothing for `timeout` (by default [`STALL_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> GitSource {
        self.timeout = timeout;
        self
    }

    /// How long an `http://` or `https://` remote may send nothing.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The remotes, in the order they are tried.
    pub fn remotes(&self) -> &[String] {
        &self.remotes
    }

    /// The branch fetched from each.
    pub fn branch(&self) -> &str {
        &self.branch
    }
}

/// What a fetch brought back.
#[derive(Debug)]
pub struct Fetched {
    /// The branch's tip on each remote that answered, in the order of the
    /// remotes (never empty).
    pub tips: Vec<Tip>,
    /// The remotes that did not, each with why.
    pub failures: Vec<RemoteFailure>,
}

/// The branch's tip on one remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tip {
    pub commit: ObjectId,
    /// Its committer time, in seconds since the epoch.
    pub commit_time: i64,
    /// The remote, as configured.
    pub remote: String,
}

/// One remote that could not give the branch.
#[derive(Debug)]
pub struct RemoteFailure {
    /// The remote, as configured.
    pub remote: String,
    /// Why.
    pub error: RemoteError,
}

/// Why one remote could not give the branch.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// No connection or no handshake: the host is down, the path does not
    /// exist, the server refused us.
    #[error("cannot reach it: {}", crate::cause::chain(source))]
    Connect {
        /// What gix reported.
        #[source]
        source: gix::Error,
    },
    /// The remote answered but has no such branch.
    #[error("it has no branch `{branch}`")]
    NoBranch {
        /// The branch.
        branch: String,
    },
    /// The transfer of objects or the update of the local ref failed.
    #[error("fetching failed: {}", crate::cause::chain(source))]
    Transfer {
        /// What gix reported.
        #[source]
        source: gix::Error,
    },
}

/// No remote gave the branch.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Every remote failed; each failure says why.
    #[error("no remote gave branch `{branch}`:{}", list(failures))]
    AllFailed {
        /// The branch.
        branch: String,
        /// Every remote, in order, with why it failed.
        failures: Vec<RemoteFailure>,
    },
}

/// What would fix it.
impl Hinted for FetchError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(
            "check the network and the remotes; the agent keeps applying the last input it verified",
        ))
    }
}

fn list(failures: &[RemoteFailure]) -> String {
    failures
        .iter()
        .map(|f| format!("\n  {}: {}", f.remote, f.error))
        .collect()
}

/// Fetches `source`'s branch into `repo` from every remote, in order.
pub fn fetch(repo: &LocalRepo, source: &GitSource) -> Result<Fetched, FetchError> {
    let mut failures = Vec::new();
    let mut tips = Vec::new();
    for (index, remote) in source.remotes.iter().enumerate() {
        // One tracking ref per position in the list, so a mirror's older tip
        // never moves another mirror's ref, and the next fetch from the same
        // remote only transfers what is new.
        let tracking = format!("refs/datum/remote-{index}/{}", source.branch);
        match fetch_one(repo, remote, &source.branch, &tracking, source.timeout) {
            Ok((commit, commit_time)) => tips.push(Tip {
                commit,
                commit_time,
                remote: remote.clone(),
            }),
            Err(error) => failures.push(RemoteFailure {
                remote: remote.clone(),
                error,
            }),
        }
    }
    if !tips.is_empty() {
        return Ok(Fetched { tips, failures });
    }
    Err(FetchError::AllFailed {
        branch: source.branch.clone(),
        failures,
    })
}

/// How long an `http://` or `https://` remote may keep the agent waiting:
/// for the answer to each request, and for each read of it, so a server
/// that accepts and then sends nothing is given up instead of waited on
/// for ever (connecting alone gives up after 20 seconds).
pub const STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// For an `http://` or `https://` remote, the transport's options with
/// the HTTP client's timeout set to `timeout` (for every other remote,
/// `None`: the defaults).
fn http_options(
    repo: &gix::Repository,
    url: &str,
    timeout: Duration,
) -> Result<Option<Box<dyn Any>>, gix::Error> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Ok(None);
    }
    let Some(mut options) = repo.transport_options(url.as_bytes().as_bstr(), None)? else {
        return Ok(None);
    };
    if let Some(http) = options.downcast_mut::<http::Options>() {
        let client = http::reqwest::Options {
            configure_client: Some(Box::new(move |builder| Ok(builder.timeout(timeout)))),
            ..Default::default()
        };
        http.backend = Some(Arc::new(Mutex::new(client)));
    }
    Ok(Some(options))
}

fn fetch_one(
    local: &LocalRepo,
    url: &str,
    branch: &str,
    tracking: &str,
    timeout: Duration,
) -> Result<(ObjectId, i64), RemoteError> {
    let repo = local.gix();
    let connect = |source| RemoteError::Connect { source };
    let transfer = |source| RemoteError::Transfer { source };
    let spec = format!("+refs/heads/{branch}:{tracking}");
    let remote = repo
        .remote_at(url)
        .and_then(|r| r.with_refspecs([spec.as_str()], Direction::Fetch))
        .map_err(connect)?
        .with_fetch_tags(gix::remote::fetch::Tags::None);
    let options = http_options(repo, url, timeout).map_err(connect)?;
    let prepare = remote
        .connect(Direction::Fetch)
        .map(|c| match options {
            Some(options) => c.with_transport_options(options),
            None => c,
        })
        .and_then(|c| c.prepare_fetch(gix::progress::Discard, Default::default()))
        .map_err(connect)?;
    let wanted = format!("refs/heads/{branch}");
    let advertised = prepare
        .ref_map()
        .mappings
        .iter()
        .any(|m| m.remote.as_name() == Some(wanted.as_bytes().as_bstr()));
    if !advertised {
        return Err(RemoteError::NoBranch {
            branch: branch.to_owned(),
        });
    }
    // Nothing interrupts a fetch from inside; the process is stopped whole.
    let never = AtomicBool::new(false);
    prepare
        .receive(gix::progress::Discard, &never)
        .map_err(transfer)?;
    let commit = repo
        .find_reference(tracking)
        .and_then(|mut r| r.peel_to_id())
        .map(|id| id.detach())
        .map_err(transfer)?;
    let time = local
        .commit_time(commit)
        .map_err(|e| transfer(gix::Error::from_error(e)))?;
    Ok((commit, time))
}
