//! What the agent in bundle mode refuses to be made to do by whoever
//! controls the bundle store or the clock: go back, stand still, apply
//! what nobody signed. Each test runs the real `datum agent --once` under
//! `--root`, against bundles made by the real `datum bundle`, served by an
//! HTTP server on 127.0.0.1, with keys made by `ssh-keygen`.

use std::fs;
use std::path::{Path, PathBuf};

use datum_testkit::http::FileServer as Server;
use datum_testkit::metrics::labels as label;

use crate::agent::Host;
use crate::common::{Run, datum};
use crate::delivery::{FLEET, Key, Repo};

/// 2030-03-17: a laptop whose clock is years ahead.
const YEAR_2030: i64 = 1_900_000_000;

/// A host in bundle mode fetching `web-001.bundle` from a server, trusting
/// one CI key.
pub(crate) struct Setup {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) host: Host,
    pub(crate) repo: Repo,
    pub(crate) ci: Key,
    served: PathBuf,
    /// The agent configuration written.
    pub(crate) config: String,
    /// Serves `served` for as long as the test runs.
    _server: Server,
}

impl Setup {
    pub(crate) fn new() -> Setup {
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
        let config = format!(
            "bundle:\n  url: {}/{{host}}.bundle\npublic_keys: /etc/datum/bundle_signers\n",
            server.base
        );
        host.config(&config);
        Setup {
            tmp,
            host,
            repo,
            ci,
            served,
            config,
            _server: server,
        }
    }

    /// web-001's bundle of the repository's HEAD, signed by CI, kept as
    /// `name` (and not served yet).
    pub(crate) fn bundle(&self, name: &str, args: &[&str]) -> PathBuf {
        bundle_of(
            &self.repo.fleet(),
            &self.tmp.path().join(name),
            &self.ci,
            args,
        )
    }

    /// Puts `file` where the host fetches its bundle.
    pub(crate) fn serve(&self, file: &Path) {
        fs::copy(file, self.served.join("web-001.bundle")).unwrap();
    }

    pub(crate) fn run(&self) -> Run {
        self.host.agent(&[])
    }
}

/// `datum bundle web-001` of the fleet at `fleet` into `out`, signed.
pub(crate) fn bundle_of(fleet: &Path, out: &Path, key: &Key, args: &[&str]) -> PathBuf {
    bundle_at(None, fleet, out, key, args)
}

/// [`bundle_of`], with SOURCE_DATE_EPOCH set to `epoch` when given: the
/// time `--valid-for` counts from.
pub(crate) fn bundle_at(
    epoch: Option<i64>,
    fleet: &Path,
    out: &Path,
    key: &Key,
    args: &[&str],
) -> PathBuf {
    let mut cmd = datum();
    if let Some(epoch) = epoch {
        cmd.env("SOURCE_DATE_EPOCH", epoch.to_string());
    }
    let run = Run::from(
        cmd.args(["bundle", "web-001", "--out"])
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

pub(crate) fn refused(run: &Run, why: &str) {
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
    let release_3 = s.repo.release(3, None);
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
    // The refusal is counted, and the metrics and report keep the revision
    // the host runs.
    let m = s.host.metrics();
    let refusals = &m["datum_input_refusals_total"];
    assert_eq!(refusals.kind, "counter");
    assert_eq!(refusals.samples[&label(&[("reason", "rollback")])], 1.0);
    let revision = m["datum_revision_info"]
        .samples
        .keys()
        .next()
        .unwrap()
        .clone();
    assert!(
        revision.contains(&("commit".to_owned(), release_3.clone())),
        "{revision:?}"
    );
    assert_eq!(s.host.report()["commit"], release_3.as_str());
    refused(&s.run(), "lower than 3");
    let m = s.host.metrics();
    assert_eq!(
        m["datum_input_refusals_total"].samples[&label(&[("reason", "rollback")])],
        2.0
    );
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

/// The delivery fleet outside git, its motd saying `motd`.
fn plain_fleet(dir: &Path, motd: &str) -> PathBuf {
    for (path, text) in FLEET {
        let file = dir.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text.replace("release 1", motd)).unwrap();
    }
    dir.to_owned()
}

/// Bundles made outside git have no commit: their contents tell two
/// bundles of one serial apart. Re-signing the same contents with a fresh
/// expiry is the same bundle; other contents under the same serial are
/// refused, so a store cannot flip a host between them.
#[test]
fn bundles_made_outside_git_with_one_serial_must_hold_the_same_contents() {
    let s = Setup::new();
    let plain = s.tmp.path().join("plain");
    let out = |name: &str| s.tmp.path().join(name);
    plain_fleet(&plain, "outside git 1");
    s.serve(&bundle_of(
        &plain,
        &out("5.bundle"),
        &s.ci,
        &["--serial", "5"],
    ));
    assert_eq!(s.run().code, 2);
    let applied = s.host.read("/var/lib/datum/agent/applied.json");
    assert!(applied.contains("\"contents_sha256\": \""), "{applied}");
    s.serve(&bundle_at(
        Some(now() + 3600),
        &plain,
        &out("5-resigned.bundle"),
        &s.ci,
        &["--serial", "5"],
    ));
    let run = s.run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    plain_fleet(&plain, "outside git 2");
    s.serve(&bundle_of(
        &plain,
        &out("5-other.bundle"),
        &s.ci,
        &["--serial", "5"],
    ));
    refused(
        &s.run(),
        "refusing the bundle: it has serial 5, as the bundle applied last, and other contents (sha256 ",
    );
    assert_eq!(s.host.read("/srv/app/motd"), "outside git 1\n");
    assert_eq!(
        s.host.metrics()["datum_input_refusals_total"].samples[&label(&[("reason", "rollback")])],
        1.0
    );
    s.serve(&bundle_of(
        &plain,
        &out("6.bundle"),
        &s.ci,
        &["--serial", "6"],
    ));
    assert_eq!(s.run().code, 2);
    assert_eq!(s.host.read("/srv/app/motd"), "outside git 2\n");
}

/// A host whose last input was a format-1 bundle (no serial: its record
/// holds a commit and its time) places the first bundle with a serial by
/// that commit: an older commit is refused whatever its serial.
#[test]
fn the_first_serial_after_a_format_1_bundle_may_not_be_an_older_commit() {
    let mut s = Setup::new();
    s.repo.at(1_750_000_000);
    s.repo.release(2, None);
    let old = s.bundle("2.bundle", &[]);
    s.repo.at(1_750_000_600);
    let three = s.repo.release(3, None);
    let current = s.bundle("3.bundle", &[]);
    // What an agent wrote after applying a format-1 bundle of release 3.
    s.host.write(
        "/var/lib/datum/agent/applied.json",
        &format!(
            "{{\"mode\": \"bundle\", \"commit\": \"{three}\", \"commit_time\": 1750000600}}\n"
        ),
    );
    s.serve(&old);
    refused(
        &s.run(),
        "refusing to go back: the new input was committed at 2025-06-15T15:06:40Z, before the input applied last (2025-06-15T15:16:40Z)",
    );
    assert!(!s.host.path("/srv/app/motd").exists());
    // Its own commit, bundled with a serial: the same release, applied.
    s.serve(&current);
    let run = s.run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(s.host.read("/srv/app/motd"), "release 3\n");
    // From then on the serial decides.
    s.serve(&old);
    refused(&s.run(), "the bundle's serial is 2, lower than 3");
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

/// The delivery fleet renamed `other`, outside git, for bundles of another
/// fleet signed by the same key.
fn other_fleet(dir: &Path) -> PathBuf {
    for (path, text) in FLEET {
        let file = dir.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let text = text
            .replace("name: delivery", "name: other")
            .replace("release 1", "the other fleet");
        fs::write(file, text).unwrap();
    }
    dir.to_owned()
}

#[test]
fn a_bundle_of_another_fleet_signed_by_the_same_key_is_refused() {
    let s = Setup::new();
    s.serve(&s.bundle("ours.bundle", &[]));
    assert_eq!(s.run().code, 2);
    assert_eq!(s.host.read("/var/lib/datum/agent/fleet"), "delivery\n");
    let theirs = bundle_of(
        &other_fleet(&s.tmp.path().join("other")),
        &s.tmp.path().join("theirs.bundle"),
        &s.ci,
        &["--serial", "1000"],
    );
    s.serve(&theirs);
    refused(
        &s.run(),
        "it is a bundle of fleet \"other\", and this host belongs to fleet \"delivery\" (/var/lib/datum/agent/fleet)",
    );
    assert_eq!(s.host.read("/srv/app/motd"), "release 1\n");
    // A fresh host told its fleet refuses another's bundle from the start.
    let fresh = Host::new();
    fresh.write(
        "/etc/datum/bundle_signers",
        &s.ci.signer_line("ci@example.net"),
    );
    fs::copy(&theirs, fresh.path("/srv/theirs.bundle")).unwrap();
    fresh.config(
        "bundle:\n  url: /srv/theirs.bundle\npublic_keys: /etc/datum/bundle_signers\nfleet_name: delivery\n",
    );
    let run = fresh.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "this host belongs to fleet \"delivery\" (`fleet_name` in the agent configuration)"
        ),
        "{}",
        run.stderr
    );
    assert!(!fresh.path("/srv/app").exists());
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn an_expired_bundle_is_refused_and_the_host_says_until_when_it_is_covered() {
    let mut s = Setup::new();
    let made = now();
    s.serve(&s.bundle("fresh.bundle", &[]));
    assert_eq!(s.run().code, 2);
    let expiry = s.host.metrics()["datum_input_expiry_timestamp_seconds"].one();
    // Seven days by default, counted from when it was made.
    assert!(
        (made + 7 * 86_400..=now() + 7 * 86_400).contains(&(expiry as i64)),
        "{expiry}"
    );
    let first = s.host.report()["commit"].clone();
    // A newer release, signed, but made ten days ago and valid for one.
    let second = s.repo.release(2, None);
    let expired = bundle_at(
        Some(now() - 10 * 86_400),
        &s.repo.fleet(),
        &s.tmp.path().join("expired.bundle"),
        &s.ci,
        &["--valid-for", "1d"],
    );
    s.serve(&expired);
    let run = s.run();
    refused(&run, "it expired at");
    assert!(run.stderr.contains("(9d 0h ago)"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("this host stays on its last verified input, which expires at"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("at least every half of its --valid-for"),
        "{}",
        run.stderr
    );
    assert_eq!(s.host.read("/srv/app/motd"), "release 1\n");
    // The metric still tells when the input the host runs expires.
    assert_eq!(
        s.host.metrics()["datum_input_expiry_timestamp_seconds"].one(),
        expiry
    );
    assert_eq!(s.host.report()["input_expires"], expiry as i64);
    assert_eq!(
        s.host.metrics()["datum_input_refusals_total"].samples[&label(&[("reason", "expired")])],
        1.0
    );
    // The report names the release it refused beside the one the host runs,
    // so `rollout status` can tell which revision failed on it.
    let report = s.host.report();
    assert_eq!(report["commit"], first);
    assert_eq!(report["refused"]["commit"], second.as_str());
    assert_eq!(report["refused"]["reason"], "expired");
    assert!(report["refused"]["serial"].as_u64().is_some(), "{report}");
}

#[test]
fn quiet_leaves_out_the_fetched_and_report_lines() {
    let s = Setup::new();
    s.serve(&s.bundle("b.bundle", &[]));
    let run = s.host.agent(&["-q"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    for line in ["fetched ", "report: ", "the bundle is signed by"] {
        assert!(!run.stdout.contains(line), "{line}:\n{}", run.stdout);
    }
    // Without -q they are there.
    let run = s.run();
    for line in ["fetched ", "report: ", "the bundle is signed by"] {
        assert!(run.stdout.contains(line), "{line}:\n{}", run.stdout);
    }
}

/// Rotation without a flag day: both keys trusted during the overlap,
/// then the old one retired by its `valid-before` (already past here),
/// while the new one goes on.
#[test]
fn a_signing_key_is_rotated_with_an_overlap_then_retired() {
    let mut s = Setup::new();
    let new = Key::new(s.tmp.path(), "ci-2027");
    let signers = |old_until: &str| {
        format!(
            "ci@example.net valid-before=\"{old_until}\" {}\nci@example.net valid-after=\"20250101Z\" {}\n",
            s.ci.public, new.public
        )
    };
    s.host
        .write("/etc/datum/bundle_signers", &signers("29990101Z"));
    s.serve(&s.bundle("old.bundle", &[]));
    assert_eq!(s.run().code, 2);
    s.repo.release(2, None);
    s.serve(&bundle_of(
        &s.repo.fleet(),
        &s.tmp.path().join("new.bundle"),
        &new,
        &[],
    ));
    let run = s.run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let fingerprint = crate::delivery::ok(
        std::process::Command::new("ssh-keygen")
            .arg("-lf")
            .arg(new.private.with_extension("pub")),
    );
    let fingerprint = fingerprint.split_whitespace().nth(1).unwrap().to_owned();
    assert!(
        run.stdout.contains(&fingerprint),
        "{fingerprint}\n{}",
        run.stdout
    );
    // The old key retired: a newer bundle it signs is refused.
    s.host
        .write("/etc/datum/bundle_signers", &signers("20240101Z"));
    s.repo.release(3, None);
    s.serve(&s.bundle("old-3.bundle", &[]));
    refused(&s.run(), "refusing");
    assert_eq!(s.host.read("/srv/app/motd"), "release 2\n");
    assert_eq!(
        s.host.metrics()["datum_input_refusals_total"].samples[&label(&[("reason", "signature")])],
        1.0
    );
    s.serve(&bundle_of(
        &s.repo.fleet(),
        &s.tmp.path().join("new-3.bundle"),
        &new,
        &[],
    ));
    assert_eq!(s.run().code, 2);
    assert_eq!(s.host.read("/srv/app/motd"), "release 3\n");
}

/// `datum apply --bundle` refuses an expired bundle as the agent does,
/// with the agent's message, and applies nothing.
#[test]
fn apply_refuses_an_expired_bundle_with_the_agents_message() {
    let s = Setup::new();
    let expired = bundle_at(
        Some(now() - 10 * 86_400),
        &s.repo.fleet(),
        &s.tmp.path().join("expired.bundle"),
        &s.ci,
        &["--valid-for", "1d"],
    );
    let signers = s.tmp.path().join("signers");
    fs::write(&signers, s.ci.signer_line("ci@example.net")).unwrap();
    let run = Run::from(
        datum()
            .args(["apply", "--bundle"])
            .arg(&expired)
            .arg("--public-keys")
            .arg(&signers)
            .arg("--root")
            .arg(s.host.path("/"))
            .output()
            .unwrap(),
    );
    refused(
        &run,
        &format!("refusing {}: it expired at ", expired.display()),
    );
    assert!(run.stderr.contains("(9d 0h ago)"), "{}", run.stderr);
    assert!(!s.host.path("/srv/app").exists());
    // The agent says the same of it.
    s.serve(&expired);
    let agent = s.run();
    refused(&agent, "web-001.bundle: it expired at ");
    assert!(agent.stderr.contains("(9d 0h ago)"), "{}", agent.stderr);
}

/// Git mode with `max_age`: when the newest verified commit of every
/// remote is older than that, the remotes may be frozen; the run refuses
/// it, says how stale it is, exits 1 and counts it. A fresh commit applies.
#[test]
fn git_mode_refuses_a_newest_commit_older_than_max_age() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let mut repo = Repo::new(&tmp.path().join("work"));
    let remote = host.path("/srv/fleet.git");
    Repo::bare(&remote);
    repo.at(now() - 40 * 86_400 - 3600);
    let old = repo.release(2, None);
    repo.push(&remote, "HEAD", "main");
    host.config(
        "git:\n  remotes: [/srv/fleet.git]\n  branch: main\n  fleet: fleet\n  max_age: 30d\ninsecure_allow_unsigned: true\n",
    );
    let run = host.agent(&[]);
    refused(
        &run,
        &format!(
            "refusing commit {old} from /srv/fleet.git: the newest verified commit of every remote was committed at "
        ),
    );
    assert!(
        run.stderr
            .contains("(40d 1h ago), longer ago than `max_age` (30d 0h)"),
        "{}",
        run.stderr
    );
    assert!(!host.path("/srv/app").exists());
    assert_eq!(
        host.metrics()["datum_input_refusals_total"].samples[&label(&[("reason", "stale")])],
        1.0
    );
    let committed = now() - 60;
    repo.at(committed);
    repo.release(3, None);
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 3\n");
    // The commit goes stale `max_age` after it was made: the expiry metric
    // and the report say when, so an alert can fire before a refusal.
    let stale_at = committed + 30 * 86_400;
    assert_eq!(
        host.metrics()["datum_input_expiry_timestamp_seconds"].one() as i64,
        stale_at
    );
    assert_eq!(host.report()["input_expires"], stale_at);
}

/// A git remote over HTTP that accepts the connection and then sends
/// nothing is given up after `git.timeout` (60 seconds unless set), and
/// the next remote is asked, instead of the run waiting for ever.
#[test]
fn a_git_remote_that_stalls_is_given_up_after_the_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts every connection and keeps it open, silent, until the test ends.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let repo = Repo::new(&tmp.path().join("work"));
    let remote = host.path("/srv/fleet.git");
    Repo::bare(&remote);
    repo.push(&remote, "HEAD", "main");
    let stalled = format!("http://127.0.0.1:{port}/fleet.git");
    host.config(&format!(
        "git:\n  remotes: [\"{stalled}\", /srv/fleet.git]\n  branch: main\n  fleet: fleet\n  timeout: 1s\ninsecure_allow_unsigned: true\n"
    ));
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&format!("note: remote {stalled} failed (")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("timed out"), "{}", run.stdout);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
}
