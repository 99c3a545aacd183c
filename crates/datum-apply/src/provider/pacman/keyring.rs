//! A pacman Repository's signing key, in pacman's own keyring.
//!
//! pacman checks signatures only against its keyring (the root's
//! `GPGDir`, see [`super::conf`]), and trusts a key only when the
//! keyring's master key has signed it locally. So a Repository's `key`
//! is added with `pacman-key --add` and signed with `pacman-key
//! --lsign-key`, as an operator would; the keyring is given its master
//! key with `pacman-key --init` when it has none (a keyring counts as
//! made only with it: pacman-key exits 0 even when gpg failed to make
//! it, and that failure is reported).
//!
//! Each Repository's record, `/etc/pacman.d/datum-NAME.keys`, lists the
//! keys Datum added for it, and (`signed FPR`) those that were there but
//! not trusted, which Datum signed. A wanted key another Repository's
//! record lists is recorded too: the key is shared, and is taken back
//! (deleted, or its local signatures taken away) only when no record
//! lists it any more. A key that was there and trusted is never recorded,
//! nor touched.
//!
//! All of it is done by the host's pacman-key and gpg in a working copy
//! of the keyring, never in the root's keyring directory itself (see
//! [`super::gnupg`]); examining it, `--noop` included, leaves it as it was.

use std::collections::{BTreeMap, BTreeSet};

use super::super::Failure;
use super::super::command;
use super::conf;
use super::gnupg::Work;
use crate::report::{Attribute, Change};
use crate::root::Root;
use datum_fs::Attrs;

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

/// The keys in an armoured (or binary) public key text.
pub fn keys_of(text: &str) -> Result<Keys, Failure> {
    let work = Work::empty()?;
    let file = work.path().join("key");
    std::fs::write(&file, text).map_err(|e| Failure::new(format!("cannot write the key: {e}")))?;
    let mut cmd = work.gpg();
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

/// Why a key is in a Repository's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Own {
    /// Datum added it: deleted when no record lists it any more.
    Added,
    /// It was there, not trusted, and Datum signed it: unsigned when no
    /// record lists it any more.
    Signed,
}

/// A record: each key's fingerprint, and why it is there.
pub type Record = BTreeMap<String, Own>;

/// Reads a record's text.
pub fn parse_record(text: &str) -> Record {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.strip_prefix("signed ") {
            Some(fpr) => (fpr.trim().to_owned(), Own::Signed),
            None => (l.to_owned(), Own::Added),
        })
        .collect()
}

/// pacman's keyring inside a root.
pub struct Keyring {
    root: Root,
}

impl Keyring {
    /// The root's keyring.
    pub fn of(root: &Root) -> Keyring {
        Keyring { root: root.clone() }
    }

    /// Its directory, as a path inside the root: the `GPGDir` the root's
    /// pacman.conf names (see [`conf`]), else `/etc/pacman.d/gnupg`.
    pub fn dir(&self) -> Result<String, Failure> {
        conf::gpgdir_of(&self.root)
    }

    /// Every primary key in the keyring, read from a copy.
    pub fn held(&self) -> Result<BTreeMap<String, Held>, Failure> {
        held_in(&Work::copy_of(&self.root, &self.dir()?)?)
    }

    /// The record of Repository `name`.
    pub fn recorded(&self, name: &str) -> Result<Record, Failure> {
        let path = record_path(name);
        let text = self.root.read_small(&path, 1 << 20).map_err(|e| {
            Failure::new(format!(
                "cannot read {}: {e}",
                self.root.path(&path).display()
            ))
        })?;
        Ok(parse_record(&String::from_utf8_lossy(
            text.as_deref().unwrap_or_default(),
        )))
    }

    /// What the records of every other Repository list.
    fn others(&self, name: &str) -> Result<Record, Failure> {
        let mut all = Record::new();
        let names = self.root.list("/etc/pacman.d").map_err(|e| {
            Failure::new(format!(
                "cannot list {}, where the other Repositories' keys are recorded: {e}",
                self.root.path("/etc/pacman.d").display()
            ))
        })?;
        for file in names.iter().map(|n| n.to_string_lossy()) {
            let other = file
                .strip_prefix("datum-")
                .and_then(|f| f.strip_suffix(".keys"));
            if let Some(other) = other.filter(|o| *o != name) {
                all.extend(self.recorded(other)?);
            }
        }
        Ok(all)
    }
}

/// The primary keys a working copy holds.
fn held_in(work: &Work) -> Result<BTreeMap<String, Held>, Failure> {
    if !work.found() {
        return Ok(BTreeMap::new());
    }
    let mut cmd = work.gpg();
    cmd.arg("--list-keys");
    Ok(parse_colons(&command::run(&mut cmd)?))
}

/// What Repository `name`'s record becomes when it wants `want`: the
/// keys it recorded and still wants, those another Repository's record
/// lists (shared: they stay while either wants them), those missing
/// (Datum adds them) and those there but not trusted (Datum signs them).
fn next_record(
    want: &Keys,
    mine: &Record,
    others: &Record,
    held: &BTreeMap<String, Held>,
) -> Record {
    want.keys()
        .filter_map(|fpr| {
            let own = mine.get(fpr).or_else(|| others.get(fpr)).copied();
            let own = own.or_else(|| match held.get(fpr) {
                None => Some(Own::Added),
                Some(h) if !h.trusted => Some(Own::Signed),
                Some(_) => None,
            })?;
            Some((fpr.clone(), own))
        })
        .collect()
}

impl Keyring {
    /// How the keyring differs for Repository `name` wanting `key` (none
    /// when the Repository is absent or has no key): each wanted key
    /// held, with its subkeys, and trusted; none of the keys Datum added
    /// or signed for it before and no longer wanted left in its record
    /// (nor, unless another record lists it, as Datum made it).
    pub fn change(&self, name: &str, key: Option<&str>) -> Result<Option<Change>, Failure> {
        let want = key.map(keys_of).transpose()?.unwrap_or_default();
        let mine = self.recorded(name)?;
        if want.is_empty() && mine.is_empty() {
            return Ok(None);
        }
        let others = self.others(name)?;
        let held = self.held()?;
        // Recorded, no longer wanted, still held: taken back, or (shared)
        // dropped from the record.
        let stale: Vec<&String> = mine
            .keys()
            .filter(|f| !want.contains_key(*f) && held.contains_key(*f))
            .collect();
        let complete = want.iter().all(|(fpr, subs)| {
            held.get(fpr)
                .is_some_and(|h| h.trusted && subs.is_subset(&h.fingerprints))
        });
        let shared = next_record(&want, &mine, &others, &held)
            .keys()
            .all(|f| mine.contains_key(f));
        if complete && stale.is_empty() && shared {
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
    /// no key Datum added or signed for it before, no longer wanted by
    /// it nor listed by another Repository's record, as Datum made it.
    /// The work is done in a copy (see [`super::gnupg`]), written back at the end.
    pub fn converge(&self, name: &str, key: Option<&str>) -> Result<(), Failure> {
        let want = key.map(keys_of).transpose()?.unwrap_or_default();
        let mine = self.recorded(name)?;
        if want.is_empty() && mine.is_empty() {
            return self.keep_record(name, &Record::new());
        }
        let dir = self.dir()?;
        host_dir(&self.root, &dir)?;
        let work = Work::copy_of(&self.root, &dir)?;
        if want.is_empty() && !work.found() {
            return self.keep_record(name, &Record::new());
        }
        let others = self.others(name)?;
        if !want.is_empty() {
            ensure_master(&work)?;
        }
        let held = held_in(&work)?;
        let record = next_record(&want, &mine, &others, &held);
        // Recorded before the keyring changes: a run failing half-way
        // still knows which keys are Datum's to take back.
        let mut both = mine.clone();
        both.extend(record.clone());
        self.keep_record(name, &both)?;
        change_keys(&work, (&want, key.unwrap_or_default()), &held)?;
        for (fpr, own) in mine.iter().filter(|(f, _)| !want.contains_key(*f)) {
            if !others.contains_key(fpr) && held.contains_key(fpr) {
                take_back(&work, fpr, *own)?;
            }
        }
        work.write_back(&self.root, &dir)?;
        self.keep_record(name, &record)
    }

    /// Writes Repository `name`'s record (removes it when empty).
    fn keep_record(&self, name: &str, record: &Record) -> Result<(), Failure> {
        let path = record_path(name);
        let failed = |e: std::io::Error| {
            Failure::new(format!(
                "cannot write {}: {e}",
                self.root.path(&path).display()
            ))
        };
        if record.is_empty() {
            if self.root.lstat(&path).map_err(failed)?.is_some() {
                self.root.remove_file(&path).map_err(failed)?;
            }
            return Ok(());
        }
        let mut text = format!(
            "# Managed by Datum: the keys Datum added to pacman's keyring for Repository[{name}] (`signed`: there before, signed by Datum), taken back with it\n"
        );
        for (fpr, own) in record {
            if *own == Own::Signed {
                text.push_str("signed ");
            }
            text.push_str(fpr);
            text.push('\n');
        }
        let now = self.root.read_small(&path, 1 << 20).ok().flatten();
        if now.as_deref() == Some(text.as_bytes()) {
            return Ok(());
        }
        self.root
            .write_atomic(&path, text.as_bytes(), Attrs::mode(0o644))
            .map_err(failed)
    }
}

/// Makes the keyring's master key when it has none (`pacman-key --init`,
/// which keeps what is there), and says why when that fails: pacman-key
/// itself exits 0 when gpg could not make it.
fn ensure_master(work: &Work) -> Result<(), Failure> {
    // pacman-key works only on a keyring with both of these.
    let files = ["pubring.gpg", "trustdb.gpg"]
        .iter()
        .all(|f| work.path().join(f).is_file());
    if files && !work.secret_keys()?.is_empty() {
        return Ok(());
    }
    let out = work.pacman_key(&["--init"])?;
    let masters = work.secret_keys()?;
    if masters.is_empty() {
        let said: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .chain(String::from_utf8_lossy(&out.stdout).lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        return Err(Failure::new(format!(
            "`pacman-key --init` made no master key for pacman's keyring, which signs the keys pacman trusts: {}",
            said.join(" / ")
        )));
    }
    // A master key kept from before is trusted as one made now is (a
    // trust database made again knows nothing of it).
    let file = work.path().join("masters.txt");
    let text: String = masters.iter().map(|f| format!("{f}:6:\n")).collect();
    std::fs::write(&file, text)
        .map_err(|e| Failure::new(format!("cannot write the master key's trust: {e}")))?;
    let mut import = work.gpg();
    import.arg("--import-ownertrust").arg(&file);
    command::run(&mut import).map(|_| ())
}

/// Adds the wanted keys the keyring lacks (or lacks subkeys of), and
/// signs those it does not trust.
fn change_keys(
    work: &Work,
    (want, text): (&Keys, &str),
    held: &BTreeMap<String, Held>,
) -> Result<(), Failure> {
    let incomplete = want
        .iter()
        .any(|(f, subs)| held.get(f).is_none_or(|h| !subs.is_subset(&h.fingerprints)));
    if incomplete {
        let file = work.path().join("key.asc");
        std::fs::write(&file, text)
            .map_err(|e| Failure::new(format!("cannot write the key: {e}")))?;
        work.pacman_key(&["--add", &file.to_string_lossy()])?;
    }
    for fpr in want.keys() {
        if !held.get(fpr).is_some_and(|h| h.trusted) {
            work.pacman_key(&["--lsign-key", fpr])?;
        }
    }
    Ok(())
}

/// Takes back what Datum did to key `fpr`: deletes it when Datum added
/// it; when Datum only signed it, takes its local signatures away (gpg
/// exports a key without them: the key is deleted and that export put
/// back), so that it is as untrusted as it was.
fn take_back(work: &Work, fpr: &str, own: Own) -> Result<(), Failure> {
    if own == Own::Added {
        work.pacman_key(&["--delete", fpr])?;
        return Ok(());
    }
    let mut export = work.gpg();
    export.args(["--export", fpr]);
    let out = command::output(&mut export)?;
    if !out.status.success() || out.stdout.is_empty() {
        return Err(command::failed(&export, &out));
    }
    let file = work.path().join("unsigned.gpg");
    std::fs::write(&file, &out.stdout)
        .map_err(|e| Failure::new(format!("cannot write the key: {e}")))?;
    work.pacman_key(&["--delete", fpr])?;
    let mut import = work.gpg();
    import.args(["--import"]).arg(&file);
    command::run(&mut import)?;
    rebuild_trust(work)
}

/// Computes every key's validity afresh (gpg keeps what it computed
/// before, and `--update-trustdb` asks questions): the trust database is
/// made again from the owner trust it holds.
fn rebuild_trust(work: &Work) -> Result<(), Failure> {
    let mut export = work.gpg();
    export.arg("--export-ownertrust");
    let owners = command::run(&mut export)?;
    let file = work.path().join("ownertrust.txt");
    std::fs::write(&file, owners)
        .and_then(|()| std::fs::remove_file(work.path().join("trustdb.gpg")))
        .map_err(|e| Failure::new(format!("cannot rebuild the keyring's trust database: {e}")))?;
    let mut import = work.gpg();
    import.arg("--import-ownertrust").arg(&file);
    command::run(&mut import)?;
    let mut check = work.gpg();
    check.arg("--check-trustdb");
    command::run(&mut check).map(|_| ())
}

/// The keyring's host path, when every step to it inside the root is a
/// directory (or missing) and none a link, nor anything in it or its
/// directories: Datum changes the keyring only where nothing in it leads
/// elsewhere.
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
}
