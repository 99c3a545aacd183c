//! `datum apply --root` on an openSUSE-like root, when zypper fails or
//! half-fails: a repository of the root's own beside Datum's, broken,
//! blocks no install from Datum's (Datum refreshes only the repositories
//! it changed or that were never read; zypper's 106 after an install is
//! decided by reading the packages back); a scriptlet that failed (107)
//! is a failure that says the package is there; a refused signature is
//! told in zypper's whole lines; and which signing keys rpm takes.

use std::fs;
use std::path::Path;
use std::process::Command;

use datum_testkit::{packages, tools};

use crate::package_root::{self, apply};
use crate::zypper_root::{TOOLS, fleet, key, leap, resources, sign_metadata, signed_repository};

/// The root's own repository `other` (`/etc/zypp/repos.d/other.repo`,
/// at `/srv/other`, offering other-datum 1.0-1), signed by its own key,
/// which the operator imported into the rpm database. Gives the key's
/// gnupg home.
fn other_repository(root: &Path, tmp: &Path) -> std::path::PathBuf {
    let repo = root.join("srv/other");
    packages::rpm(&repo, "other-datum", None, "1.0", "1");
    let gnupg = tmp.join("gnupg-other");
    let key = key(&gnupg, "other@datum.invalid");
    let signer = (gnupg.as_path(), "other@datum.invalid");
    signed_repository(&repo, signer, signer);
    fs::write(root.join("srv/other.asc"), &key).unwrap();
    let out = Command::new("rpm")
        .arg("--root")
        .arg(root)
        .args(["--dbpath", "/var/lib/rpm", "--import"])
        .arg(root.join("srv/other.asc"))
        .output()
        .unwrap();
    assert!(out.status.success(), "rpm --import: {out:?}");
    fs::write(
        root.join("etc/zypp/repos.d/other.repo"),
        "[other]\nname=other\nbaseurl=file:///srv/other\nenabled=1\nautorefresh=1\n\
         gpgcheck=1\nrepo_gpgcheck=1\npkg_gpgcheck=1\ngpgkey=file:///srv/other.asc\n",
    )
    .unwrap();
    gnupg
}

/// New metadata for `other` (other-datum 2.0-1 added), signed by a key
/// nobody trusts: zypper refuses to refresh it.
fn break_other(root: &Path, tmp: &Path) {
    let repo = root.join("srv/other");
    packages::rpm(&repo, "other-datum", None, "2.0", "1");
    fs::remove_dir_all(repo.join("repodata")).unwrap();
    packages::createrepo(&repo);
    let stranger = tmp.join("gnupg-stranger");
    key(&stranger, "stranger@datum.invalid");
    sign_metadata(&repo, (stranger.as_path(), "stranger@datum.invalid"));
}

#[test]
fn a_broken_repository_datum_did_not_change_does_not_block_an_install() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(&repo, signer, signer);
    other_repository(&root, tmp.path());
    let dir = tmp.path().join("fleet");
    let hello = "  Package[hello-datum]:\n    ensure: installed\n";
    fleet(&dir, &resources(&key, hello));
    let first = apply(&dir, &root, &[]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);

    // `other` breaks; Datum's Repository changes (its address gets a
    // final slash), and a package is to come from it.
    break_other(&root, tmp.path());
    let tools = format!("{hello}  Package[tools-datum]:\n    ensure: installed\n");
    let moved = resources(&key, &tools).replace("file:///srv/repo", "file:///srv/repo/");
    fleet(&dir, &moved);
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(packages::rpm_query(&root, &["tools-datum"]).starts_with("tools-datum-1.0-1 "));
}

#[test]
fn metadata_signed_by_another_key_fails_the_install_saying_so_in_whole_lines() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let stranger = tmp.path().join("gnupg-stranger");
    self::key(&stranger, "stranger@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(
        &repo,
        signer,
        (stranger.as_path(), "stranger@datum.invalid"),
    );
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    let reason = package_root::reason(&run.stdout, 1);
    // zypper's own whole lines: what it found, and what failed.
    assert!(
        reason.contains(
            "the signature: Warning: File 'repomd.xml' from repository 'local' is signed with an unknown key '"
        ) && reason.contains("'. / Signature verification failed for repomd.xml"),
        "{reason}"
    );
    assert!(!reason.contains("were signed. Accepting"), "{reason}");
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
}

#[test]
fn an_unsigned_package_is_refused_saying_it_is_not_signed() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    // Signed metadata, unsigned packages.
    packages::createrepo(&repo);
    sign_metadata(&repo, (gnupg.as_path(), "repo@datum.invalid"));
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    let reason = package_root::reason(&run.stdout, 1);
    assert!(
        reason.contains("the signature: Package is not signed! / hello-datum-2.0-1.noarch (local): Signature verification failed [6-File is unsigned]"),
        "{reason}"
    );
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
}

#[test]
fn an_install_done_while_zypper_skipped_a_repository_of_the_roots_is_not_a_failure() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(&repo, signer, signer);
    // The root's own `other`, broken before zypper ever read it: zypper
    // skips it, installs from Datum's, and exits 106.
    other_repository(&root, tmp.path());
    break_other(&root, tmp.path());
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(packages::rpm_query(&root, &["hello-datum"]).starts_with("hello-datum-2.0-1 "));
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

/// Builds `NAME-1.0-1.noarch.rpm` into `dir`, whose `%post` fails: it
/// provides the `/bin/sh` its scriptlet requires, but the root has none
/// (rpm: "%post(…) scriptlet failed, exit status 127").
fn rpm_whose_post_fails(dir: &Path, name: &str) {
    let top = tempfile::tempdir().unwrap();
    let spec = top.path().join("p.spec");
    fs::write(
        &spec,
        format!(
            "Name: {name}\nVersion: 1.0\nRelease: 1\nSummary: a test package\nLicense: MIT\n\
             BuildArch: noarch\nProvides: /bin/sh\n%description\nA test package.\n\
             %install\nmkdir -p %{{buildroot}}/usr/share/{name}\n\
             echo 1.0-1 > %{{buildroot}}/usr/share/{name}/version\n\
             %post\nexit 1\n\
             %files\n/usr/share/{name}/version\n"
        ),
    )
    .unwrap();
    let out = Command::new("rpmbuild")
        .env("HOME", top.path())
        .arg("--define")
        .arg(format!("_topdir {}", top.path().display()))
        .args(["--quiet", "-bb"])
        .arg(&spec)
        .output()
        .unwrap();
    assert!(out.status.success(), "rpmbuild: {out:?}");
    let rpm = format!("{name}-1.0-1.noarch.rpm");
    fs::copy(top.path().join("RPMS/noarch").join(&rpm), dir.join(&rpm)).unwrap();
}

#[test]
fn a_package_whose_scriptlet_fails_is_a_failure_that_says_it_was_installed() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    rpm_whose_post_fails(&repo, "post-datum");
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(&repo, signer, signer);
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[post-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["resources"][1]["status"], "failed");
    let reason = v["resources"][1]["reason"].as_str().unwrap();
    assert!(
        reason.contains("(exit 107)")
            && reason.contains(
                "the packages were installed or removed, but an rpm scriptlet of one failed"
            ),
        "{reason}"
    );
    assert!(packages::rpm_query(&root, &["post-datum"]).starts_with("post-datum-1.0-1 "));
}

#[test]
fn a_package_signed_by_another_key_of_the_rpm_database_is_taken() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    // Repository[local]'s metadata is signed by its key, its packages by
    // Repository[c]'s: rpm checks only that the key is in its database.
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let c_home = tmp.path().join("gnupg-c");
    let c_key = self::key(&c_home, "c@datum.invalid");
    signed_repository(
        &repo,
        (c_home.as_path(), "c@datum.invalid"),
        (gnupg.as_path(), "repo@datum.invalid"),
    );
    let c_repo = root.join("srv/c");
    fs::create_dir_all(&c_repo).unwrap();
    signed_repository(
        &c_repo,
        (c_home.as_path(), "c@datum.invalid"),
        (c_home.as_path(), "c@datum.invalid"),
    );
    let c: String = c_key.lines().map(|l| format!("      {l}\n")).collect();
    let c = format!("  Repository[c]:\n    url: file:///srv/c\n    key: |\n{c}");
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &(resources(&key, "  Package[hello-datum]:\n    ensure: installed\n") + &c),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(packages::rpm_query(&root, &["hello-datum"]).starts_with("hello-datum-2.0-1 "));
}
