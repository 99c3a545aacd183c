//! What apply and the agent read for themselves under `--root` (the host's
//! key, the record of secrets applied, a bundle named by a path or a
//! `file://` URL) is opened inside the root like every path of a manifest:
//! a link or `..` planted there leads somewhere inside, never out, and
//! only a regular file is read, so a FIFO is refused instead of waited on.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::agent::{Host, make_bundles};
use crate::common::{Run, datum};
use crate::delivery::Repo;
use crate::secret_fleet::{Fleet, PLAINTEXT, files_under};

/// `datum apply --root ROOT ARGS` for the secret fleet, killed after a
/// minute: the run takes well under a second, and one that waits on a
/// FIFO would never end, so it fails the test instead of hanging it. The
/// root's path in the output reads `[ROOT]`.
fn apply(f: &Fleet, root: &Path, extra: &[&str]) -> Run {
    let out = datum()
        .timeout(Duration::from_secs(60))
        .arg("apply")
        .arg("--root")
        .arg(root)
        .args(extra)
        .arg("--fleet")
        .arg(f.fleet())
        .output()
        .expect("datum apply ended within a minute");
    let run = Run::from(out);
    assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
    let real = root.canonicalize().unwrap().display().to_string();
    Run {
        code: run.code,
        stdout: run.stdout.replace(&real, "[ROOT]"),
        stderr: run.stderr.replace(&real, "[ROOT]"),
    }
}

fn mkfifo(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Every regular file under `dir` with its bytes, to show nothing there
/// changed.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    files_under(dir, Path::new(""), &mut files);
    files.sort();
    files
}

/// `../` enough times to climb from any temporary root to `/`, then `abs`.
fn climbing(abs: &Path) -> String {
    format!("{}{}", "../".repeat(32), abs.display())
}

const KEY: &str = "etc/ssh/ssh_host_ed25519_key";

/// What a test plants in a root, and how it reads in a failure.
type Plant<'a> = (&'a str, &'a dyn Fn(&Path));

#[test]
fn a_host_key_linked_out_of_the_root_is_never_read() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    // web-01's real key, outside every root: a link there must not reach it.
    let outside = tempfile::tempdir().unwrap();
    let key = outside.path().join(KEY);
    fs::create_dir_all(key.parent().unwrap()).unwrap();
    fs::copy(f.key("web-01"), &key).unwrap();
    let before = contents(outside.path());
    let plants: [Plant; 3] = [
        ("an absolute link", &|root| {
            symlink(&key, root.join(KEY)).unwrap()
        }),
        ("a `../..` link", &|root| {
            symlink(climbing(&key), root.join(KEY)).unwrap()
        }),
        ("/etc/ssh itself a link", &|root| {
            fs::remove_dir_all(root.join("etc/ssh")).unwrap();
            symlink(key.parent().unwrap(), root.join("etc/ssh")).unwrap();
        }),
    ];
    for (what, plant) in plants {
        let root = f.machine("web-01", "web-01");
        fs::remove_file(root.path().join(KEY)).unwrap();
        plant(root.path());
        let run = apply(&f, root.path(), &[]);
        assert_eq!(run.code, 4, "{what}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(
                "error: cannot decrypt secret secrets/db.age: cannot read identity /etc/ssh/ssh_host_ed25519_key: No such file or directory"
            ),
            "{what}: {}",
            run.stdout
        );
        assert!(!root.path().join("etc/app/db-password").exists(), "{what}");
    }
    assert_eq!(contents(outside.path()), before);
    // A link that stays inside the root is followed, absolute or not.
    for target in ["/etc/datum/key", "../datum/key"] {
        let root = f.machine("web-01", "web-01");
        fs::rename(root.path().join(KEY), root.path().join("etc/datum/key")).unwrap();
        symlink(target, root.path().join(KEY)).unwrap();
        let run = apply(&f, root.path(), &[]);
        assert_eq!(run.code, 2, "{target}: {}{}", run.stdout, run.stderr);
        assert_eq!(
            fs::read_to_string(root.path().join("etc/app/db-password")).unwrap(),
            PLAINTEXT
        );
    }
}

#[test]
fn a_fifo_as_the_host_key_is_refused_at_once() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let root = f.machine("web-01", "web-01");
    fs::remove_file(root.path().join(KEY)).unwrap();
    mkfifo(&root.path().join(KEY));
    let run = apply(&f, root.path(), &[]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "error: cannot decrypt secret secrets/db.age: cannot read identity /etc/ssh/ssh_host_ed25519_key: it is a FIFO, not a regular file"
        ),
        "{}",
        run.stdout
    );
    assert!(!root.path().join("etc/app/db-password").exists());
}

#[test]
fn the_record_of_secrets_applied_is_a_regular_file_inside_the_root() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    // A FIFO there: refused by a real run and by --noop alike.
    let root = f.machine("web-01", "web-01");
    mkfifo(&root.path().join("var/lib/datum/secrets"));
    for args in [&["--noop"][..], &[]] {
        let run = apply(&f, root.path(), args);
        assert_eq!(run.code, 1, "{args:?}: {}{}", run.stdout, run.stderr);
        assert_eq!(
            run.stderr,
            "error: cannot use [ROOT]/var/lib/datum/secrets: it is a FIFO, not a regular file\n",
            "{args:?}"
        );
    }
    assert!(!root.path().join("etc/app/db-password").exists());
    // The state directory a link out of the root: the record is written
    // inside, where the link leads when resolved there.
    let outside = tempfile::tempdir().unwrap();
    let root = f.machine("web-01", "web-01");
    let inside = root.path().join(outside.path().strip_prefix("/").unwrap());
    fs::create_dir_all(&inside).unwrap();
    fs::create_dir_all(root.path().join("var/lib")).unwrap();
    symlink(outside.path(), root.path().join("var/lib/datum")).unwrap();
    let run = apply(&f, root.path(), &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(contents(outside.path()), []);
    let inside = inside.join("secrets");
    assert!(
        fs::read_to_string(&inside)
            .unwrap()
            .ends_with(" /etc/app/db-password\n")
    );
}

#[test]
fn the_agent_reads_a_local_bundle_only_inside_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("work"));
    let outside = tmp.path().join("outside");
    make_bundles(&repo, &outside.join("bundles"), None);
    let before = contents(&outside);
    let refused = |host: &Host, url: &str| {
        host.config(&format!(
            "bundle:\n  url: {url}\ninsecure_allow_unsigned: true\n"
        ));
        let run = host.agent(&[]);
        assert_eq!(run.code, 1, "{url}: {}{}", run.stdout, run.stderr);
        assert!(!run.stdout.contains("fetched"), "{url}: {}", run.stdout);
        assert!(
            run.stdout
                .contains("note: fetching the bundle failed: cannot read "),
            "{url}: {}",
            run.stdout
        );
        assert!(!host.path("/srv/app").exists());
    };
    // /srv a link to the directory outside.
    let host = Host::new();
    fs::remove_dir(host.path("/srv")).unwrap();
    symlink(&outside, host.path("/srv")).unwrap();
    refused(&host, "/srv/bundles/{host}.bundle");
    refused(&host, "file:///srv/bundles/{host}.bundle");
    // A file:// URL climbing out with `..`.
    let host = Host::new();
    let climb = climbing(&outside.join("bundles")).replace("../", "/..");
    refused(&host, &format!("file://{climb}/{{host}}.bundle"));
    refused(&host, &format!("{climb}/{{host}}.bundle"));
    assert_eq!(contents(&outside), before);
    // A link that stays inside the root is followed.
    let host = Host::new();
    fs::create_dir_all(host.path("/opt")).unwrap();
    fs::rename(outside.join("bundles"), host.path("/opt/bundles")).unwrap();
    symlink("/opt/bundles", host.path("/srv/bundles")).unwrap();
    host.config(
        "bundle:\n  url: file:///srv/bundles/{host}.bundle\ninsecure_allow_unsigned: true\n",
    );
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}

/// The files that decide what the agent trusts (`public_keys`, `ca_file`)
/// are read inside the root, as regular files: a link planted at their
/// name to a file of the host leads inside the root, never to that file, so no line of it reaches the
/// agent's output or its report (an allowed-signers syntax error quotes
/// the line it could not read).
#[test]
fn the_agent_reads_its_signers_and_ca_file_only_inside_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("shadow");
    fs::write(&outside, "root:$6$outside-secret-hash:19000:0:99999:7:::\n").unwrap();
    for setting in ["public_keys", "ca_file"] {
        let host = Host::new();
        fs::create_dir_all(host.path("/etc/datum")).unwrap();
        symlink(&outside, host.path("/etc/datum/trusted")).unwrap();
        let extra = if setting == "ca_file" {
            "insecure_allow_unsigned: true\n"
        } else {
            ""
        };
        host.config(&format!(
            "bundle:\n  url: https://127.0.0.1:9/{{host}}.bundle\n{setting}: /etc/datum/trusted\n{extra}"
        ));
        let run = host.agent(&[]);
        assert_eq!(run.code, 1, "{setting}: {}{}", run.stdout, run.stderr);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(!all.contains("outside-secret-hash"), "{setting}: {all}");
        // The absolute link is resolved inside the root, where it leads
        // nowhere.
        assert!(
            all.contains("No such file or directory"),
            "{setting}: {all}"
        );
        let mut written = Vec::new();
        files_under(&host.path("/var/lib/datum"), &outside, &mut written);
        assert!(!written.is_empty(), "{setting}: no report written");
        for (path, bytes) in written {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("outside-secret-hash"),
                "{setting}: {path:?} holds the outside file's line"
            );
        }
    }
}
