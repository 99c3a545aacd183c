//! The package systems against their real tools, in temporary roots: rpm
//! and dnf in a Rocky-like root, from a local repository of rpms built
//! here; rpm's version order checked against rpm's own.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use datum_apply::provider::dnf::vercmp::rpmvercmp;
use datum_apply::provider::package::Packages;
use datum_apply::provider::pacman::vercmp::vercmp;
use datum_apply::provider::{Context, Pending, Provider};
use datum_apply::report::{Attribute, Change};
use datum_apply::root::Root;
use datum_apply::spec::{Ensure, PackageSpec, PackageSystem};
use datum_testkit::{packages, tools};

static PENDING: Pending = Pending {
    paths: std::collections::BTreeSet::new(),
    users: std::collections::BTreeSet::new(),
    groups: std::collections::BTreeSet::new(),
};

fn cx(noop: bool) -> Context<'static> {
    Context {
        noop,
        pending: &PENDING,
    }
}

fn spec(name: &str, ensure: Ensure, version: Option<&str>) -> PackageSpec {
    PackageSpec {
        name: name.into(),
        ensure,
        version: version.map(str::to_owned),
        provider: None,
    }
}

/// Every file under `dir` with its size and modification time; not
/// sqlite's shared-memory index (`-shm`), which any reader of the rpm
/// database rewrites.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (u64, i128)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            let t = m
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as i128;
            if !e.file_name().to_string_lossy().ends_with("-shm") {
                out.insert(e.path(), (m.len(), t));
            }
        }
    }
    out
}

/// A Rocky-like root with a repository in its /srv/repo, configured in
/// its own /etc/yum.repos.d by the root's own path (`file:///srv/repo`).
fn rocky_with_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    packages::rocky(root);
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    packages::rpm(&repo, "hello-datum", None, "2.0", "1");
    packages::rpm(&repo, "other-datum", Some(1), "0.5", "3.el9");
    packages::createrepo(&repo);
    fs::write(
        root.join("etc/yum.repos.d/local.repo"),
        "[local]\nname=Local\nbaseurl=file:///srv/repo\ngpgcheck=0\n",
    )
    .unwrap();
    dir
}

#[test]
fn dnf_installs_upgrades_downgrades_and_removes_in_a_rocky_like_root() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let dir = rocky_with_repo();
    let root = dir.path();
    let p = Packages::new(Root::at(root));

    // --noop asks rpm, and leaves the root as it was: no database made.
    let before = tree(root);
    let hello = spec("hello-datum", Ensure::Present, Some("1.0-1"));
    let ex = p.examine(&hello, &cx(true)).unwrap();
    assert_eq!(
        ex.changes,
        [
            Change::new(Attribute::Ensure, "absent", "installed"),
            Change::set(Attribute::Version, "1.0-1")
        ]
    );
    assert_eq!(tree(root), before, "examining changed the root");
    assert!(!root.join("var/lib/rpm/rpmdb.sqlite").exists());

    // Two packages, one transaction (the same INSTALLTID).
    let other = spec("other-datum", Ensure::Present, None);
    for r in p.converge_batch(&[(&hello, &[]), (&other, &[])], &cx(false)) {
        r.unwrap();
    }
    let q = packages::rpm_query(root, &["hello-datum", "other-datum"]);
    let lines: Vec<(&str, &str)> = q.lines().map(|l| l.split_once(' ').unwrap()).collect();
    assert_eq!(lines[0].0, "hello-datum-1.0-1", "{q}");
    assert_eq!(lines[1].0, "other-datum-1:0.5-3.el9", "{q}");
    assert_eq!(lines[0].1, lines[1].1, "one transaction: {q}");
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "1.0-1\n"
    );
    // Installed: nothing left, and a second look changes nothing.
    let settled = tree(root);
    for s in [&hello, &other] {
        assert_eq!(p.examine(s, &cx(false)).unwrap().changes, []);
    }
    assert_eq!(tree(root), settled);
    // An epoch is compared when written, as dnf selects: `0:0.5-3.el9`
    // is not `1:0.5-3.el9`, and `0.5-3.el9` names it (any epoch).
    let wrong_epoch = spec("other-datum", Ensure::Present, Some("0:0.5-3.el9"));
    assert_eq!(
        p.examine(&wrong_epoch, &cx(false)).unwrap().changes,
        [Change::new(
            Attribute::Version,
            "1:0.5-3.el9",
            "0:0.5-3.el9"
        )]
    );
    for v in ["1:0.5", "0.5-3.el9", "0.5"] {
        let same = spec("other-datum", Ensure::Present, Some(v));
        assert_eq!(p.examine(&same, &cx(false)).unwrap().changes, [], "{v}");
    }

    // Upgrade, then back down, each by version.
    let up = spec("hello-datum", Ensure::Present, Some("2.0-1"));
    let ex = p.examine(&up, &cx(false)).unwrap();
    assert_eq!(
        ex.changes,
        [Change::new(Attribute::Version, "1.0-1", "2.0-1")]
    );
    p.converge(&up, &ex.changes, &cx(false)).unwrap();
    assert!(packages::rpm_query(root, &["hello-datum"]).starts_with("hello-datum-2.0-1 "));
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "2.0-1\n"
    );
    let down = spec("hello-datum", Ensure::Present, Some("1.0"));
    let ex = p.examine(&down, &cx(false)).unwrap();
    p.converge(&down, &ex.changes, &cx(false)).unwrap();
    assert!(packages::rpm_query(root, &["hello-datum"]).starts_with("hello-datum-1.0-1 "));

    // A version the repository does not have fails, and says where dnf looked.
    let missing = spec("hello-datum", Ensure::Present, Some("3.0-1"));
    let err = p.converge(&missing, &[], &cx(false)).unwrap_err().0;
    assert!(
        err.contains("under --root, dnf runs without network"),
        "{err}"
    );

    // Removed, both at once.
    let gone = [
        spec("hello-datum", Ensure::Absent, None),
        spec("other-datum", Ensure::Absent, None),
    ];
    assert_eq!(
        p.examine(&gone[0], &cx(false)).unwrap().changes,
        [Change::new(
            Attribute::Ensure,
            "installed (1.0-1)",
            "absent"
        )]
    );
    for r in p.converge_batch(&[(&gone[0], &[]), (&gone[1], &[])], &cx(false)) {
        r.unwrap();
    }
    assert_eq!(
        packages::rpm_query(root, &["hello-datum", "other-datum"]),
        "package hello-datum is not installed\npackage other-datum is not installed\n"
    );
    assert!(!root.join("usr/share/hello-datum/version").exists());
    for s in &gone {
        assert_eq!(p.examine(s, &cx(false)).unwrap().changes, []);
    }
}

/// The links a real Fedora or EL root holds, which stay inside it, are
/// followed: `/var/lib/rpm -> ../../usr/lib/sysimage/rpm` (Fedora 36 on),
/// `/etc/yum/vars -> ../dnf/vars` (EL 8 on), whose variables name the
/// repository's directory.
#[test]
fn links_that_stay_inside_a_fedora_like_root_are_followed() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    packages::rocky(&root);
    fs::remove_dir(root.join("var/lib/rpm")).unwrap();
    fs::create_dir_all(root.join("usr/lib/sysimage/rpm")).unwrap();
    std::os::unix::fs::symlink("../../usr/lib/sysimage/rpm", root.join("var/lib/rpm")).unwrap();
    fs::create_dir_all(root.join("etc/dnf/vars")).unwrap();
    fs::create_dir_all(root.join("etc/yum")).unwrap();
    std::os::unix::fs::symlink("../dnf/vars", root.join("etc/yum/vars")).unwrap();
    fs::write(root.join("etc/dnf/vars/stream"), "local\n").unwrap();
    let repo = root.join("srv/local");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    packages::createrepo(&repo);
    fs::write(
        root.join("etc/yum.repos.d/local.repo"),
        "[local]\nbaseurl=file:///srv/$stream\ngpgcheck=0\n",
    )
    .unwrap();
    let p = Packages::new(Root::at(&root));
    let hello = spec("hello-datum", Ensure::Present, None);
    p.converge(&hello, &[], &cx(false)).unwrap();
    assert!(root.join("usr/share/hello-datum/version").exists());
    assert!(
        fs::read_dir(root.join("usr/lib/sysimage/rpm"))
            .unwrap()
            .any(|e| e.unwrap().file_name() == "rpmdb.sqlite")
    );
    assert_eq!(p.examine(&hello, &cx(false)).unwrap().changes, []);
}

/// A `version` without an epoch, for a package that has one, is
/// installed by dnf (which matches any epoch) and then reads back as
/// converged: a second run changes nothing.
#[test]
fn a_version_without_its_epoch_converges() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let dir = rocky_with_repo();
    let root = dir.path();
    let p = Packages::new(Root::at(root));
    let other = spec("other-datum", Ensure::Present, Some("0.5-3.el9"));
    let ex = p.examine(&other, &cx(false)).unwrap();
    p.converge(&other, &ex.changes, &cx(false)).unwrap();
    assert!(
        packages::rpm_query(root, &["other-datum"]).starts_with("other-datum-1:0.5-3.el9 "),
        "{}",
        packages::rpm_query(root, &["other-datum"])
    );
    assert_eq!(p.examine(&other, &cx(false)).unwrap().changes, []);
    // Asking for epoch 0 explicitly is another version, which the
    // repository does not have.
    let zero = spec("other-datum", Ensure::Present, Some("0:0.5-3.el9"));
    let err = p.converge(&zero, &[], &cx(false)).unwrap_err().0;
    assert!(err.contains("other-datum-0:0.5-3.el9"), "{err}");
}

#[test]
fn dnf_refreshes_its_cache_only_after_a_repository_changed() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let dir = rocky_with_repo();
    let root = dir.path();
    let stale = datum_apply::provider::package::Stale::default();
    let p = Packages::new(Root::at(root)).with_stale(stale.clone());
    // A version the repository lacks fails: the error says whether the
    // metadata the install read (the location check's, under --root) was
    // refreshed first.
    let missing = spec("hello-datum", Ensure::Present, Some("9.0-1"));
    let err = p.converge(&missing, &[], &cx(false)).unwrap_err().0;
    assert!(
        err.ends_with("it read the metadata its location check loaded"),
        "{err}"
    );
    stale.lock().unwrap().insert(PackageSystem::Dnf);
    let err = p.converge(&missing, &[], &cx(false)).unwrap_err().0;
    assert!(err.ends_with("loaded, refreshed first"), "{err}");
    // Still owed after a failure; settled by the next transaction that
    // succeeds, which refreshes.
    assert!(stale.lock().unwrap().contains(&PackageSystem::Dnf));
    let hello = spec("hello-datum", Ensure::Present, None);
    p.converge(&hello, &[], &cx(false)).unwrap();
    assert!(stale.lock().unwrap().is_empty());
    let err = p.converge(&missing, &[], &cx(false)).unwrap_err().0;
    assert!(!err.contains("refreshed"), "{err}");
}

/// A Rocky-like root in `dir/root` whose one `.repo` file is `repo`, and
/// a real repository (of hello-datum) outside it, in `dir/host/repo`,
/// for the root's links to lead to.
fn root_with_planted_repo(dir: &Path, repo: &str) -> PathBuf {
    let root = dir.join("root");
    packages::rocky(&root);
    let host = dir.join("host/repo");
    packages::rpm(&host, "hello-datum", None, "1.0", "1");
    packages::createrepo(&host);
    fs::write(dir.join("host/secret"), "the host's\n").unwrap();
    fs::write(root.join("etc/yum.repos.d/planted.repo"), repo).unwrap();
    root
}

/// What dnf's configuration in a root names is the root's own: a link to
/// the host's files on the way to a repository, in it, at a key or a
/// certificate, is refused before dnf runs, as is any network source;
/// nothing is installed from the host's repository.
#[test]
fn a_repository_leading_out_of_the_root_is_refused() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let link = |to: &Path, at: &Path| {
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(to, at).unwrap();
    };
    let real_repo = |root: &Path| {
        packages::rpm(&root.join("srv/repo"), "other-datum", None, "1.0", "1");
        packages::createrepo(&root.join("srv/repo"));
    };
    type Plant = fn(&Path, &Path, &dyn Fn(&Path, &Path), &dyn Fn(&Path));
    let cases: [(&str, &str, Plant); 7] = [
        // The root's /srv is the host's directory.
        (
            "[r]\nbaseurl=file:///srv/repo\ngpgcheck=0\n",
            "root/srv is a symbolic link",
            |d, root, link, _| link(&d.join("host"), &root.join("srv")),
        ),
        // Past the deepest directory that exists before dnf expands its
        // variables: `$basearch` names a link to the host's repository.
        (
            "[r]\nbaseurl=file:///srv/r/$basearch\ngpgcheck=0\n",
            "is a symbolic link",
            |d, root, link, _| {
                let arch = std::env::consts::ARCH;
                let arch = if arch == "x86" { "i386" } else { arch };
                link(&d.join("host/repo"), &root.join("srv/r").join(arch));
            },
        ),
        // A relative link inside the repository's directory.
        (
            "[r]\nbaseurl=file:///srv/repo\ngpgcheck=0\n",
            "is a symbolic link inside the repository",
            |_, root, link, real| {
                real(root);
                fs::rename(root.join("srv/repo/repodata"), root.join("srv/repodata")).unwrap();
                link(
                    Path::new("../../../host/repo/repodata"),
                    &root.join("srv/repo/repodata"),
                );
            },
        ),
        (
            "[r]\nbaseurl=file:///srv/repo\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/k\n",
            "cannot read the key",
            |d, root, link, real| {
                real(root);
                link(&d.join("host/secret"), &root.join("etc/pki/rpm-gpg/k"));
            },
        ),
        (
            "[r]\nbaseurl=file:///srv/repo\ngpgcheck=0\nsslcacert=/etc/pki/ca.pem\n",
            "cannot read the file",
            |d, root, link, real| {
                real(root);
                link(&d.join("host/secret"), &root.join("etc/pki/ca.pem"));
            },
        ),
        (
            "[r]\nmirrorlist=https://mirrors.example.org/?repo=x\ngpgcheck=0\n",
            "line 2: `mirrorlist`: under --root nothing is downloaded",
            |_, _, _, _| {},
        ),
        (
            "[r]\nbaseurl=file:///srv/repo\nmetalink=file:///srv/metalink.xml\ngpgcheck=0\n",
            "line 3: `metalink`",
            |_, root, _, real| real(root),
        ),
    ];
    for (repo, want, plant) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = root_with_planted_repo(dir.path(), repo);
        plant(dir.path(), &root, &link, &real_repo);
        let p = Packages::new(Root::at(&root));
        let hello = spec("hello-datum", Ensure::Present, None);
        let err = p.converge(&hello, &[], &cx(false)).unwrap_err().0;
        assert!(err.contains(want), "{repo}: {err}");
        assert!(
            err.contains("etc/yum.repos.d/planted.repo"),
            "{repo}: {err}"
        );
        assert!(!err.contains("the host's"), "{repo}: {err}");
        assert!(
            !root.join("usr/share/hello-datum/version").exists(),
            "{repo}: installed from the host"
        );
    }
    // A link where dnf keeps its cache leads it out of the root too.
    let dir = tempfile::tempdir().unwrap();
    let root = root_with_planted_repo(dir.path(), "[r]\nbaseurl=file:///srv/repo\ngpgcheck=0\n");
    real_repo(&root);
    link(&dir.path().join("host"), &root.join("var/cache/dnf"));
    let p = Packages::new(Root::at(&root));
    let err = p
        .converge(&spec("other-datum", Ensure::Present, None), &[], &cx(false))
        .unwrap_err()
        .0;
    assert!(err.contains("var/cache/dnf is a symbolic link"), "{err}");
    // Without links, the same repository installs from the root.
    fs::remove_file(root.join("var/cache/dnf")).unwrap();
    p.converge(&spec("other-datum", Ensure::Present, None), &[], &cx(false))
        .unwrap();
    assert!(root.join("usr/share/other-datum/version").exists());
}

/// What dpkg started in the root, from the log it writes: one line per
/// run (`archives install`, `packages remove`).
fn dpkg_runs(root: &Path) -> Vec<String> {
    fs::read_to_string(root.join("var/log/dpkg.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| Some(l.split_once(" startup ")?.1.to_owned()))
        .collect()
}

/// apt's share of a run is one dpkg run per verb under --root: a package
/// and the one it depends on, given in the order that fails one at a
/// time, install together, and are removed together.
#[test]
fn apt_installs_and_removes_in_one_dpkg_run_each() {
    if !tools::installed(&["dpkg", "dpkg-deb"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    packages::debian(root);
    let archives = root.join("var/cache/apt/archives");
    packages::deb(&archives, "hello-datum", "1.0-1", None);
    packages::deb(
        &archives,
        "other-datum",
        "2.0-1",
        Some("hello-datum (>= 1.0)"),
    );
    let p = Packages::new(Root::at(root));
    let other = spec("other-datum", Ensure::Present, None);
    let hello = spec("hello-datum", Ensure::Present, Some("1.0-1"));
    for r in p.converge_batch(&[(&other, &[]), (&hello, &[])], &cx(false)) {
        r.unwrap();
    }
    assert_eq!(dpkg_runs(root), ["archives install"]);
    for (name, v) in [("hello-datum", "1.0-1"), ("other-datum", "2.0-1")] {
        assert_eq!(
            fs::read_to_string(root.join(format!("usr/share/{name}/version"))).unwrap(),
            format!("{v}\n")
        );
    }
    for s in [&other, &hello] {
        assert_eq!(p.examine(s, &cx(false)).unwrap().changes, []);
    }
    // Removed, the one depended on first.
    let gone = [
        spec("hello-datum", Ensure::Absent, None),
        spec("other-datum", Ensure::Absent, None),
    ];
    for r in p.converge_batch(&[(&gone[0], &[]), (&gone[1], &[])], &cx(false)) {
        r.unwrap();
    }
    assert_eq!(dpkg_runs(root), ["archives install", "packages remove"]);
    for s in &gone {
        assert_eq!(p.examine(s, &cx(false)).unwrap().changes, []);
    }
    // One that dpkg cannot install fails the run's apt share, each
    // package saying why.
    let lonely = spec("other-datum", Ensure::Present, None);
    let err = p.converge(&lonely, &[], &cx(false)).unwrap_err().0;
    assert!(err.contains("dependency problems"), "{err}");
    // An archive cache that is a link to the host's is not read.
    let host = tempfile::tempdir().unwrap();
    packages::deb(host.path(), "host-datum", "1.0-1", None);
    fs::remove_dir_all(&archives).unwrap();
    std::os::unix::fs::symlink(host.path(), &archives).unwrap();
    let from_host = spec("host-datum", Ensure::Present, None);
    let err = p.converge(&from_host, &[], &cx(false)).unwrap_err().0;
    assert!(err.contains("archives is a symbolic link"), "{err}");
    assert!(!root.join("usr/share/host-datum").exists());
}

/// Under --root apt reads the root's Repositories (`datum-*.sources`)
/// only through their own paths: a link to the host's repository, on the
/// way or inside it, a key that is a link, or an address on the network
/// is refused before apt runs, and nothing is installed.
#[test]
fn an_apt_source_leading_out_of_the_root_is_refused() {
    if !tools::installed(&[
        "apt-get",
        "dpkg",
        "dpkg-deb",
        "dpkg-scanpackages",
        "gpg",
        "unshare",
    ]) || !tools::root()
    {
        return;
    }
    type Plant = fn(&Path, &Path);
    let cases: [(&str, &str, Plant); 4] = [
        (
            "URIs: file:///srv/repo\nSigned-By: /etc/apt/keyrings/k.asc\n",
            "root/srv is a symbolic link",
            |d, root| std::os::unix::fs::symlink(d.join("host"), root.join("srv")).unwrap(),
        ),
        (
            "URIs: file:///srv/repo\nSigned-By: /etc/apt/keyrings/k.asc\n",
            "is a symbolic link inside the repository",
            |d, root| {
                fs::create_dir_all(root.join("srv/repo")).unwrap();
                std::os::unix::fs::symlink(
                    d.join("host/repo/InRelease"),
                    root.join("srv/repo/InRelease"),
                )
                .unwrap();
            },
        ),
        (
            "URIs: file:///srv/repo\nSigned-By: /etc/apt/keyrings/host.asc\n",
            "cannot read the key",
            |d, root| {
                fs::create_dir_all(root.join("srv/repo")).unwrap();
                std::os::unix::fs::symlink(
                    d.join("host/key.asc"),
                    root.join("etc/apt/keyrings/host.asc"),
                )
                .unwrap();
            },
        ),
        (
            "URIs: https://deb.example.org/debian\nSigned-By: /etc/apt/keyrings/k.asc\n",
            "line 3: `URIs`: `https://deb.example.org/debian` is not a file: address",
            |_, _| {},
        ),
    ];
    for (source, want, plant) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        packages::debian(&root);
        let host = dir.path().join("host/repo");
        packages::deb(&host, "hello-datum", "1.0-1", None);
        let key = packages::apt_repository(&host, &dir.path().join("gnupg"));
        fs::write(dir.path().join("host/key.asc"), &key).unwrap();
        fs::create_dir_all(root.join("etc/apt/sources.list.d")).unwrap();
        fs::create_dir_all(root.join("etc/apt/keyrings")).unwrap();
        fs::write(root.join("etc/apt/keyrings/k.asc"), &key).unwrap();
        fs::write(
            root.join("etc/apt/sources.list.d/datum-planted.sources"),
            format!("Types: deb\nSuites: ./\n{source}"),
        )
        .unwrap();
        plant(dir.path(), &root);
        let p = Packages::new(Root::at(&root));
        let hello = spec("hello-datum", Ensure::Present, None);
        let err = p.converge(&hello, &[], &cx(false)).unwrap_err().0;
        assert!(err.contains(want), "{source}: {err}");
        assert!(err.contains("datum-planted.sources"), "{source}: {err}");
        assert!(!root.join("usr/share/hello-datum").exists(), "{source}");
    }
}

const ALPHABET: &[u8] = b"0012019aAbzZ.._+~^";

/// rpm's version order, against rpm's own (its Lua `rpm.vercmp`), over
/// versions generated from the characters that matter to it.
#[test]
fn rpmvercmp_agrees_with_rpm_over_generated_versions() {
    if !tools::installed(&["rpm"]) {
        return;
    }

    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }
    fn word(seed: &mut u64) -> String {
        let len = 1 + next(seed) % 7;
        (0..len)
            .map(|_| ALPHABET[(next(seed) % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
    let mut pairs = Vec::new();
    while pairs.len() < 3000 {
        let a = word(&mut seed);
        // Half the pairs share a prefix, where the order is decided late.
        let b = if next(&mut seed).is_multiple_of(2) {
            format!("{}{}", &a[..a.len() / 2], word(&mut seed))
        } else {
            word(&mut seed)
        };
        pairs.push((a, b));
    }
    let script: String = pairs
        .iter()
        // rpm's print adds no line break: each result ends with a comma.
        .map(|(a, b)| format!("print(rpm.vercmp('{a}','{b}') .. ',')\n"))
        .collect();
    let out = Command::new("rpm")
        .arg("--eval")
        .arg(format!("%{{lua:\n{script}}}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<i32> = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split_terminator(',')
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(theirs.len(), pairs.len());
    let mut disagree = Vec::new();
    for ((a, b), want) in pairs.iter().zip(theirs) {
        let ours = rpmvercmp(a, b) as i32;
        if ours != want.signum() {
            disagree.push(format!("{a} vs {b}: rpm {want}, ours {ours}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn pacman_installs_upgrades_and_removes_in_an_arch_like_root() {
    if !tools::installed(&["pacman", "repo-add", "bsdtar", "unshare"]) || !tools::root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    packages::arch(root, "datumtest");
    let repo = root.join("srv/datumtest");
    packages::pacman_package(&repo, "hello-datum", "1.0-1");
    packages::pacman_package(&repo, "other-datum", "1:0.5-3");
    packages::repo_add(&repo, "datumtest");
    let stale = datum_apply::provider::package::Stale::default();
    let p = Packages::new(Root::at(root)).with_stale(stale.clone());

    // --noop asks pacman and leaves the root alone: no database made.
    let before = tree(root);
    let hello = spec("hello-datum", Ensure::Present, Some("1.0-1"));
    assert_eq!(
        p.examine(&hello, &cx(true)).unwrap().changes,
        [
            Change::new(Attribute::Ensure, "absent", "installed"),
            Change::set(Attribute::Version, "1.0-1")
        ]
    );
    assert_eq!(tree(root), before);

    // Two packages, one transaction.
    let other = spec("other-datum", Ensure::Present, None);
    for r in p.converge_batch(&[(&hello, &[]), (&other, &[])], &cx(false)) {
        r.unwrap();
    }
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "1.0-1\n"
    );
    let settled = tree(root);
    for s in [&hello, &other] {
        assert_eq!(p.examine(s, &cx(false)).unwrap().changes, []);
    }
    assert_eq!(tree(root), settled);
    // The epoch counts, as pacman's vercmp says.
    let same = spec("other-datum", Ensure::Present, Some("1:0.5-3"));
    assert_eq!(p.examine(&same, &cx(false)).unwrap().changes, []);

    // A new version in the repository, and a Repository change that
    // makes the next transaction refresh the sync database.
    packages::pacman_package(&repo, "hello-datum", "2.0-1");
    fs::remove_file(repo.join("hello-datum-1.0-1-any.pkg.tar.zst")).unwrap();
    packages::repo_add(&repo, "datumtest");
    let up = spec("hello-datum", Ensure::Present, Some("2.0-1"));
    let ex = p.examine(&up, &cx(false)).unwrap();
    assert_eq!(
        ex.changes,
        [Change::new(Attribute::Version, "1.0-1", "2.0-1")]
    );
    // Without a refresh pacman still sees the old database.
    let err = p.converge(&up, &ex.changes, &cx(false)).unwrap_err().0;
    assert!(
        err.contains("pacman installs the version its repositories offer"),
        "{err}"
    );
    stale.lock().unwrap().insert(PackageSystem::Pacman);
    p.converge(&up, &ex.changes, &cx(false)).unwrap();
    assert!(stale.lock().unwrap().is_empty());
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "2.0-1\n"
    );

    // Removed, both at once.
    let gone = [
        spec("hello-datum", Ensure::Absent, None),
        spec("other-datum", Ensure::Absent, None),
    ];
    for r in p.converge_batch(&[(&gone[0], &[]), (&gone[1], &[])], &cx(false)) {
        r.unwrap();
    }
    assert!(!root.join("usr/share/hello-datum/version").exists());
    for s in &gone {
        assert_eq!(p.examine(s, &cx(false)).unwrap().changes, []);
    }
}

/// pacman's version order, against pacman's own `vercmp`, over generated
/// versions (epochs and releases included).
#[test]
fn pacman_vercmp_agrees_with_pacman_over_generated_versions() {
    if !tools::installed(&["vercmp"]) {
        return;
    }
    const CHARS: &[u8] = b"0012019aAbzZ.._+~^";
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }
    fn word(seed: &mut u64) -> String {
        let len = 1 + next(seed) % 6;
        let mut w: String = (0..len)
            .map(|_| CHARS[(next(seed) % CHARS.len() as u64) as usize] as char)
            .collect();
        match next(seed) % 4 {
            0 => w = format!("{}:{w}", next(seed) % 3),
            1 => w = format!("{w}-{}", next(seed) % 3),
            _ => {}
        }
        w
    }
    let mut disagree = Vec::new();
    for _ in 0..600 {
        let a = word(&mut seed);
        let b = if next(&mut seed).is_multiple_of(2) {
            format!("{}{}", &a[..a.len() / 2], word(&mut seed))
        } else {
            word(&mut seed)
        };
        let out = Command::new("vercmp").args([&a, &b]).output().unwrap();
        let theirs: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let ours = vercmp(&a, &b) as i32;
        if ours != theirs.signum() {
            disagree.push(format!("{a} vs {b}: vercmp {theirs}, ours {ours}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}
