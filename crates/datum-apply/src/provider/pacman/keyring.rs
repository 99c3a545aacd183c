//! A pacman Repository's signing key, in pacman's own keyring.
//!
//! pacman checks signatures only against its keyring (the root's
//! `GPGDir`, `/etc/pacman.d/gnupg` unless the root's pacman.conf names
//! another), and trusts a key only when the keyring's master key has
//! signed it locally. So a Repository's `key` is added with `pacman-key
//! --add` and signed with `pacman-key --lsign-key`, as an operator would;
//! the keyring is made with `pacman-key --init` when the root has none.
//!
//! Datum removes only the keys it added: their fingerprints are kept in
//! `/etc/pacman.d/datum-NAME.keys`. A key that was already in the keyring
//! (the operator's, archlinux-keyring's) is signed when it is not trusted
//! yet, but never deleted.
//!
//! The keyring is read from a copy (its public keys and trust database,
//! read inside the root, never through a link), so that examining it,
//! `--noop` included, leaves it as it was. pacman-key, a host tool, is
//! given the keyring's path only when no link stands on the way to it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::super::Failure;
use super::super::command::{self, tool};
use crate::report::{Attribute, Change};
use crate::root::Root;
use datum_fs::Attrs;

/// The keyring's files read back to examine it.
const COPIED: [&str; 3] = ["pubring.gpg", "pubring.kbx", "trustdb.gpg"];
/// The largest keyring file read (archlinux-keyring's is a few MiB).
const KEYRING_LIMIT: u64 = 256 << 20;

/// Where the fingerprints of the keys Datum added for Repository `name`
/// are kept.
pub fn record_path(name: &str) -> String {
    format!("/etc/pacman.d/datum-{name}.keys")
}

/// An OpenPGP key: its primary fingerprints (a key file may hold
/// several), each with the fingerprints of its subkeys.
pub type Keys = BTreeMap<String, BTreeSet<String>>;

/// One primary key as the keyring has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// Its own and its subkeys' fingerprints.
    pub fingerprints: BTreeSet<String>,
    /// Whether pacman trusts it (gpg's validity full or ultimate).
    pub trusted: bool,
}

/// Parses gpg's `--with-colons` listing: each primary key, its subkeys,
/// and its validity.
pub fn parse_colons(text: &str) -> BTreeMap<String, Held> {
    let mut keys = BTreeMap::new();
    let mut current: Option<(String, bool)> = None;
    let mut awaiting: Option<bool> = None; // Some(is_primary) after pub/sub
    for line in text.lines() {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.first().copied() {
            Some("pub") => {
                let valid = matches!(fields.get(1).copied(), Some("f" | "u"));
                current = Some((String::new(), valid));
                awaiting = Some(true);
            }
            Some("sub") => awaiting = Some(false),
            Some("fpr") => {
                let fpr = fields.get(9).copied().unwrap_or_default().to_owned();
                match (awaiting.take(), &mut current) {
                    (Some(true), Some((primary, valid))) => {
                        *primary = fpr.clone();
                        keys.insert(
                            fpr.clone(),
                            Held {
                                fingerprints: BTreeSet::from([fpr]),
                                trusted: *valid,
                            },
                        );
                    }
                    (Some(false), Some((primary, _))) => {
                        if let Some(held) = keys.get_mut(primary.as_str()) {
                            held.fingerprints.insert(fpr);
                        }
                    }
                    _ => {}
                }
            }
            _ => awaiting = None,
        }
    }
    keys
}

/// A gpg of its own, in a directory that goes away with it.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Result<Scratch, Failure> {
        let dir = tempfile::Builder::new()
            .prefix("datum-gpg-")
            .tempdir()
            .map_err(|e| Failure::new(format!("cannot make a directory for gpg: {e}")))?;
        Ok(Scratch { dir })
    }

    fn gpg(&self) -> std::process::Command {
        let mut cmd = tool("gpg");
        cmd.arg("--homedir").arg(self.dir.path()).args([
            "--batch",
            "--no-tty",
            "--no-auto-check-trustdb",
            "--with-colons",
        ]);
        cmd
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Nothing here starts an agent; if gpg did, it ends with the directory.
        let _ = tool("gpgconf")
            .arg("--homedir")
            .arg(self.dir.path())
            .args(["--kill", "all"])
            .output();
    }
}

/// The keys in an armoured (or binary) public key text.
pub fn keys_of(text: &str) -> Result<Keys, Failure> {
    let scratch = Scratch::new()?;
    let file = scratch.dir.path().join("key");
    std::fs::write(&file, text).map_err(|e| Failure::new(format!("cannot write the key: {e}")))?;
    let mut cmd = scratch.gpg();
    cmd.arg("--show-keys").arg(&file);
    let out = command::output(&mut cmd)?;
    let held = parse_colons(&String::from_utf8_lossy(&out.stdout));
    if !out.status.success() || held.is_empty() {
        return Err(Failure::new(
            "the Repository's `key` holds no OpenPGP public key that gpg can read: give the key as its publisher exports it (`gpg --armor --export`)",
        ));
    }
    Ok(held
        .into_iter()
        .map(|(fpr, h)| (fpr, h.fingerprints))
        .collect())
}

/// pacman's keyring inside a root.
pub struct Keyring {
    root: Root,
    /// The keyring's directory, as a path inside the root.
    pub dir: String,
}

impl Keyring {
    /// The root's keyring: the `GPGDir` its pacman.conf names, else
    /// `/etc/pacman.d/gnupg`.
    pub fn of(root: &Root) -> Keyring {
        let conf = root
            .read_small("/etc/pacman.conf", 1 << 20)
            .ok()
            .flatten()
            .unwrap_or_default();
        let dir = gpgdir(&String::from_utf8_lossy(&conf))
            .unwrap_or_else(|| "/etc/pacman.d/gnupg".to_owned());
        Keyring {
            root: root.clone(),
            dir,
        }
    }

    fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.dir.trim_end_matches('/'))
    }

    /// Whether the keyring has been made (`pacman-key --init`).
    pub fn exists(&self) -> bool {
        ["pubring.gpg", "trustdb.gpg"]
            .iter()
            .all(|f| self.root.lstat(&self.file(f)).ok().flatten().is_some())
    }

    /// Every primary key in the keyring, read from a copy.
    pub fn held(&self) -> Result<BTreeMap<String, Held>, Failure> {
        if !self.exists() {
            return Ok(BTreeMap::new());
        }
        let scratch = Scratch::new()?;
        for name in COPIED {
            let path = self.file(name);
            let bytes = self.root.read_small(&path, KEYRING_LIMIT).map_err(|e| {
                Failure::new(format!(
                    "cannot read pacman's keyring {}: {e}",
                    self.root.path(&path).display()
                ))
            })?;
            if let Some(bytes) = bytes {
                std::fs::write(scratch.dir.path().join(name), bytes)
                    .map_err(|e| Failure::new(format!("cannot copy pacman's keyring: {e}")))?;
            }
        }
        let mut cmd = scratch.gpg();
        cmd.arg("--list-keys");
        Ok(parse_colons(&command::run(&mut cmd)?))
    }

    /// The fingerprints Datum added for Repository `name`.
    pub fn recorded(&self, name: &str) -> BTreeSet<String> {
        let text = self
            .root
            .read_small(&record_path(name), 1 << 20)
            .ok()
            .flatten()
            .unwrap_or_default();
        String::from_utf8_lossy(&text)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    }
}

impl Keyring {
    /// How the keyring differs for Repository `name` wanting `key` (none
    /// when the Repository is absent or has no key): each wanted key
    /// held, with its subkeys, and trusted; none of the keys Datum added
    /// for it before and no longer wanted left.
    pub fn change(&self, name: &str, key: Option<&str>) -> Result<Option<Change>, Failure> {
        let want = key.map(keys_of).transpose()?.unwrap_or_default();
        let recorded = self.recorded(name);
        if want.is_empty() && recorded.is_empty() {
            return Ok(None);
        }
        let held = self.held()?;
        let stale: Vec<&String> = recorded
            .iter()
            .filter(|f| !want.contains_key(*f) && held.contains_key(*f))
            .collect();
        let complete = want.iter().all(|(fpr, subs)| {
            held.get(fpr)
                .is_some_and(|h| h.trusted && subs.is_subset(&h.fingerprints))
        });
        if complete && stale.is_empty() {
            return Ok(None);
        }
        let had: Vec<String> = want
            .keys()
            .chain(stale.iter().copied())
            .filter_map(|f| {
                held.get(f).map(|h| match h.trusted {
                    true => f.clone(),
                    false => format!("{f} (not trusted)"),
                })
            })
            .collect();
        let shown = |v: Vec<String>| match v.is_empty() {
            true => "absent".to_owned(),
            false => v.join(", "),
        };
        Ok(Some(Change::new(
            Attribute::Key,
            shown(had),
            shown(want.keys().cloned().collect()),
        )))
    }

    /// Makes the keyring hold `key` for Repository `name`, trusted, and
    /// no key Datum added for it before and no longer wanted.
    pub fn converge(&self, name: &str, key: Option<&str>) -> Result<(), Failure> {
        let want = key.map(keys_of).transpose()?.unwrap_or_default();
        let recorded = self.recorded(name);
        if want.is_empty() && !self.exists() {
            return self.keep_record(name, &BTreeSet::new());
        }
        let dir = host_dir(&self.root, &self.dir)?;
        let scratch = Scratch::new()?;
        let conf = scratch.dir.path().join("pacman.conf");
        std::fs::write(&conf, "[options]\n")
            .map_err(|e| Failure::new(format!("cannot write a pacman.conf for pacman-key: {e}")))?;
        let text = key.unwrap_or_default();
        let result = self.change_keys(name, (&dir, &conf), (&want, text), &recorded, &scratch);
        stop_agent(&dir);
        let added = result?;
        self.keep_record(name, &added)
    }

    /// Adds, signs and deletes; the keys Datum has added, as they now are.
    fn change_keys(
        &self,
        name: &str,
        (dir, conf): (&Path, &Path),
        (want, text): (&Keys, &str),
        recorded: &BTreeSet<String>,
        scratch: &Scratch,
    ) -> Result<BTreeSet<String>, Failure> {
        if !want.is_empty() && !self.exists() {
            self.root
                .create_dir_all(&self.dir, 0o755)
                .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
            pacman_key(dir, conf, &["--init"])?;
        }
        let held = self.held()?;
        let mut added: BTreeSet<String> = recorded
            .iter()
            .filter(|f| want.contains_key(*f))
            .cloned()
            .collect();
        added.extend(want.keys().filter(|f| !held.contains_key(*f)).cloned());
        // Recorded before they are added: a run failing half-way still
        // knows which keys are Datum's to delete.
        self.keep_record(name, &added.union(recorded).cloned().collect())?;
        let incomplete = want
            .iter()
            .any(|(f, subs)| held.get(f).is_none_or(|h| !subs.is_subset(&h.fingerprints)));
        if incomplete {
            let file = scratch.dir.path().join("key.asc");
            std::fs::write(&file, text)
                .map_err(|e| Failure::new(format!("cannot write the key: {e}")))?;
            pacman_key(dir, conf, &["--add", &file.to_string_lossy()])?;
        }
        for fpr in want.keys() {
            if !held.get(fpr).is_some_and(|h| h.trusted) {
                pacman_key(dir, conf, &["--lsign-key", fpr])?;
            }
        }
        for fpr in recorded.iter().filter(|f| !want.contains_key(*f)) {
            if held.contains_key(fpr) {
                pacman_key(dir, conf, &["--delete", fpr])?;
            }
        }
        Ok(added)
    }

    /// Writes the fingerprints Datum added (removes the record when none).
    fn keep_record(&self, name: &str, added: &BTreeSet<String>) -> Result<(), Failure> {
        let path = record_path(name);
        let failed = |e: std::io::Error| {
            Failure::new(format!(
                "cannot write {}: {e}",
                self.root.path(&path).display()
            ))
        };
        if added.is_empty() {
            if self.root.lstat(&path).map_err(failed)?.is_some() {
                self.root.remove_file(&path).map_err(failed)?;
            }
            return Ok(());
        }
        if self.recorded(name) == *added
            && self
                .root
                .lstat(&path)
                .map_err(failed)?
                .is_some_and(|m| m.is_file())
        {
            return Ok(());
        }
        let mut text = format!(
            "# Managed by Datum: the keys Datum added to pacman's keyring for Repository[{name}], deleted with it\n"
        );
        for fpr in added {
            text.push_str(fpr);
            text.push('\n');
        }
        self.root
            .write_atomic(&path, text.as_bytes(), Attrs::mode(0o644))
            .map_err(failed)
    }
}

/// The `GPGDir` of a pacman.conf's `[options]`, when it names one.
pub fn gpgdir(conf: &str) -> Option<String> {
    let mut options = false;
    for line in conf.lines().map(str::trim) {
        if line.starts_with('[') {
            options = line == "[options]";
        } else if options
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == "GPGDir"
        {
            return Some(v.trim().to_owned()).filter(|v| v.starts_with('/'));
        }
    }
    None
}

/// The keyring's host path, when every step to it inside the root is a
/// directory (or missing) and none a link, nor anything in it or its
/// directories: pacman-key, a host tool, would follow a link out of the
/// root.
pub fn host_dir(root: &Root, dir: &str) -> Result<std::path::PathBuf, Failure> {
    let path = walk(root, dir)?;
    let mut dirs = vec![dir.trim_end_matches('/').to_owned()];
    while let Some(d) = dirs.pop() {
        for name in root.list(&d).unwrap_or_default() {
            let inner = format!("{d}/{}", name.to_string_lossy());
            let meta = root.lstat(&inner).map_err(|e| {
                Failure::new(format!(
                    "cannot examine {}: {e}",
                    root.path(&inner).display()
                ))
            })?;
            match meta {
                Some(m) if m.file_type().is_symlink() => {
                    return Err(Failure::new(format!(
                        "{} is a link: pacman's keyring is changed only where nothing in it leads elsewhere",
                        root.path(&inner).display()
                    )));
                }
                Some(m) if m.is_dir() => dirs.push(inner),
                _ => {}
            }
        }
    }
    Ok(path)
}

/// The host path of `dir` inside the root, when no step to it is a link.
fn walk(root: &Root, dir: &str) -> Result<std::path::PathBuf, Failure> {
    let mut walked = String::new();
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        if part == "." || part == ".." {
            return Err(Failure::new(format!(
                "pacman's keyring {dir} (GPGDir in the root's pacman.conf) is not a plain path: `.` and `..` could lead out of the root"
            )));
        }
        walked.push('/');
        walked.push_str(part);
        let meta = root.lstat(&walked).map_err(|e| {
            Failure::new(format!(
                "cannot examine {}: {e}",
                root.path(&walked).display()
            ))
        })?;
        if let Some(meta) = meta
            && !meta.is_dir()
        {
            return Err(Failure::new(format!(
                "{} is not a directory (a link is not followed to pacman's keyring {dir})",
                root.path(&walked).display()
            )));
        }
    }
    Ok(root.path(dir))
}

/// `pacman-key` on the keyring at `dir` (a host path), reading no
/// pacman.conf of the host's: it is given an empty one.
pub fn pacman_key(dir: &Path, conf: &Path, args: &[&str]) -> Result<String, Failure> {
    let mut cmd = tool("pacman-key");
    cmd.arg("--gpgdir")
        .arg(dir)
        .arg("--config")
        .arg(conf)
        .args(args);
    command::run(&mut cmd)
}

/// Ends the agent pacman-key started for the keyring (its secret master
/// key signs through one): nothing Datum starts outlives the run.
pub fn stop_agent(dir: &Path) {
    let _ = tool("gpgconf")
        .arg("--homedir")
        .arg(dir)
        .args(["--kill", "all"])
        .output();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colons_give_each_primary_key_its_subkeys_and_trust() {
        let text = "tru::1:1:0:3:1:5\n\
            pub:f:2048:1:AAAA:1::::::scSC:\nfpr:::::::::AAAA1111:\n\
            uid:f::::1::X::T <t@x>:\nsub:f:2048:1:BBBB:1:::::e:\nfpr:::::::::BBBB2222:\n\
            pub:-:2048:1:CCCC:1::::::scSC:\nfpr:::::::::CCCC3333:\n";
        let keys = parse_colons(text);
        assert_eq!(keys.len(), 2);
        assert_eq!(
            keys["AAAA1111"],
            Held {
                fingerprints: BTreeSet::from(["AAAA1111".into(), "BBBB2222".into()]),
                trusted: true
            }
        );
        assert!(!keys["CCCC3333"].trusted);
    }

    #[test]
    fn a_keyring_path_leading_out_of_the_root_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::at(tmp.path().join("root"));
        std::fs::create_dir_all(tmp.path().join("root/etc/pacman.d")).unwrap();
        std::fs::create_dir_all(tmp.path().join("host")).unwrap();
        let err = host_dir(&root, "/etc/../../host").unwrap_err().0;
        assert!(err.contains("not a plain path"), "{err}");
        std::os::unix::fs::symlink(
            tmp.path().join("host"),
            tmp.path().join("root/etc/pacman.d/gnupg"),
        )
        .unwrap();
        let err = host_dir(&root, "/etc/pacman.d/gnupg").unwrap_err().0;
        assert!(err.contains("not a directory"), "{err}");
        assert_eq!(
            host_dir(&root, "/etc/pacman.d/keys").unwrap(),
            tmp.path().join("root/etc/pacman.d/keys")
        );
    }

    #[test]
    fn gpgdir_is_read_from_options_only() {
        assert_eq!(
            gpgdir("[options]\nGPGDir = /etc/keys/\n[core]\n"),
            Some("/etc/keys/".into())
        );
        assert_eq!(gpgdir("[core]\nGPGDir = /x\n"), None);
        assert_eq!(gpgdir("[options]\nGPGDir = relative\n"), None);
    }
}
