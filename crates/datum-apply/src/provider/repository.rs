//! Package sources: each Repository is a file in its package system's
//! configuration and its signing key beside it, both written as a File is
//! (atomically, never through a link), owned by root, mode 0644. The
//! key's directory is made (root, 0755) when it is missing, as on a
//! system whose release has not made it yet.
//!
//! - apt: `/etc/apt/sources.list.d/datum-NAME.sources` (deb822: `Types`,
//!   `URIs`, `Suites`, `Components`, `Signed-By`), the key in
//!   `/etc/apt/keyrings/datum-NAME.asc`.
//! - dnf: `/etc/yum.repos.d/datum-NAME.repo` (`[NAME]`, `baseurl`,
//!   `gpgcheck`, `gpgkey`), the key in `/etc/pki/rpm-gpg/datum-NAME.asc`.
//! - pacman: `/etc/pacman.d/datum-NAME.conf` (`[NAME]`, `Server`, and
//!   [`PACMAN_SIGLEVEL`] with a key), read when pacman.conf has
//!   `Include = /etc/pacman.d/datum-*.conf` (a note says so when it has
//!   not; removing one leaves [`PACMAN_PLACEHOLDER`] so that the pattern
//!   still matches). pacman takes keys only from its keyring: the key goes
//!   there, trusted ([`super::pacman::keyring`]), and no key file is kept.
//!
//! - zypper: `/etc/zypp/repos.d/datum-NAME.repo` (`[NAME]`, `baseurl`,
//!   `autorefresh=0`, `gpgcheck`, `gpgkey`), the key beside it
//!   (`datum-NAME.asc`) and imported into the rpm database
//!   ([`super::zypper::repository`]).
//!
//! The system is the Repository's `provider`, else the machine's
//! ([`super::package::detect`]). A Repository that changes marks its
//! system's package cache stale ([`Stale`]): the next package transaction
//! of that system refreshes it first, and only then.

use sha2::{Digest, Sha256};

use super::fs::Files;
use super::package::{Stale, detect};
use super::pacman::keyring::Keyring;
use super::{Context, Examined, Failure, Provider};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{Ensure, FileSpec, PackageSystem, RepositorySpec};

pub struct Repositories {
    root: Root,
    files: Files,
    stale: Stale,
    zypper_changed: super::zypper::repository::Changed,
}

/// The largest key file read back to compare.
const KEY_LIMIT: u64 = 1 << 20;

impl Repositories {
    pub fn new(root: Root, stale: Stale) -> Repositories {
        Repositories {
            files: Files::new(root.clone()),
            root,
            stale,
            zypper_changed: Default::default(),
        }
    }

    /// Tells the zypper Packages, through `changed`, which zypper
    /// Repositories changed.
    pub fn with_zypper_changed(
        mut self,
        changed: super::zypper::repository::Changed,
    ) -> Repositories {
        self.zypper_changed = changed;
        self
    }

    fn system(&self, s: &RepositorySpec) -> Result<PackageSystem, Failure> {
        match s.provider {
            Some(p) => Ok(p),
            None => detect(&self.root).map_err(Failure::new),
        }
    }
}

/// Where a system keeps a repository's file and its key.
pub fn paths(system: PackageSystem, name: &str) -> (String, String) {
    match system {
        PackageSystem::Apt => (
            format!("/etc/apt/sources.list.d/datum-{name}.sources"),
            format!("/etc/apt/keyrings/datum-{name}.asc"),
        ),
        PackageSystem::Dnf => (
            format!("/etc/yum.repos.d/datum-{name}.repo"),
            format!("/etc/pki/rpm-gpg/datum-{name}.asc"),
        ),
        PackageSystem::Pacman => (
            format!("/etc/pacman.d/datum-{name}.conf"),
            format!("/etc/pacman.d/datum-{name}.asc"),
        ),
        PackageSystem::Zypper => super::zypper::repository::paths(name),
    }
}

/// The repository's file, as its system reads it.
pub fn content(system: PackageSystem, s: &RepositorySpec) -> Result<String, Failure> {
    let (_, key) = paths(system, &s.name);
    let head = format!("# Managed by Datum: Repository[{}]\n", s.name);
    match system {
        PackageSystem::Apt => {
            if s.suites.is_empty() {
                return Err(Failure::new(
                    "an apt Repository needs `suites` (such as `[bookworm]`, or `[./]` for a flat repository)",
                ));
            }
            let mut text = format!(
                "{head}Types: deb\nURIs: {}\nSuites: {}\n",
                s.url,
                s.suites.join(" ")
            );
            if !s.components.is_empty() {
                text.push_str(&format!("Components: {}\n", s.components.join(" ")));
            }
            if s.key.is_some() {
                text.push_str(&format!("Signed-By: {key}\n"));
            }
            Ok(text)
        }
        PackageSystem::Dnf => {
            if !s.suites.is_empty() || !s.components.is_empty() {
                return Err(Failure::new(
                    "`suites` and `components` are apt's: a dnf Repository takes only `url` and `key`",
                ));
            }
            let check = match &s.key {
                Some(_) => format!("gpgcheck=1\ngpgkey=file://{key}\n"),
                None => "gpgcheck=0\n".to_owned(),
            };
            Ok(format!(
                "{head}[{name}]\nname={name}\nbaseurl={}\nenabled=1\n{check}",
                s.url,
                name = s.name
            ))
        }
        PackageSystem::Pacman => {
            if !s.suites.is_empty() || !s.components.is_empty() {
                return Err(Failure::new(
                    "`suites` and `components` are apt's: a pacman Repository takes only `url` and `key`",
                ));
            }
            // Signed packages only, by a key pacman trusts; the database
            // is checked when it is signed (pacman's own default).
            let check = match s.key {
                Some(_) => format!("SigLevel = {PACMAN_SIGLEVEL}\n"),
                None => String::new(),
            };
            Ok(format!("{head}[{}]\n{check}Server = {}\n", s.name, s.url))
        }
        PackageSystem::Zypper => super::zypper::repository::content(&head, s, &key),
    }
}

fn file(path: String, ensure: Ensure, content: Option<String>) -> FileSpec {
    FileSpec {
        path,
        ensure,
        owner: Some("root".into()),
        group: Some("root".into()),
        mode: Some(0o644),
        content: content.map(|c| c.into_bytes().into()),
        sensitive: false,
        secret: None,
    }
}

/// The SigLevel of a pacman Repository with a key.
pub const PACMAN_SIGLEVEL: &str = "Required DatabaseOptional";

/// The two Files a Repository is: its key first, then its own file.
/// pacman's key is in its keyring instead ([`keyring`]): no key file.
fn files(system: PackageSystem, s: &RepositorySpec) -> Result<[FileSpec; 2], Failure> {
    let (repo, key) = paths(system, &s.name);
    let present = s.ensure == Ensure::Present;
    let key_file = match (&s.key, present) {
        (Some(k), true) if system != PackageSystem::Pacman => {
            file(key, Ensure::Present, Some(k.clone()))
        }
        _ => file(key, Ensure::Absent, None),
    };
    let repo_file = if present {
        file(repo, Ensure::Present, Some(content(system, s)?))
    } else {
        file(repo, Ensure::Absent, None)
    };
    Ok([key_file, repo_file])
}

/// A key as output shows it: a short hash, never its text.
fn fingerprint(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

impl Repositories {
    /// Whether the key file is to change. Its directory may be missing
    /// (it is made when the key is written): then so is the key.
    fn key_differs(&self, key: &FileSpec, cx: &Context<'_>) -> Result<bool, Failure> {
        let dir = key_dir(&key.path);
        if self.root.lstat(dir).ok().flatten().is_none() {
            return Ok(key.ensure == Ensure::Present);
        }
        Ok(!self.files.examine(key, cx)?.changes.is_empty())
    }
}

impl Repositories {
    /// Whether the root's pacman.conf includes Datum's repository files.
    fn included(&self) -> bool {
        let conf = self
            .root
            .read_small("/etc/pacman.conf", KEY_LIMIT)
            .ok()
            .flatten();
        let conf = String::from_utf8_lossy(conf.as_deref().unwrap_or_default()).into_owned();
        conf.lines().any(|l| {
            l.split_once('=').is_some_and(|(k, v)| {
                k.trim() == "Include" && v.trim() == "/etc/pacman.d/datum-*.conf"
            })
        })
    }
}

/// The directory a key is kept in.
fn key_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("/", |(d, _)| d)
}

impl Provider<RepositorySpec> for Repositories {
    fn examine(&self, s: &RepositorySpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let system = self.system(s)?;
        let [key, repo] = files(system, s)?;
        let mut ex = Examined::default();
        if system == PackageSystem::Pacman {
            ex.changes
                .extend(Keyring::of(&self.root).change(&s.name, pacman_key(s))?);
        } else if self.key_differs(&key, cx)? {
            let had = self
                .root
                .read_small(&key.path, KEY_LIMIT)
                .ok()
                .flatten()
                .map_or_else(|| "absent".to_owned(), |b| fingerprint(&b));
            let want = s
                .key
                .as_ref()
                .filter(|_| s.ensure == Ensure::Present)
                .map_or_else(|| "absent".to_owned(), |k| fingerprint(k.as_bytes()));
            ex.changes.push(Change::new(Attribute::Key, had, want));
        } else if let Some(k) = zypper_key(system, s) {
            // The file is as wanted, but zypper trusts the rpm database.
            if !super::zypper::repository::in_rpm_database(&self.root, k)? {
                let want = fingerprint(k.as_bytes());
                ex.changes
                    .push(Change::new(Attribute::Key, "not in the rpm database", want));
            }
        }
        let own = self.files.examine(&repo, cx)?;
        ex.changes.extend(own.changes);
        ex.notes.extend(own.notes);
        if system == PackageSystem::Pacman && s.ensure == Ensure::Present && !self.included() {
            ex.notes.push(format!(
                "/etc/pacman.conf does not include {}: pacman reads it only with `Include = /etc/pacman.d/datum-*.conf` in pacman.conf",
                repo.path
            ));
        }
        Ok(ex)
    }

    fn converge(&self, s: &RepositorySpec, _: &[Change], cx: &Context<'_>) -> Result<(), Failure> {
        let system = self.system(s)?;
        let [key, repo] = files(system, s)?;
        if system == PackageSystem::Pacman {
            return self.converge_pacman(s, &repo, cx);
        }
        if let Some(k) = zypper_key(system, s) {
            // A key rpm would refuse: nothing written.
            super::zypper::repository::validate(k)?;
        }
        // The key before the file that names it; removed after it.
        let order = if s.ensure == Ensure::Present {
            [&key, &repo]
        } else {
            [&repo, &key]
        };
        if key.ensure == Ensure::Present {
            let dir = key_dir(&key.path);
            self.root.create_dir_all(dir, 0o755).map_err(|e| {
                Failure::new(format!(
                    "cannot create {}: {e}",
                    self.root.path(dir).display()
                ))
            })?;
        }
        for f in order {
            if f.ensure == Ensure::Absent
                && self.root.lstat(key_dir(&f.path)).ok().flatten().is_none()
            {
                continue;
            }
            let changes = self.files.examine(f, cx)?.changes;
            if !changes.is_empty() {
                self.files.converge(f, &changes, cx)?;
            }
        }
        if system == PackageSystem::Zypper {
            super::zypper::repository::keys(&self.root, s)?;
            self.zypper_changed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(s.name.clone());
        }
        self.mark_stale(system);
        Ok(())
    }
}

/// The key a zypper Repository wants in the rpm database: none once
/// absent, nor for another system.
fn zypper_key(system: PackageSystem, s: &RepositorySpec) -> Option<&str> {
    s.key
        .as_deref()
        .filter(|_| system == PackageSystem::Zypper && s.ensure == Ensure::Present)
}

/// The key a pacman Repository wants in the keyring: none once absent.
fn pacman_key(s: &RepositorySpec) -> Option<&str> {
    s.key.as_deref().filter(|_| s.ensure == Ensure::Present)
}

impl Repositories {
    fn mark_stale(&self, system: PackageSystem) {
        self.stale
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(system);
    }

    /// The key into pacman's keyring before the file that wants it
    /// signed; the file removed before its key.
    fn converge_pacman(
        &self,
        s: &RepositorySpec,
        repo: &FileSpec,
        cx: &Context<'_>,
    ) -> Result<(), Failure> {
        let keyring = Keyring::of(&self.root);
        if s.ensure == Ensure::Present {
            keyring.converge(&s.name, pacman_key(s))?;
        }
        if pacman_key(s).is_some() {
            self.root
                .create_dir_all("/etc/pacman.d", 0o755)
                .map_err(|e| {
                    Failure::new(format!(
                        "cannot create {}: {e}",
                        self.root.path("/etc/pacman.d").display()
                    ))
                })?;
        }
        if self.root.lstat("/etc/pacman.d").ok().flatten().is_some() {
            let changes = self.files.examine(repo, cx)?.changes;
            if !changes.is_empty() {
                self.files.converge(repo, &changes, cx)?;
            }
        }
        if s.ensure == Ensure::Absent {
            keyring.converge(&s.name, None)?;
            if self.root.lstat("/etc/pacman.d").ok().flatten().is_some() {
                let keep = file(
                    PACMAN_PLACEHOLDER.to_owned(),
                    Ensure::Present,
                    Some(PACMAN_PLACEHOLDER_TEXT.to_owned()),
                );
                let changes = self.files.examine(&keep, cx)?.changes;
                if !changes.is_empty() {
                    self.files.converge(&keep, &changes, cx)?;
                }
            }
        }
        self.mark_stale(PackageSystem::Pacman);
        Ok(())
    }
}

/// pacman refuses an `Include` pattern that matches no file (every pacman
/// command fails, `pacman -R` included): once a pacman Repository is
/// removed, this file, matched by `datum-*.conf` and never a Repository's
/// (whose name is not empty), stays so that the Include still matches
/// when none is left.
pub const PACMAN_PLACEHOLDER: &str = "/etc/pacman.d/datum-.conf";
const PACMAN_PLACEHOLDER_TEXT: &str = "# Managed by Datum: keeps `Include = /etc/pacman.d/datum-*.conf` matching a file when no Repository is left (pacman refuses a pattern that matches nothing).\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(suites: &[&str], key: bool) -> RepositorySpec {
        RepositorySpec {
            name: "vendor".into(),
            ensure: Ensure::Present,
            provider: None,
            url: "https://example.org/debian".into(),
            suites: suites.iter().map(|s| (*s).into()).collect(),
            components: if suites.is_empty() {
                vec![]
            } else {
                vec!["main".into()]
            },
            key: key.then(|| "KEY".into()),
        }
    }

    #[test]
    fn each_system_gets_its_own_file() {
        assert_eq!(
            content(PackageSystem::Apt, &spec(&["bookworm"], true)).unwrap(),
            "# Managed by Datum: Repository[vendor]\nTypes: deb\nURIs: https://example.org/debian\n\
             Suites: bookworm\nComponents: main\nSigned-By: /etc/apt/keyrings/datum-vendor.asc\n"
        );
        assert_eq!(
            content(PackageSystem::Dnf, &spec(&[], true)).unwrap(),
            "# Managed by Datum: Repository[vendor]\n[vendor]\nname=vendor\n\
             baseurl=https://example.org/debian\nenabled=1\ngpgcheck=1\n\
             gpgkey=file:///etc/pki/rpm-gpg/datum-vendor.asc\n"
        );
        assert!(
            content(PackageSystem::Dnf, &spec(&[], false))
                .unwrap()
                .ends_with("enabled=1\ngpgcheck=0\n")
        );
        let err = content(PackageSystem::Apt, &spec(&[], true)).unwrap_err().0;
        assert!(err.contains("needs `suites`"), "{err}");
        let err = content(PackageSystem::Dnf, &spec(&["x"], true))
            .unwrap_err()
            .0;
        assert!(err.contains("are apt's"), "{err}");
        assert_eq!(
            content(PackageSystem::Pacman, &spec(&[], false)).unwrap(),
            "# Managed by Datum: Repository[vendor]\n[vendor]\nServer = https://example.org/debian\n"
        );
        assert_eq!(
            content(PackageSystem::Pacman, &spec(&[], true)).unwrap(),
            "# Managed by Datum: Repository[vendor]\n[vendor]\nSigLevel = Required DatabaseOptional\n\
             Server = https://example.org/debian\n"
        );
    }
}
