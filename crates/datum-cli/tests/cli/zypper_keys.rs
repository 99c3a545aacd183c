//! `datum apply --root` on an openSUSE-like root: a zypper Repository's
//! key in the root's rpm database, imported by Datum and recorded
//! (`datum-NAME.keys`), and only the keys Datum imported leave with the
//! last Repository holding them.

use std::fs;
use std::process::Command;

use datum_testkit::{packages, tools};

use crate::package_root::{self, apply};
use crate::zypper_root::{TOOLS, fleet, key, leap, resources};

#[test]
fn a_key_leaves_the_rpm_database_with_the_last_repository_holding_it() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    leap(&root);
    let key = key(&tmp.path().join("gnupg"), "repo@datum.invalid");
    let indented: String = key.lines().map(|l| format!("      {l}\n")).collect();
    let repository = |name: &str, present: bool| {
        if present {
            format!("  Repository[{name}]:\n    url: file:///srv/repo\n    key: |\n{indented}")
        } else {
            format!("  Repository[{name}]:\n    ensure: absent\n")
        }
    };
    let dir = tmp.path().join("fleet");
    let keys = || packages::rpm_query(&root, &["gpg-pubkey"]);
    fleet(&dir, &(repository("a", true) + &repository("b", true)));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(keys().lines().count(), 1, "imported once: {}", keys());
    // Both record it as Datum's: a imported it, b found it a's.
    let entry = keys().split(' ').next().unwrap().to_owned();
    for name in ["a", "b"] {
        let record = fs::read_to_string(root.join(format!("etc/zypp/repos.d/datum-{name}.keys")));
        assert!(record.unwrap().lines().any(|l| l == entry), "{name}");
    }
    // b still holds it.
    fleet(&dir, &(repository("a", false) + &repository("b", true)));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert!(keys().starts_with("gpg-pubkey-"), "{}", keys());
    fleet(&dir, &(repository("a", false) + &repository("b", false)));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert!(keys().contains("is not installed"), "{}", keys());
    assert!(!root.join("etc/zypp/repos.d/datum-a.keys").exists());
    assert!(!root.join("etc/zypp/repos.d/datum-b.keys").exists());
}

#[test]
fn a_key_the_operator_imported_before_datum_stays_in_the_rpm_database() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    leap(&root);
    let key = key(&tmp.path().join("gnupg"), "repo@datum.invalid");
    // The operator trusted the vendor's key by hand before Datum managed
    // the repository.
    let by_hand = tmp.path().join("vendor.asc");
    fs::write(&by_hand, &key).unwrap();
    let out = Command::new("rpm")
        .arg("--root")
        .arg(&root)
        .args(["--dbpath", "/var/lib/rpm", "--import"])
        .arg(&by_hand)
        .output()
        .unwrap();
    assert!(out.status.success(), "rpm --import: {out:?}");
    let keys = || packages::rpm_query(&root, &["gpg-pubkey"]);
    let before = keys();
    assert!(before.starts_with("gpg-pubkey-"), "{before}");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &resources(&key, ""));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    // Datum imported nothing, so records nothing.
    assert_eq!(keys(), before);
    assert!(!root.join("etc/zypp/repos.d/datum-local.keys").exists());
    fleet(&dir, "  Repository[local]:\n    ensure: absent\n");
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert!(!root.join("etc/zypp/repos.d/datum-local.asc").exists());
    // The operator's key is left where it was.
    assert_eq!(keys(), before);
}

#[test]
fn a_repository_given_another_key_takes_the_one_datum_imported_out() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    leap(&root);
    let first = key(&tmp.path().join("gnupg"), "first@datum.invalid");
    let second = key(&tmp.path().join("gnupg2"), "second@datum.invalid");
    let keys = || packages::rpm_query(&root, &["gpg-pubkey"]);
    let record = || fs::read_to_string(root.join("etc/zypp/repos.d/datum-local.keys")).unwrap();
    let dir = tmp.path().join("fleet");
    fleet(&dir, &resources(&first, ""));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    let was = keys().split(' ').next().unwrap().to_owned();
    assert!(record().lines().any(|l| l == was), "{}", record());
    fleet(&dir, &resources(&second, ""));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    let now = keys();
    assert_eq!(now.lines().count(), 1, "{now}");
    let is = now.split(' ').next().unwrap().to_owned();
    assert_ne!(is, was);
    assert!(record().ends_with(&format!("\n{is}\n")), "{}", record());
}

#[test]
fn a_key_rpm_refuses_fails_the_repository_before_anything_is_written() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    leap(&root);
    // Armored, but no OpenPGP packet inside.
    let bad = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbm90IGEga2V5\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----\n";
    let dir = tmp.path().join("fleet");
    fleet(&dir, &resources(bad, ""));
    for run in 1..=2 {
        let out = apply(&dir, &root, &["--format", "json"]);
        // 4: a resource failed, nothing changed; every run, never settled.
        assert_eq!(out.code, 4, "run {run}: {}\n{}", out.stdout, out.stderr);
        let reason = package_root::reason(&out.stdout, 0);
        assert!(
            reason.contains("rpm refuses `key` as a public key")
                && reason.contains("not an armored public key")
                && reason.contains("gpg --armor --export"),
            "{reason}"
        );
        assert!(!root.join("etc/zypp/repos.d/datum-local.repo").exists());
        assert!(!root.join("etc/zypp/repos.d/datum-local.asc").exists());
    }
}

#[test]
fn a_key_taken_out_of_the_rpm_database_is_put_back() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    leap(&root);
    let key = key(&tmp.path().join("gnupg"), "repo@datum.invalid");
    let keys = || packages::rpm_query(&root, &["gpg-pubkey"]);
    let dir = tmp.path().join("fleet");
    fleet(&dir, &resources(&key, ""));
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    let entry = keys().split(' ').next().unwrap().to_owned();
    // Someone erases it; the files are left as Datum wrote them.
    let out = Command::new("rpm")
        .arg("--root")
        .arg(&root)
        .args(["--dbpath", "/var/lib/rpm", "-e", &entry])
        .output()
        .unwrap();
    assert!(out.status.success(), "rpm -e: {out:?}");
    assert!(keys().contains("is not installed"), "{}", keys());
    // --noop sees it, and puts nothing back.
    let noop = apply(&dir, &root, &["--noop", "--format", "json"]);
    assert_eq!(noop.code, 2, "{}\n{}", noop.stdout, noop.stderr);
    let v: serde_json::Value = serde_json::from_str(&noop.stdout).unwrap();
    assert_eq!(v["resources"][0]["status"], "would_change");
    assert_eq!(v["resources"][0]["changes"][0]["attribute"], "key");
    assert_eq!(
        v["resources"][0]["changes"][0]["from"],
        "not in the rpm database"
    );
    assert!(keys().contains("is not installed"), "{}", keys());
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(keys().starts_with(&entry), "{}", keys());
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}
