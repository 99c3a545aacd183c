//! `datum apply --root` on an Arch-like root: a Repository resource adds a
//! local pacman repository (through pacman.conf's `Include`), and Packages
//! converge from it with pacman, from packages built here. Nothing is
//! downloaded.

use std::fs;
use std::path::Path;

use datum_testkit::{packages, tools};

use crate::package_root::{self, apply, statuses};

/// A fleet of one host, arch-001, whose layer declares `resources`.
fn fleet(dir: &Path, resources: &str) {
    package_root::fleet(dir, "arch-001", resources);
}

/// Every file under `dir` with its size and modification time.
fn tree(dir: &Path) -> package_root::Tree {
    package_root::tree(dir, &[])
}

const PACKAGES: &str = "  Package[hello-datum]:\n    version: \"1.0-1\"\n  Package[other-datum]:\n    ensure: installed\n";

#[test]
fn an_arch_like_root_converges_packages_from_a_repository_it_adds() {
    if !tools::installed(&["pacman", "repo-add", "bsdtar", "unshare"]) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::arch(&root, "unused");
    // pacman.conf names no repository of its own: it includes Datum's.
    fs::write(
        root.join("etc/pacman.conf"),
        "[options]\nArchitecture = auto\nSigLevel = Never\nInclude = /etc/pacman.d/datum-*.conf\n",
    )
    .unwrap();
    // As on Arch, where pacman-mirrorlist makes it; and where pacman logs.
    fs::create_dir_all(root.join("etc/pacman.d")).unwrap();
    fs::create_dir_all(root.join("var/log")).unwrap();
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "arch-001\n").unwrap();
    let repo = root.join("srv/datumtest");
    packages::pacman_package(&repo, "hello-datum", "1.0-1");
    packages::pacman_package(&repo, "other-datum", "1:0.5-3");
    packages::repo_add(&repo, "datumtest");
    let dir = tmp.path().join("fleet");
    let repository = "  Repository[datumtest]:\n    url: file:///srv/datumtest\n";
    fleet(&dir, &format!("{repository}{PACKAGES}"));

    // --noop plans all three, and changes nothing.
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop", "--format", "json"]);
    assert_eq!(
        noop.code,
        2,
        "{}\n{}",
        &noop.stdout[noop.stdout.find("\"resources\"").unwrap_or(0)..],
        noop.stderr
    );
    let would = |s: &str| s.to_owned();
    assert_eq!(
        statuses(&noop.stdout),
        [
            ("Repository[datumtest]".to_owned(), would("would_change")),
            ("Package[hello-datum]".to_owned(), would("would_change")),
            ("Package[other-datum]".to_owned(), would("would_change")),
        ]
    );
    assert_eq!(tree(&root), before);

    // The Repository first (automatically), then both packages from it.
    let first = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);
    assert_eq!(
        statuses(&first.stdout),
        [
            ("Repository[datumtest]".to_owned(), would("changed")),
            ("Package[hello-datum]".to_owned(), would("changed")),
            ("Package[other-datum]".to_owned(), would("changed")),
        ]
    );
    assert_eq!(
        fs::read_to_string(root.join("etc/pacman.d/datum-datumtest.conf")).unwrap(),
        "# Managed by Datum: Repository[datumtest]\n[datumtest]\nServer = file:///srv/datumtest\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "1.0-1\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("usr/share/other-datum/version")).unwrap(),
        "1:0.5-3\n"
    );
    // Both in one transaction: pacman logs one of each.
    let log = fs::read_to_string(root.join("var/log/pacman.log")).unwrap_or_default();
    let transactions = log.matches("transaction started").count();
    assert_eq!(transactions, 1, "{log}");

    // Second run: nothing to do, nothing touched.
    let settled = tree(&root);
    let second = apply(&dir, &root, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(tree(&root), settled);

    // Removed, with the Repository.
    fleet(
        &dir,
        "  Repository[datumtest]:\n    ensure: absent\n  Package[hello-datum]:\n    ensure: absent\n  Package[other-datum]:\n    ensure: absent\n",
    );
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert!(!root.join("usr/share/hello-datum/version").exists());
    assert!(!root.join("usr/share/other-datum/version").exists());
    assert!(!root.join("etc/pacman.d/datum-datumtest.conf").exists());
    // pacman refuses an Include pattern matching nothing: one file stays.
    assert!(
        fs::read_to_string(root.join("etc/pacman.d/datum-.conf"))
            .unwrap()
            .starts_with("# Managed by Datum")
    );
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}
