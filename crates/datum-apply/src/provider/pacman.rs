//! Arch packages, with pacman.
//!
//! The installed state is read with `pacman -Q` from the root's local
//! database (`/var/lib/pacman/local`; under `--root`, chrooted into the
//! root with `--sysroot`, reading its pacman.conf and no link out of
//! it); versions are compared by pacman's
//! own rules ([`vercmp`]). Everything a run installs goes in one `pacman
//! -S` transaction, everything it removes in one `pacman -R`.
//!
//! pacman installs the version its repositories offer: it has no way to
//! ask for another. A `version` is checked after the transaction, and a
//! repository offering a different one is a failure saying so.
//!
//! Under `--root`, pacman runs with `--sysroot` (chrooted into the root,
//! reading the root's own `/etc/pacman.conf`, whose `file://` servers are
//! the root's paths), without network (in a network namespace of its
//! own). The sync databases are fetched again (`-yy`) only when a
//! Repository changed in the run, and fetched (`-y`) when the root has
//! none yet.

pub mod conf;
pub mod gnupg;
pub mod keyring;
pub mod vercmp;

use std::process::Command;

use super::command::{self, tool};
use super::package::PackageManager;
use super::{Examined, Failure};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{Ensure, PackageSpec};

/// pacman's databases, inside the root.
pub const DBPATH: &str = "/var/lib/pacman";

pub struct Pacman {
    root: Root,
}

impl Pacman {
    pub fn new(root: Root) -> Pacman {
        Pacman { root }
    }

    /// The installed version, or `None`. A root without a local database
    /// has nothing installed (and asking does not create one).
    ///
    /// Under `--root`, pacman is chrooted into it (`--sysroot`), as when
    /// it installs: it reads the root's pacman.conf (never the host's) and
    /// the database that names, and a link on the way to the database
    /// leads where it leads inside the root, never out of it.
    pub fn installed(&self, name: &str) -> Result<Option<String>, Failure> {
        let mut cmd = tool("pacman");
        if let Some(dir) = self.root.dir() {
            if self
                .root
                .lstat(&format!("{DBPATH}/local"))
                .ok()
                .flatten()
                .is_none()
            {
                return Ok(None);
            }
            // Chrooted, pacman logs its command line to the root's
            // pacman.log even for -Q: a directory cannot be opened as the
            // log, so reading writes nothing.
            cmd.arg("--sysroot").arg(dir).args(["--logfile", "/"]);
        }
        cmd.args(["-Q", "--"]).arg(name);
        let out = command::output(&mut cmd)?;
        if !out.status.success() {
            if String::from_utf8_lossy(&out.stderr).contains("was not found") {
                return Ok(None);
            }
            return Err(command::failed(&cmd, &out));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        Ok(stdout
            .lines()
            .find_map(|l| l.split_once(' ').filter(|(n, _)| *n == name))
            .map(|(_, v)| v.trim().to_owned()))
    }

    fn differences(&self, s: &PackageSpec) -> Result<Vec<Change>, Failure> {
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
                    && vercmp::vercmp(&have, want).is_ne()
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

    /// pacman for this machine: chrooted into the root, off the network.
    fn pacman(&self) -> Command {
        match self.root.dir() {
            Some(dir) => {
                let mut cmd = tool("unshare");
                cmd.args(["--net", "--", "pacman", "--sysroot"]).arg(dir);
                cmd
            }
            None => tool("pacman"),
        }
    }

    /// Whether the root has no sync database yet (pacman cannot install
    /// from a repository whose database it never fetched).
    fn no_sync_databases(&self) -> bool {
        self.root
            .list(&format!("{DBPATH}/sync"))
            .map_or(true, |names| names.is_empty())
    }

    /// One `pacman -S` for those to install or change, one `pacman -R`
    /// for those to remove, then each read back.
    pub fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure> {
        let (install, remove): (Vec<&PackageSpec>, Vec<&PackageSpec>) =
            specs.iter().partition(|s| s.ensure == Ensure::Present);
        if !install.is_empty() {
            // A changed repository's database is fetched again even when
            // pacman thinks its copy is as new (`-yy`: pacman compares
            // modification times to the second).
            let sync = if refresh {
                "-Syy"
            } else if self.no_sync_databases() {
                "-Sy"
            } else {
                "-S"
            };
            let mut cmd = self.pacman();
            cmd.args([sync, "--noconfirm", "--"])
                .args(install.iter().map(|s| s.name.as_str()));
            command::run(&mut cmd).map_err(|e| self.explain(e))?;
        }
        if !remove.is_empty() {
            let mut cmd = self.pacman();
            cmd.args(["-R", "--noconfirm", "--"])
                .args(remove.iter().map(|s| s.name.as_str()));
            command::run(&mut cmd)?;
        }
        super::package::read_back(
            "pacman",
            specs,
            |s| self.differences(s),
            " (pacman installs the version its repositories offer)",
        )
    }
}

/// What chrooted pacman needs to check a signature: libgpgme runs the
/// root's own gpg (asking the root's gpgconf where it is, when there is
/// one) and gives it the root's /dev/null.
const GPG_IN_ROOT: [&str; 2] = ["/usr/bin/gpg", "/dev/null"];

impl Pacman {
    /// A failed transaction, with what the root lacks when pacman could
    /// not check a signature for want of it.
    fn explain(&self, e: Failure) -> Failure {
        if self.root.dir().is_none() || !e.0.contains("Invalid crypto engine") {
            return e;
        }
        let missing: Vec<String> = GPG_IN_ROOT
            .iter()
            .filter(|p| self.root.lstat(p).ok().flatten().is_none())
            .map(|p| self.root.path(p).display().to_string())
            .collect();
        if missing.is_empty() {
            return e;
        }
        Failure::new(format!(
            "{}; pacman, chrooted into the root, checks signatures with the root's own gpg, which it could not run: {} missing (install gnupg in the root; /dev is mounted by arch-chroot)",
            e.0,
            missing.join(", ")
        ))
    }
}

impl PackageManager for Pacman {
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
