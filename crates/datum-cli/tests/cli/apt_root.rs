//! `datum apply --root` on a Debian-like root: a Repository resource adds
//! a local apt repository (a deb822 `.sources` file whose `Signed-By`
//! names a key made here, the repository's `InRelease` signed with it),
//! and Packages converge from it with the real apt-get and dpkg, off the
//! network. Nothing is downloaded.

use std::fs;
use std::path::{Path, PathBuf};

use datum_testkit::{packages, tools};

use crate::common::Run;
use crate::package_root::{self, apply, statuses};

/// A fleet of one host, debian-001, whose layer declares `resources`.
pub(crate) fn fleet(dir: &Path, resources: &str) {
    package_root::fleet(dir, "debian-001", resources);
}

/// Every file under `dir` with its size and modification time.
fn tree(dir: &Path) -> package_root::Tree {
    package_root::tree(dir, &[])
}

fn resources(key: &str, packages: &str) -> String {
    let key: String = key.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "  Repository[local]:\n    url: file:///srv/repo\n    suites: [./]\n    key: |\n{key}{packages}"
    )
}

/// A Debian-like root holding a flat repository in `/srv/repo` (hello-datum
/// 1.0-1 and 2.0-1, other-datum depending on hello-datum), signed by a key
/// made in `gnupg`; the key, armored.
pub(crate) fn debian_with_repo(tmp: &Path) -> (PathBuf, String) {
    let root = tmp.join("root");
    packages::debian(&root);
    fs::create_dir_all(root.join("etc/apt/sources.list.d")).unwrap();
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "debian-001\n").unwrap();
    let repo = root.join("srv/repo");
    packages::deb(&repo, "hello-datum", "1.0-1", None);
    packages::deb(&repo, "hello-datum", "2.0-1", None);
    packages::deb(&repo, "other-datum", "0.5-3", Some("hello-datum"));
    let key = packages::apt_repository(&repo, &tmp.join("gnupg"));
    (root, key)
}

fn dpkg_runs(root: &Path) -> Vec<String> {
    fs::read_to_string(root.join("var/log/dpkg.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| Some(l.split_once(" startup ")?.1.to_owned()))
        .collect()
}

#[test]
fn a_debian_like_root_converges_packages_from_a_repository_it_adds_with_its_key() {
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
    let tmp = tempfile::tempdir().unwrap();
    let (root, key) = debian_with_repo(tmp.path());
    let dir = tmp.path().join("fleet");
    let wanted = |v: &str| {
        format!(
            "  Package[other-datum]:\n    ensure: installed\n  Package[hello-datum]:\n    version: \"{v}\"\n"
        )
    };
    fleet(&dir, &resources(&key, &wanted("1.0-1")));

    // --noop plans all three, and changes nothing.
    let before = tree(&root);
    let noop = apply(&dir, &root, &["--noop", "--format", "json"]);
    assert_eq!(noop.code, 2, "{}\n{}", noop.stdout, noop.stderr);
    let s = |id: &str, st: &str| (id.to_owned(), st.to_owned());
    assert_eq!(
        statuses(&noop.stdout),
        [
            s("Repository[local]", "would_change"),
            s("Package[hello-datum]", "would_change"),
            s("Package[other-datum]", "would_change"),
        ]
    );
    assert_eq!(tree(&root), before);

    // The Repository first, then both packages from it in one apt
    // transaction.
    let first = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);
    assert_eq!(
        statuses(&first.stdout),
        [
            s("Repository[local]", "changed"),
            s("Package[hello-datum]", "changed"),
            s("Package[other-datum]", "changed"),
        ]
    );
    assert_eq!(
        fs::read_to_string(root.join("etc/apt/sources.list.d/datum-local.sources")).unwrap(),
        "# Managed by Datum: Repository[local]\nTypes: deb\nURIs: file:///srv/repo\nSuites: ./\n\
         Signed-By: /etc/apt/keyrings/datum-local.asc\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "1.0-1\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("usr/share/other-datum/version")).unwrap(),
        "0.5-3\n"
    );
    // apt runs dpkg once to unpack everything, once to configure it.
    assert_eq!(dpkg_runs(&root), ["archives unpack", "packages configure"]);
    // apt read the root's lists, kept in the root.
    assert!(
        fs::read_dir(root.join("var/lib/apt/lists"))
            .unwrap()
            .any(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with("_InRelease")
            })
    );

    // Second run: nothing to do, nothing touched.
    let settled = tree(&root);
    let second = apply(&dir, &root, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(tree(&root), settled);

    // A version change upgrades, from the lists already there.
    fleet(&dir, &resources(&key, &wanted("2.0-1")));
    let up = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(up.code, 2, "{}\n{}", up.stdout, up.stderr);
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "2.0-1\n"
    );

    // Removed, with the Repository and its key.
    fleet(
        &dir,
        "  Repository[local]:\n    ensure: absent\n  Package[hello-datum]:\n    ensure: absent\n  Package[other-datum]:\n    ensure: absent\n",
    );
    let gone = apply(&dir, &root, &[]);
    assert_eq!(gone.code, 2, "{}\n{}", gone.stdout, gone.stderr);
    assert!(!root.join("usr/share/hello-datum/version").exists());
    assert!(
        !root
            .join("etc/apt/sources.list.d/datum-local.sources")
            .exists()
    );
    assert!(!root.join("etc/apt/keyrings/datum-local.asc").exists());
    assert_eq!(apply(&dir, &root, &[]).code, 0);
}

/// A repository signed by another key than the Repository's is refused by
/// apt, and nothing is installed.
#[test]
fn an_apt_repository_signed_by_another_key_is_refused() {
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
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = debian_with_repo(tmp.path());
    let other_repo = tmp.path().join("other");
    packages::deb(&other_repo, "unused", "1.0", None);
    let other = packages::apt_repository(&other_repo, &tmp.path().join("gnupg2"));
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&other, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("NO_PUBKEY"), "{}", run.stdout);
    assert_eq!(
        statuses(&run.stdout),
        [
            ("Repository[local]".to_owned(), "changed".to_owned()),
            ("Package[hello-datum]".to_owned(), "failed".to_owned())
        ]
    );
    assert!(!root.join("usr/share/hello-datum/version").exists());
}

/// A root with the repository and a `datum-*.sources` of its own (`text`)
/// naming it, and a Package to install from it: the run's output.
fn planted_source(tmp: &Path, root: &Path, text: &str) -> Run {
    fs::write(
        root.join("etc/apt/sources.list.d/datum-planted.sources"),
        text,
    )
    .unwrap();
    let dir = tmp.join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
    apply(&dir, root, &["--format", "json"])
}

pub(crate) fn apt_tools() -> bool {
    tools::installed(&[
        "apt-get",
        "dpkg",
        "dpkg-deb",
        "dpkg-scanpackages",
        "gpg",
        "unshare",
    ]) && tools::root()
}

/// A `Signed-By` continued onto the next line names a file as one on a
/// single line does: a key file of this machine is looked for inside the
/// root, where there is none, and apt never trusts the machine's key.
#[test]
fn a_continued_signed_by_path_is_read_inside_the_root() {
    if !apt_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, key) = debian_with_repo(tmp.path());
    let host_key = tmp.path().join("hostkey.asc");
    fs::write(&host_key, key).unwrap();
    let run = planted_source(
        tmp.path(),
        &root,
        &format!(
            "Types: deb\nURIs: file:///srv/repo\nSuites: ./\nSigned-By:\n {}\n",
            host_key.display()
        ),
    );
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "the key {} does not exist",
            root.join(host_key.strip_prefix("/").unwrap()).display()
        )),
        "{}",
        run.stdout
    );
    assert!(!root.join("usr/share/hello-datum/version").exists());
}

/// A source that tells apt to skip the signature check is refused, naming
/// its file and line; nothing is installed.
#[test]
fn a_trusted_source_is_refused() {
    if !apt_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, _) = debian_with_repo(tmp.path());
    let run = planted_source(
        tmp.path(),
        &root,
        "Types: deb\nURIs: file:///srv/repo\nSuites: ./\nTrusted: yes\n",
    );
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    let file = root.join("etc/apt/sources.list.d/datum-planted.sources");
    assert!(
        run.stdout.contains(&format!(
            "{}: line 4: `Trusted`: under --root",
            file.display()
        )),
        "{}",
        run.stdout
    );
    assert!(!root.join("usr/share/hello-datum/version").exists());
}

/// A file of this machine with its content and mode, for a link in the
/// root to lead to.
fn host_file(path: &Path) -> (String, u32) {
    use std::os::unix::fs::PermissionsExt;
    let meta = fs::metadata(path).unwrap();
    (
        fs::read_to_string(path).unwrap(),
        meta.permissions().mode() & 0o7777,
    )
}

/// dpkg's log, apt's term log, dpkg's lock: each a link in the root to a
/// file of this machine, which dpkg and apt (as root, by its path here)
/// would write or chmod. Each is refused before apt runs, the file it
/// leads to untouched, nothing installed.
#[test]
fn apt_refuses_links_at_the_files_it_and_dpkg_write() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    if !apt_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, key) = debian_with_repo(tmp.path());
    fs::create_dir_all(root.join("var/log/apt")).unwrap();
    let dir = tmp.path().join("fleet");
    fleet(
        &dir,
        &resources(&key, "  Package[hello-datum]:\n    ensure: installed\n"),
    );
    let host = tmp.path().join("host-file");
    // What went wrong with each link: collected, so that every one is seen.
    let mut wrong = Vec::new();
    for planted in [
        "var/log/dpkg.log",
        "var/log/apt/term.log",
        "var/lib/dpkg/lock",
        "var/lib/apt/lists/lock",
    ] {
        fs::write(&host, "the host's\n").unwrap();
        fs::set_permissions(&host, fs::Permissions::from_mode(0o644)).unwrap();
        let link = root.join(planted);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        // dpkg and apt leave their lock files behind.
        let _ = fs::remove_file(&link);
        symlink(&host, &link).unwrap();
        let run = apply(&dir, &root, &["--format", "json"]);
        if host_file(&host) != ("the host's\n".to_owned(), 0o644) {
            wrong.push(format!(
                "{planted}: the host's file changed: {:?}",
                host_file(&host)
            ));
        }
        let refusal = format!(
            "{} is a symbolic link: under --root, dpkg and apt open it",
            link.display()
        );
        if !run.stdout.contains(&refusal) {
            wrong.push(format!("{planted}: not refused (exit {})", run.code));
        }
        if root.join("usr/share/hello-datum/version").exists() {
            wrong.push(format!("{planted}: installed"));
            packages_removed(&root);
        }
        fs::remove_file(&link).unwrap();
    }
    assert_eq!(wrong, Vec::<String>::new());
    // With the links gone, it installs.
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(root.join("usr/share/hello-datum/version").exists());
}

/// Without Repositories, dpkg installs from the archive cache: a root
/// whose `/var/log` leads out of it, or whose dpkg log is a link, is
/// refused, and dpkg writes no log on this machine.
#[test]
fn dpkg_refuses_a_log_that_leads_out_of_the_root() {
    use std::os::unix::fs::symlink;
    if !tools::installed(&["dpkg", "dpkg-deb"]) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::debian(&root);
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "debian-001\n").unwrap();
    packages::deb(
        &root.join("var/cache/apt/archives"),
        "hello-datum",
        "1.0-1",
        None,
    );
    let dir = tmp.path().join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");

    // /var/log a link to a directory of this machine.
    let host_log = tmp.path().join("host-log");
    fs::create_dir_all(&host_log).unwrap();
    fs::remove_dir(root.join("var/log")).unwrap();
    symlink(&host_log, root.join("var/log")).unwrap();
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "{} is a symbolic link that leads out of the root",
            root.join("var/log").display()
        )),
        "{}",
        run.stdout
    );
    assert_eq!(fs::read_dir(&host_log).unwrap().count(), 0);
    assert!(!root.join("usr/share/hello-datum/version").exists());

    // /var/log the root's, its dpkg.log a link to a file of this machine.
    fs::remove_file(root.join("var/log")).unwrap();
    fs::create_dir(root.join("var/log")).unwrap();
    let host = tmp.path().join("host-file");
    fs::write(&host, "the host's\n").unwrap();
    symlink(&host, root.join("var/log/dpkg.log")).unwrap();
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "{} is a symbolic link: under --root",
            root.join("var/log/dpkg.log").display()
        )),
        "{}",
        run.stdout
    );
    assert_eq!(fs::read_to_string(&host).unwrap(), "the host's\n");

    // The dpkg database's status a link to a file of this machine: dpkg-query
    // would read this machine's packages as the root's.
    fs::remove_file(root.join("var/log/dpkg.log")).unwrap();
    let status = root.join("var/lib/dpkg/status");
    fs::remove_file(&status).unwrap();
    fs::write(&host, "").unwrap();
    symlink(&host, &status).unwrap();
    let run = apply(&dir, &root, &["--noop", "--format", "json"]);
    assert!(
        run.stdout.contains(&format!(
            "{} is a symbolic link: under --root",
            status.display()
        )),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    fs::remove_file(&status).unwrap();
    fs::write(&status, "").unwrap();

    // A plain log: installed, and logged in the root.
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(!dpkg_runs(&root).is_empty());
}

/// hello-datum removed with dpkg from `root`, to try again.
fn packages_removed(root: &Path) {
    let ok = std::process::Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args(["--log=/dev/null", "--purge", "hello-datum"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// Without Repositories, dpkg installs from the archive cache: a `.deb`
/// there that is a link to a package of this machine is refused by its
/// name before dpkg (or dpkg-deb) reads it; nothing is installed.
#[test]
fn dpkg_refuses_a_deb_in_the_archive_cache_that_links_out_of_the_root() {
    use std::os::unix::fs::symlink;
    if !tools::installed(&["dpkg", "dpkg-deb"]) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::debian(&root);
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "debian-001\n").unwrap();
    let host_deb = packages::deb(&tmp.path().join("host"), "hello-datum", "1.0-1", None);
    let archives = root.join("var/cache/apt/archives");
    fs::create_dir_all(&archives).unwrap();
    let link = archives.join("hello-datum_1.0-1_all.deb");
    symlink(&host_deb, &link).unwrap();
    let dir = tmp.path().join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
    let run = apply(&dir, &root, &["--format", "json"]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "{} is a symbolic link: under --root, dpkg reads the archive cache's .deb files by their path on this machine",
            link.display()
        )),
        "{}",
        run.stdout
    );
    assert!(!root.join("usr/share/hello-datum/version").exists());
    assert!(dpkg_runs(&root).is_empty());
    // The file itself there: installed.
    fs::remove_file(&link).unwrap();
    fs::copy(&host_deb, &link).unwrap();
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(root.join("usr/share/hello-datum/version").exists());
}
