//! No going back: a new input must be newer than the one applied last.
//!
//! In git mode the new tip must descend from the commit applied last
//! (found by walking back from the tip, a bounded number of commits); with
//! bundles, the signed serial may not be lower, and the same serial must be
//! the same release: the same commit and the same contents (the SHA-256
//! of its manifest and payloads, which a re-signed bundle with a fresh
//! expiry keeps, and which is all a bundle made outside git has to tell
//! it); once a bundle with a serial (or a commit) was applied one without
//! is refused. No clock decides: a commit dated years ahead changes
//! nothing. Only bundles of format version 1, which carry no serial, are
//! still compared by commit time, and so is the first bundle with a serial
//! after one of them (see [`check_bundle`]). Anything else (an older
//! commit, a rewritten history, a commit that cannot be placed) is refused
//! with its own error, so a replayed old signed input cannot undo a fix,
//! unless the operator passes `--allow-rollback` for the run. The
//! record of the last input is a [`StateFile`].

mod state;

pub(crate) use state::hex;
pub use state::{Applied, StateError, StateFile};

use std::borrow::Cow;

use datum_core::hint::Hinted;

use crate::repo::{LocalRepo, ObjectId, RepoError};
use crate::sshsig::time::format_utc;

/// How far back the ancestry walk looks before giving up: about a year of
/// several hundred commits a day, and a fraction of a second to walk.
pub const DEFAULT_WALK_LIMIT: usize = 100_000;

/// What the check accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Accept an input the check refuses (`--allow-rollback`); the refusal
    /// is returned inside [`Progress::Allowed`] for the report.
    pub allow_rollback: bool,
    /// How many commits the ancestry walk visits at most.
    pub walk_limit: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_rollback: false,
            walk_limit: DEFAULT_WALK_LIMIT,
        }
    }
}

/// How the new input relates to the one applied last.
#[derive(Debug)]
pub enum Progress {
    /// Nothing was applied before.
    First,
    /// The same commit as last time.
    Same,
    /// Newer: descends from the last commit (git), or is not older (bundle).
    Forward,
    /// Refused by the check, and accepted because the policy allows rollback.
    Allowed(RollbackError),
}

/// The new input would take the host back, or cannot be shown not to.
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    /// The new tip is an ancestor of the commit applied last.
    #[error("refusing to go back: commit {tip} is older than {last}, the commit applied last")]
    Behind {
        /// The commit applied last.
        last: ObjectId,
        /// The new tip.
        tip: ObjectId,
    },
    /// Neither descends from the other: the history was rewritten.
    #[error(
        "refusing commit {tip}: it does not descend from {last}, the commit applied last (the history was rewritten)"
    )]
    Diverged {
        /// The commit applied last.
        last: ObjectId,
        /// The new tip.
        tip: ObjectId,
    },
    /// The commit applied last is not in the repository.
    #[error(
        "refusing commit {tip}: {last}, the commit applied last, is not in the agent's repository, so the new commit cannot be shown to descend from it"
    )]
    Unknown {
        /// The commit applied last.
        last: ObjectId,
        /// The new tip.
        tip: ObjectId,
    },
    /// The walk limit was reached before the two commits could be placed.
    #[error(
        "refusing commit {tip}: cannot tell within {limit} commits whether it descends from {last}, the commit applied last"
    )]
    TooFar {
        /// The commit applied last.
        last: ObjectId,
        /// The new tip.
        tip: ObjectId,
        /// The walk limit.
        limit: usize,
    },
    /// The new input's commit time is older than the last one's.
    #[error("refusing to go back: the new input was committed at {}, before the input applied last ({})", format_utc(*.time), format_utc(*.last_time))]
    Older {
        /// The last input's commit time.
        last_time: i64,
        /// The new input's commit time.
        time: i64,
    },
    /// A bundle with a lower serial than the one applied last.
    #[error(
        "refusing to go back: the bundle's serial is {serial}, lower than {last}, the serial applied last"
    )]
    LowerSerial {
        /// The serial applied last.
        last: u64,
        /// The new bundle's.
        serial: u64,
    },
    /// The same serial as the bundle applied last, and another commit.
    #[error(
        "refusing the bundle: serial {serial} was applied with commit {}, and this bundle of the same serial has commit {}",
        show(*.last),
        show(*.commit)
    )]
    SameSerial {
        /// The serial both bundles carry.
        serial: u64,
        /// The commit applied last.
        last: Option<ObjectId>,
        /// The new bundle's commit.
        commit: Option<ObjectId>,
    },
    /// The same place as the bundle applied last (its serial, or its
    /// commit), and other contents.
    #[error(
        "refusing the bundle: it has {place}, as the bundle applied last, and other contents (sha256 {}…, where the one applied has {}…)",
        short(.contents),
        short(.last)
    )]
    OtherContents {
        /// `serial N` or `commit C`.
        place: String,
        /// The SHA-256 of the contents applied last.
        last: [u8; 32],
        /// The new bundle's.
        contents: [u8; 32],
    },
    /// A bundle without a serial after one with.
    #[error(
        "refusing the bundle: it carries no serial, and this host applied serial {last}, so it cannot be placed after it"
    )]
    NoSerial {
        /// The serial applied last.
        last: u64,
    },
    /// A bundle without a commit after one with.
    #[error(
        "refusing the bundle: it records no commit, and this host applied commit {last}, so it cannot be placed after it"
    )]
    NoCommit {
        /// The commit applied last.
        last: ObjectId,
    },
    /// The history could not be read.
    #[error(
        "cannot compare commit {tip} with the commit applied last: {}",
        crate::cause::chain(source)
    )]
    Walk {
        /// The new tip.
        tip: ObjectId,
        /// What gix reported.
        #[source]
        source: gix::Error,
    },
    /// The new tip could not be read.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// What would fix it.
impl Hinted for RollbackError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::Behind { .. } | Self::Older { .. } | Self::LowerSerial { .. } => {
                "a mirror may lag behind the others; if going back is intended, run once with --allow-rollback"
            }
            Self::SameSerial { .. } | Self::OtherContents { .. } => {
                "two releases were given the same serial: bundle the newer one again with a higher `datum bundle --serial` (or from a new commit, without --serial); if this one is intended, run once with --allow-rollback"
            }
            Self::NoSerial { .. } | Self::NoCommit { .. } => {
                "make the bundle with this Datum release from the fleet's git repository (or with `datum bundle --serial N`); if this is intended, run once with --allow-rollback"
            }
            Self::Diverged { .. } => {
                "if the branch was rewritten on purpose, run once with --allow-rollback"
            }
            Self::Unknown { .. } | Self::TooFar { .. } | Self::Walk { .. } | Self::Repo(_) => {
                "if this commit is the one to apply, run once with --allow-rollback"
            }
        }))
    }
}

/// Checks a git tip against the input applied last.
pub fn check_git(
    repo: &LocalRepo,
    last: Option<&Applied>,
    tip: ObjectId,
    policy: &Policy,
) -> Result<Progress, RollbackError> {
    let Some(last) = last else {
        return Ok(Progress::First);
    };
    let verdict = match last.commit() {
        Some(last) if last == tip => Ok(Progress::Same),
        Some(last) => ancestry(repo, last, tip, policy.walk_limit),
        // A bundle from a fleet outside git has only its time to compare.
        None => repo
            .commit_time(tip)
            .map_err(RollbackError::from)
            .and_then(|time| by_time(last.commit_time(), time)),
    };
    allow(verdict, policy)
}

/// Where a bundle places itself in the order of releases: what its signed
/// header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub serial: Option<u64>,
    pub commit: Option<ObjectId>,
    /// The commit's time (0 without a commit): compared only between
    /// bundles that have no serial (format version 1).
    pub commit_time: i64,
    /// The SHA-256 of the bundle's clear contents.
    pub contents: Option<[u8; 32]>,
}

/// Checks a bundle against the input applied last: a serial may not go
/// down, the same serial must be the same release (the same commit and the
/// same contents), and a bundle that cannot be placed (no serial, or no
/// commit) is refused after one that could. Between bundles made outside
/// git (neither serial nor commit) only the contents tell: the same
/// contents are the same bundle, other contents cannot be placed.
///
/// The first bundle with a serial after one without (format version 1)
/// cannot be placed by serial: it is placed as version-1 bundles were, by
/// its commit. The same commit must come with the same contents (the same
/// release, bundled again in the new format); another commit may not be
/// older by commit time than the one applied last; no commit is refused
/// after one. The clock decides only this once, and only against a record
/// that itself came from a clock-ordered bundle: from then on the serial
/// does.
pub fn check_bundle(
    last: Option<&Applied>,
    new: Placement,
    policy: &Policy,
) -> Result<Progress, RollbackError> {
    let Some(last) = last else {
        return Ok(Progress::First);
    };
    let verdict = match (last.serial(), new.serial) {
        (Some(last_serial), Some(serial)) if serial < last_serial => {
            Err(RollbackError::LowerSerial {
                last: last_serial,
                serial,
            })
        }
        (Some(last_serial), Some(serial)) if serial == last_serial => {
            if new.commit != last.commit() {
                Err(RollbackError::SameSerial {
                    serial,
                    last: last.commit(),
                    commit: new.commit,
                })
            } else {
                same_contents(last, &new, format!("serial {serial}"))
            }
        }
        (Some(_), Some(_)) => Ok(Progress::Forward),
        (Some(last_serial), None) => Err(RollbackError::NoSerial { last: last_serial }),
        // Both unserialled (version 1), or the first serial after version 1.
        (None, _) => match (last.commit(), new.commit) {
            (Some(last), None) => Err(RollbackError::NoCommit { last }),
            // Made outside git: only the contents tell the same bundle.
            (None, None)
                if new.serial.is_none()
                    && new.contents.is_some()
                    && new.contents == last.contents() =>
            {
                Ok(Progress::Same)
            }
            (Some(commit), Some(c)) if commit == c => {
                same_contents(last, &new, format!("commit {commit}"))
            }
            _ => by_time(last.commit_time(), new.commit_time),
        },
    };
    allow(verdict, policy)
}

/// A bundle at the same place as the one applied last is the same release
/// only with the same contents; a record without their digest (written by
/// an older agent) cannot tell, and takes it as the same.
fn same_contents(
    last: &Applied,
    new: &Placement,
    place: String,
) -> Result<Progress, RollbackError> {
    match (last.contents(), new.contents) {
        (Some(last), Some(contents)) if last != contents => Err(RollbackError::OtherContents {
            place,
            last,
            contents,
        }),
        _ => Ok(Progress::Same),
    }
}

fn short(digest: &[u8; 32]) -> String {
    state::hex(&digest[..8])
}

fn show(commit: Option<ObjectId>) -> String {
    commit.map_or_else(|| "none".to_owned(), |c| c.to_string())
}

fn allow(
    verdict: Result<Progress, RollbackError>,
    policy: &Policy,
) -> Result<Progress, RollbackError> {
    match verdict {
        Err(refusal) if policy.allow_rollback => Ok(Progress::Allowed(refusal)),
        verdict => verdict,
    }
}

fn by_time(last_time: i64, time: i64) -> Result<Progress, RollbackError> {
    if time < last_time {
        return Err(RollbackError::Older { last_time, time });
    }
    Ok(Progress::Forward)
}

fn ancestry(
    repo: &LocalRepo,
    last: ObjectId,
    tip: ObjectId,
    limit: usize,
) -> Result<Progress, RollbackError> {
    let gix = repo.gix();
    if gix.find_commit(last).is_err() {
        return Err(RollbackError::Unknown { last, tip });
    }
    let walk = |source| RollbackError::Walk { tip, source };
    match reaches(gix, tip, last, limit).map_err(walk)? {
        Reach::Found => return Ok(Progress::Forward),
        Reach::Limit => return Err(RollbackError::TooFar { last, tip, limit }),
        Reach::NotFound => {}
    }
    // Not a descendant: an ancestor (a lagging mirror, a replay) or a
    // rewrite, which call for different fixes.
    match reaches(gix, last, tip, limit).map_err(walk)? {
        Reach::Found => Err(RollbackError::Behind { last, tip }),
        Reach::NotFound => Err(RollbackError::Diverged { last, tip }),
        Reach::Limit => Err(RollbackError::TooFar { last, tip, limit }),
    }
}

/// Whether `descendant` is `ancestor` or descends from it, looking at most
/// `limit` commits back; a history that cannot be read answers no.
pub fn descends(repo: &LocalRepo, ancestor: ObjectId, descendant: ObjectId, limit: usize) -> bool {
    matches!(
        reaches(repo.gix(), descendant, ancestor, limit),
        Ok(Reach::Found)
    )
}

enum Reach {
    Found,
    NotFound,
    Limit,
}

/// Whether `target` is `from` or one of its ancestors, visiting at most
/// `limit` commits.
fn reaches(
    repo: &gix::Repository,
    from: ObjectId,
    target: ObjectId,
    limit: usize,
) -> Result<Reach, gix::Error> {
    for (visited, info) in repo.rev_walk([from]).all()?.enumerate() {
        if visited >= limit {
            return Ok(Reach::Limit);
        }
        if info?.id == target {
            return Ok(Reach::Found);
        }
    }
    Ok(Reach::NotFound)
}
