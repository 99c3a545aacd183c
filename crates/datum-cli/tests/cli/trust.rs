//! What the agent in bundle mode refuses to be made to do by whoever
//! controls the bundle store or the clock: go back, stand still, apply
//! what nobody signed. Each test runs the real `datum agent --once` under
//! `--root`, against bundles made by the real `datum bundle`, served by an
//! HTTP server on 127.0.0.1, with keys made by `ssh-keygen`.

use std::fs;
use std::path::{Path, PathBuf};

use datum_testkit::http::FileServer as Server;

use crate::agent::Host;
use crate::common::{Run, datum};
use crate::delivery::{FLEET, Key, Repo};

/// 2030-03-17: a laptop whose clock is years ahead.
const YEAR_2030: i64 = 1_900_000_000;

/// A host in bundle mode fetching `web-001.bundle` from a server, trusting
/// one CI key.
struct Setup {
    tmp: tempfile::TempDir,
    host: Host,
    repo: Repo,
    ci: Key,
    served: PathBuf,
    /// Serves `served` for as long as the test runs.
    _server: Server,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let host = Host::new();
        let repo = Repo::new(&tmp.path().join("work"));
        let ci = Key::new(tmp.path(), "ci");
        let served = tmp.path().join("www");
        fs::create_dir_all(&served).unwrap();
        let server = Server::serve(&served);
        host.write(
            "/etc/datum/bundle_signers",
            &ci.signer_line("ci@example.net"),
        );
        host.config(&format!(
            "bundle:\n  url: {}/{{host}}.bundle\npublic_keys: /etc/datum/bundle_signers\n",
            server.base
        ));
        Setup {
            tmp,
            host,
            repo,
            ci,
            served,
            _server: server,
        }
    }

    /// web-001's bundle of the repository's HEAD, signed by CI, kept as
    /// `name` (and not served yet).
    fn bundle(&self, name: &str, args: &[&str]) -> PathBuf {
        bundle_of(
            &self.repo.fleet(),
            &self.tmp.path().join(name),
            &self.ci,
            args,
        )
    }

    /// Puts `file` where the host fetches its bundle.
    fn serve(&self, file: &Path) {
        fs::copy(file, self.served.join("web-001.bundle")).unwrap();
    }

    fn run(&self) -> Run {
        self.host.agent(&[])
    }
}

/// `datum bundle web-001` of the fleet at `fleet` into `out`, signed.
fn bundle_of(fleet: &Path, out: &Path, key: &Key, args: &[&str]) -> PathBuf {
    let run = Run::from(
        datum()
            .args(["bundle", "web-001", "--out"])
            .arg(out)
            .arg("--fleet")
            .arg(fleet)
            .arg("--sign-key")
            .arg(&key.private)
            .args(args)
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    out.to_owned()
}

fn refused(run: &Run, why: &str) {
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(why), "{why}:\n{}", run.stderr);
}

#[test]
fn a_commit_dated_2030_neither_freezes_the_host_nor_can_be_replayed() {
    let mut s = Setup::new();
    s.repo.at(YEAR_2030);
    s.repo.release(2, None);
    let future = s.bundle("2030.bundle", &[]);
    s.repo.at(1_750_000_600);
    s.repo.release(3, None);
    let normal = s.bundle("normal.bundle", &[]);

    s.serve(&future);
    assert_eq!(s.run().code, 2);
    assert_eq!(s.host.read("/srv/app/motd"), "release 2\n");
    // The next release is older by the clock and newer by the serial.
    s.serve(&normal);
    let run = s.run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(s.host.read("/srv/app/motd"), "release 3\n");
    let applied = s.host.read("/var/lib/datum/agent/applied.json");
    assert!(applied.contains("\"serial\": 3"), "{applied}");
    // The 2030 bundle replayed: refused, nothing changes.
    s.serve(&future);
    refused(
        &s.run(),
        "refusing to go back: the bundle's serial is 2, lower than 3, the serial applied last",
    );
    assert_eq!(s.host.read("/srv/app/motd"), "release 3\n");
}

#[test]
fn two_commits_of_the_same_second_served_out_of_order_are_refused() {
    let mut s = Setup::new();
    s.repo.at(1_750_000_600);
    s.repo.release(2, None);
    let first = s.bundle("first.bundle", &[]);
    s.repo.at(1_750_000_600);
    s.repo.release(3, None);
    let second = s.bundle("second.bundle", &[]);
    s.serve(&second);
    assert_eq!(s.run().code, 2);
    s.serve(&first);
    refused(&s.run(), "the bundle's serial is 2, lower than 3");
    assert_eq!(s.host.read("/srv/app/motd"), "release 3\n");
}

#[test]
fn a_bundle_without_commit_or_serial_is_refused_after_one_with() {
    let s = Setup::new();
    s.serve(&s.bundle("git.bundle", &[]));
    assert_eq!(s.run().code, 2);
    // The same fleet outside git, signed by the same key: no commit, no serial.
    let plain = s.tmp.path().join("plain");
    for (path, text) in FLEET {
        let file = plain.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text.replace("release 1", "outside git")).unwrap();
    }
    s.serve(&bundle_of(
        &plain,
        &s.tmp.path().join("plain.bundle"),
        &s.ci,
        &[],
    ));
    refused(
        &s.run(),
        "refusing the bundle: it carries no serial, and this host applied serial 1",
    );
    assert_eq!(s.host.read("/srv/app/motd"), "release 1\n");
}

#[test]
fn a_pipeline_serial_orders_bundles_and_may_not_be_reused_for_another_commit() {
    let mut s = Setup::new();
    s.serve(&s.bundle("100.bundle", &["--serial", "100"]));
    assert_eq!(s.run().code, 2);
    // Re-bundling the same commit with the same serial is the same input.
    s.serve(&s.bundle("100-again.bundle", &["--serial", "100"]));
    let run = s.run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // The commit's own depth (2) is below the pipeline's counter.
    s.repo.release(2, None);
    s.serve(&s.bundle("depth.bundle", &[]));
    refused(&s.run(), "the bundle's serial is 2, lower than 100");
    s.serve(&s.bundle("reused.bundle", &["--serial", "100"]));
    refused(
        &s.run(),
        "refusing the bundle: serial 100 was applied with commit",
    );
    s.serve(&s.bundle("101.bundle", &["--serial", "101"]));
    assert_eq!(s.run().code, 2);
    assert_eq!(s.host.read("/srv/app/motd"), "release 2\n");
}

#[test]
fn a_frozen_first_remote_does_not_hide_a_newer_second_one() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let mut repo = Repo::new(&tmp.path().join("work"));
    let (frozen, mirror) = (host.path("/srv/fleet.git"), host.path("/srv/mirror.git"));
    for remote in [&frozen, &mirror] {
        Repo::bare(remote);
        repo.push(remote, "HEAD", "main");
    }
    host.config(
        "git:\n  remotes: [/srv/fleet.git, /srv/mirror.git]\n  branch: main\n  fleet: fleet\ninsecure_allow_unsigned: true\n",
    );
    assert_eq!(host.agent(&[]).code, 2);
    // Only the second remote moves on; the first keeps serving the old tip.
    let newer = repo.release(2, None);
    repo.push(&mirror, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&format!("taking {newer} from /srv/mirror.git")),
        "{}",
        run.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    let report = host.report();
    assert_eq!(report["commit"], newer.as_str());
    assert_eq!(report["source"], "/srv/mirror.git");
    // Now the frozen remote is behind: passed over, and said so.
    let run = host.agent(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let notes = host.report()["notes"].to_string();
    assert!(
        notes.contains("remote /srv/fleet.git was passed over: refusing to go back"),
        "{notes}"
    );
}
