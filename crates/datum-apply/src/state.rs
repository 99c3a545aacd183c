//! What Datum keeps on the machine between runs, under `/var/lib/datum/`
//! (inside the root): the lock that keeps two runs apart, and what a run
//! owes, each in a [`Ledger`]: the restarts owed by Services whose
//! configuration changed (`restarts`, one service name a line) and the
//! refreshes owed to `refresh_only` Execs (`refreshes`, one Exec id a line).
//!
//! Both are written down before the change that makes them owed, and
//! crossed off only once the restart or the Exec is done (or its guards say
//! it need not run), so a run killed between the two leaves them for the
//! next run. Only a run holding the lock writes them.

use std::collections::BTreeSet;
use std::fs::File;
use std::io;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, openat};
use nix::sys::stat::Mode;

use datum_core::schema::{Kind, ResourceId};
use datum_fs::Attrs;

use crate::root::{Refused, Root, read_small_in};

/// The state directory, relative to the root.
pub const STATE_DIR: &str = "/var/lib/datum";

/// The largest `restarts` file read: thousands of service names.
pub const RESTARTS_LIMIT: u64 = 256 * 1024;

/// The largest `refreshes` file read: thousands of Exec ids.
pub const REFRESHES_LIMIT: u64 = 256 * 1024;

/// Why the state cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("another datum apply is running: {path} is locked")]
    Locked { path: String },
    #[error("cannot use {path}: {source}")]
    Io { path: String, source: io::Error },
    /// A state file Datum will not read; what it holds is never shown.
    #[error("cannot use {path}: {problem}")]
    Refused { path: String, problem: String },
}

/// The lock held for a run, and what is owed.
#[derive(Debug)]
pub struct State {
    /// The restarts owed to Services, by service name.
    pub restarts: Ledger,
    /// The refreshes owed to `refresh_only` Execs, by Exec id.
    pub refreshes: Ledger,
    /// Held until the run ends; dropped, it is released (so is a killed
    /// process's).
    _lock: Option<Flock<File>>,
}

impl State {
    /// Takes the lock and reads what is owed. A real run creates the state
    /// directory and holds the lock exclusively. A noop run creates
    /// nothing: it shares the lock when the file exists, so it still cannot
    /// run while a real run is changing things.
    ///
    /// The directory is resolved inside the root; the lock and the ledgers
    /// are used only as regular files, never through a link at their
    /// names, and read only when small and made of what they hold.
    pub fn open(root: &Root, noop: bool) -> Result<State, StateError> {
        let shown = root.path(STATE_DIR).display().to_string();
        let at = |name: &str| format!("{shown}/{name}");
        let io_err = |path: String| move |source| StateError::Io { path, source };
        let dir = if noop {
            match root.open(STATE_DIR, OFlag::O_RDONLY | OFlag::O_DIRECTORY, true) {
                Ok(d) => Some(d),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(io_err(shown.clone())(e)),
            }
        } else {
            Some(
                root.create_dir_all(STATE_DIR, 0o755)
                    .map_err(io_err(shown.clone()))?,
            )
        };
        let lock_path = at("apply.lock");
        let file = match &dir {
            None => None,
            Some(dir) => open_lock(dir, noop).map_err(|e| match e {
                Refused::Io(source) => StateError::Io {
                    path: lock_path.clone(),
                    source,
                },
                other => StateError::Refused {
                    path: lock_path.clone(),
                    problem: other.to_string(),
                },
            })?,
        };
        let how = if noop {
            FlockArg::LockSharedNonblock
        } else {
            FlockArg::LockExclusiveNonblock
        };
        let lock = match file {
            Some(f) => match Flock::lock(f, how) {
                Ok(l) => Some(l),
                Err((_, Errno::EWOULDBLOCK)) => return Err(StateError::Locked { path: lock_path }),
                Err((_, e)) => return Err(io_err(lock_path)(io::Error::from(e))),
            },
            None => None,
        };
        let copy = |dir: &Option<File>| -> Result<Option<File>, StateError> {
            dir.as_ref()
                .map(File::try_clone)
                .transpose()
                .map_err(io_err(shown.clone()))
        };
        let restarts = Ledger::read(copy(&dir)?, &shown, "restarts", RESTARTS_LIMIT, restarts)?;
        let refreshes = Ledger::read(copy(&dir)?, &shown, "refreshes", REFRESHES_LIMIT, refreshes)?;
        if !noop && let Some(dir) = &dir {
            // Only this run may be writing here now: what an earlier,
            // killed one left half written goes.
            for name in ["restarts", "refreshes"] {
                datum_fs::remove_stale_temps(dir, Some(name.as_ref()))
                    .map_err(io_err(shown.clone()))?;
            }
        }
        Ok(State {
            restarts,
            refreshes,
            _lock: lock,
        })
    }
}

/// One file of names owed: restarts or refreshes. A name is written down
/// (atomically, flushed to disk) before the change that makes it owed, and
/// crossed off only once what it is owed is done, so a run killed in
/// between leaves it for the next run.
#[derive(Debug)]
pub struct Ledger {
    /// The state directory, opened; `None` in a noop run that found none.
    dir: Option<File>,
    name: &'static str,
    /// The file's path, for messages.
    shown: String,
    owed: BTreeSet<String>,
}

/// Reads a ledger's file: the names it holds, or what is wrong with it
/// (never repeating what it holds).
type Parse = fn(&[u8]) -> Result<BTreeSet<String>, String>;

impl Ledger {
    /// Reads the file `name` of the state directory `dir` (shown as
    /// `shown_dir`), at most `limit` bytes, only as a regular file, never
    /// through a link; missing, it owes nothing.
    fn read(
        dir: Option<File>,
        shown_dir: &str,
        name: &'static str,
        limit: u64,
        parse: Parse,
    ) -> Result<Ledger, StateError> {
        let shown = format!("{shown_dir}/{name}");
        let refused = |problem| StateError::Refused {
            path: shown.clone(),
            problem,
        };
        let owed = match &dir {
            None => BTreeSet::new(),
            Some(d) => match read_small_in(d, name.as_ref(), limit) {
                Ok(None) => BTreeSet::new(),
                Ok(Some(bytes)) => parse(&bytes).map_err(refused)?,
                Err(e) => return Err(refused(e.to_string())),
            },
        };
        Ok(Ledger {
            dir,
            name,
            shown,
            owed,
        })
    }

    /// The names owed.
    pub fn owed(&self) -> &BTreeSet<String> {
        &self.owed
    }

    /// Records names as owed, durably, before the change that causes them.
    pub fn owe<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> Result<(), StateError> {
        let before = self.owed.len();
        self.owed.extend(names.into_iter().map(str::to_owned));
        if self.owed.len() != before {
            self.save()?;
        }
        Ok(())
    }

    /// Crosses off a name whose due is done (or no longer needed).
    pub fn settle(&mut self, name: &str) -> Result<(), StateError> {
        if self.owed.remove(name) {
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> Result<(), StateError> {
        let io = |source| StateError::Io {
            path: self.shown.clone(),
            source,
        };
        let Some(dir) = &self.dir else {
            return Err(io(io::Error::other("a noop run writes no state")));
        };
        let mut text = String::new();
        for name in &self.owed {
            text.push_str(name);
            text.push('\n');
        }
        datum_fs::write_atomic_in(dir, self.name.as_ref(), text.as_bytes(), Attrs::mode(0o644))
            .map_err(io)
    }
}

/// The lock file in the state directory: created by a real run, only
/// opened by a noop run (`None` when missing); never through a link.
fn open_lock(dir: &File, noop: bool) -> Result<Option<File>, Refused> {
    let base = OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let (flags, mode) = if noop {
        (base | OFlag::O_RDONLY, Mode::empty())
    } else {
        (
            base | OFlag::O_WRONLY | OFlag::O_CREAT,
            Mode::from_bits_truncate(0o600),
        )
    };
    let file = match openat(dir, "apply.lock", flags, mode) {
        Ok(fd) => File::from(fd),
        Err(Errno::ENOENT) if noop => return Ok(None),
        Err(Errno::ELOOP) => return Err(Refused::Link),
        Err(e) => return Err(Refused::Io(e.into())),
    };
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(datum_fs::kind_of(&meta)));
    }
    Ok(Some(file))
}

/// The restarts owed: one service name a line. A file that is not that is
/// refused, and what it holds is not repeated.
fn restarts(bytes: &[u8]) -> Result<BTreeSet<String>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())?;
    let mut owed = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let name = line.trim();
        if name.is_empty() {
            continue;
        }
        if datum_core::names::Rule::Unit.check(name).is_some() {
            return Err(format!(
                "line {} is not a service name; it holds one service name a line, \
                 and Datum writes it (remove it to forget the restarts owed)",
                i + 1
            ));
        }
        owed.insert(name.to_owned());
    }
    Ok(owed)
}

/// The refreshes owed: one Exec id a line. Anything else is refused, and
/// what it holds is not repeated.
fn refreshes(bytes: &[u8]) -> Result<BTreeSet<String>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "it is not text".to_owned())?;
    let mut owed = BTreeSet::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match ResourceId::parse(line) {
            Ok(id) if id.kind == Kind::Exec => owed.insert(line.to_owned()),
            _ => return Err("it holds a line that is not an Exec id".into()),
        };
    }
    Ok(owed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn owed_restarts_survive_until_settled() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        {
            let mut s = State::open(&root, false).unwrap();
            s.restarts.owe(["nginx", "redis"]).unwrap();
            s.restarts.settle("redis").unwrap();
        }
        let s = State::open(&root, false).unwrap();
        assert_eq!(s.restarts.owed().iter().collect::<Vec<_>>(), ["nginx"]);
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
        assert!(s.restarts.owed().is_empty());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        // Two noop runs share the lock.
        drop(s);
        drop(State::open(&root, false).unwrap());
        let a = State::open(&root, true).unwrap();
        let b = State::open(&root, true).unwrap();
        drop((a, b));
    }

    #[test]
    fn a_refreshes_file_that_is_not_exec_ids_or_is_a_link_is_refused_unrepeated() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("var/lib/datum")).unwrap();
        let root = Root::at(dir.path());
        let at = dir.path().join("var/lib/datum/refreshes");
        fs::write(&at, "Exec[a]\nsecret-token-123\n").unwrap();
        let err = State::open(&root, false).unwrap_err().to_string();
        assert!(
            err.ends_with("refreshes: it holds a line that is not an Exec id"),
            "{err}"
        );
        assert!(!err.contains("secret-token"));
        fs::remove_file(&at).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", &at).unwrap();
        let err = State::open(&root, false).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
    }

    #[test]
    fn owed_refreshes_survive_until_settled() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        {
            let mut s = State::open(&root, false).unwrap();
            assert!(s.refreshes.owed().is_empty());
            s.refreshes
                .owe(["Exec[newaliases]", "Exec[reload]"])
                .unwrap();
            s.refreshes.settle("Exec[reload]").unwrap();
        }
        let s = State::open(&root, false).unwrap();
        assert_eq!(
            s.refreshes.owed().iter().collect::<Vec<_>>(),
            ["Exec[newaliases]"]
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("var/lib/datum/refreshes")).unwrap(),
            "Exec[newaliases]\n"
        );
    }
}
