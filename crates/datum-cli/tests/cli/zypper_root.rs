//! `datum apply --root` on an openSUSE-Leap-like root (os-release
//! `ID="opensuse-leap"`, `ID_LIKE="suse opensuse"`): a Repository adds a
//! local rpm-md repository with its signing key, and Packages converge
//! from it with the real zypper, from rpms built and signed here (their
//! metadata too, as SUSE's repositories are). Nothing is downloaded.

use std::fs;
use std::path::Path;
use std::process::Command;

use datum_testkit::{packages, tools};

use crate::package_root::{self, apply, statuses};

pub const TOOLS: [&str; 8] = [
    "rpm",
    "rpmbuild",
    "rpmsign",
    "createrepo_c",
    "zypper",
    "gpg",
    "unshare",
    "dumpsolv",
];

/// A fleet of one host, leap-001, whose layer declares `resources`.
pub fn fleet(dir: &Path, resources: &str) {
    package_root::fleet(dir, "leap-001", resources);
}

/// Every file under `dir` with its size and modification time; not
/// sqlite's shared-memory index (`-shm`), which any reader of the rpm
/// database rewrites.
fn tree(dir: &Path) -> package_root::Tree {
    package_root::tree(dir, &["-shm"])
}

fn gpg(gnupg: &Path, args: &[&str]) -> String {
    let out = Command::new("gpg")
        .env("GNUPGHOME", gnupg)
        .args(["--batch", "--yes", "--passphrase", ""])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "gpg {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A signing key made in `gnupg` (no passphrase); its public half, armored.
pub fn key(gnupg: &Path, email: &str) -> String {
    fs::create_dir_all(gnupg).unwrap();
    fs::set_permissions(gnupg, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    gpg(
        gnupg,
        &[
            "--quick-gen-key",
            &format!("Datum test <{email}>"),
            "rsa2048",
            "sign",
            "never",
        ],
    );
    gpg(gnupg, &["--armor", "--export", email])
}

/// Signs the rpms in `repo` with `packages`'s key, makes it an rpm-md
/// repository and signs its `repomd.xml` with `metadata`'s, as
/// `repomd.xml.asc`. Each is `(gnupg, email)`.
pub fn signed_repository(repo: &Path, packages: (&Path, &str), metadata: (&Path, &str)) {
    for rpm in fs::read_dir(repo).unwrap() {
        let rpm = rpm.unwrap().path();
        if rpm.extension().is_some_and(|x| x == "rpm") {
            let out = Command::new("rpmsign")
                .env("GNUPGHOME", packages.0)
                .args(["--define", &format!("_gpg_name {}", packages.1)])
                .args(["--define", "__gpg /usr/bin/gpg", "--addsign"])
                .arg(&rpm)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success(), "rpmsign: {out:?}");
        }
    }
    packages::createrepo(repo);
    sign_metadata(repo, metadata);
}

/// Signs `repo`'s `repomd.xml` with `metadata`'s key (`(gnupg, email)`),
/// as `repomd.xml.asc`.
pub fn sign_metadata(repo: &Path, metadata: (&Path, &str)) {
    let repomd = repo.join("repodata/repomd.xml");
    gpg(
        metadata.0,
        &[
            "--local-user",
            metadata.1,
            "--armor",
            "--detach-sign",
            repomd.to_str().unwrap(),
        ],
    );
}

pub fn resources(key: &str, packages: &str) -> String {
    let key: String = key.lines().map(|l| format!("      {l}\n")).collect();
    format!("  Repository[local]:\n    url: file:///srv/repo\n    key: |\n{key}{packages}")
}

/// An openSUSE-like root that names itself leap-001, with a package of
/// its own installed (base-datum: a system is never empty, and zypper's
/// rpmdb2solv fails on a database left without packages), and
/// `srv/repo` holding hello-datum 1.0-1 and 2.0-1 and tools-datum 1.0-1.
pub fn leap(root: &Path) -> std::path::PathBuf {
    packages::opensuse(root);
    let base = root.parent().unwrap().join("base");
    packages::rpm(&base, "base-datum", None, "1.0", "1");
    let out = Command::new("rpm")
        .arg("--root")
        .arg(root)
        .args(["--dbpath", "/var/lib/rpm", "-i", "--nosignature"])
        .arg(base.join("base-datum-1.0-1.noarch.rpm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "rpm -i: {out:?}");
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "leap-001\n").unwrap();
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    packages::rpm(&repo, "hello-datum", None, "2.0", "1");
    packages::rpm(&repo, "tools-datum", None, "1.0", "1");
    repo
}

#[test]
fn an_opensuse_like_root_converges_packages_from_a_repository_it_adds_with_its_key() {
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
    let dir = tmp.path().join("fleet");
    let packages = |version: &str| {
        format!(
            "  Package[hello-datum]:\n    version: \"{version}\"\n  Package[tools-datum]:\n    ensure: installed\n"
        )
    };
    fleet(&dir, &resources(&key, &packages("1.0-1")));

    // --noop plans all three, and changes nothing (no refresh either).
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop", "--format", "json"]);
    assert_eq!(noop.code, 2, "{}\n{}", noop.stdout, noop.stderr);
    let would = |id: &str| (id.to_owned(), "would_change".to_owned());
    assert_eq!(
        statuses(&noop.stdout),
        [
            would("Repository[local]"),
            would("Package[hello-datum]"),
            would("Package[tools-datum]")
        ]
    );
    assert_eq!(tree(&root), before);

    // The Repository first (automatically), its key imported into the
    // rpm database; then both packages in one zypper transaction, the
    // metadata's and the packages' signatures checked against the key.
    let first = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);
    let changed = |id: &str| (id.to_owned(), "changed".to_owned());
    assert_eq!(
        statuses(&first.stdout),
        [
            changed("Repository[local]"),
            changed("Package[hello-datum]"),
            changed("Package[tools-datum]")
        ]
    );
    assert_eq!(
        fs::read_to_string(root.join("etc/zypp/repos.d/datum-local.repo")).unwrap(),
        "# Managed by Datum: Repository[local]\n[local]\nname=local\nbaseurl=file:///srv/repo\n\
         enabled=1\nautorefresh=0\ngpgcheck=1\nrepo_gpgcheck=1\npkg_gpgcheck=1\ngpgkey=file:///etc/zypp/repos.d/datum-local.asc\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("etc/zypp/repos.d/datum-local.asc")).unwrap(),
        key
    );
    let keys = packages::rpm_query(&root, &["gpg-pubkey"]);
    assert!(keys.starts_with("gpg-pubkey-"), "{keys}");
    let installed = packages::rpm_query(&root, &["hello-datum", "tools-datum"]);
    let lines: Vec<&str> = installed.lines().collect();
    assert!(lines[0].starts_with("hello-datum-1.0-1 "), "{installed}");
    assert!(lines[1].starts_with("tools-datum-1.0-1 "), "{installed}");
    // zypper kept its cache and history in the root; one zypper install
    // for both (libzypp gives rpm one package at a time: their rpm
    // transaction ids may differ).
    assert!(root.join("var/cache/zypp/solv/local/solv").is_file());
    let history = fs::read_to_string(root.join("var/log/zypp/history")).unwrap();
    let installs: Vec<&str> = history
        .lines()
        .filter(|l| l.contains("|command|") && l.contains("'install'"))
        .collect();
    assert_eq!(installs.len(), 1, "{history}");
    assert!(
        installs[0].contains("'hello-datum=1.0-1' 'tools-datum'"),
        "{history}"
    );

    // Second run: nothing to do, nothing touched.
    let settled = tree(&root);
    let second = apply(&dir, &root, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(tree(&root), settled);

    // A version change upgrades.
    fleet(&dir, &resources(&key, &packages("2.0-1")));
    let up = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(up.code, 2, "{}\n{}", up.stdout, up.stderr);
    let v: serde_json::Value = serde_json::from_str(&up.stdout).unwrap();
    assert_eq!(v["resources"][0]["status"], "unchanged");
    assert_eq!(
        v["resources"][1]["changes"],
        serde_json::json!([{"attribute": "version", "from": "1.0-1", "to": "2.0-1"}])
    );
    assert_eq!(v["resources"][2]["status"], "unchanged");
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "2.0-1\n"
    );

    // Removed, with the Repository and its key file.
    fleet(
        &dir,
        "  Repository[local]:\n    ensure: absent\n  Package[hello-datum]:\n    ensure: absent\n  Package[tools-datum]:\n    ensure: absent\n",
    );
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    let left = packages::rpm_query(&root, &["hello-datum", "tools-datum"]);
    assert_eq!(left.matches("is not installed").count(), 2, "{left}");
    assert!(!root.join("etc/zypp/repos.d/datum-local.repo").exists());
    assert!(!root.join("etc/zypp/repos.d/datum-local.asc").exists());
    // The key Datum imported left the rpm database with it.
    let keys = packages::rpm_query(&root, &["gpg-pubkey"]);
    assert!(keys.contains("is not installed"), "{keys}");
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

#[test]
fn a_package_signed_by_another_key_is_refused() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    // The metadata is signed by the Repository's key, the packages by
    // another.
    let trusted = tmp.path().join("gnupg");
    let key = key(&trusted, "repo@datum.invalid");
    let other = tmp.path().join("gnupg2");
    self::key(&other, "other@datum.invalid");
    signed_repository(
        &repo,
        (other.as_path(), "other@datum.invalid"),
        (trusted.as_path(), "repo@datum.invalid"),
    );
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    // 6: changes made (the Repository) and a resource failed.
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        statuses(&run.stdout),
        [
            ("Repository[local]".to_owned(), "changed".to_owned()),
            ("Package[hello-datum]".to_owned(), "failed".to_owned())
        ]
    );
    // rpm's word on the package's signature: the key is not trusted.
    assert!(
        run.stdout.contains("Signature, key ID") && run.stdout.contains("NOKEY"),
        "{}",
        run.stdout
    );
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
    assert!(!root.join("usr/share/hello-datum").exists());
}

#[test]
fn a_repository_of_the_root_on_the_network_is_refused_before_zypper_runs() {
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
    // The root's own configuration names a source on the network.
    fs::write(
        root.join("etc/zypp/repos.d/oss.repo"),
        "[repo-oss]\nname=Main Repository\nenabled=1\nautorefresh=1\nbaseurl=https://download.opensuse.org/distribution/leap/$releasever/repo/oss/\n",
    )
    .unwrap();
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    let reason = package_root::reason(&run.stdout, 1);
    assert!(
        reason.contains("etc/zypp/repos.d/oss.repo: line 5: `baseurl`")
            && reason.contains("is not a file:// address"),
        "{reason}"
    );
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
    // zypper never ran: it made no cache in the root.
    assert!(!root.join("var/cache/zypp").exists());
}

#[test]
fn the_repositories_are_refreshed_only_when_a_repository_changed() {
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
    let dir = tmp.path().join("fleet");
    let package = |version: &str| format!("  Package[hello-datum]:\n    version: \"{version}\"\n");
    fleet(&dir, &resources(&key, &package("1.0-1")));
    assert_eq!(apply(&dir, &root, &[]).code, 2);

    // A new version in the repository: zypper does not see it while no
    // Repository changed (its metadata is not read again).
    packages::rpm(&repo, "hello-datum", None, "3.0", "1");
    fs::remove_dir_all(repo.join("repodata")).unwrap();
    signed_repository(&repo, signer, signer);
    fleet(&dir, &resources(&key, &package("3.0-1")));
    let stale = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(stale.code, 4, "{}\n{}", stale.stdout, stale.stderr);
    assert!(
        packages::rpm_query(&root, &["hello-datum"]).starts_with("hello-datum-1.0-1 "),
        "{}",
        stale.stdout
    );

    // The Repository changes (its address is written with a final slash): zypper
    // refreshes first, and finds it.
    let moved = resources(&key, &package("3.0-1")).replace("file:///srv/repo", "file:///srv/repo/");
    fleet(&dir, &moved);
    let fresh = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(fresh.code, 2, "{}\n{}", fresh.stdout, fresh.stderr);
    assert!(packages::rpm_query(&root, &["hello-datum"]).starts_with("hello-datum-3.0-1 "));
}

#[test]
fn a_version_without_epoch_installs_the_epoch_the_repository_offers() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    packages::rpm(&repo, "epoch-datum", Some(2), "3.0", "1");
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(&repo, signer, signer);
    let dir = tmp.path().join("fleet");
    // zypper's own `epoch-datum=3.0-1` would not match `2:3.0-1`.
    fleet(
        &dir,
        &resources(&key, "  Package[epoch-datum]:\n    version: \"3.0-1\"\n"),
    );
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let out = Command::new("rpm")
        .arg("--root")
        .arg(&root)
        .args([
            "--dbpath",
            "/var/lib/rpm",
            "-q",
            "--qf",
            "%{EPOCH}:%{VERSION}-%{RELEASE}",
        ])
        .arg("epoch-datum")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2:3.0-1");
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

#[test]
fn zypps_configuration_reached_through_a_link_out_of_the_root_is_refused() {
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
    // The solver's system checks, planted as a link to this machine's.
    let host = tmp.path().join("host-checks");
    fs::create_dir(&host).unwrap();
    std::os::unix::fs::symlink(&host, root.join("etc/zypp/systemCheck.d")).unwrap();
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    let reason = package_root::reason(&run.stdout, 1);
    assert!(
        reason.contains("etc/zypp/systemCheck.d is a symbolic link that leads out of the root"),
        "{reason}"
    );
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
}

/// A repository at `ROOT/srv/SUB` whose metadata puts hello-datum 1.0-1
/// at `../../../../../../outside/`; a file of the host's at
/// `TMP/outside/hello-datum-1.0-1.noarch.rpm`. zypper (1.14) reads the
/// package from the repository's directory whatever the `..`
/// (`ROOT/srv/SUB/outside/`, where it is), but copies it into its
/// package cache at the location joined to
/// `ROOT/var/cache/zypp/packages/local`, `..` followed: beside the root,
/// over the host's file, which it then deletes. The apply's exit code
/// and JSON report, and where the host's file is.
fn location_out_of_the_root(tmp: &Path, sub: &str) -> (i32, serde_json::Value, std::path::PathBuf) {
    let root = tmp.join("root");
    let built = leap(&root);
    let repo = root.join("srv").join(sub);
    fs::create_dir_all(&repo).unwrap();
    let rpm = "hello-datum-1.0-1.noarch.rpm";
    fs::rename(built.join(rpm), repo.join(rpm)).unwrap();
    let gnupg = tmp.join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(&repo, signer, signer);
    fs::remove_dir_all(repo.join("repodata")).unwrap();
    let out = Command::new("createrepo_c")
        .args(["--quiet", "--location-prefix", "../../../../../../outside"])
        .arg(&repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "createrepo_c: {out:?}");
    sign_metadata(&repo, signer);
    fs::create_dir(repo.join("outside")).unwrap();
    fs::rename(repo.join(rpm), repo.join("outside").join(rpm)).unwrap();
    fs::create_dir(tmp.join("outside")).unwrap();
    let host = tmp.join("outside").join(rpm);
    fs::write(&host, "the host's file\n").unwrap();
    let dir = tmp.join("fleet");
    let resources = resources(&key, "  Package[hello-datum]:\n    version: \"1.0-1\"\n")
        .replace("file:///srv/repo", &format!("file:///srv/{sub}"));
    fleet(&dir, &resources);
    let run = apply(&dir, &root, &["--format", "json"]);
    let v = serde_json::from_str(&run.stdout).unwrap();
    (run.code, v, host)
}

#[test]
fn a_package_whose_location_climbs_out_of_the_root_is_refused() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (code, v, host) = location_out_of_the_root(tmp.path(), "repo");
    assert_eq!(code, 6, "{v}");
    let reason = v["resources"][1]["reason"].as_str().unwrap();
    assert!(
        reason.contains("etc/zypp/repos.d/datum-local.repo: repository `local`: package hello-datum-1.0-1.noarch: its location `../../../../../../outside/hello-datum-1.0-1.noarch.rpm` climbs above the root"),
        "{reason}"
    );
    let root = tmp.path().join("root");
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
    assert!(!root.join("usr/share/hello-datum").exists());
    assert_eq!(fs::read_to_string(&host).unwrap(), "the host's file\n");
}

#[test]
fn a_location_inside_the_root_from_the_repository_but_not_from_zyppers_cache_is_refused() {
    if !tools::installed(&TOOLS) || !tools::root() {
        return;
    }
    // Six levels down: from the repository the location climbs only to
    // the root's top, from the package cache (five levels) out of it.
    let tmp = tempfile::tempdir().unwrap();
    let (code, v, host) = location_out_of_the_root(tmp.path(), "a/b/c/d/repo");
    assert_eq!(code, 6, "{v}");
    let reason = v["resources"][1]["reason"].as_str().unwrap();
    assert!(
        reason.contains("from /var/cache/zypp/packages/local where zypper copies the package, climbs above the root"),
        "{reason}"
    );
    let root = tmp.path().join("root");
    assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
    assert_eq!(fs::read_to_string(&host).unwrap(), "the host's file\n");
}

#[test]
fn a_package_whose_licence_needs_agreeing_to_is_installed() {
    if !tools::installed(&TOOLS)
        || !tools::installed(&["modifyrepo_c", "sha256sum"])
        || !tools::root()
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let repo = leap(&root);
    let gnupg = tmp.path().join("gnupg");
    let key = key(&gnupg, "repo@datum.invalid");
    let signer = (gnupg.as_path(), "repo@datum.invalid");
    signed_repository(&repo, signer, signer);
    // SUSE's metadata gives hello-datum 1.0-1 a licence to agree to (an
    // `eula` in susedata.xml, by the package's checksum), which zypper,
    // non-interactive, refuses unless told the operator agrees.
    let rpm = repo.join("hello-datum-1.0-1.noarch.rpm");
    let out = Command::new("sha256sum").arg(&rpm).output().unwrap();
    let sum = String::from_utf8(out.stdout).unwrap();
    let pkgid = sum.split_whitespace().next().unwrap();
    let susedata = tmp.path().join("susedata.xml");
    fs::write(
        &susedata,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<susedata xmlns=\"http://linux.duke.edu/metadata/susedata\" packages=\"1\">\n  <package pkgid=\"{pkgid}\" name=\"hello-datum\" arch=\"noarch\">\n    <version epoch=\"0\" ver=\"1.0\" rel=\"1\"/>\n    <eula>Read me first, and agree.</eula>\n  </package>\n</susedata>\n"
        ),
    )
    .unwrap();
    let out = Command::new("modifyrepo_c")
        .arg("--mdtype=susedata")
        .arg(&susedata)
        .arg(repo.join("repodata"))
        .output()
        .unwrap();
    assert!(out.status.success(), "modifyrepo_c: {out:?}");
    sign_metadata(&repo, signer);
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    version: \"1.0-1\"\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(packages::rpm_query(&root, &["hello-datum"]).starts_with("hello-datum-1.0-1 "));
}
