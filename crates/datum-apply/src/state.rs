//! What Datum keeps on the machine between runs, under `/var/lib/datum/`
//! (inside the root): the lock that keeps two runs apart, and the restarts
//! owed by services whose configuration changed.
//!
//! A restart is written down before the change that makes it owed, and
//! crossed off only after the restart succeeds, so a run killed between the
//! two leaves it for the next run.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::PathBuf;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::disk::{self, Attrs};
use crate::root::Root;

/// The state directory, relative to the root.
pub const STATE_DIR: &str = "/var/lib/datum";

/// Why the state cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("another datum apply is running: {path} is locked")]
    Locked { path: String },
    #[error("cannot use {path}: {source}")]
    Io { path: String, source: io::Error },
}

/// The lock held for a run, and the restarts owed.
#[derive(Debug)]
pub struct State {
    dir: PathBuf,
    owed: BTreeSet<String>,
    /// Held until the run ends; dropped, it is released (so is a killed
    /// process's).
    _lock: Option<Flock<File>>,
}

impl State {
    /// Takes the lock and reads the restarts owed. A real run creates the
    /// state directory and holds the lock exclusively. A noop run creates
    /// nothing: it shares the lock when the file exists, so it still cannot
    /// run while a real run is changing things.
    pub fn open(root: &Root, noop: bool) -> Result<State, StateError> {
        let dir = root.path(STATE_DIR);
        let lock_path = dir.join("apply.lock");
        let shown = lock_path.display().to_string();
        let io_err = |path: &PathBuf| {
            let path = path.display().to_string();
            move |source| StateError::Io { path, source }
        };
        let file = if noop {
            match File::open(&lock_path) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(io_err(&lock_path)(e)),
            }
        } else {
            fs::create_dir_all(&dir).map_err(io_err(&dir))?;
            Some(
                OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(&lock_path)
                    .map_err(io_err(&lock_path))?,
            )
        };
        let how = if noop {
            FlockArg::LockSharedNonblock
        } else {
            FlockArg::LockExclusiveNonblock
        };
        let lock = match file {
            Some(f) => match Flock::lock(f, how) {
                Ok(l) => Some(l),
                Err((_, Errno::EWOULDBLOCK)) => return Err(StateError::Locked { path: shown }),
                Err((_, e)) => return Err(io_err(&lock_path)(io::Error::from(e))),
            },
            None => None,
        };
        let restarts = dir.join("restarts");
        let owed = match fs::read_to_string(&restarts) {
            Ok(text) => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeSet::new(),
            Err(e) => return Err(io_err(&restarts)(e)),
        };
        Ok(State {
            dir,
            owed,
            _lock: lock,
        })
    }

    /// The services (by name) that owe a restart.
    pub fn owed(&self) -> &BTreeSet<String> {
        &self.owed
    }

    /// Records restarts as owed, durably, before the change that causes them.
    pub fn owe<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> Result<(), StateError> {
        let before = self.owed.len();
        self.owed.extend(names.into_iter().map(str::to_owned));
        if self.owed.len() != before {
            self.save()?;
        }
        Ok(())
    }

    /// Crosses off a restart that is done (or no longer needed).
    pub fn settle(&mut self, name: &str) -> Result<(), StateError> {
        if self.owed.remove(name) {
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> Result<(), StateError> {
        let path = self.dir.join("restarts");
        let mut text = String::new();
        for name in &self.owed {
            text.push_str(name);
            text.push('\n');
        }
        let attrs = Attrs {
            mode: Some(0o644),
            ..Attrs::default()
        };
        disk::write_atomic(&path, text.as_bytes(), attrs).map_err(|source| StateError::Io {
            path: path.display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owed_restarts_survive_until_settled() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        {
            let mut s = State::open(&root, false).unwrap();
            s.owe(["nginx", "redis"]).unwrap();
            s.settle("redis").unwrap();
        }
        let s = State::open(&root, false).unwrap();
        assert_eq!(s.owed().iter().collect::<Vec<_>>(), ["nginx"]);
        assert_eq!(
            fs::read_to_string(dir.path().join("var/lib/datum/restarts")).unwrap(),
            "nginx\n"
        );
    }

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        let first = State::open(&root, false).unwrap();
        let err = State::open(&root, false).unwrap_err();
        assert!(matches!(err, StateError::Locked { .. }), "{err}");
        // A noop run would watch a moving target: refused too.
        assert!(matches!(
            State::open(&root, true),
            Err(StateError::Locked { .. })
        ));
        drop(first);
        assert!(State::open(&root, false).is_ok());
    }

    #[test]
    fn a_noop_run_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        let s = State::open(&root, true).unwrap();
        assert!(s.owed().is_empty());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        // Two noop runs share the lock.
        drop(s);
        drop(State::open(&root, false).unwrap());
        let a = State::open(&root, true).unwrap();
        let b = State::open(&root, true).unwrap();
        drop((a, b));
    }
}
