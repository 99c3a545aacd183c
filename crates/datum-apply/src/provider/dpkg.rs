//! Debian packages (the `apt` provider).
//!
//! The installed state is read with `dpkg-query` from the root's dpkg
//! database. On the running system, packages are installed and removed
//! with `apt-get`. Under `--root`, nothing is downloaded: a package is
//! installed with `dpkg --root` from a `.deb` in the root's archive cache
//! (`ROOT/var/cache/apt/archives`), and removed with `dpkg --root --remove`.
//!
//! Batched as dnf is: everything a run installs or changes in one
//! `apt-get install` (under `--root`, one `dpkg --install` of every
//! `.deb`), everything it removes in one `apt-get remove` (`dpkg
//! --remove`); then each package is read back.

pub mod apt_root;
pub mod deb822;
pub mod written;

use std::path::{Path, PathBuf};

use super::command::{self, tool};
use super::package::PackageManager;
use super::{Examined, Failure};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{Ensure, PackageSpec};

/// The archive cache, relative to the root.
pub const ARCHIVES: &str = "/var/cache/apt/archives";

pub struct Dpkg {
    root: Root,
}

impl Dpkg {
    pub fn new(root: Root) -> Dpkg {
        Dpkg { root }
    }

    /// The installed version, or `None` when the package is not installed
    /// (never was, removed, or only its configuration files are left).
    pub fn installed(&self, name: &str) -> Result<Option<String>, Failure> {
        if self.root.dir().is_some() {
            written::file(&self.root, "/var/lib/dpkg/status", written::DPKG_APT)?;
        }
        let mut cmd = tool("dpkg-query");
        cmd.arg(format!(
            "--admindir={}",
            self.root.path("/var/lib/dpkg").display()
        ))
        .args(["-W", "-f=${db:Status-Abbrev}\t${Version}\n", "--"])
        .arg(name);
        let out = command::output(&mut cmd)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            if String::from_utf8_lossy(&out.stderr).contains("no packages found") {
                return Ok(None);
            }
            return Err(command::failed(&cmd, &out));
        }
        // One line per architecture; the second letter of the status is
        // the current state (`i`: installed).
        Ok(stdout.lines().find_map(|line| {
            let (status, version) = line.split_once('\t')?;
            (status.as_bytes().get(1) == Some(&b'i')).then(|| version.to_owned())
        }))
    }

    /// Refreshes apt's package lists when `stale` (a Repository changed):
    /// `apt-get update` on the running system. Under `--root` nothing is
    /// downloaded, so there is nothing to refresh.
    pub fn refresh(&self, stale: bool) -> Result<(), Failure> {
        if !stale || self.root.dir().is_some() {
            return Ok(());
        }
        command::run(tool("apt-get").args(["update", "-q"])).map(drop)
    }

    /// The `.deb` in the root's archive cache for a package (the given
    /// version, or the highest there is).
    fn find_deb(&self, dir: &Path, name: &str, version: Option<&str>) -> Result<PathBuf, Failure> {
        super::local_repo::stays_inside(&self.root, ARCHIVES).map_err(Failure::new)?;
        let archives = dir.join(ARCHIVES.trim_start_matches('/'));
        let mut debs = self.archive_debs(dir)?;
        debs.sort();
        let mut best: Option<(PathBuf, String)> = None;
        for deb in debs {
            let fields = command::run(
                tool("dpkg-deb")
                    .arg("--field")
                    .arg(&deb)
                    .args(["Package", "Version"]),
            )?;
            let field = |key: &str| {
                fields
                    .lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                    .map(|v| v.trim().to_owned())
            };
            let (Some(pkg), Some(ver)) = (field("Package"), field("Version")) else {
                continue;
            };
            if pkg != name || version.is_some_and(|v| v != ver) {
                continue;
            }
            let newer = match &best {
                None => true,
                Some((_, b)) => {
                    command::output(tool("dpkg").args(["--compare-versions", &ver, "gt", b]))?
                        .status
                        .success()
                }
            };
            if newer {
                best = Some((deb, ver));
            }
        }
        best.map(|(deb, _)| deb).ok_or_else(|| {
            let wanted = match version {
                Some(v) => format!("{name} version {v}"),
                None => name.to_owned(),
            };
            Failure::new(format!(
                "no .deb for {wanted} in {}: under --root, packages are installed only from \
                 the root's archive cache, never downloaded",
                archives.display()
            ))
        })
    }

    /// The `.deb` files of the root's archive cache (none when it does not
    /// exist), each a regular file: dpkg-deb and dpkg open them by their
    /// path on this machine, following links, so a link there (which could
    /// lead to a host's file) or anything but a regular file is refused by
    /// its name before either reads it.
    fn archive_debs(&self, dir: &Path) -> Result<Vec<PathBuf>, Failure> {
        let names = match self.root.list(ARCHIVES) {
            Ok(names) => names,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(Failure::new(format!(
                    "cannot list {}: {e}",
                    self.root.path(ARCHIVES).display()
                )));
            }
        };
        let mut debs = Vec::new();
        for name in names {
            let name = name.to_string_lossy().into_owned();
            if !name.ends_with(".deb") {
                continue;
            }
            let abs = format!("{ARCHIVES}/{name}");
            match self.root.lstat(&abs) {
                Ok(Some(m)) if m.is_file() => {}
                Ok(None) => continue,
                Ok(Some(m)) => {
                    return Err(Failure::new(format!(
                        "{} is {}: under --root, dpkg reads the archive cache's .deb files by their path on this machine, following links, so it could read a file from outside the root; put the .deb itself there",
                        self.root.path(&abs).display(),
                        datum_fs::kind_of(&m)
                    )));
                }
                Err(e) => {
                    return Err(Failure::new(format!(
                        "{}: {e}",
                        self.root.path(&abs).display()
                    )));
                }
            }
            debs.push(dir.join(abs.trim_start_matches('/')));
        }
        Ok(debs)
    }

    /// dpkg under `--root=dir`, run only after [`written::check`] (so
    /// `dir/var/log` does not lead out of the root).
    fn dpkg(&self, dir: &Path) -> std::process::Command {
        let mut cmd = tool("dpkg");
        let log = dir.join("var/log");
        let log = if log.is_dir() {
            log.join(written::DPKG_LOG.trim_start_matches("/var/log/"))
        } else {
            PathBuf::from("/dev/null")
        };
        cmd.arg(format!("--root={}", dir.display()))
            .arg(format!("--log={}", log.display()))
            .args(["--force-confdef", "--force-confold"]);
        cmd
    }
}

/// What apt is asked to install: `NAME` or `NAME=VERSION`.
fn wanted(s: &PackageSpec) -> String {
    match &s.version {
        Some(v) => format!("{}={v}", s.name),
        None => s.name.clone(),
    }
}

/// Why `name` is not a Debian package name (policy §5.6.1: lowercase
/// letters, digits, `+ - .`, two characters at least, starting with a
/// letter or digit), which the manifest's wider rule for every package
/// system lets through.
fn not_debian(name: &str) -> Option<String> {
    let ok = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '-' | '.'));
    (!ok).then(|| {
        format!(
            "`{name}` is not a Debian package name: lowercase letters, digits, `+ - .`, at least two characters, starting with a letter or digit"
        )
    })
}

impl Dpkg {
    /// What differs for one package.
    fn differences(&self, s: &PackageSpec) -> Result<Vec<Change>, Failure> {
        if let Some(why) = not_debian(&s.name) {
            return Err(Failure::new(why));
        }
        let mut changes = Vec::new();
        match (s.ensure, self.installed(&s.name)?) {
            (Ensure::Present, None) => {
                changes.push(Change::new(Attribute::Ensure, "absent", "installed"));
                if let Some(v) = &s.version {
                    changes.push(Change::set(Attribute::Version, v.as_str()));
                }
            }
            (Ensure::Present, Some(have)) => {
                if let Some(want) = &s.version
                    && &have != want
                {
                    changes.push(Change::new(Attribute::Version, have, want.as_str()));
                }
            }
            (Ensure::Absent, Some(have)) => changes.push(Change::new(
                Attribute::Ensure,
                format!("installed ({have})"),
                "absent",
            )),
            (Ensure::Absent, None) => {}
        }
        Ok(changes)
    }

    /// Makes the changes for several packages: one install (`apt-get
    /// install`, or under `--root` one `dpkg --install` of their `.deb`s)
    /// for those to install or change, one removal for those to remove;
    /// then checks each is as wanted. With `refresh` (a Repository
    /// changed), apt's lists are refreshed first on the running system.
    pub fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure> {
        let (install, remove): (Vec<&PackageSpec>, Vec<&PackageSpec>) =
            specs.iter().partition(|s| s.ensure == Ensure::Present);
        match self.root.dir() {
            Some(dir) => match apt_root::AptRoot::new(&self.root, dir)? {
                Some(apt) => self.converge_from_repositories(&apt, refresh, &install, &remove)?,
                None => self.converge_from_archives(dir, &install, &remove)?,
            },
            None => {
                self.refresh(refresh)?;
                if !install.is_empty() {
                    command::run(
                        tool("apt-get")
                            .args([
                                "install",
                                "-y",
                                "-q",
                                "--no-install-recommends",
                                "--allow-downgrades",
                            ])
                            .args(["-o", "Dpkg::Options::=--force-confdef"])
                            .args(["-o", "Dpkg::Options::=--force-confold", "--"])
                            .args(install.iter().map(|s| wanted(s))),
                    )?;
                }
                if !remove.is_empty() {
                    command::run(
                        tool("apt-get")
                            .args(["remove", "-y", "-q", "--"])
                            .args(remove.iter().map(|s| &s.name)),
                    )?;
                }
            }
        }
        super::package::read_back("apt", specs, |s| self.differences(s), "")
    }

    /// Under `--root` without Repositories: one `dpkg --install` of the
    /// `.deb` files in the archive cache, one `dpkg --remove`.
    fn converge_from_archives(
        &self,
        dir: &Path,
        install: &[&PackageSpec],
        remove: &[&PackageSpec],
    ) -> Result<(), Failure> {
        written::check(&self.root, false)?;
        if !install.is_empty() {
            let debs = install
                .iter()
                .map(|s| self.find_deb(dir, &s.name, s.version.as_deref()))
                .collect::<Result<Vec<_>, _>>()?;
            command::run(self.dpkg(dir).arg("--install").args(debs))?;
        }
        if !remove.is_empty() {
            command::run(
                self.dpkg(dir)
                    .args(["--remove", "--"])
                    .args(remove.iter().map(|s| &s.name)),
            )?;
        }
        Ok(())
    }

    /// Under `--root` with sources apt can read in the root: apt-get from
    /// them ([`apt_root`]), its lists refreshed first when `refresh` or
    /// missing.
    fn converge_from_repositories(
        &self,
        apt: &apt_root::AptRoot,
        refresh: bool,
        install: &[&PackageSpec],
        remove: &[&PackageSpec],
    ) -> Result<(), Failure> {
        if refresh || !apt.has_lists(&self.root) {
            command::run(apt.apt_get().args(["update", "-q"]))?;
        }
        if !install.is_empty() {
            let what: Vec<String> = install.iter().map(|s| wanted(s)).collect();
            apt.check_archives(&self.root, &what)?;
            command::run(
                apt.apt_get_frozen()
                    .args(["install", "-y", "-q", "--allow-downgrades", "--"])
                    .args(&what),
            )
            .map_err(apt_root::with_hint)?;
        }
        if !remove.is_empty() {
            command::run(
                apt.apt_get()
                    .args(["remove", "-y", "-q", "--"])
                    .args(remove.iter().map(|s| &s.name)),
            )?;
        }
        Ok(())
    }
}

impl PackageManager for Dpkg {
    /// Under `--root`, a change comes with notes of the root's sources apt
    /// is not given ([`apt_root::notes`]).
    fn examine_package(&self, s: &PackageSpec) -> Result<Examined, Failure> {
        let changes = self.differences(s)?;
        let notes = if self.root.dir().is_some() && !changes.is_empty() {
            apt_root::notes(&self.root)
        } else {
            Vec::new()
        };
        Ok(Examined { changes, notes })
    }

    fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure> {
        self.converge_all(specs, refresh)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_debian_names_reach_dpkg() {
        for ok in ["nginx", "g++", "0ad", "libc6"] {
            assert_eq!(super::not_debian(ok), None, "{ok}");
        }
        for bad in ["NetworkManager", "R", "a_b", "x@y", "-rf"] {
            assert!(super::not_debian(bad).is_some(), "{bad}");
        }
    }
}
