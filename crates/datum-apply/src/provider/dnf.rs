//! RPM packages, with dnf (RHEL and its rebuilds, Fedora, Amazon Linux).
//!
//! The installed state is read with `rpm -q` from the root's rpm database
//! (`/var/lib/rpm`); versions are compared by rpm's own rules
//! ([`vercmp`]). Packages are installed, upgraded, downgraded and removed
//! with dnf: everything a run installs or changes in one `dnf install`
//! transaction, everything it removes in one `dnf remove`.
//!
//! Under `--root`, nothing comes from outside the root: dnf runs with
//! `--installroot`, without network (in a network namespace of its own),
//! without plugins and with none of the host's configuration. It reads
//! only the root's `/etc/dnf/dnf.conf` and the `.repo` files in its
//! `/etc/yum.repos.d`, rewritten by [`config`] into a scratch directory:
//! every path they name is the root's, reached without a link, and every
//! network source is refused. dnf keeps its cache, history and logs in
//! the root (`/var/cache/dnf`, `/var/lib/dnf`, `/var/log`), which may not
//! be reached through a link leading out of it, nor hold one (its logs
//! none at all, [`super::dpkg::written`]). Before it installs, where
//! the repositories' metadata puts each package is checked ([`locations`]).

pub mod config;
pub mod locations;
pub mod vercmp;

use std::path::{Path, PathBuf};
use std::process::Command;

use super::command::{self, tool};
use super::package::PackageManager;
use super::{Examined, Failure};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{Ensure, PackageSpec};
use vercmp::Evr;

/// The rpm database, inside the root (RHEL, Fedora and Amazon Linux all
/// keep it here; Debian's rpm, which the tests run, would otherwise use
/// the invoking user's `~/.rpmdb`).
pub const DBPATH: &str = "/var/lib/rpm";
/// The database files of rpm's backends: sqlite, Berkeley DB, ndb.
const DB_FILES: [&str; 3] = ["rpmdb.sqlite", "Packages", "Packages.db"];
/// Where the root's repositories are configured.
pub const REPOS_DIR: &str = "/etc/yum.repos.d";
/// dnf's configuration in the root.
const DNF_CONF: &str = "/etc/dnf/dnf.conf";
/// The largest `.repo` or dnf.conf file read from the root.
const CONFIG_LIMIT: u64 = 1 << 20;
/// Where rpm and dnf write in the root: the rpm database, dnf's cache,
/// history and logs.
const WRITTEN: [&str; 4] = [DBPATH, "/var/cache/dnf", "/var/lib/dnf", "/var/log"];
/// The directories rpm and dnf write in, where a link may only lead
/// inside the root (dnf makes none of its own there).
const WRITTEN_TREES: [&str; 3] = [DBPATH, "/var/cache/dnf", "/var/lib/dnf"];
/// The files dnf writes by name in `/var/log`, which may not be links.
const LOGS: [&str; 4] = [
    "/var/log/dnf.log",
    "/var/log/dnf.librepo.log",
    "/var/log/dnf.rpm.log",
    "/var/log/hawkey.log",
];
/// Who writes there, as messages say.
const RPM_DNF: &str = "rpm and dnf";

pub struct Dnf {
    root: Root,
}

impl Dnf {
    pub fn new(root: Root) -> Dnf {
        Dnf { root }
    }

    /// The installed versions of a package (`[epoch:]version-release`,
    /// the epoch only when set), sorted; empty when it is not installed.
    /// A root without an rpm database has nothing installed: it is not
    /// created by asking (`rpm -q` would).
    pub fn installed(&self, name: &str) -> Result<Vec<String>, Failure> {
        if self.root.dir().is_some() {
            super::local_repo::stays_inside(&self.root, DBPATH).map_err(Failure::new)?;
            // rpm opens the database's files (and sqlite its journals
            // beside them) by their path on this machine.
            super::dpkg::written::tree(&self.root, DBPATH, true, RPM_DNF)?;
            if !self.has_database() {
                return Ok(Vec::new());
            }
        }
        let mut cmd = self.rpm();
        cmd.args([
            "-q",
            "--qf",
            "%|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\\n",
            "--",
        ])
        .arg(name);
        let out = command::output(&mut cmd)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            if stdout.contains("is not installed") {
                return Ok(Vec::new());
            }
            return Err(command::failed(&cmd, &out));
        }
        let mut versions: Vec<String> = stdout.lines().map(str::to_owned).collect();
        versions.sort_by(|a, b| Evr::parse(a).compare(&Evr::parse(b)));
        Ok(versions)
    }

    fn has_database(&self) -> bool {
        DB_FILES.iter().any(|f| {
            self.root
                .lstat(&format!("{DBPATH}/{f}"))
                .is_ok_and(|m| m.is_some())
        })
    }

    fn rpm(&self) -> Command {
        let mut cmd = tool("rpm");
        if let Some(dir) = self.root.dir() {
            cmd.arg("--root").arg(dir).args(["--dbpath", DBPATH]);
        }
        cmd
    }

    /// What differs for one package (zypper's too: the same database,
    /// the same rules). A name ending in `.rpm` is refused ([`argument`]).
    pub(super) fn differences(&self, s: &PackageSpec) -> Result<Vec<Change>, Failure> {
        argument(s)?;
        let have = self.installed(&s.name)?;
        let mut changes = Vec::new();
        match (s.ensure, have.is_empty()) {
            (Ensure::Present, true) => {
                changes.push(Change::new(Attribute::Ensure, "absent", "installed"));
                if let Some(v) = &s.version {
                    changes.push(Change::set(Attribute::Version, v.as_str()));
                }
            }
            (Ensure::Present, false) => {
                if let Some(want) = &s.version {
                    let wanted = Evr::parse(want);
                    let only = have.len() == 1;
                    let matches = |h: &String| wanted.matches(&Evr::parse(h));
                    if !(only && matches(&have[0])) {
                        changes.push(Change::new(
                            Attribute::Version,
                            have.join(", "),
                            want.as_str(),
                        ));
                    }
                }
            }
            (Ensure::Absent, false) => changes.push(Change::new(
                Attribute::Ensure,
                format!("installed ({})", have.join(", ")),
                "absent",
            )),
            (Ensure::Absent, true) => {}
        }
        Ok(changes)
    }

    /// Makes the changes for several packages: one `dnf install` for those
    /// to install or change, one `dnf remove` for those to remove; then
    /// checks each is as wanted (dnf can succeed without doing what was
    /// asked, when it finds nothing to do).
    /// With `refresh`, dnf first refreshes the metadata of every
    /// repository (a Repository changed in this run).
    pub fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure> {
        let (install, remove): (Vec<&PackageSpec>, Vec<&PackageSpec>) =
            specs.iter().partition(|s| s.ensure == Ensure::Present);
        let scratch = match self.root.dir() {
            Some(dir) => Some(Scratch::new(&self.root, dir)?),
            None => None,
        };
        if !install.is_empty() {
            let what = install
                .iter()
                .map(|s| argument(s))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter();
            // Under --root, the packages' locations are checked first; the
            // install then reads only the metadata the check loaded (from
            // dnf's cache in the root, never loaded again: what the
            // repository holds may have changed since).
            let metadata = match &scratch {
                Some(s) => {
                    s.check_locations(&self.root, refresh)?;
                    Metadata::Checked { refreshed: refresh }
                }
                None if refresh => Metadata::Refreshed,
                None => Metadata::AsDnfSees,
            };
            self.dnf_run(scratch.as_ref(), metadata, "install", what)?;
        }
        if !remove.is_empty() {
            let names = remove
                .iter()
                .map(|s| argument(s).map(|_| s.name.clone()))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter();
            let metadata = if refresh && install.is_empty() {
                Metadata::Refreshed
            } else {
                Metadata::AsDnfSees
            };
            self.dnf_run(scratch.as_ref(), metadata, "remove", names)?;
        }
        super::package::read_back("dnf", specs, |s| self.differences(s), "")
    }

    fn dnf_run(
        &self,
        scratch: Option<&Scratch>,
        metadata: Metadata,
        verb: &str,
        what: impl Iterator<Item = String>,
    ) -> Result<(), Failure> {
        let mut cmd = match scratch {
            Some(s) => s.dnf(),
            None => tool("dnf"),
        };
        match metadata {
            Metadata::AsDnfSees => {}
            Metadata::Refreshed => {
                cmd.arg("--refresh");
            }
            Metadata::Checked { .. } => {
                cmd.arg("--cacheonly");
            }
        }
        let loaded = match metadata {
            Metadata::Checked { refreshed: true } => {
                "; it read the metadata its location check loaded, refreshed first"
            }
            Metadata::Checked { refreshed: false } => {
                "; it read the metadata its location check loaded"
            }
            _ => "",
        };
        cmd.args(["-y", "-q", "--setopt=install_weak_deps=False", verb, "--"])
            .args(what);
        command::run(&mut cmd).map(drop).map_err(|f| match scratch {
            Some(_) => Failure::new(format!(
                "{}; under --root, dnf runs without network, from the repositories the root configures in {REPOS_DIR}, whose file:// addresses are inside the root{loaded}",
                f.0
            )),
            None => f,
        })
    }
}

/// The package as dnf is given it (`name` or `name-version`); refused
/// when it ends with `.rpm`, which dnf would read as the path of a package
/// file on this machine (relative to the working directory), never a
/// package of the repositories.
fn argument(s: &PackageSpec) -> Result<String, Failure> {
    let arg = match &s.version {
        Some(v) => format!("{}-{v}", s.name),
        None => s.name.clone(),
    };
    if arg.ends_with(".rpm") || s.name.ends_with(".rpm") {
        return Err(Failure::new(format!(
            "`{arg}` ends with `.rpm`, which dnf and zypper read as the path of a package file on this machine, not a package of the repositories: name the package (`{}`)",
            arg.trim_end_matches(".rpm")
        )));
    }
    Ok(arg)
}

/// Which repository metadata a dnf run reads.
#[derive(Clone, Copy)]
enum Metadata {
    /// Its cache, or the repositories' when dnf finds it expired.
    AsDnfSees,
    /// The repositories', loaded again (`--refresh`).
    Refreshed,
    /// Only its cache, as [`Scratch::check_locations`] loaded and checked
    /// it just before (`--cacheonly`), `refreshed` or not: never the
    /// repositories' again.
    Checked { refreshed: bool },
}

impl PackageManager for Dnf {
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

/// What dnf runs with under `--root`: a private home whose `.rpmmacros`
/// puts the rpm database in the root's `/var/lib/rpm`, the root's
/// dnf.conf and its repositories rewritten to point inside it.
struct Scratch {
    dir: tempfile::TempDir,
    root_dir: PathBuf,
    releasever: Option<String>,
    /// The enabled repositories, where their packages are.
    repos: locations::Repos,
}

impl Scratch {
    fn new(root: &Root, root_dir: &Path) -> Result<Scratch, Failure> {
        let io = |what: &str, e: &dyn std::fmt::Display| {
            Failure::new(format!("cannot prepare dnf's {what}: {e}"))
        };
        let dir = tempfile::Builder::new()
            .prefix("datum-dnf-")
            .tempdir()
            .map_err(|e| io("scratch directory", &e))?;
        let write = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.path().join(name), bytes).map_err(|e| io(name, &e))
        };
        write(".rpmmacros", format!("%_dbpath {DBPATH}\n").as_bytes())?;
        // What dnf and rpm open by their path on this machine, as they
        // write: a link there would lead them out of the root.
        for abs in WRITTEN {
            super::local_repo::stays_inside(root, abs).map_err(Failure::new)?;
        }
        // What they write in there: a link could lead them out too.
        for abs in WRITTEN_TREES {
            super::dpkg::written::tree(root, abs, true, RPM_DNF)?;
        }
        for abs in LOGS {
            super::dpkg::written::file(root, abs, RPM_DNF)?;
        }
        std::fs::create_dir(dir.path().join("repos")).map_err(|e| io("repositories", &e))?;
        std::fs::create_dir(dir.path().join("files"))
            .map_err(|e| io("keys and certificates", &e))?;
        let releasever = crate::facts::os_release(root)
            .ok()
            .and_then(|(os, _)| os.version_id);
        let mut relocator =
            config::Relocator::new(root, root_dir, dir.path(), releasever.as_deref())
                .map_err(Failure::new)?;
        let mut rewrite = |abs: &str| -> Result<Option<String>, Failure> {
            let bytes = root.read_small(abs, CONFIG_LIMIT).map_err(|e| {
                Failure::new(format!("cannot read {}: {e}", root.path(abs).display()))
            })?;
            let Some(bytes) = bytes else { return Ok(None) };
            let text = String::from_utf8_lossy(&bytes);
            relocator
                .rewrite(&text, abs)
                .map(Some)
                .map_err(|e| Failure::new(format!("{}: {e}", root.path(abs).display())))
        };
        let conf = rewrite(DNF_CONF)?.unwrap_or_default();
        write("dnf.conf", conf.as_bytes())?;
        let names = root.list(REPOS_DIR).map_err(|e| {
            Failure::new(format!(
                "cannot list {}: {e}",
                root.path(REPOS_DIR).display()
            ))
        })?;
        for name in names {
            let name = name.to_string_lossy().into_owned();
            if !name.ends_with(".repo") {
                continue;
            }
            if let Some(text) = rewrite(&format!("{REPOS_DIR}/{name}"))? {
                write(&format!("repos/{name}"), text.as_bytes())?;
            }
        }
        let repos = relocator.repos().clone();
        Ok(Scratch {
            dir,
            root_dir: root_dir.to_owned(),
            releasever,
            repos,
        })
    }

    /// Refuses the run when a package of the enabled repositories would be
    /// read from outside the root ([`locations`]): one `dnf repoquery`,
    /// with the metadata refreshed first when `refresh`.
    fn check_locations(&self, root: &Root, refresh: bool) -> Result<(), Failure> {
        let query = locations::Query::new().map_err(Failure::new)?;
        let mut cmd = self.dnf();
        if refresh {
            cmd.arg("--refresh");
        }
        cmd.arg("-q").args(query.args());
        let out = command::output(&mut cmd)?;
        if !out.status.success() {
            return Err(command::failed(&cmd, &out));
        }
        query
            .check(root, &self.root_dir, &self.repos, &out.stdout)
            .map_err(Failure::new)
    }

    /// dnf inside the root, without network.
    fn dnf(&self) -> Command {
        let mut cmd = tool("unshare");
        cmd.env("HOME", self.dir.path())
            .args(["--net", "--", "dnf", "--noplugins", config::SKIP_NONE])
            .arg(format!("--installroot={}", self.root_dir.display()))
            .arg(format!(
                "--config={}",
                self.dir.path().join("dnf.conf").display()
            ))
            .arg(format!(
                "--setopt=reposdir={}",
                self.dir.path().join("repos").display()
            ));
        if let Some(v) = &self.releasever {
            cmd.arg(format!("--releasever={v}"));
        }
        cmd
    }
}
