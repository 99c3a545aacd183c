//! The zypper provider on an openSUSE-like root, with the real zypper: the
//! mark a changed Repository leaves (the system's, and the Repository's
//! name: Datum's `datum-local.repo`, alias `local`) is settled only by a
//! transaction that refreshed, and zypper refreshes only before an install.

use std::fs;
use std::process::Command;

use datum_apply::provider::package::{Packages, Stale};
use datum_apply::provider::zypper::repository::Changed;
use datum_apply::provider::{Context, Pending, Provider};
use datum_apply::root::Root;
use datum_apply::spec::{Ensure, PackageSpec, PackageSystem};
use datum_testkit::{packages, tools};

static PENDING: Pending = Pending {
    paths: std::collections::BTreeSet::new(),
    users: std::collections::BTreeSet::new(),
    groups: std::collections::BTreeSet::new(),
};

const CX: Context<'static> = Context {
    noop: false,
    pending: &PENDING,
};

fn spec(name: &str, ensure: Ensure, version: Option<&str>) -> PackageSpec {
    PackageSpec {
        name: name.into(),
        ensure,
        version: version.map(str::to_owned),
        provider: None,
    }
}

#[test]
fn a_removal_leaves_the_refresh_a_changed_repository_owes_to_the_next_install() {
    if !tools::installed(&[
        "rpm",
        "rpmbuild",
        "createrepo_c",
        "zypper",
        "unshare",
        "dumpsolv",
    ]) || !tools::root()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    packages::opensuse(&root);
    // A package of the root's own (zypper's rpmdb2solv fails on a
    // database left without packages).
    let base = dir.path().join("base");
    packages::rpm(&base, "base-datum", None, "1.0", "1");
    let out = Command::new("rpm")
        .arg("--root")
        .arg(&root)
        .args(["--dbpath", "/var/lib/rpm", "-i", "--nosignature"])
        .arg(base.join("base-datum-1.0-1.noarch.rpm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    packages::rpm(&repo, "tools-datum", None, "1.0", "1");
    packages::createrepo(&repo);
    fs::write(
        root.join("etc/zypp/repos.d/datum-local.repo"),
        "[local]\nbaseurl=file:///srv/repo\nenabled=1\nautorefresh=0\ngpgcheck=0\n",
    )
    .unwrap();
    let stale = Stale::default();
    let changed = Changed::default();
    let p = Packages::new(Root::at(&root))
        .with_stale(stale.clone())
        .with_zypper_changed(changed.clone());
    let hello = spec("hello-datum", Ensure::Present, None);
    let tools_present = spec("tools-datum", Ensure::Present, None);
    p.converge_batch(&[(&hello, &[]), (&tools_present, &[])], &CX)
        .into_iter()
        .for_each(|r| r.unwrap());

    // A new version, and the mark of a Repository that changed.
    packages::rpm(&repo, "hello-datum", None, "2.0", "1");
    fs::remove_dir_all(repo.join("repodata")).unwrap();
    packages::createrepo(&repo);
    stale.lock().unwrap().insert(PackageSystem::Zypper);
    changed.lock().unwrap().insert("local".to_owned());
    // Removing refreshes nothing, and leaves the mark.
    p.converge(&spec("tools-datum", Ensure::Absent, None), &[], &CX)
        .unwrap();
    assert!(stale.lock().unwrap().contains(&PackageSystem::Zypper));
    assert!(changed.lock().unwrap().contains("local"));
    // The next install refreshes first, finds 2.0-1, and settles it.
    p.converge(
        &spec("hello-datum", Ensure::Present, Some("2.0-1")),
        &[],
        &CX,
    )
    .unwrap();
    assert!(stale.lock().unwrap().is_empty());
    assert!(changed.lock().unwrap().is_empty());
    let installed = packages::rpm_query(&root, &["hello-datum"]);
    assert!(installed.starts_with("hello-datum-2.0-1 "), "{installed}");
}

/// zypper, as dnf, reads an argument ending in `.rpm` as the path of a
/// package file on this machine (relative to where it runs): such a name is
/// refused before zypper is asked anything.
#[test]
fn a_package_named_like_an_rpm_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let zypper = datum_apply::provider::zypper::Zypper::new(Root::at(tmp.path()));
    let named = spec("hello-datum-1.0-1.noarch.rpm", Ensure::Present, None);
    let err = zypper.examine(&named, &CX).unwrap_err();
    assert!(err.0.contains("ends with `.rpm`"), "{}", err.0);
    let versioned = spec("hello", Ensure::Present, Some("1.0-1.noarch.rpm"));
    assert!(zypper.examine(&versioned, &CX).is_err());
}
