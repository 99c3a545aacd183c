//! One provider per resource type, behind traits so tests put fakes (and
//! failures) in their place.
//!
//! A provider observes a resource and lists what differs ([`Provider::examine`]),
//! then makes exactly those changes ([`Provider::converge`]). The engine
//! decides what runs when; providers never look at other resources.

pub mod command;
pub mod cron;
pub mod dnf;
pub mod dpkg;
pub mod exec;
pub mod fs;
pub mod health;
pub mod local_repo;
pub mod mount;
pub mod package;
pub mod pacman;
pub mod repository;
pub mod shadow;
pub mod sysctl;
pub mod systemd;
pub mod zypper;

use std::collections::BTreeSet;

use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{
    CronSpec, DirectorySpec, FileSpec, GroupSpec, MountSpec, PackageSpec, RepositorySpec,
    ServiceSpec, SymlinkSpec, SysctlSpec, UserSpec,
};

/// Why a resource could not be examined or changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failure(pub String);

impl Failure {
    pub fn new(message: impl Into<String>) -> Failure {
        Failure(message.into())
    }
}

/// What earlier resources of a noop run would have created, so that the
/// plan of a later one can count on it instead of failing (a file in a
/// directory that would be made, owned by a user who would be added).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub paths: BTreeSet<String>,
    pub users: BTreeSet<String>,
    pub groups: BTreeSet<String>,
}

/// What a provider is told about the run.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    pub noop: bool,
    /// Empty unless `noop`.
    pub pending: &'a Pending,
}

/// What examining a resource found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Examined {
    /// What differs, in the order it would be changed.
    pub changes: Vec<Change>,
    /// What is not managed here and why.
    pub notes: Vec<String>,
}

/// Whether a list of changes touches an attribute.
///
/// ```
/// use datum_apply::report::{Attribute, Change};
/// let changes = [Change::new(Attribute::Mode, "0644", "0600")];
/// assert!(datum_apply::provider::has(&changes, Attribute::Mode));
/// assert!(!datum_apply::provider::has(&[], Attribute::Ensure));
/// ```
pub fn has(changes: &[Change], attribute: Attribute) -> bool {
    changes.iter().any(|c| c.attribute == attribute)
}

/// Observes and converges one resource type.
pub trait Provider<S> {
    /// Observes the resource and says what differs from `spec`; changes nothing.
    fn examine(&self, spec: &S, cx: &Context<'_>) -> Result<Examined, Failure>;
    /// Makes the changes `examine` found.
    fn converge(&self, spec: &S, changes: &[Change], cx: &Context<'_>) -> Result<(), Failure>;
    /// Makes the changes `examine` found for several resources, in one
    /// step where the system allows it (a package manager's transaction,
    /// whose failure fails each resource in it); how each went, in the
    /// batch's order. One by one, unless a provider knows better.
    fn converge_batch(
        &self,
        batch: &[(&S, &[Change])],
        cx: &Context<'_>,
    ) -> Vec<Result<(), Failure>> {
        batch
            .iter()
            .map(|(spec, changes)| self.converge(spec, changes, cx))
            .collect()
    }
}

/// What a restart did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restarted {
    Yes,
    /// Nothing runs that could be restarted, so nothing runs the old
    /// configuration either (a root that is not booted); with why.
    NotRunning(String),
}

/// Services can also be restarted.
pub trait ServiceProvider: Provider<ServiceSpec> {
    fn restart(&self, spec: &ServiceSpec) -> Result<Restarted, Failure>;
}

/// The provider of every resource type.
pub struct Providers {
    pub file: Box<dyn Provider<FileSpec>>,
    pub directory: Box<dyn Provider<DirectorySpec>>,
    pub symlink: Box<dyn Provider<SymlinkSpec>>,
    pub package: Box<dyn Provider<PackageSpec>>,
    pub service: Box<dyn ServiceProvider>,
    pub user: Box<dyn Provider<UserSpec>>,
    pub group: Box<dyn Provider<GroupSpec>>,
    /// Commands: their guards, and running them.
    pub exec: exec::Execs,
    pub cron: Box<dyn Provider<CronSpec>>,
    pub mount: Box<dyn Provider<MountSpec>>,
    pub sysctl: Box<dyn Provider<SysctlSpec>>,
    pub repository: Box<dyn Provider<RepositorySpec>>,
}

impl Providers {
    /// The real providers for a machine: the filesystem, packages by the
    /// machine's own system (dpkg and apt, rpm and dnf), systemd, the shadow tools, and commands run on the
    /// machine (chrooted under `--root`), files in /etc/cron.d, /etc/fstab
    /// with mount(8), /etc/sysctl.d with /proc/sys, package sources in the
    /// package system's configuration (whose change refreshes its cache
    /// before the next package transaction).
    pub fn system(root: &Root) -> Providers {
        let stale = package::Stale::default();
        let zypper_changed = zypper::repository::Changed::default();
        Providers {
            file: Box::new(fs::Files::new(root.clone())),
            directory: Box::new(fs::Directories::new(root.clone())),
            symlink: Box::new(fs::Symlinks::new(root.clone())),
            package: Box::new(
                package::Packages::new(root.clone())
                    .with_stale(stale.clone())
                    .with_zypper_changed(zypper_changed.clone()),
            ),
            service: Box::new(systemd::Systemd::new(root.clone())),
            user: Box::new(shadow::Users::new(root.clone())),
            group: Box::new(shadow::Groups::new(root.clone())),
            exec: exec::Execs::system(root),
            cron: Box::new(cron::Crons::new(root.clone())),
            mount: Box::new(mount::Mounts::new(root.clone())),
            sysctl: Box::new(sysctl::Sysctls::new(root.clone())),
            repository: Box::new(
                repository::Repositories::new(root.clone(), stale)
                    .with_zypper_changed(zypper_changed),
            ),
        }
    }
}
