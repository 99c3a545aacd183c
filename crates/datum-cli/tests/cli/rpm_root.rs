//! `datum apply --root` on a Rocky-like root (os-release `ID_LIKE="rhel
//! centos fedora"`): a Repository resource adds a local dnf repository
//! with its signing key, and Packages converge from it with rpm and dnf,
//! from rpms built and signed here. Nothing is downloaded.

use std::fs;
use std::path::Path;
use std::process::Command;

use datum_testkit::{packages, tools};

use crate::package_root::{self, apply, statuses};

/// A fleet of one host, rocky-001, whose layer declares `resources`.
fn fleet(dir: &Path, resources: &str) {
    package_root::fleet(dir, "rocky-001", resources);
}

/// Every file under `dir` with its size and modification time; not
/// sqlite's shared-memory index (`-shm`), which any reader of the rpm
/// database rewrites.
fn tree(dir: &Path) -> package_root::Tree {
    package_root::tree(dir, &["-shm"])
}

fn ok(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {out:?}");
}

/// A signing key made here (no passphrase), its public half armored, and
/// `rpms` signed with it.
fn sign(gnupg: &Path, rpms: &Path) -> String {
    fs::create_dir_all(gnupg).unwrap();
    fs::set_permissions(gnupg, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let gpg = |args: &[&str]| {
        let out = Command::new("gpg")
            .env("GNUPGHOME", gnupg)
            .args(["--batch", "--passphrase", ""])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "gpg {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    gpg(&[
        "--quick-gen-key",
        "Datum test <repo@datum.invalid>",
        "rsa2048",
        "sign",
        "never",
    ]);
    for rpm in fs::read_dir(rpms).unwrap() {
        let rpm = rpm.unwrap().path();
        if rpm.extension().is_some_and(|x| x == "rpm") {
            ok(Command::new("rpmsign")
                .env("GNUPGHOME", gnupg)
                .args(["--define", "_gpg_name repo@datum.invalid"])
                .args(["--define", "__gpg /usr/bin/gpg", "--addsign"])
                .arg(&rpm)
                .stdin(std::process::Stdio::null()));
        }
    }
    gpg(&["--armor", "--export", "repo@datum.invalid"])
}

fn resources(key: &str, package: &str) -> String {
    let key: String = key.lines().map(|l| format!("      {l}\n")).collect();
    format!("  Repository[local]:\n    url: file:///srv/repo\n    key: |\n{key}{package}")
}

#[test]
fn a_rocky_like_root_converges_packages_from_a_repository_it_adds_with_its_key() {
    if !tools::installed(&[
        "rpm",
        "rpmbuild",
        "rpmsign",
        "createrepo_c",
        "dnf",
        "gpg",
        "unshare",
    ]) || !tools::root()
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::rocky(&root);
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "rocky-001\n").unwrap();
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    packages::rpm(&repo, "hello-datum", None, "2.0", "1");
    let key = sign(&tmp.path().join("gnupg"), &repo);
    packages::createrepo(&repo);
    let dir = tmp.path().join("fleet");
    let package = |version: &str| format!("  Package[hello-datum]:\n    version: \"{version}\"\n");
    fleet(&dir, &resources(&key, &package("1.0-1")));

    // --noop plans both, and changes nothing.
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop", "--format", "json"]);
    assert_eq!(noop.code, 2, "{}\n{}", noop.stdout, noop.stderr);
    assert_eq!(
        statuses(&noop.stdout),
        [
            ("Repository[local]".to_owned(), "would_change".to_owned()),
            ("Package[hello-datum]".to_owned(), "would_change".to_owned())
        ]
    );
    assert_eq!(tree(&root), before);

    // The Repository first (automatically), then the package from it,
    // its signature checked against the key.
    let first = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);
    assert_eq!(
        statuses(&first.stdout),
        [
            ("Repository[local]".to_owned(), "changed".to_owned()),
            ("Package[hello-datum]".to_owned(), "changed".to_owned())
        ]
    );
    let v: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    let changes = &v["resources"][0]["changes"];
    assert_eq!(changes[0]["attribute"], "key", "{changes}");
    assert_eq!(changes[0]["from"], "absent", "{changes}");
    assert!(
        changes[0]["to"].as_str().unwrap().starts_with("sha256:"),
        "{changes}"
    );
    assert_eq!(
        fs::read_to_string(root.join("etc/yum.repos.d/datum-local.repo")).unwrap(),
        "# Managed by Datum: Repository[local]\n[local]\nname=local\nbaseurl=file:///srv/repo\n\
         enabled=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/datum-local.asc\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("etc/pki/rpm-gpg/datum-local.asc")).unwrap(),
        key
    );
    assert!(packages::rpm_query(&root, &["hello-datum"]).starts_with("hello-datum-1.0-1 "));
    // dnf imported the key into the root's rpm database to check the package.
    let keys = packages::rpm_query(&root, &["gpg-pubkey"]);
    assert!(keys.starts_with("gpg-pubkey-"), "{keys}");

    // Second run: nothing to do, nothing touched.
    let settled = tree(&root);
    let second = apply(&dir, &root, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(tree(&root), settled);

    // A version change upgrades.
    fleet(&dir, &resources(&key, &package("2.0-1")));
    let up = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(up.code, 2, "{}\n{}", up.stdout, up.stderr);
    let v: serde_json::Value = serde_json::from_str(&up.stdout).unwrap();
    assert_eq!(v["resources"][0]["status"], "unchanged");
    assert_eq!(
        v["resources"][1]["changes"],
        serde_json::json!([{"attribute": "version", "from": "1.0-1", "to": "2.0-1"}])
    );
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "2.0-1\n"
    );

    // Removed, with the Repository and its key.
    fleet(
        &dir,
        "  Repository[local]:\n    ensure: absent\n  Package[hello-datum]:\n    ensure: absent\n",
    );
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert!(
        packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"),
        "{}",
        gone.stdout
    );
    assert!(!root.join("etc/yum.repos.d/datum-local.repo").exists());
    assert!(!root.join("etc/pki/rpm-gpg/datum-local.asc").exists());
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

#[test]
fn a_package_signed_by_another_key_is_refused() {
    if !tools::installed(&[
        "rpm",
        "rpmbuild",
        "rpmsign",
        "createrepo_c",
        "dnf",
        "gpg",
        "unshare",
    ]) || !tools::root()
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::rocky(&root);
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "rocky-001\n").unwrap();
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    sign(&tmp.path().join("gnupg"), &repo);
    packages::createrepo(&repo);
    // The Repository names a key that did not sign the package.
    fs::create_dir(tmp.path().join("none")).unwrap();
    let other = sign(&tmp.path().join("gnupg2"), &tmp.path().join("none"));
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&other, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    // 6: changes made (the Repository) and a resource failed.
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("GPG check FAILED"), "{}", run.stdout);
    assert_eq!(
        statuses(&run.stdout),
        [
            ("Repository[local]".to_owned(), "changed".to_owned()),
            ("Package[hello-datum]".to_owned(), "failed".to_owned())
        ]
    );
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
}

/// A root whose repository's metadata puts a package outside the root:
/// its location climbs out (`location href="../../../outside/..."`, as
/// `createrepo_c --location-prefix` writes it) or its `xml:base` names a
/// directory of this machine (`createrepo_c --baseurl`). The rpm is there,
/// outside the root, and nowhere inside.
#[test]
fn a_package_whose_repository_metadata_leads_out_of_the_root_is_refused() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    for shape in ["location", "xml:base"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        packages::rocky(&root);
        fs::create_dir_all(root.join("etc/datum")).unwrap();
        fs::write(root.join("etc/datum/host"), "rocky-001\n").unwrap();
        let outside = tmp.path().join("outside");
        packages::rpm(&outside, "hello-datum", None, "1.0", "1");
        let repo = root.join("srv/repo");
        let rpm = "hello-datum-1.0-1.noarch.rpm";
        fs::create_dir_all(&repo).unwrap();
        fs::copy(outside.join(rpm), repo.join(rpm)).unwrap();
        let how = match shape {
            "location" => ["--location-prefix", "../../../outside"].map(String::from),
            _ => [
                "--baseurl".to_owned(),
                format!("file://{}", outside.display()),
            ],
        };
        ok(Command::new("createrepo_c")
            .arg("--quiet")
            .args(&how)
            .arg(&repo));
        fs::remove_file(repo.join(rpm)).unwrap();
        fs::write(
            root.join("etc/yum.repos.d/hostile.repo"),
            "[hostile]\nname=hostile\nbaseurl=file:///srv/repo\ngpgcheck=0\n",
        )
        .unwrap();
        let dir = tmp.path().join("fleet");
        fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
        let run = apply(&dir, &root, &[]);
        assert_eq!(run.code, 4, "{shape}: {}\n{}", run.stdout, run.stderr);
        let hostile = root.join("etc/yum.repos.d/hostile.repo");
        let why = match shape {
            "location" => {
                "its location `../../../outside/hello-datum-1.0-1.noarch.rpm` leads out of the root"
                    .to_owned()
            }
            _ => format!(
                "its xml:base `file://{}` is not a file:// address inside the root",
                outside.display()
            ),
        };
        let want = format!(
            "repository `hostile` ({}), package hello-datum-1.0-1.noarch: {why}",
            hostile.display()
        );
        assert!(run.stdout.contains(&want), "{shape}: {}", run.stdout);
        assert!(
            packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"),
            "{shape}"
        );
        assert!(!root.join("usr/share/hello-datum").exists(), "{shape}");
    }
}
