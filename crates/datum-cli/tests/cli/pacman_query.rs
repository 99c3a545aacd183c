//! `pacman -Q` under `datum apply --root` reads the root alone: the
//! root's pacman.conf, never the host's, and the root's database, never
//! one that a link in the root leads to on the host.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use datum_testkit::{packages, tools};

use crate::common::{Run, datum_process};
use crate::package_root::{self, apply};

/// A pacman local database at `db` holding `installed` (names and
/// versions), as pacman writes one.
fn local_db(db: &Path, installed: &[(&str, &str)]) {
    fs::create_dir_all(db.join("local")).unwrap();
    fs::write(db.join("local/ALPM_DB_VERSION"), "9\n").unwrap();
    for (name, version) in installed {
        let entry = db.join(format!("local/{name}-{version}"));
        fs::create_dir_all(&entry).unwrap();
        fs::write(
            entry.join("desc"),
            format!("%NAME%\n{name}\n\n%VERSION%\n{version}\n\n"),
        )
        .unwrap();
    }
}

/// An Arch-like root, arch-001, and a fleet wanting hello-datum 1.0-1.
fn arch_root(tmp: &Path) -> (PathBuf, PathBuf) {
    let root = tmp.join("root");
    packages::arch(&root, "unused");
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "arch-001\n").unwrap();
    let dir = tmp.join("fleet");
    package_root::fleet(
        &dir,
        "arch-001",
        "  Package[hello-datum]:\n    version: \"1.0-1\"\n",
    );
    (root, dir)
}

#[test]
fn pacman_under_root_reads_the_roots_database_not_one_a_link_leads_to_outside() {
    if !tools::installed(&["pacman"]) || !tools::root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, dir) = arch_root(tmp.path());
    // The root's own database has it: nothing to do.
    local_db(&root.join("var/lib/pacman"), &[("hello-datum", "1.0-1")]);
    let settled = apply(&dir, &root, &["--noop"]);
    assert_eq!(settled.code, 0, "{}\n{}", settled.stdout, settled.stderr);

    // /var/lib/pacman a link to a directory of the host's, whose database
    // has it; the same path inside the root has an empty one.
    let host = tmp.path().join("hostdb");
    local_db(&host, &[("hello-datum", "1.0-1")]);
    local_db(&root.join(host.strip_prefix("/").unwrap()), &[]);
    fs::remove_dir_all(root.join("var/lib/pacman")).unwrap();
    std::os::unix::fs::symlink(&host, root.join("var/lib/pacman")).unwrap();
    let inside = apply(&dir, &root, &["--noop"]);
    assert_eq!(inside.code, 2, "{}\n{}", inside.stdout, inside.stderr);
    assert!(
        inside.stdout.contains("ensure absent -> installed"),
        "{}",
        inside.stdout
    );
}

/// `datum apply --root ROOT ARGS --fleet FLEET` where the host's
/// /etc/pacman.conf reads as `conf` (bound over it in a mount namespace of
/// the run's own: the host's file is not changed).
fn apply_with_host_conf(conf: &Path, fleet: &Path, root: &Path, args: &[&str]) -> Run {
    let datum = datum_process().get_program().to_owned();
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg("mount --bind \"$0\" /etc/pacman.conf && exec \"$@\"")
        .arg(conf)
        .arg(datum)
        .args(["apply", "--root"])
        .arg(root)
        .args(args)
        .arg("--fleet")
        .arg(fleet)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    Run::from(out)
}

#[test]
fn pacman_under_root_reads_the_roots_config_not_the_hosts() {
    if !tools::installed(&["pacman", "unshare", "mount"]) || !tools::root() {
        return;
    }
    assert!(
        Path::new("/etc/pacman.conf").is_file(),
        "pacman-package-manager ships /etc/pacman.conf"
    );
    let tmp = tempfile::tempdir().unwrap();
    let (root, dir) = arch_root(tmp.path());
    local_db(&root.join("var/lib/pacman"), &[("hello-datum", "1.0-1")]);

    // The host's pacman.conf, broken (pacman refuses an Include that
    // matches nothing), is not read.
    let broken = tmp.path().join("host-pacman.conf");
    fs::write(
        &broken,
        "[options]\nInclude = /nonexistent/datum-host-*.conf\n",
    )
    .unwrap();
    let run = apply_with_host_conf(&broken, &dir, &root, &["--noop"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    // The root's, broken so, is.
    fs::write(
        root.join("etc/pacman.conf"),
        "[options]\nInclude = /etc/pacman.d/missing-*.conf\n",
    )
    .unwrap();
    let run = apply(&dir, &root, &["--noop"]);
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("missing-*.conf"), "{}", run.stdout);
}
