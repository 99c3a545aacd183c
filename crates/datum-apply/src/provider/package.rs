//! Packages: which package system manages them.
//!
//! A Package's `provider` names its system; without one, the root's
//! os-release chooses ([`choose`]): its `ID`, then each `ID_LIKE` in
//! order, by family (debian and ubuntu: apt; rhel, centos, fedora, rocky,
//! almalinux and amzn: dnf; arch: pacman; suse, opensuse, sles and sled:
//! zypper). When neither names a family Datum knows, or there is no
//! os-release, the one package database the root holds decides
//! (`/var/lib/dpkg/status`, `/var/lib/rpm`, `/var/lib/pacman/local`); an
//! rpm database is dnf's or zypper's by the configuration beside it
//! (`/etc/yum.repos.d` or `/etc/dnf`; `/etc/zypp`), and both or neither
//! is no answer. Each system is a provider of its own ([`super::dpkg`],
//! [`super::dnf`], [`super::pacman`], [`super::zypper`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use super::dnf::Dnf;
use super::dpkg::Dpkg;
use super::pacman::Pacman;
use super::zypper::Zypper;
use super::{Context, Examined, Failure, Provider};
use crate::facts::OsRelease;
use crate::report::Change;
use crate::root::Root;
use crate::spec::{Ensure, PackageSpec, PackageSystem};

/// The system an os-release `ID` (or one of its `ID_LIKE`) belongs to.
pub fn family(id: &str) -> Option<PackageSystem> {
    match id {
        "debian" | "ubuntu" => Some(PackageSystem::Apt),
        "rhel" | "centos" | "fedora" | "rocky" | "almalinux" | "amzn" => Some(PackageSystem::Dnf),
        "arch" => Some(PackageSystem::Pacman),
        "suse" | "opensuse" | "opensuse-leap" | "opensuse-tumbleweed" | "sles" | "sled" => {
            Some(PackageSystem::Zypper)
        }
        _ => None,
    }
}

/// The system an os-release names: its `ID`'s, else the first of its
/// `ID_LIKE` that names one.
pub fn choose(os: &OsRelease) -> Option<PackageSystem> {
    std::iter::once(&os.id)
        .chain(&os.id_like)
        .find_map(|id| family(id))
}

/// The package database each system keeps, inside the root, and the
/// configuration that tells it from another system's (dnf and zypper
/// share rpm's).
const DATABASES: [(PackageSystem, &str, &[&str]); 4] = [
    (PackageSystem::Apt, "/var/lib/dpkg/status", &[]),
    (
        PackageSystem::Dnf,
        super::dnf::DBPATH,
        &[super::dnf::REPOS_DIR, "/etc/dnf"],
    ),
    (PackageSystem::Pacman, "/var/lib/pacman/local", &[]),
    (PackageSystem::Zypper, super::dnf::DBPATH, &["/etc/zypp"]),
];

/// The systems whose database the root holds: an rpm database is dnf's,
/// zypper's, or both's, by the configuration beside it; dnf's when there
/// is none.
fn databases(root: &Root) -> Vec<PackageSystem> {
    let exists = |path: &str| root.lstat(path).is_ok_and(|m| m.is_some());
    let mut found: Vec<PackageSystem> = DATABASES
        .iter()
        .filter(|(_, db, marks)| {
            exists(db) && (marks.is_empty() || marks.iter().any(|m| exists(m)))
        })
        .map(|&(system, _, _)| system)
        .collect();
    let rpm = [PackageSystem::Dnf, PackageSystem::Zypper];
    if exists(super::dnf::DBPATH) && !found.iter().any(|s| rpm.contains(s)) {
        found.push(PackageSystem::Dnf);
        found.sort();
    }
    found
}

/// The system of the machine at `root`, or why there is none.
pub fn detect(root: &Root) -> Result<PackageSystem, String> {
    let os = crate::facts::os_release(root);
    if let Ok((os, _)) = &os
        && let Some(system) = choose(os)
    {
        return Ok(system);
    }
    let found = databases(root);
    if let [one] = found[..] {
        return Ok(one);
    }
    let why = match os {
        Ok((os, path)) => format!(
            "{} says ID={}{}, which is no family Datum knows (debian, ubuntu: apt; rhel, centos, fedora, rocky, almalinux, amzn: dnf; arch: pacman; suse, opensuse, sles, sled: zypper)",
            root.path(&path).display(),
            os.id,
            if os.id_like.is_empty() {
                String::new()
            } else {
                format!(" ID_LIKE=\"{}\"", os.id_like.join(" "))
            }
        ),
        Err(why) => why,
    };
    let databases = if found.is_empty() {
        "no package database".to_owned()
    } else {
        format!(
            "databases of {}",
            found
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(" and ")
        )
    };
    Err(format!(
        "cannot tell which package system manages this machine: {why}, and it holds {databases}; name one with `provider:` (apt, dnf, pacman, zypper)"
    ))
}

/// One package system: what differs for a package, and the changes for
/// several made in one transaction per verb. Each is a [`Provider`] of
/// Packages through it (examining one, converging one as a batch of one).
pub trait PackageManager {
    /// What differs for one package, with notes to go with a change.
    fn examine_package(&self, s: &PackageSpec) -> Result<Examined, Failure>;
    /// Makes the changes for several packages (refreshing the system's
    /// cache first with `refresh`), then reads each back.
    fn converge_all(&self, specs: &[&PackageSpec], refresh: bool) -> Result<(), Failure>;
}

impl<M: PackageManager> Provider<PackageSpec> for M {
    fn examine(&self, s: &PackageSpec, _cx: &Context<'_>) -> Result<Examined, Failure> {
        self.examine_package(s)
    }

    fn converge(&self, s: &PackageSpec, _: &[Change], _cx: &Context<'_>) -> Result<(), Failure> {
        self.converge_all(&[s], false)
    }
}

/// After a transaction by `tool`, each package read back with
/// `differences`: the first still differing is a failure naming it, what
/// it is and what was wanted (`why` said after).
pub fn read_back(
    tool: &str,
    specs: &[&PackageSpec],
    differences: impl Fn(&PackageSpec) -> Result<Vec<Change>, Failure>,
    why: &str,
) -> Result<(), Failure> {
    for s in specs {
        if let Some(c) = differences(s)?.first() {
            return Err(Failure::new(format!(
                "{tool} finished, but {} is still {} where {} was wanted{why}",
                s.name,
                c.from.as_deref().unwrap_or("absent"),
                c.to.as_deref().unwrap_or("unset")
            )));
        }
    }
    Ok(())
}

/// The package systems whose sources changed in this run: the next
/// transaction of each refreshes its cache first (apt-get update on the
/// running system, dnf's `--refresh`), then clears the mark. Shared by the
/// Repository provider, which sets it, and the Package provider.
pub type Stale = Arc<Mutex<BTreeSet<PackageSystem>>>;

/// Every package system, each resource handed to its own.
pub struct Packages {
    root: Root,
    apt: Dpkg,
    dnf: Dnf,
    pacman: Pacman,
    zypper: Zypper,
    detected: OnceLock<Result<PackageSystem, String>>,
    stale: Stale,
}

impl Packages {
    pub fn new(root: Root) -> Packages {
        Packages {
            apt: Dpkg::new(root.clone()),
            dnf: Dnf::new(root.clone()),
            pacman: Pacman::new(root.clone()),
            zypper: Zypper::new(root.clone()),
            root,
            detected: OnceLock::new(),
            stale: Stale::default(),
        }
    }

    /// Told by `changed` which zypper Repositories changed.
    pub fn with_zypper_changed(mut self, changed: super::zypper::repository::Changed) -> Packages {
        self.zypper = Zypper::new(self.root.clone()).with_changed(changed);
        self
    }

    /// Told by `stale` which caches a changed Repository left stale.
    pub fn with_stale(mut self, stale: Stale) -> Packages {
        self.stale = stale;
        self
    }

    /// Whether `system`'s cache is to be refreshed before its next
    /// transaction.
    fn is_stale(&self, system: PackageSystem) -> bool {
        self.stale
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&system)
    }

    fn refreshed(&self, system: PackageSystem) {
        self.stale
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&system);
    }

    /// Converges with the system's provider, refreshing its cache first
    /// when a Repository changed.
    fn converge_with(
        &self,
        system: PackageSystem,
        part: &[(&PackageSpec, &[Change])],
    ) -> Vec<Result<(), Failure>> {
        let refresh = self.is_stale(system);
        let specs: Vec<&PackageSpec> = part.iter().map(|(s, _)| *s).collect();
        let done = vec![self.manager(system).converge_all(&specs, refresh); part.len()];
        // zypper refreshes only before an install (see super::zypper).
        let refreshed = refresh
            && (system != PackageSystem::Zypper
                || part.iter().any(|(s, _)| s.ensure == Ensure::Present));
        if refreshed && done.iter().all(Result::is_ok) {
            self.refreshed(system);
        }
        done
    }

    /// The system that manages `s`: its `provider`, else the machine's.
    pub fn system(&self, s: &PackageSpec) -> Result<PackageSystem, Failure> {
        match s.provider {
            Some(p) => Ok(p),
            None => self
                .detected
                .get_or_init(|| detect(&self.root))
                .clone()
                .map_err(Failure::new),
        }
    }

    /// The provider of `system`.
    fn manager(&self, system: PackageSystem) -> &dyn PackageManager {
        match system {
            PackageSystem::Apt => &self.apt,
            PackageSystem::Dnf => &self.dnf,
            PackageSystem::Pacman => &self.pacman,
            PackageSystem::Zypper => &self.zypper,
        }
    }
}

impl Provider<PackageSpec> for Packages {
    fn examine(&self, s: &PackageSpec, _cx: &Context<'_>) -> Result<Examined, Failure> {
        self.manager(self.system(s)?).examine_package(s)
    }

    fn converge(
        &self,
        s: &PackageSpec,
        changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        let system = self.system(s)?;
        self.converge_with(system, &[(s, changes)])
            .pop()
            .unwrap_or(Ok(()))
    }

    /// Each system's share of the batch in one go: one transaction per
    /// verb (install, remove), whose failure fails each package in it.
    fn converge_batch(
        &self,
        batch: &[(&PackageSpec, &[Change])],
        _cx: &Context<'_>,
    ) -> Vec<Result<(), Failure>> {
        let systems: Vec<Result<PackageSystem, Failure>> =
            batch.iter().map(|(s, _)| self.system(s)).collect();
        let mut results: Vec<Result<(), Failure>> = systems
            .iter()
            .map(|s| s.as_ref().map(drop).map_err(Clone::clone))
            .collect();
        for system in PackageSystem::ALL {
            let mine: Vec<usize> = (0..batch.len())
                .filter(|&k| systems[k].as_ref().is_ok_and(|&p| p == system))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let part: Vec<(&PackageSpec, &[Change])> = mine.iter().map(|&k| batch[k]).collect();
            let done = self.converge_with(system, &part);
            for (k, r) in mine.into_iter().zip(done) {
                results[k] = r;
            }
        }
        results
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(id: &str, like: &[&str]) -> OsRelease {
        OsRelease {
            id: id.into(),
            id_like: like.iter().map(|s| (*s).into()).collect(),
            ..OsRelease::default()
        }
    }

    #[test]
    fn the_family_comes_from_id_then_id_like() {
        assert_eq!(choose(&os("debian", &[])), Some(PackageSystem::Apt));
        assert_eq!(choose(&os("ubuntu", &["debian"])), Some(PackageSystem::Apt));
        assert_eq!(
            choose(&os("linuxmint", &["ubuntu", "debian"])),
            Some(PackageSystem::Apt)
        );
        for id in ["rhel", "centos", "fedora", "rocky", "almalinux", "amzn"] {
            assert_eq!(choose(&os(id, &[])), Some(PackageSystem::Dnf), "{id}");
        }
        assert_eq!(choose(&os("ol", &["fedora"])), Some(PackageSystem::Dnf));
        assert_eq!(choose(&os("arch", &[])), Some(PackageSystem::Pacman));
        assert_eq!(
            choose(&os("endeavouros", &["arch"])),
            Some(PackageSystem::Pacman)
        );
        assert_eq!(choose(&os("gentoo", &[])), None);
        for id in ["opensuse-leap", "opensuse-tumbleweed", "sles", "sled"] {
            assert_eq!(
                choose(&os(id, &["suse"])),
                Some(PackageSystem::Zypper),
                "{id}"
            );
            assert_eq!(choose(&os(id, &[])), Some(PackageSystem::Zypper), "{id}");
        }
        assert_eq!(
            choose(&os(
                "opensuse-microos",
                &["suse", "opensuse", "opensuse-tumbleweed"]
            )),
            Some(PackageSystem::Zypper)
        );
        assert_eq!(
            choose(&os("gecko", &["opensuse"])),
            Some(PackageSystem::Zypper)
        );
    }

    #[test]
    fn an_rpm_database_is_zyppers_beside_zypps_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        std::fs::create_dir_all(dir.path().join("var/lib/rpm")).unwrap();
        std::fs::create_dir_all(dir.path().join("etc/zypp/repos.d")).unwrap();
        assert_eq!(detect(&root), Ok(PackageSystem::Zypper));
        std::fs::create_dir_all(dir.path().join("etc/yum.repos.d")).unwrap();
        let why = detect(&root).unwrap_err();
        assert!(why.contains("databases of dnf and zypper"), "{why}");
        assert!(why.contains("(apt, dnf, pacman, zypper)"), "{why}");
        std::fs::write(dir.path().join("etc/os-release"), "ID=gentoo\n").unwrap();
        let why = detect(&root).unwrap_err();
        assert!(why.contains("suse, opensuse, sles, sled: zypper"), "{why}");
        // os-release decides, whatever the root holds.
        std::fs::write(
            dir.path().join("etc/os-release"),
            "ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n",
        )
        .unwrap();
        assert_eq!(detect(&root), Ok(PackageSystem::Zypper));
        std::fs::write(dir.path().join("etc/os-release"), "ID=fedora\n").unwrap();
        assert_eq!(detect(&root), Ok(PackageSystem::Dnf));
    }

    #[test]
    fn the_manifests_words_are_the_systems() {
        let words: Vec<&str> = PackageSystem::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(words, datum_core::schema::PACKAGE_SYSTEMS);
    }

    #[test]
    fn without_a_known_os_release_the_one_database_decides() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        let why = detect(&root).unwrap_err();
        assert!(
            why.contains("no os-release") && why.contains("no package database"),
            "{why}"
        );
        std::fs::create_dir_all(dir.path().join("var/lib/rpm")).unwrap();
        assert_eq!(detect(&root), Ok(PackageSystem::Dnf));
        std::fs::create_dir_all(dir.path().join("var/lib/dpkg")).unwrap();
        std::fs::write(dir.path().join("var/lib/dpkg/status"), "").unwrap();
        let why = detect(&root).unwrap_err();
        assert!(why.contains("databases of apt and dnf"), "{why}");
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("etc/os-release"), "ID=gentoo\n").unwrap();
        let why = detect(&root).unwrap_err();
        assert!(why.contains("says ID=gentoo, which is no family"), "{why}");
        std::fs::write(
            dir.path().join("etc/os-release"),
            "ID=rocky\nID_LIKE=\"rhel centos fedora\"\n",
        )
        .unwrap();
        assert_eq!(detect(&root), Ok(PackageSystem::Dnf));
    }
}
