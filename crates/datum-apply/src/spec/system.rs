//! The specs of the types that write a line into a system file and act on
//! the running system: Cron, Mount and Sysctl; a Repository; and the
//! package systems a Package or a Repository names.

use datum_core::names::Rule;
use datum_core::schema::{Field, Value};

use super::{Ensure, Fields};

/// A cron entry: the file `/etc/cron.d/datum-NAME`, one line with its
/// environment above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSpec {
    /// The title, which names the file.
    pub name: String,
    pub ensure: Ensure,
    pub schedule: String,
    pub user: String,
    pub command: String,
    /// `NAME=value` lines above the entry, in the order written.
    pub environment: Vec<(String, String)>,
}

/// Where Cron files live.
pub const CRON_DIR: &str = "/etc/cron.d";

impl CronSpec {
    /// The file the entry is written to.
    pub fn path(&self) -> String {
        cron_path(&self.name)
    }

    /// The file's text: who wrote it, the environment, the entry.
    pub fn content(&self) -> String {
        let mut text = format!(
            "# Cron[{}], managed by Datum: changes here are overwritten.\n",
            self.name
        );
        for (name, value) in &self.environment {
            text.push_str(&format!("{name}={value}\n"));
        }
        text.push_str(&format!(
            "{} {} {}\n",
            self.schedule, self.user, self.command
        ));
        text
    }
}

/// The file of the Cron titled `name`.
pub fn cron_path(name: &str) -> String {
    format!("{CRON_DIR}/datum-{name}")
}

/// What a Mount should be.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MountState {
    /// In /etc/fstab and mounted (on the running system).
    Mounted,
    /// In /etc/fstab, not mounted.
    Unmounted,
    /// Neither.
    Absent,
}

impl MountState {
    pub fn word(self) -> &'static str {
        match self {
            MountState::Mounted => "mounted",
            MountState::Unmounted => "unmounted",
            MountState::Absent => "absent",
        }
    }
}

/// A filesystem: its line in `/etc/fstab`, and whether it is mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountSpec {
    /// The mount point.
    pub path: String,
    pub ensure: MountState,
    pub device: String,
    pub fstype: String,
    /// `defaults` when the manifest gives none.
    pub options: String,
    pub pass: u8,
}

/// A kernel parameter: its line in `/etc/sysctl.d/90-datum.conf`, and its
/// value on the running kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysctlSpec {
    /// The key, as written (`net.ipv4.ip_forward`).
    pub name: String,
    pub ensure: Ensure,
    pub value: String,
}

impl Fields<'_> {
    /// A name a file or a path below /proc/sys is made of, held to its
    /// rule again (a bundle's manifest is not always `render`'s).
    fn checked(&mut self, rule: Rule, what: &str, name: &str) {
        if let Some(why) = rule.check(name) {
            self.problems
                .push(format!("{what} `{name}` is not {}: {why}", rule.what()));
        }
    }

    pub(super) fn cron(&mut self) -> CronSpec {
        let title = self.r.id().title.to_string();
        self.checked(Rule::CronName, "the title", &title);
        let env = self.list(Field::Environment).unwrap_or_default();
        CronSpec {
            name: title,
            ensure: self.ensure(),
            schedule: self.text(Field::Schedule).unwrap_or_default(),
            user: self.text(Field::User).unwrap_or_default(),
            command: self.text(Field::Command).unwrap_or_default(),
            environment: env
                .into_iter()
                .map(|e| match e.split_once('=') {
                    Some((n, v)) => (n.to_owned(), v.to_owned()),
                    None => (e, String::new()),
                })
                .collect(),
        }
    }

    pub(super) fn mount(&mut self) -> MountSpec {
        MountSpec {
            path: self.text(Field::Path).unwrap_or_default(),
            ensure: match self.r.str(Field::Ensure) {
                Some("unmounted") => MountState::Unmounted,
                Some("absent") => MountState::Absent,
                _ => MountState::Mounted,
            },
            device: self.text(Field::Device).unwrap_or_default(),
            fstype: self.text(Field::Fstype).unwrap_or_default(),
            options: self
                .text(Field::Options)
                .unwrap_or_else(|| "defaults".to_owned()),
            pass: match self.r.value(Field::Pass) {
                Some(Value::Int(p)) => u8::try_from(*p).unwrap_or(0),
                _ => 0,
            },
        }
    }

    pub(super) fn repository(&mut self) -> RepositorySpec {
        let name = self.r.name().to_owned();
        self.checked(Rule::RepoName, "the name", &name);
        let url = self.text(Field::Url).unwrap_or_default();
        if !url.is_empty() {
            self.checked(Rule::Url, "the url", &url);
        }
        RepositorySpec {
            name,
            ensure: self.ensure(),
            provider: self.r.str(Field::Provider).and_then(PackageSystem::parse),
            url,
            suites: self.list(Field::Suites).unwrap_or_default(),
            components: self.list(Field::Components).unwrap_or_default(),
            key: self.text(Field::Key),
        }
    }

    pub(super) fn sysctl(&mut self) -> SysctlSpec {
        let name = self.r.name().to_owned();
        self.checked(Rule::SysctlKey, "the key", &name);
        SysctlSpec {
            name,
            ensure: self.ensure(),
            value: self.text(Field::Value).unwrap_or_default(),
        }
    }
}

/// A package source: a file in the package system's configuration, and
/// its signing key beside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepositorySpec {
    /// Its files' names (`datum-NAME`), and its id for dnf, pacman and zypper.
    pub name: String,
    pub ensure: Ensure,
    /// The package system, when the manifest names one; otherwise the
    /// machine's.
    pub provider: Option<PackageSystem>,
    pub url: String,
    /// apt's suites and components.
    pub suites: Vec<String>,
    pub components: Vec<String>,
    /// The signing key, ASCII-armored.
    pub key: Option<String>,
}

/// A package system: its tools and its own version rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PackageSystem {
    /// dpkg, with apt on the running system.
    Apt,
    /// rpm, with dnf.
    Dnf,
    /// pacman.
    Pacman,
    /// rpm, with zypper (the SUSE family).
    Zypper,
}

impl PackageSystem {
    pub const ALL: [PackageSystem; 4] = [
        PackageSystem::Apt,
        PackageSystem::Dnf,
        PackageSystem::Pacman,
        PackageSystem::Zypper,
    ];

    /// The word a manifest's `provider` uses.
    pub fn name(self) -> &'static str {
        match self {
            PackageSystem::Apt => "apt",
            PackageSystem::Dnf => "dnf",
            PackageSystem::Pacman => "pacman",
            PackageSystem::Zypper => "zypper",
        }
    }

    pub fn parse(s: &str) -> Option<PackageSystem> {
        PackageSystem::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl std::fmt::Display for PackageSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
