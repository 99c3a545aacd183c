//! `datum apply --root` on an Arch-like root with a signed repository: a
//! Repository's `key` goes into the root's pacman keyring, trusted, and
//! only packages it signed are installed; the keys Datum added, and only
//! those, leave with the Repository. Packages and keys are made here;
//! nothing is downloaded, and the host's keyring is never touched.

use std::fs;
use std::path::Path;

use datum_testkit::{packages, tools};

use crate::package_root::{self, apply};

/// A fleet of one host, arch-001, whose layer declares `resources`.
pub(crate) fn fleet(dir: &Path, resources: &str) {
    package_root::fleet(dir, "arch-001", resources);
}

/// Every file under `dir` with its size and modification time.
fn tree(dir: &Path) -> package_root::Tree {
    package_root::tree(dir, &[])
}

/// The tools a signed pacman repository needs, here and in the root.
pub(crate) const SIGNED_TOOLS: &[&str] = &[
    "pacman",
    "pacman-key",
    "repo-add",
    "bsdtar",
    "unshare",
    "gpg",
    "gpgconf",
    "gpg-agent",
    "ldd",
    "mknod",
];

/// An Arch-like root whose pacman.conf checks no signature of its own
/// (`SigLevel = Never`) and includes Datum's files, with gpg inside as
/// pacman needs to check signatures; its path.
pub(crate) fn signed_root(tmp: &Path) -> std::path::PathBuf {
    let root = tmp.join("root");
    packages::arch(&root, "unused");
    fs::write(
        root.join("etc/pacman.conf"),
        "[options]\nArchitecture = auto\nSigLevel = Never\nInclude = /etc/pacman.d/datum-*.conf\n",
    )
    .unwrap();
    fs::create_dir_all(root.join("etc/pacman.d")).unwrap();
    fs::create_dir_all(root.join("var/log")).unwrap();
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "arch-001\n").unwrap();
    packages::gnupg_in_root(&root);
    root
}

/// A Repository `datumtest` served from the root's `/srv/datumtest`,
/// with `key`, and `more` resources.
pub(crate) fn keyed(key: &str, more: &str) -> String {
    let key: String = key.lines().map(|l| format!("      {l}\n")).collect();
    format!("  Repository[datumtest]:\n    url: file:///srv/datumtest\n    key: |\n{key}{more}")
}

/// A key's primary fingerprint, as gpg prints it.
pub(crate) fn fingerprint(gnupg: &Path, email: &str) -> String {
    let out = std::process::Command::new("gpg")
        .env("GNUPGHOME", gnupg)
        .args(["--batch", "--with-colons", "--fingerprint", email])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let fpr = text.lines().find(|l| l.starts_with("fpr:")).unwrap();
    fpr.split(':').nth(9).unwrap().to_owned()
}

/// What the root's keyring says of `fpr`: its `pub` line's validity
/// (`f`: trusted through the master key's local signature), or `None`
/// when the keyring does not hold it. Read from a copy, so that the
/// keyring itself stays as it was.
pub(crate) fn validity(root: &Path, fpr: &str) -> Option<String> {
    let copy = tempfile::tempdir().unwrap();
    for name in ["pubring.gpg", "trustdb.gpg"] {
        fs::copy(
            root.join("etc/pacman.d/gnupg").join(name),
            copy.path().join(name),
        )
        .ok()?;
    }
    let out = std::process::Command::new("gpg")
        .arg("--homedir")
        .arg(copy.path())
        .args([
            "--batch",
            "--no-auto-check-trustdb",
            "--with-colons",
            "--list-keys",
            fpr,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = std::process::Command::new("gpgconf")
        .arg("--homedir")
        .arg(copy.path())
        .args(["--kill", "all"])
        .output();
    text.lines()
        .find(|l| l.starts_with("pub:"))
        .map(|l| l.split(':').nth(1).unwrap().to_owned())
}

/// The host's own pacman keyring, as it is (`None` where there is none).
fn host_keyring() -> Option<package_root::Tree> {
    let dir = Path::new("/etc/pacman.d/gnupg");
    dir.exists().then(|| package_root::tree(dir, &[]))
}

#[test]
fn a_pacman_repository_key_goes_into_the_roots_keyring_and_only_its_packages_install() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let host = host_keyring();
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let (ours, theirs) = (tmp.path().join("ours"), tmp.path().join("theirs"));
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    packages::signing_key(&theirs, "rogue@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let repo = root.join("srv/datumtest");
    packages::sign(
        &packages::pacman_package(&repo, "hello-datum", "1.0-1"),
        &ours,
    );
    packages::sign(
        &packages::pacman_package(&repo, "rogue-datum", "1.0-1"),
        &theirs,
    );
    packages::pacman_package(&repo, "unsigned-datum", "1.0-1");
    packages::repo_add(&repo, "datumtest");
    let dir = tmp.path().join("fleet");
    let hello = "  Package[hello-datum]:\n    ensure: installed\n";
    fleet(&dir, &keyed(&key, hello));

    // --noop: the keyring is not even made.
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop"]);
    assert_eq!(noop.code, 2, "{}\n{}", noop.stdout, noop.stderr);
    assert!(
        noop.stdout.contains(&format!("key absent -> {fpr}")),
        "{}",
        noop.stdout
    );
    assert_eq!(tree(&root), before);

    let first = apply(&dir, &root, &[]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);
    assert_eq!(
        fs::read_to_string(root.join("etc/pacman.d/datum-datumtest.conf")).unwrap(),
        "# Managed by Datum: Repository[datumtest]\n[datumtest]\n\
         SigLevel = Required DatabaseOptional\nServer = file:///srv/datumtest\n"
    );
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    let record = fs::read_to_string(root.join("etc/pacman.d/datum-datumtest.keys")).unwrap();
    assert!(record.lines().any(|l| l == fpr), "{record}");
    assert!(root.join("usr/share/hello-datum/version").exists());

    // Second run: nothing to do, the keyring as it was.
    let settled = tree(&root);
    let second = apply(&dir, &root, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(tree(&root), settled);

    // Signed by another key, or not at all: pacman refuses it.
    for (name, why) in [
        ("rogue-datum", "required key missing from keyring"),
        (
            "unsigned-datum",
            "failed retrieving file 'unsigned-datum-1.0-1-any.pkg.tar.zst.sig'",
        ),
    ] {
        fleet(
            &dir,
            &keyed(
                &key,
                &format!("{hello}  Package[{name}]:\n    ensure: installed\n"),
            ),
        );
        let refused = apply(&dir, &root, &[]);
        assert_eq!(
            refused.code, 4,
            "{name}: {}\n{}",
            refused.stdout, refused.stderr
        );
        assert!(refused.stdout.contains(why), "{name}: {}", refused.stdout);
        assert!(
            !root.join(format!("usr/share/{name}")).exists(),
            "{name} installed"
        );
    }

    // Removed: the key Datum added leaves the keyring with the Repository.
    fleet(
        &dir,
        "  Repository[datumtest]:\n    ensure: absent\n  Package[hello-datum]:\n    ensure: absent\n",
    );
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert_eq!(validity(&root, &fpr), None);
    assert!(!root.join("etc/pacman.d/datum-datumtest.keys").exists());
    assert!(!root.join("etc/pacman.d/datum-datumtest.conf").exists());
    assert_eq!(apply(&dir, &root, &[]).code, 0);
    assert_eq!(host_keyring(), host, "the host's keyring changed");
}

/// The operator's keyring in `root`: made with `pacman-key --init`, then
/// `key` imported with gpg itself (not signed, so not trusted yet).
pub(crate) fn operator_keyring(root: &Path, key: &str) {
    let gnupg = root.join("etc/pacman.d/gnupg");
    let run = |cmd: &mut std::process::Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(std::process::Command::new("pacman-key")
        .arg("--gpgdir")
        .arg(&gnupg)
        .arg("--config")
        .arg(root.join("etc/pacman.conf"))
        .arg("--init"));
    let file = root.join("operator.asc");
    fs::write(&file, key).unwrap();
    run(std::process::Command::new("gpg")
        .arg("--homedir")
        .arg(&gnupg)
        .args(["--batch", "--import"])
        .arg(&file));
    fs::remove_file(&file).unwrap();
    run(std::process::Command::new("gpgconf")
        .arg("--homedir")
        .arg(&gnupg)
        .args(["--kill", "all"]));
}

#[test]
fn a_pacman_repository_key_change_replaces_only_the_key_datum_added() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let host = host_keyring();
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let keys: Vec<(String, String)> = ["operator", "second", "third"]
        .iter()
        .map(|who| {
            let gnupg = tmp.path().join(who);
            let email = format!("{who}@datum.invalid");
            (
                packages::signing_key(&gnupg, &email),
                fingerprint(&gnupg, &email),
            )
        })
        .collect();
    let [(operator, op), (second, two), (third, three)] = &keys[..] else {
        unreachable!()
    };
    operator_keyring(&root, operator);
    let dir = tmp.path().join("fleet");
    let record = root.join("etc/pacman.d/datum-datumtest.keys");

    // The operator's key, already there: signed (trusted), recorded as
    // signed only.
    fleet(&dir, &keyed(operator, ""));
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop"]);
    assert!(
        noop.stdout
            .contains(&format!("key {op} (not trusted) -> {op}")),
        "{}",
        noop.stdout
    );
    assert_eq!(tree(&root), before, "--noop changed the root");
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(validity(&root, op).as_deref(), Some("f"));
    assert!(
        fs::read_to_string(&record)
            .unwrap()
            .lines()
            .any(|l| l == format!("signed {op}")),
        "{:?}",
        fs::read_to_string(&record)
    );
    let settled = tree(&root);
    assert_eq!(apply(&dir, &root, &[]).code, 0);
    assert_eq!(tree(&root), settled);

    // Another key: added and recorded; the operator's stays, no longer
    // signed by Datum.
    fleet(&dir, &keyed(second, ""));
    let changed = apply(&dir, &root, &[]);
    assert!(
        changed.stdout.contains(&format!("key {op} -> {two}")),
        "{}",
        changed.stdout
    );
    assert_eq!(validity(&root, two).as_deref(), Some("f"));
    assert_eq!(validity(&root, op).as_deref(), Some("-"));
    assert!(fs::read_to_string(&record).unwrap().contains(two.as_str()));

    // And another: the one Datum added is replaced.
    fleet(&dir, &keyed(third, ""));
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop"]);
    assert!(
        noop.stdout.contains(&format!("key {two} -> {three}")),
        "{}",
        noop.stdout
    );
    assert_eq!(tree(&root), before, "--noop changed the root");
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(validity(&root, two), None);
    assert_eq!(validity(&root, three).as_deref(), Some("f"));
    let kept = fs::read_to_string(&record).unwrap();
    assert!(
        kept.contains(three.as_str()) && !kept.contains(two.as_str()),
        "{kept}"
    );

    // Gone: Datum's key with it, the operator's kept.
    fleet(&dir, "  Repository[datumtest]:\n    ensure: absent\n");
    assert_eq!(apply(&dir, &root, &[]).code, 2);
    assert_eq!(validity(&root, three), None);
    assert_eq!(validity(&root, op).as_deref(), Some("-"));
    assert!(!record.exists());
    assert_eq!(host_keyring(), host, "the host's keyring changed");
}

/// A link in the root's keyring directory leading out of the root is not
/// followed: not when the keyring is read (its public keys), not when it
/// is made (pacman-key --init writes gpg.conf).
#[test]
fn a_link_in_the_roots_pacman_keyring_is_not_followed_out_of_it() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let key = packages::signing_key(&tmp.path().join("ours"), "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let host = tmp.path().join("host");
    fs::create_dir_all(&host).unwrap();
    let gnupg = root.join("etc/pacman.d/gnupg");
    fs::create_dir_all(&gnupg).unwrap();

    // No keyring yet; its gpg.conf a link to a file of the host's.
    fs::write(host.join("gpg.conf"), "# the host's\n").unwrap();
    std::os::unix::fs::symlink(host.join("gpg.conf"), gnupg.join("gpg.conf")).unwrap();
    let refused = apply(&dir, &root, &[]);
    assert_eq!(refused.code, 4, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("gpg.conf is a link"),
        "{}",
        refused.stdout
    );
    assert_eq!(
        fs::read_to_string(host.join("gpg.conf")).unwrap(),
        "# the host's\n"
    );

    // A keyring whose public keys are a link to the host's.
    fs::remove_file(gnupg.join("gpg.conf")).unwrap();
    operator_keyring(&root, &key);
    fs::rename(gnupg.join("pubring.gpg"), host.join("pubring.gpg")).unwrap();
    std::os::unix::fs::symlink(host.join("pubring.gpg"), gnupg.join("pubring.gpg")).unwrap();
    let before = package_root::tree(&host, &[]);
    let refused = apply(&dir, &root, &[]);
    assert_eq!(refused.code, 4, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("cannot read pacman's keyring")
            && refused.stdout.contains("pubring.gpg"),
        "{}",
        refused.stdout
    );
    assert_eq!(package_root::tree(&host, &[]), before);
}

/// pacman, chrooted, checks signatures with the root's own gpg: a root
/// without what that needs fails the transaction saying what is missing.
#[test]
fn a_root_without_gpg_for_pacman_fails_saying_what_is_missing() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    fs::remove_file(root.join("dev/null")).unwrap();
    let gnupg = tmp.path().join("ours");
    let key = packages::signing_key(&gnupg, "pacman@datum.invalid");
    let repo = root.join("srv/datumtest");
    packages::sign(
        &packages::pacman_package(&repo, "hello-datum", "1.0-1"),
        &gnupg,
    );
    packages::repo_add(&repo, "datumtest");
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &keyed(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &[]);
    // The Repository changed, the Package failed.
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    let missing = format!("{} missing", root.join("dev/null").display());
    assert!(run.stdout.contains(&missing), "{}", run.stdout);
    assert!(!root.join("usr/share/hello-datum").exists());
}

/// A `key` that is no OpenPGP key fails the Repository, saying so, and
/// leaves the root's keyring unmade.
#[test]
fn a_pacman_repository_key_that_is_no_key_fails_it() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed("not a key\n", ""));
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("holds no OpenPGP public key"),
        "{}",
        run.stdout
    );
    assert!(!root.join("etc/pacman.d/gnupg").exists());
}

/// A keyring without pacman's master key (never `pacman-key --init`ed,
/// or an `--init` whose key generation failed) counts as unmade: it is
/// given its master key, which then signs the Repository's key.
#[test]
fn a_pacman_keyring_without_its_master_key_is_given_one() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    let gnupg = root.join("etc/pacman.d/gnupg");
    fs::create_dir_all(&gnupg).unwrap();
    fs::write(gnupg.join("pubring.gpg"), "").unwrap();
    let made = std::process::Command::new("gpg")
        .arg("--homedir")
        .arg(&gnupg)
        .args(["--batch", "--update-trustdb"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let ours = tmp.path().join("ours");
    let key = packages::signing_key(&ours, "pacman@datum.invalid");
    let fpr = fingerprint(&ours, "pacman@datum.invalid");
    let dir = tmp.path().join("fleet");
    fleet(&dir, &keyed(&key, ""));
    let made = apply(&dir, &root, &[]);
    assert_eq!(made.code, 2, "{}\n{}", made.stdout, made.stderr);
    assert_eq!(validity(&root, &fpr).as_deref(), Some("f"));
    assert_eq!(
        fs::read_dir(gnupg.join("private-keys-v1.d"))
            .unwrap()
            .count(),
        1
    );
    assert_eq!(apply(&dir, &root, &[]).code, 0);

    fleet(&dir, "  Repository[datumtest]:\n    ensure: absent\n");
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert_eq!(validity(&root, &fpr), None);
}

/// The keyring is the one the root's pacman.conf names (`GPGDir`), where
/// pacman, chrooted, looks for it too.
#[test]
fn a_pacman_key_goes_into_the_keyring_the_roots_pacman_conf_names() {
    if !tools::installed(SIGNED_TOOLS) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = signed_root(tmp.path());
    fs::write(
        root.join("etc/pacman.conf"),
        "[options]\nArchitecture = auto\nSigLevel = Never\nGPGDir = /etc/pacman.d/elsewhere/\n\
         Include = /etc/pacman.d/datum-*.conf\n",
    )
    .unwrap();
    let gnupg = tmp.path().join("ours");
    let key = packages::signing_key(&gnupg, "pacman@datum.invalid");
    let repo = root.join("srv/datumtest");
    packages::sign(
        &packages::pacman_package(&repo, "hello-datum", "1.0-1"),
        &gnupg,
    );
    packages::repo_add(&repo, "datumtest");
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &keyed(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(root.join("usr/share/hello-datum/version").exists());
    assert!(root.join("etc/pacman.d/elsewhere/pubring.gpg").exists());
    assert!(!root.join("etc/pacman.d/gnupg").exists());
}
