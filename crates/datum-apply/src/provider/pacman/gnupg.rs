//! A working copy of pacman's keyring, where the host's `pacman-key` and
//! `gpg` do all their work.
//!
//! The host's gpg must never work in the root's keyring directory
//! itself: gpg obeys the configuration files of its home directory
//! (`gpg.conf`, `gpg-agent.conf`, `common.conf`, `dirmngr.conf`, ...), whose
//! paths and programs are the host's (a root's `log-file /x` writes the
//! host's `/x`; its `agent-program` runs a host program as root, outside
//! any chroot), and it rewrites `trustdb.gpg` in place (through a hard
//! link, a file outside the root). So the keyring's data files, and only
//! those (its public keys, trust database, secret keys and revocation
//! certificates), are read inside the root, never through a link nor
//! from a file with another name (a hard link), into a fresh directory of
//! Datum's own, whose `gpg.conf` and `gpg-agent.conf` Datum writes (the
//! options `pacman-key --init` writes). pacman-key and gpg work there;
//! the files that changed are then written back into the root
//! atomically (a new file renamed over the old one: never written in
//! place). That directory's path is short (under `/tmp`), so gpg-agent's
//! socket there fits in a socket address (108 bytes) however long the
//! root's path is.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use super::super::Failure;
use super::super::command::{self, tool};
use crate::root::Root;
use datum_fs::Attrs;
use nix::fcntl::OFlag;

/// The keyring's own data files.
const DATA: [&str; 4] = ["pubring.gpg", "pubring.kbx", "secring.gpg", "trustdb.gpg"];
/// The keyring's directories of one file per key, and those files' ending.
const KEY_DIRS: [(&str, &str); 2] = [("private-keys-v1.d", ".key"), ("openpgp-revocs.d", ".rev")];
/// The most files read from one of those directories.
const KEY_FILES: usize = 4096;
/// The largest keyring file read (archlinux-keyring's is a few MiB).
const LIMIT: u64 = 256 << 20;
/// What `pacman-key --init` writes into the keyring's `gpg.conf`.
pub const GPG_CONF: &str = "no-greeting\nno-permission-warning\nlock-never\n\
keyserver-options timeout=10\nkeyserver-options import-clean\nkeyserver-options no-self-sigs-only\n";
/// What `pacman-key --init` writes into the keyring's `gpg-agent.conf`.
pub const AGENT_CONF: &str = "disable-scdaemon\n";

/// A gpg home directory of Datum's own, gone with it (its agent ended).
pub struct Work {
    dir: tempfile::TempDir,
    /// Each data file copied in (its path in the keyring), as it was.
    read: BTreeMap<String, Vec<u8>>,
}

impl Work {
    /// An empty one, configured as pacman-key configures a keyring.
    pub fn empty() -> Result<Work, Failure> {
        let base = Path::new("/tmp");
        let base = match base.is_dir() {
            true => base.to_path_buf(),
            false => std::env::temp_dir(),
        };
        let dir = tempfile::Builder::new()
            .prefix("datum-gpg-")
            .tempdir_in(base)
            .map_err(|e| Failure::new(format!("cannot make a directory for gpg: {e}")))?;
        let work = Work {
            dir,
            read: BTreeMap::new(),
        };
        work.put("gpg.conf", GPG_CONF.as_bytes())?;
        work.put("gpg-agent.conf", AGENT_CONF.as_bytes())?;
        Ok(work)
    }

    /// A copy of the keyring at `dir` inside the root (none when it has
    /// no data file yet).
    pub fn copy_of(root: &Root, dir: &str) -> Result<Work, Failure> {
        let mut work = Work::empty()?;
        for name in data_names(root, dir)? {
            let path = format!("{}/{name}", dir.trim_end_matches('/'));
            if let Some(bytes) = read_data(root, &path)? {
                work.put(&name, &bytes)?;
                work.read.insert(name, bytes);
            }
        }
        // As pacman-key makes a keyring: gpg keeps its public keys in
        // `pubring.gpg` when that is there, in a `pubring.kbx` else.
        if !work.read.contains_key("pubring.kbx") && !work.read.contains_key("pubring.gpg") {
            work.put("pubring.gpg", b"")?;
        }
        Ok(work)
    }

    /// Whether the keyring copied in had any data file.
    pub fn found(&self) -> bool {
        !self.read.is_empty()
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn put(&self, name: &str, bytes: &[u8]) -> Result<(), Failure> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let failed = |e: std::io::Error| Failure::new(format!("cannot copy pacman's keyring: {e}"));
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(failed)?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(failed)
    }

    /// gpg on this directory, machine-readable.
    pub fn gpg(&self) -> Command {
        let mut cmd = tool("gpg");
        cmd.arg("--homedir").arg(self.dir.path()).args([
            "--batch",
            "--no-tty",
            "--no-auto-check-trustdb",
            "--with-colons",
        ]);
        cmd
    }

    /// The fingerprints of the secret keys it holds (pacman's master key
    /// is one).
    pub fn secret_keys(&self) -> Result<Vec<String>, Failure> {
        let mut cmd = self.gpg();
        cmd.arg("--list-secret-keys");
        let out = command::output(&mut cmd)?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut keys = Vec::new();
        let mut primary = false;
        for line in text.lines() {
            let fields: Vec<&str> = line.split(':').collect();
            match fields[0] {
                "sec" => primary = true,
                "fpr" if primary => {
                    keys.extend(fields.get(9).map(|f| (*f).to_owned()));
                    primary = false;
                }
                _ => primary = false,
            }
        }
        Ok(keys)
    }

    /// `pacman-key` on this directory, with an empty pacman.conf (never
    /// the host's).
    pub fn pacman_key(&self, args: &[&str]) -> Result<std::process::Output, Failure> {
        let conf = self.dir.path().join("pacman.conf");
        if !conf.exists() {
            std::fs::write(&conf, "[options]\n").map_err(|e| {
                Failure::new(format!("cannot write a pacman.conf for pacman-key: {e}"))
            })?;
        }
        let mut cmd = tool("pacman-key");
        cmd.arg("--gpgdir")
            .arg(self.dir.path())
            .arg("--config")
            .arg(&conf)
            .args(args);
        let out = command::output(&mut cmd)?;
        match out.status.success() {
            true => Ok(out),
            false => Err(command::failed(&cmd, &out)),
        }
    }

    /// Writes the data files that changed back into the keyring at `dir`
    /// inside the root, each atomically; its `gpg.conf` and
    /// `gpg-agent.conf` too when it has none (as pacman-key writes them).
    pub fn write_back(&self, root: &Root, dir: &str) -> Result<(), Failure> {
        let dir = dir.trim_end_matches('/');
        let failed = |path: &str, e: std::io::Error| {
            Failure::new(format!(
                "cannot write pacman's keyring {}: {e}",
                root.path(path).display()
            ))
        };
        root.create_dir_all(dir, 0o755)
            .map_err(|e| failed(dir, e))?;
        let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
        for (sub, ending) in KEY_DIRS {
            for name in listed(&self.dir.path().join(sub), ending) {
                let rel = format!("{sub}/{name}");
                files.push((rel.clone(), self.get(&rel)?, 0o600));
            }
        }
        for name in DATA {
            if self.dir.path().join(name).is_file() {
                let mode = if name == "secring.gpg" { 0o600 } else { 0o644 };
                files.push((name.to_owned(), self.get(name)?, mode));
            }
        }
        for (rel, bytes, mode) in files {
            if self.read.get(&rel) == Some(&bytes) {
                continue;
            }
            let path = format!("{dir}/{rel}");
            if let Some((sub, _)) = rel.split_once('/') {
                let sub = format!("{dir}/{sub}");
                root.create_dir_all(&sub, 0o700)
                    .map_err(|e| failed(&sub, e))?;
            }
            root.write_atomic(&path, &bytes, Attrs::mode(mode))
                .map_err(|e| failed(&path, e))?;
        }
        for (name, text) in [("gpg.conf", GPG_CONF), ("gpg-agent.conf", AGENT_CONF)] {
            let path = format!("{dir}/{name}");
            if root.lstat(&path).map_err(|e| failed(&path, e))?.is_none() {
                root.write_atomic(&path, text.as_bytes(), Attrs::mode(0o644))
                    .map_err(|e| failed(&path, e))?;
            }
        }
        Ok(())
    }

    fn get(&self, rel: &str) -> Result<Vec<u8>, Failure> {
        std::fs::read(self.dir.path().join(rel))
            .map_err(|e| Failure::new(format!("cannot read gpg's copy of the keyring: {e}")))
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        // The agent pacman-key started (the master key signs through one)
        // ends with the directory: nothing Datum starts outlives the run.
        let _ = tool("gpgconf")
            .arg("--homedir")
            .arg(self.dir.path())
            .args(["--kill", "all"])
            .output();
    }
}

/// The names (in the host directory `dir`) ending with `ending`, sorted.
fn listed(dir: &Path, ending: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(ending))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The data files of the keyring at `dir` inside the root, as paths in it.
fn data_names(root: &Root, dir: &str) -> Result<Vec<String>, Failure> {
    let mut names: Vec<String> = DATA.iter().map(|n| (*n).to_owned()).collect();
    for (sub, ending) in KEY_DIRS {
        let path = format!("{}/{sub}", dir.trim_end_matches('/'));
        let listed = root.list(&path).map_err(|e| {
            Failure::new(format!(
                "cannot read pacman's keyring {}: {e}",
                root.path(&path).display()
            ))
        })?;
        let keys: Vec<String> = listed
            .iter()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n.ends_with(ending) && !n.starts_with('.'))
            .collect();
        if keys.len() > KEY_FILES {
            return Err(Failure::new(format!(
                "pacman's keyring {} holds more than {KEY_FILES} files",
                root.path(&path).display()
            )));
        }
        names.extend(keys.into_iter().map(|n| format!("{sub}/{n}")));
    }
    Ok(names)
}

/// A keyring file inside the root, `None` when missing: a regular file
/// with one name only (a hard link could be a file outside the root),
/// never read through a link, at most [`LIMIT`] bytes.
fn read_data(root: &Root, path: &str) -> Result<Option<Vec<u8>>, Failure> {
    let failed = |why: String| {
        Failure::new(format!(
            "cannot read pacman's keyring {}: {why}",
            root.path(path).display()
        ))
    };
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    let file = match root.open(path, flags, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(failed(
                "it is a symbolic link, and Datum reads pacman's keyring only from regular files"
                    .into(),
            ));
        }
        Err(e) => return Err(failed(e.to_string())),
    };
    let meta = file.metadata().map_err(|e| failed(e.to_string()))?;
    if !meta.is_file() {
        return Err(failed(format!(
            "it is a {}, not a regular file",
            datum_fs::kind_of(&meta)
        )));
    }
    if meta.nlink() > 1 {
        return Err(failed(format!(
            "it has {} names (a hard link, maybe to a file outside the root): replace it with a copy of its own (`cp --remove-destination`)",
            meta.nlink()
        )));
    }
    if meta.len() > LIMIT {
        return Err(failed(format!("it is larger than {LIMIT} bytes")));
    }
    let mut bytes = Vec::new();
    file.take(LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| failed(e.to_string()))?;
    Ok(Some(bytes))
}
