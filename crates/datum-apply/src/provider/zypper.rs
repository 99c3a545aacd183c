//! RPM packages, with zypper (the SUSE family: openSUSE Leap and
//! Tumbleweed, SLES, SLED).
//!
//! The installed state is read with `rpm -q` from the root's rpm database
//! (`/var/lib/rpm`, a link to `/usr/lib/sysimage/rpm` on Tumbleweed), as
//! for dnf ([`Dnf::installed`]); versions are compared by rpm's rules
//! ([`vercmp`](super::dnf::vercmp)), a version without epoch matching any
//! epoch. Everything a run installs or changes goes in one `zypper
//! install` (agreeing to the licences of the packages it installs:
//! declaring a Package is the operator's agreement), everything it
//! removes in one `zypper remove`, both
//! non-interactive and without refreshing the repositories
//! (`--no-refresh`): before an install, only the repositories of Datum's
//! Repositories that changed in the run, and those zypper has never read,
//! are refreshed, by name (`zypper refresh ALIAS…`): one of the root's
//! that is broken blocks no install from Datum's. zypper checks signatures against the
//! keys of the rpm database (which a Repository's `key` is imported into)
//! and never imports one itself.
//!
//! Under `--root`, zypper runs with `--root` (its repositories, cache,
//! history and locks are the root's), without network (in a network
//! namespace of its own), with neither the host's nor the root's
//! `zypp.conf` and `zypper.conf` (libzypp's defaults, but the solver's
//! system checks read from the root, not the host), and its log and
//! temporary files in a scratch directory. It reads the `.repo` files of
//! the root's `/etc/zypp/repos.d`, rewritten into the scratch directory
//! by dnf's [`Relocator`]: every `baseurl` is a `file://` directory of the
//! root, reached without a link, and every `gpgkey` a file of the root,
//! copied; network sources are refused. Before an install, where zypper
//! will open each package of those repositories is checked to stay inside
//! the root ([`locations`]).

pub mod locations;
pub mod output;
pub mod repository;
pub mod search;

use std::path::{Path, PathBuf};
use std::process::Command;

use super::command::{self, tool};
use super::dnf::config::Relocator;
use super::dnf::{DBPATH, Dnf};
use super::package::PackageManager;
use super::{Examined, Failure};
use crate::report::Change;
use crate::root::Root;
use crate::spec::{Ensure, PackageSpec};
use repository::Changed;

/// Where the root's repositories are configured.
pub const REPOS_DIR: &str = "/etc/zypp/repos.d";
/// Where zypper keeps the metadata it read from the repositories.
const RAW_CACHE: &str = "/var/cache/zypp/raw";
/// The largest `.repo` file read from the root.
const CONFIG_LIMIT: u64 = 1 << 20;
/// What zypper and rpm open in the root by their path on this machine:
/// the rpm database, zypper's cache, state, history and pid file, and the
/// root's zypp configuration beside the repositories (locks, variables,
/// services, the solver's system checks, vendors, reboot rules, products,
/// plugins).
const OPENED: [&str; 15] = [
    DBPATH,
    "/var/cache/zypp",
    "/var/lib/zypp",
    "/var/log/zypp",
    "/run",
    "/etc/zypp/locks",
    "/etc/zypp/vars.d",
    "/etc/zypp/services.d",
    SYSTEM_CHECK,
    "/etc/zypp/systemCheck.d",
    "/etc/zypp/vendors.d",
    "/etc/zypp/needreboot",
    "/etc/zypp/needreboot.d",
    "/etc/products.d",
    "/usr/lib/zypp",
];
/// The solver's system checks: libzypp reads the file in the root but,
/// unless told, the directory on this machine.
const SYSTEM_CHECK: &str = "/etc/zypp/systemCheck";
/// zypper's exit codes that report success with something to tell: a
/// reboot or a restart of zypper is needed.
const DONE_WITH_NEWS: [i32; 2] = [102, 103];
/// zypper's exit codes after a transaction that was made, whatever
/// repositories it could not read (106: some were skipped, such as one
/// of the root's whose metadata no longer verifies): the packages are
/// read back, which decides.
const TRANSACTION_MADE: [i32; 3] = [102, 103, 106];
/// zypper's exit code when the transaction was made but an rpm
/// scriptlet of a package failed: a failure (the package is installed,
/// but not set up as it meant to be).
const SCRIPTLET_FAILED: i32 = 107;
/// zypper's exit code when a search found nothing.
const NOTHING_FOUND: i32 = 104;

pub struct Zypper {
    root: Root,
    rpm: Dnf,
    /// Datum's zypper Repositories that changed in the run.
    changed: Changed,
}

impl Zypper {
    pub fn new(root: Root) -> Zypper {
        Zypper {
            rpm: Dnf::new(root.clone()),
            root,
            changed: Changed::default(),
        }
    }

    /// Told by `changed` which of Datum's Repositories changed.
    pub fn with_changed(mut self, changed: Changed) -> Zypper {
        self.changed = changed;
        self
    }

    /// What differs for one package: as for dnf, both reading the rpm
    /// database and comparing by rpm's rules ([`Dnf::differences`]).
    fn differences(&self, s: &PackageSpec) -> Result<Vec<Change>, Failure> {
        self.rpm.differences(s)
    }

    /// Makes the changes for several packages: with `refresh`, `zypper
    /// refresh` first; one `zypper install` for those to install or
    /// change, one `zypper remove` for those to remove; then checks each
    /// is as wanted.
    pub fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure> {
        let (install, remove): (Vec<&PackageSpec>, Vec<&PackageSpec>) =
            specs.iter().partition(|s| s.ensure == Ensure::Present);
        let scratch = match self.root.dir() {
            Some(dir) => Some(Scratch::new(&self.root, dir)?),
            None => None,
        };
        if !install.is_empty() {
            // Removing needs no repository: refreshing them first would
            // fail when the run removed the last.
            let every = self.refresh(scratch.as_ref(), refresh)?;
            if let Some(s) = &scratch {
                // The cache the install will read, current (a refresh
                // builds it too); then checked.
                if !every {
                    let verb = ["refresh", "--build-only"];
                    self.zypper_run(Some(s), &verb, std::iter::empty())?;
                }
                for repo in &s.repos {
                    locations::check(&self.root, repo)?;
                }
            }
            let what = self.what(scratch.as_ref(), &install)?;
            // Declaring the Package is the operator's agreement to its
            // licence (zypper, non-interactive, would refuse it).
            let verb = [
                "--no-refresh",
                "install",
                "--no-recommends",
                "--oldpackage",
                "--auto-agree-with-licenses",
            ];
            let done = &TRANSACTION_MADE;
            self.zypper_output(scratch.as_ref(), &verb, what.into_iter(), done)?;
        }
        if !remove.is_empty() {
            let names = remove.iter().map(|s| s.name.clone());
            let verb = ["--no-refresh", "remove"];
            self.zypper_output(scratch.as_ref(), &verb, names, &TRANSACTION_MADE)?;
        }
        super::package::read_back("zypper", specs, |s| self.differences(s), "")
    }

    /// What `zypper install` is given: `NAME`, or `NAME=EDITION` (which
    /// asks for that version, older ones included), the edition's epoch
    /// that of the highest offered edition the version matches when the
    /// version writes none ([`search`]).
    fn what(
        &self,
        scratch: Option<&Scratch>,
        install: &[&PackageSpec],
    ) -> Result<Vec<String>, Failure> {
        let unpinned: Vec<String> = install
            .iter()
            .filter(|s| s.version.as_ref().is_some_and(|v| !v.contains(':')))
            .map(|s| s.name.clone())
            .collect();
        let offered = if unpinned.is_empty() {
            Vec::new()
        } else {
            let verb = [
                "--xmlout",
                "--no-refresh",
                "search",
                "--details",
                "--match-exact",
                "--type",
                "package",
            ];
            let out = self.zypper_output(scratch, &verb, unpinned.into_iter(), &[NOTHING_FOUND])?;
            search::offered(&String::from_utf8_lossy(&out.stdout))
        };
        Ok(install
            .iter()
            .map(|s| match &s.version {
                Some(v) => search::wanted(&s.name, v, &offered),
                None => s.name.clone(),
            })
            .collect())
    }

    /// Refreshes, before an install, the repositories of Datum's that
    /// changed in the run (with `stale`) or that zypper has never read
    /// (it would not, with `--no-refresh`): one of these that cannot be
    /// refreshed fails the install. Then the root's other repositories
    /// zypper has never read, whose failure is left to the install (which
    /// skips them). Never every repository: one of the root's that is
    /// broken would block an install from Datum's. Whether every
    /// repository was refreshed (their caches all built).
    fn refresh(&self, scratch: Option<&Scratch>, stale: bool) -> Result<bool, Failure> {
        let changed = self
            .changed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let all = output::aliases(&self.root)?;
        let unread = |a: &str| {
            let raw = format!("{RAW_CACHE}/{}", a.replace('/', "_"));
            self.root.lstat(&raw).ok().flatten().is_none()
        };
        let (mut mine, mut others) = (Vec::new(), Vec::new());
        for (alias, datum) in &all {
            if *datum && ((stale && changed.contains(alias)) || unread(alias)) {
                mine.push(alias.clone());
            } else if !*datum && unread(alias) {
                others.push(alias.clone());
            }
        }
        if !mine.is_empty() {
            self.zypper_run(scratch, &["refresh"], mine.iter().cloned())?;
        }
        if !others.is_empty() {
            // Left to the install, which skips what it cannot read.
            let _ = self.zypper_run(scratch, &["refresh"], others.iter().cloned());
        }
        if stale {
            let mut set = self.changed.lock().unwrap_or_else(|e| e.into_inner());
            set.retain(|a| !mine.contains(a));
        }
        Ok(mine.len() + others.len() == all.len())
    }

    fn zypper_run(
        &self,
        scratch: Option<&Scratch>,
        verb: &[&str],
        what: impl Iterator<Item = String>,
    ) -> Result<(), Failure> {
        self.zypper_output(scratch, verb, what, &DONE_WITH_NEWS)
            .map(drop)
    }

    /// zypper's output, when it exits 0 or with one of `also_fine`.
    fn zypper_output(
        &self,
        scratch: Option<&Scratch>,
        verb: &[&str],
        what: impl Iterator<Item = String>,
        also_fine: &[i32],
    ) -> Result<std::process::Output, Failure> {
        let mut cmd = match scratch {
            Some(s) => s.zypper(),
            None => {
                let mut cmd = tool("zypper");
                cmd.arg("--non-interactive");
                cmd
            }
        };
        cmd.args(verb);
        let what: Vec<String> = what.collect();
        if !what.is_empty() {
            cmd.arg("--").args(what);
        }
        let out = command::output(&mut cmd)?;
        let code = out.status.code();
        if out.status.success() || code.is_some_and(|c| also_fine.contains(&c)) {
            return Ok(out);
        }
        let mut f = command::failed(&cmd, &out);
        if code == Some(SCRIPTLET_FAILED) {
            f.0 = format!(
                "{}; the packages were installed or removed, but an rpm scriptlet of one failed: it may not be set up as it should",
                f.0
            );
        }
        // zypper says why a signature is refused long before its last lines.
        let why = output::signature_lines(&[&out.stdout, &out.stderr]);
        if !why.is_empty() {
            f.0 = format!("{}; the signature: {}", f.0, why.join(" / "));
        }
        Err(match scratch {
            Some(_) => Failure::new(format!(
                "{}; under --root, zypper runs without network, from the repositories the root configures in {REPOS_DIR}, whose file:// addresses are inside the root, checking signatures against the keys of the root's rpm database",
                f.0
            )),
            None => f,
        })
    }
}

impl PackageManager for Zypper {
    fn examine_package(&self, s: &PackageSpec) -> Result<Examined, Failure> {
        Ok(Examined {
            changes: self.differences(s)?,
            notes: Vec::new(),
        })
    }

    fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure> {
        self.converge_all(specs, refresh)
    }
}

/// What zypper runs with under `--root`: a private home whose
/// `.rpmmacros` puts the rpm database in the root's `/var/lib/rpm`, a
/// `zypp.conf` of libzypp's defaults (but the system checks' directory,
/// the root's), an empty `zypper.conf`, the root's repositories rewritten
/// to point inside it, its log and temporary files.
struct Scratch {
    dir: tempfile::TempDir,
    root_dir: PathBuf,
    /// The repositories zypper is given, whose packages' locations are
    /// checked before an install ([`locations`]).
    repos: Vec<locations::Repo>,
}

impl Scratch {
    fn new(root: &Root, root_dir: &Path) -> Result<Scratch, Failure> {
        let io = |what: &str, e: &dyn std::fmt::Display| {
            Failure::new(format!("cannot prepare zypper's {what}: {e}"))
        };
        let dir = tempfile::Builder::new()
            .prefix("datum-zypper-")
            .tempdir()
            .map_err(|e| io("scratch directory", &e))?;
        let write = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.path().join(name), bytes).map_err(|e| io(name, &e))
        };
        write(".rpmmacros", format!("%_dbpath {DBPATH}\n").as_bytes())?;
        let shown = root_dir.display().to_string();
        if shown.contains(['\n', '\r']) {
            return Err(Failure::new(format!(
                "the root's path {shown:?} holds a line break, which zypp.conf cannot name"
            )));
        }
        write(
            "zypp.conf",
            format!("[main]\nsolver.checkSystemFileDir = {shown}{SYSTEM_CHECK}.d\n").as_bytes(),
        )?;
        write("zypper.conf", b"")?;
        for abs in OPENED {
            super::local_repo::stays_inside(root, abs).map_err(Failure::new)?;
        }
        for sub in ["repos", "files", "tmp"] {
            std::fs::create_dir(dir.path().join(sub)).map_err(|e| io(sub, &e))?;
        }
        let releasever = crate::facts::os_release(root)
            .ok()
            .and_then(|(os, _)| os.version_id);
        let mut relocator = Relocator::new(root, root_dir, dir.path(), releasever.as_deref())
            .map_err(Failure::new)?;
        let names = root.list(REPOS_DIR).map_err(|e| {
            Failure::new(format!(
                "cannot list {}: {e}",
                root.path(REPOS_DIR).display()
            ))
        })?;
        let mut repos = Vec::new();
        for name in names {
            let name = name.to_string_lossy().into_owned();
            if !name.ends_with(".repo") {
                continue;
            }
            let abs = format!("{REPOS_DIR}/{name}");
            let shown = root.path(&abs).display().to_string();
            let bytes = root
                .read_small(&abs, CONFIG_LIMIT)
                .map_err(|e| Failure::new(format!("cannot read {shown}: {e}")))?;
            let Some(bytes) = bytes else { continue };
            let text = String::from_utf8_lossy(&bytes);
            no_subpath(&text).map_err(|e| Failure::new(format!("{shown}: {e}")))?;
            let text = relocator
                .rewrite(&text, &abs)
                .map_err(|e| Failure::new(format!("{shown}: {e}")))?;
            repos.extend(locations::repos(&text, &shown, root_dir)?);
            write(&format!("repos/{name}"), text.as_bytes())?;
        }
        Ok(Scratch {
            dir,
            root_dir: root_dir.to_owned(),
            repos,
        })
    }

    /// zypper on the root, without network.
    fn zypper(&self) -> Command {
        let scratch = self.dir.path();
        let mut cmd = tool("unshare");
        cmd.env("HOME", scratch)
            .env("ZYPP_CONF", scratch.join("zypp.conf"))
            .env("ZYPP_LOGFILE", scratch.join("zypper.log"))
            .env("ZYPPTMPDIR", scratch.join("tmp"))
            .args(["--net", "--", "zypper", "--non-interactive"])
            .arg("--config")
            .arg(scratch.join("zypper.conf"))
            .arg("--root")
            .arg(&self.root_dir)
            .arg("--reposd-dir")
            .arg(scratch.join("repos"));
        cmd
    }
}

/// Refuses zypper's `path` option (a directory appended to `baseurl`)
/// unless it is `/`: where it leads is not checked. The line is 1-based.
fn no_subpath(text: &str) -> Result<(), String> {
    for (n, line) in text.lines().enumerate() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("path") && !matches!(value.trim(), "" | "/") {
            return Err(format!(
                "line {}: `path`: under --root a repository is read from its `baseurl` only; put the directory in `baseurl` (`baseurl=file:///srv/repo{}`) and leave `path` out",
                n + 1,
                value.trim()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_below_the_baseurl_is_refused() {
        assert_eq!(no_subpath("[a]\nbaseurl=file:///srv/a\npath=/\n"), Ok(()));
        let err = no_subpath("[a]\nbaseurl=file:///srv\n PATH = /../etc\n").unwrap_err();
        assert!(err.starts_with("line 3: `path`"), "{err}");
    }
}
