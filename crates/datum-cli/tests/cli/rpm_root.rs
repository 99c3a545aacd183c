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

/// The install reads the metadata the location check read: a root whose
/// repository's metadata changes once the check has run (here by a `dnf`
/// that swaps it in after `dnf repoquery`, as a process of the root could,
/// the repository's `metadata_expire=0` asking dnf to load it again) is
/// installed from the checked metadata, never from the new one, whose
/// location climbs out of the root to an rpm of this machine.
#[test]
fn the_install_reads_the_metadata_the_location_check_read() {
    use std::os::unix::fs::PermissionsExt;
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
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
    // The metadata swapped in later, made first in a copy of the repository.
    let later = tmp.path().join("later");
    fs::create_dir_all(&later).unwrap();
    fs::copy(outside.join(rpm), later.join(rpm)).unwrap();
    ok(Command::new("createrepo_c")
        .args(["--quiet", "--location-prefix", "../../../outside"])
        .arg(&later));
    ok(Command::new("createrepo_c").arg("--quiet").arg(&repo));
    fs::write(
        root.join("etc/yum.repos.d/hostile.repo"),
        "[hostile]\nname=hostile\nbaseurl=file:///srv/repo\ngpgcheck=0\nmetadata_expire=0\n",
    )
    .unwrap();
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let r = repo.display();
    let l = later.display();
    fs::write(
        bin.join("dnf"),
        format!(
            "#!/bin/sh\n/usr/bin/dnf \"$@\"\nst=$?\ncase \" $* \" in *' repoquery '*)\n\
             rm -rf {r}/repodata {r}/{rpm} && cp -a {l}/repodata {r}/repodata && sleep 2 ;;\nesac\nexit $st\n"
        ),
    )
    .unwrap();
    fs::set_permissions(bin.join("dnf"), fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = crate::common::datum()
        .env("PATH", path)
        .args(["apply", "--root", root.to_str().unwrap(), "--fleet"])
        .arg(&dir)
        .output()
        .unwrap();
    let run = crate::common::Run::from(out);
    assert!(repo.join("repodata").exists() && !repo.join(rpm).exists());
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    // dnf looked for the rpm where the checked metadata puts it.
    let want = format!("Error opening {}: No such file", repo.join(rpm).display());
    assert!(run.stdout.contains(&want), "{}", run.stdout);
    assert!(
        packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"),
        "{}",
        run.stdout
    );
    assert!(!root.join("usr/share/hello-datum").exists());
}

/// A repository dnf skips when the check loads it (its metadata broken,
/// `skip_if_unavailable=1`) while dnf's cache in the root still holds
/// metadata of it leading out of the root (left by an earlier run, or put
/// there): the install does not read that cache; nothing is installed.
#[test]
fn a_repository_the_check_skips_is_not_installed_from_its_cache() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
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
    ok(Command::new("createrepo_c")
        .args(["--quiet", "--location-prefix", "../../../outside"])
        .arg(&repo));
    fs::remove_file(repo.join(rpm)).unwrap();
    fs::write(
        root.join("etc/yum.repos.d/hostile.repo"),
        "[hostile]\nname=hostile\nbaseurl=file:///srv/repo\ngpgcheck=0\nskip_if_unavailable=1\nmetadata_expire=1h\n",
    )
    .unwrap();
    let dir = tmp.path().join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
    // Refused, dnf's cache left holding the metadata.
    let run = apply(&dir, &root, &[]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("leads out of the root"),
        "{}",
        run.stdout
    );
    // The repository's metadata broken, dnf's cache of it expired (made
    // old): dnf loads it again, and skips it.
    fs::write(repo.join("repodata/repomd.xml"), "broken\n").unwrap();
    ok(Command::new("find").arg(root.join("var/cache/dnf")).args([
        "-exec",
        "touch",
        "-h",
        "-d",
        "2000-01-01",
        "{}",
        "+",
    ]));
    let run = apply(&dir, &root, &[]);
    assert!(
        run.stdout
            .contains("Failed to download metadata for repo 'hostile'"),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(
        packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"),
        "{}",
        run.stdout
    );
    assert!(!root.join("usr/share/hello-datum").exists());
}

/// dnf reads a package argument ending with `.rpm` as a file of this
/// machine (relative to the working directory): a Package so named is
/// refused, whether to install or remove, before dnf runs; nothing is read
/// from the directory Datum runs in, nothing installed.
#[test]
fn a_package_named_like_an_rpm_file_is_refused() {
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::rocky(&root);
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "rocky-001\n").unwrap();
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "other-datum", None, "1.0", "1");
    ok(Command::new("createrepo_c").arg("--quiet").arg(&repo));
    fs::write(
        root.join("etc/yum.repos.d/local.repo"),
        "[local]\nname=local\nbaseurl=file:///srv/repo\ngpgcheck=0\n",
    )
    .unwrap();
    // The working directory, on this machine, holds the rpm.
    let cwd = tmp.path().join("cwd");
    packages::rpm(&cwd, "hello-datum", None, "1.0", "1");
    let rpm = "hello-datum-1.0-1.noarch.rpm";
    for ensure in ["installed", "absent"] {
        let dir = tmp.path().join("fleet");
        fleet(&dir, &format!("  Package[{rpm}]:\n    ensure: {ensure}\n"));
        let out = crate::common::datum()
            .current_dir(&cwd)
            .args(["apply", "--root", root.to_str().unwrap(), "--fleet"])
            .arg(&dir)
            .output()
            .unwrap();
        let run = crate::common::Run::from(out);
        assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
        let want = format!(
            "`{rpm}` ends with `.rpm`, which dnf and zypper read as the path of a package file on this machine"
        );
        assert!(run.stdout.contains(&want), "{}", run.stdout);
        assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
    }
}

/// dnf writes its cache of a repository's metadata in a directory of
/// `DIR/var/cache/dnf` named after the repository, and its logs by name in
/// `DIR/var/log`: that directory a link to a directory of this machine, or
/// a log a link to a file of this machine, is refused before dnf runs;
/// nothing is written there.
#[test]
fn dnf_refuses_links_where_it_writes() {
    use std::os::unix::fs::symlink;
    if !tools::installed(&["rpm", "rpmbuild", "createrepo_c", "dnf", "unshare"]) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    packages::rocky(&root);
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "rocky-001\n").unwrap();
    let repo = root.join("srv/repo");
    packages::rpm(&repo, "hello-datum", None, "1.0", "1");
    ok(Command::new("createrepo_c").arg("--quiet").arg(&repo));
    fs::write(
        root.join("etc/yum.repos.d/local.repo"),
        "[local]\nname=local\nbaseurl=file:///srv/repo\ngpgcheck=0\n",
    )
    .unwrap();
    let dir = tmp.path().join("fleet");
    let package = |ensure: &str| {
        fleet(
            &dir,
            &format!("  Package[hello-datum]:\n    ensure: {ensure}\n"),
        );
        apply(&dir, &root, &[])
    };
    let run = package("installed");
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let run = package("absent");
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    // dnf's cache of the repository made a link to a directory outside.
    let named = fs::read_dir(root.join("var/cache/dnf"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("local-")
        })
        .unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::remove_dir_all(&named).unwrap();
    symlink(&outside, &named).unwrap();
    let log = root.join("var/log/dnf.log");
    let host_log = tmp.path().join("host.log");
    fs::write(&host_log, "the host's\n").unwrap();
    let db = root.join("var/lib/rpm/rpmdb.sqlite");
    let host_db = tmp.path().join("host-db/rpmdb.sqlite");
    fs::create_dir_all(host_db.parent().unwrap()).unwrap();
    for link in [&named, &log, &db] {
        let run = package("installed");
        assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
        let want = format!(
            "{} is a symbolic link that leads out of the root",
            link.display()
        );
        let want_file = format!(
            "{} is a symbolic link: under --root, rpm and dnf open it",
            link.display()
        );
        assert!(
            run.stdout.contains(&want) || run.stdout.contains(&want_file),
            "{}",
            run.stdout
        );
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert_eq!(fs::read_to_string(&host_log).unwrap(), "the host's\n");
        // Nothing written beside the host's copy of the database (and it
        // is not read here, which would write there).
        assert_eq!(
            fs::read_dir(host_db.parent().unwrap()).unwrap().count(),
            usize::from(link == &db)
        );
        if link != &db {
            assert!(packages::rpm_query(&root, &["hello-datum"]).contains("is not installed"));
        }
        // The next: the cache's link gone, the log a link to the host's;
        // then the log back, the rpm database a link to a host's copy.
        if link == &named {
            fs::remove_file(&named).unwrap();
            fs::remove_file(&log).unwrap();
            symlink(&host_log, &log).unwrap();
        } else if link == &log {
            fs::remove_file(&log).unwrap();
            fs::rename(&db, &host_db).unwrap();
            symlink(&host_db, &db).unwrap();
        }
    }
}
