//! `datum agent`, end to end under `--root`: a bare git repository as the
//! remote, bundles served over HTTP by a server on 127.0.0.1, signatures
//! made by the real `ssh-keygen` and git, the report and metrics files
//! read back field by field (the metrics with an exposition-format parser),
//! and secrets decrypted with the key the `identity` setting names.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use datum_testkit::http::FileServer as Server;
use datum_testkit::metrics::{Family, labels as label};
use serde_json::{Value, json};

use crate::common::{Run, datum, fixture};
use crate::delivery::{Key, Repo, git, ok};
use crate::secret_fleet::{Fleet as SecretFleet, PLAINTEXT, contains, files_under};

/// A machine under a temporary root, named `web-001`.
pub(crate) struct Host {
    pub(crate) root: tempfile::TempDir,
}

impl Host {
    pub(crate) fn new() -> Host {
        let root = tempfile::tempdir().unwrap();
        for d in ["etc/datum", "srv"] {
            fs::create_dir_all(root.path().join(d)).unwrap();
        }
        fs::write(root.path().join("etc/datum/host"), "web-001\n").unwrap();
        Host { root }
    }

    pub(crate) fn path(&self, abs: &str) -> PathBuf {
        self.root.path().join(abs.trim_start_matches('/'))
    }

    pub(crate) fn write(&self, abs: &str, text: &str) {
        let p = self.path(abs);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    pub(crate) fn read(&self, abs: &str) -> String {
        fs::read_to_string(self.path(abs)).unwrap_or_else(|e| panic!("{abs}: {e}"))
    }

    pub(crate) fn config(&self, text: &str) {
        self.write("/etc/datum/agent.yaml", text);
    }

    /// `datum agent --once --root ROOT ARGS`.
    pub(crate) fn agent(&self, args: &[&str]) -> Run {
        let out = datum()
            .args(["agent", "--once", "--root"])
            .arg(self.root.path())
            .args(args)
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
        run
    }

    pub(crate) fn report(&self) -> Value {
        serde_json::from_str(&self.read("/var/lib/datum/reports/last.json")).unwrap()
    }

    /// The run reports kept, oldest first (without last.json).
    fn runs(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.path("/var/lib/datum/reports"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "last.json" && !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }

    pub(crate) fn metrics(&self) -> BTreeMap<String, Family> {
        datum_testkit::metrics::parse(&self.read("/var/lib/prometheus/node-exporter/datum.prom"))
    }
}

/// Seconds since the epoch of an RFC 3339 UTC time, as the report writes it.
fn seconds(text: &Value) -> f64 {
    let t = datum_agent::report::Timestamp::parse_rfc3339(text.as_str().unwrap())
        .unwrap_or_else(|| panic!("{text} is not RFC 3339"));
    t.since_epoch().as_secs_f64()
}

/// A fleet repository pushed to a bare remote at `/srv/fleet.git` of `host`.
fn git_fleet(tmp: &Path, host: &Host) -> (Repo, PathBuf) {
    let repo = Repo::new(&tmp.join("work"));
    let remote = host.path("/srv/fleet.git");
    Repo::bare(&remote);
    repo.push(&remote, "HEAD", "main");
    (repo, remote)
}

const GIT_CONFIG: &str = "git:\n  remotes: [/srv/fleet.git]\n  branch: main\n  fleet: fleet\ninsecure_allow_unsigned: true\n";

#[test]
fn git_mode_converges_then_changes_nothing_and_reports_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let (repo, _) = git_fleet(tmp.path(), &host);
    let head = repo.rev("HEAD");
    host.config(GIT_CONFIG);

    let before = SystemTime::now();
    let first = host.agent(&[]);
    let after = SystemTime::now();
    assert_eq!(first.code, 2, "{}{}", first.stdout, first.stderr);
    assert!(
        first
            .stdout
            .contains(&format!("fetched {head} from /srv/fleet.git")),
        "{}",
        first.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(host.read("/srv/app/site.conf"), "listen 80;\n");
    assert!(!host.path("/srv/app/db.conf").exists());

    // The report, field by field.
    let r = host.report();
    // The top-level keys in the order the file has them.
    let text = host.read("/var/lib/datum/reports/last.json");
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  \"")?.split_once('"').map(|(k, _)| k))
        .collect();
    assert_eq!(
        keys,
        [
            "datum",
            "type",
            "run_id",
            "host",
            "started",
            "finished",
            "mode",
            "source",
            "commit",
            "cached_input",
            "fetch_failures_total",
            "notes",
            "summary",
            "resources",
            "exit_status",
            "facts",
            "label_mismatches",
            "insecure_allow_unsigned",
            "input_expires",
            "input_refusals_total",
            "pending",
            "rolled_back",
            "refused"
        ]
    );
    // last.json joins the JSON contract (docs/json.md: RunReport).
    crate::json_contract::assert_conforms(
        "last.json",
        &crate::common::Run {
            code: 0,
            stdout: host.read("/var/lib/datum/reports/last.json"),
            stderr: String::new(),
        },
    );
    assert_eq!(r["type"], "RunReport");
    // What the host observed; the root has no os-release, so no OS.
    assert_eq!(r["facts"]["os"], Value::Null);
    assert_eq!(r["facts"]["arch"], std::env::consts::ARCH);
    assert_eq!(r["label_mismatches"], json!([]));
    assert_eq!(r["datum"], "v1alpha1");
    assert_eq!(r["host"], "web-001");
    assert_eq!(r["mode"], "git");
    assert_eq!(r["source"], "/srv/fleet.git");
    assert_eq!(r["commit"], head.as_str());
    assert_eq!(r["cached_input"], false);
    assert_eq!(r["fetch_failures_total"], 0);
    // This fleet's commits are not signed, and the configuration says so.
    assert_eq!(
        r["notes"],
        json!([
            "insecure_allow_unsigned: no `allowed_signers` is configured, so input is applied without checking who made it"
        ])
    );
    assert_eq!(r["insecure_allow_unsigned"], true);
    assert_eq!(r["exit_status"], 2);
    assert_eq!(
        r["summary"],
        json!({"changed": 3, "failed": 0, "skipped": 0, "unchanged": 0, "would_change": 0})
    );
    // The run's own times, within the test's (the report keeps whole
    // milliseconds, so the test's start counts to its millisecond).
    let (started, finished) = (seconds(&r["started"]), seconds(&r["finished"]));
    let ms = |t: SystemTime| {
        let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        (d.as_millis() as f64) / 1000.0
    };
    assert!(
        ms(before) <= started && started <= finished && finished <= ms(after) + 0.001,
        "{r}"
    );
    let resources = r["resources"]["resources"].as_array().unwrap();
    let ids: Vec<(&str, &str)> = resources
        .iter()
        .map(|x| (x["id"].as_str().unwrap(), x["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ids,
        [
            ("Directory[srv]", "changed"),
            ("File[motd]", "changed"),
            ("File[site]", "changed")
        ]
    );
    assert_eq!(r["resources"]["host"], "web-001");
    let run_id = r["run_id"].as_str().unwrap();
    assert_eq!(host.runs(), [format!("{run_id}.json")]);
    assert_eq!(
        host.read(&format!("/var/lib/datum/reports/{run_id}.json")),
        host.read("/var/lib/datum/reports/last.json")
    );
    assert!(first.stdout.contains(&format!(
            "report: {}",
            host.path(&format!("/var/lib/datum/reports/{run_id}.json"))
                .display()
        )));

    // The metrics, parsed.
    let m = host.metrics();
    assert_eq!(m["datum_last_run_exit_status"].one(), 2.0);
    assert_eq!(m["datum_last_run_exit_status"].kind, "gauge");
    assert!((m["datum_last_run_timestamp_seconds"].one() - finished).abs() < 0.001);
    let by_status = &m["datum_resources"].samples;
    assert_eq!(by_status[&label(&[("status", "changed")])], 3.0);
    assert_eq!(by_status[&label(&[("status", "unchanged")])], 0.0);
    assert_eq!(by_status.len(), 5);
    let revision = &m["datum_revision_info"].samples;
    assert_eq!(
        revision.keys().collect::<Vec<_>>(),
        [&label(&[("commit", &head), ("source", "/srv/fleet.git")])]
    );
    assert_eq!(m["datum_fetch_failures_total"].kind, "counter");
    assert_eq!(m["datum_fetch_failures_total"].one(), 0.0);
    assert_eq!(m["datum_last_run_cached_input"].one(), 0.0);
    let duration = m["datum_run_duration_seconds"].one();
    assert!(
        (duration - (finished - started)).abs() < 0.002,
        "{duration}"
    );

    let second = host.agent(&[]);
    assert_eq!(second.code, 0, "{}{}", second.stdout, second.stderr);
    let r = host.report();
    assert_eq!(r["exit_status"], 0);
    assert_eq!(r["summary"]["unchanged"], 3);
    assert_eq!(r["summary"]["changed"], 0);
    assert_eq!(host.runs().len(), 2);
    assert_eq!(host.metrics()["datum_last_run_exit_status"].one(), 0.0);
}

#[test]
fn only_commits_signed_by_an_allowed_signer_are_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let (mut repo, remote) = git_fleet(tmp.path(), &host);
    let ops = Key::new(tmp.path(), "ops");
    let stranger = Key::new(tmp.path(), "stranger");
    host.write(
        "/etc/datum/allowed_signers",
        &ops.signer_line("ops@example.net"),
    );
    host.config(&format!(
        "{GIT_CONFIG}allowed_signers: /etc/datum/allowed_signers\n"
    ));

    // The first commit is unsigned: nothing at all is applied.
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("is not signed, and allowed signers are configured"),
        "{}",
        run.stderr
    );
    assert!(!host.path("/srv/app").exists());
    let r = host.report();
    assert_eq!(r["exit_status"], 1);
    assert_eq!(r["commit"], Value::Null);
    assert_eq!(r["resources"], Value::Null);
    assert!(
        r["notes"][0].as_str().unwrap().contains("is not signed"),
        "{r}"
    );
    assert_eq!(host.metrics()["datum_last_run_exit_status"].one(), 1.0);

    let signed = repo.release(2, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("is signed by ops@example.net"),
        "{}",
        run.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    assert_eq!(host.report()["commit"], signed.as_str());

    for (key, expected) in [
        (None, "is not signed"),
        (Some(&stranger), "is not in the allowed signers file"),
    ] {
        repo.release(3, key);
        repo.push(&remote, "HEAD", "main");
        host.write("/srv/app/site.conf", "drifted\n");
        let run = host.agent(&[]);
        assert_eq!(run.code, 1, "{}", run.stdout);
        assert!(run.stderr.contains(expected), "{}", run.stderr);
        assert_eq!(host.read("/srv/app/motd"), "release 2\n");
        // The commit applied last is applied again: the drift is corrected.
        assert_eq!(host.read("/srv/app/site.conf"), "listen 80;\n");
        let r = host.report();
        assert_eq!(r["commit"], signed.as_str());
        assert_eq!(r["cached_input"], true);
        assert_eq!(r["exit_status"], 1);
        assert_eq!(r["summary"]["changed"], 1);
    }
    repo.release(4, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 4\n");
}

#[test]
fn a_rollback_is_refused_then_applied_with_allow_rollback() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let (mut repo, remote) = git_fleet(tmp.path(), &host);
    let old = repo.rev("HEAD");
    repo.release(2, None);
    repo.push(&remote, "HEAD", "main");
    host.config(GIT_CONFIG);
    assert_eq!(host.agent(&[]).code, 2);
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");

    // The branch is reset to the older commit (or a lagging mirror serves it).
    repo.push(&remote, &old, "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains(&format!("refusing to go back: commit {old} is older than")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--allow-rollback"), "{}", run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    assert_eq!(host.report()["exit_status"], 1);

    let run = host.agent(&["--allow-rollback"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    let r = host.report();
    assert_eq!(r["commit"], old.as_str());
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("--allow-rollback: applying it anyway: refusing to go back"),
        "{r}"
    );
    // The older commit is now the one recorded: later runs go on from it.
    assert_eq!(host.agent(&[]).code, 0);
}

#[test]
fn when_every_remote_is_down_the_last_verified_input_is_applied_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let (_repo, remote) = git_fleet(tmp.path(), &host);
    let head = _repo.rev("HEAD");
    host.config("git:\n  remotes: [/srv/mirror.git, 'file:///srv/fleet.git']\n  fleet: fleet\ninsecure_allow_unsigned: true\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let r = host.report();
    assert_eq!(r["source"], "file:///srv/fleet.git");
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("remote /srv/mirror.git failed"),
        "{r}"
    );

    // Both remotes gone; the host drifted meanwhile.
    fs::remove_dir_all(&remote).unwrap();
    host.write("/srv/app/motd", "edited by hand\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    let r = host.report();
    assert_eq!(r["cached_input"], true);
    assert_eq!(r["commit"], head.as_str());
    assert_eq!(r["source"], "/var/lib/datum/repo");
    assert_eq!(r["fetch_failures_total"], 1);
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes[0].starts_with("no remote gave branch `main`"),
        "{notes:?}"
    );
    assert_eq!(
        notes[1],
        format!("applying the last verified input instead: commit {head}")
    );
    let m = host.metrics();
    assert_eq!(m["datum_last_run_cached_input"].one(), 1.0);
    assert_eq!(m["datum_fetch_failures_total"].one(), 1.0);

    let again = host.agent(&[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(host.report()["fetch_failures_total"], 2);
}

/// Bundles of the delivery fleet at the repository's HEAD, into `dir`.
pub(crate) fn make_bundles(repo: &Repo, dir: &Path, key: Option<&Key>) {
    let mut cmd = datum();
    cmd.args(["bundle", "--all", "--out"])
        .arg(dir)
        .arg("--fleet")
        .arg(repo.fleet());
    if let Some(k) = key {
        cmd.arg("--sign-key").arg(&k.private);
    }
    let run = Run::from(cmd.output().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn bundle_mode_over_http_verifies_refuses_and_falls_back() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let mut repo = Repo::new(&tmp.path().join("work"));
    let ci = Key::new(tmp.path(), "ci");
    let (served, v1, v2) = (
        tmp.path().join("www"),
        tmp.path().join("v1"),
        tmp.path().join("v2"),
    );
    make_bundles(&repo, &v1, Some(&ci));
    repo.release(2, None);
    make_bundles(&repo, &v2, Some(&ci));
    let v2_commit = repo.rev("HEAD");
    let serve = |from: &Path| {
        fs::create_dir_all(&served).unwrap();
        fs::copy(from.join("web-001.bundle"), served.join("web-001.bundle")).unwrap();
    };
    serve(&v2);
    let server = Server::serve(&served);
    host.write(
        "/etc/datum/bundle_signers",
        &ci.signer_line("ci@example.net"),
    );
    host.config(&format!(
        "bundle:\n  url: {}/{{host}}.bundle\npublic_keys: /etc/datum/bundle_signers\nreport_url: {}/report\n",
        server.base, server.base
    ));

    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("the bundle is signed by ci@example.net"),
        "{}",
        run.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    let r = host.report();
    assert_eq!(r["mode"], "bundle");
    assert_eq!(r["source"], format!("{}/web-001.bundle", server.base));
    assert_eq!(r["commit"], v2_commit.as_str());
    // The report was POSTed, and is the one on disk.
    let posted = server.requests.lock().unwrap().clone();
    let (line, body) = posted.iter().find(|(l, _)| l.starts_with("POST ")).unwrap();
    assert_eq!(line, "POST /report HTTP/1.1");
    assert_eq!(serde_json::from_slice::<Value>(body).unwrap(), r);
    assert_eq!(host.agent(&[]).code, 0);

    // One flipped byte in the payload.
    let mut bytes = fs::read(v2.join("web-001.bundle")).unwrap();
    let at = bytes.windows(10).position(|w| w == b"listen 80;").unwrap();
    bytes[at] = b'L';
    fs::write(served.join("web-001.bundle"), &bytes).unwrap();
    host.write("/srv/app/site.conf", "drifted\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("the bundle is damaged: payload files/site.conf does not match"),
        "{}",
        run.stderr
    );
    // The refused bundle changes nothing, and the last verified one is
    // applied again: the drift is corrected, and the run still says the
    // input was refused.
    assert_eq!(host.read("/srv/app/site.conf"), "listen 80;\n");
    assert!(
        run.stdout
            .contains("note: applying the last verified input instead"),
        "{}",
        run.stdout
    );
    let r = host.report();
    assert_eq!(r["cached_input"], true);
    assert_eq!(r["exit_status"], 1);
    assert_eq!(r["commit"], v2_commit.as_str());
    assert_eq!(r["summary"]["changed"], 1);

    // An older bundle: refused, then taken with --allow-rollback.
    serve(&v1);
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("refusing to go back: the bundle's serial is 1, lower than 2"),
        "{}",
        run.stderr
    );
    let run = host.agent(&["--allow-rollback"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(host.read("/srv/app/site.conf"), "listen 80;\n");

    // The server goes away: the last verified bundle (v1) is applied.
    drop(server);
    host.write("/srv/app/motd", "drifted\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("warning: the run report was not sent"),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    let r = host.report();
    assert_eq!(r["cached_input"], true);
    assert_eq!(r["source"], "/var/lib/datum/agent/verified.bundle");
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("fetching the bundle failed"),
        "{r}"
    );
    assert_eq!(host.metrics()["datum_last_run_cached_input"].one(), 1.0);
}

#[test]
fn an_unsigned_bundle_is_refused_when_keys_are_configured() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let repo = Repo::new(&tmp.path().join("work"));
    let ci = Key::new(tmp.path(), "ci");
    make_bundles(&repo, &host.path("/srv/bundles"), None);
    host.write(
        "/etc/datum/bundle_signers",
        &ci.signer_line("ci@example.net"),
    );
    host.config(
        "bundle:\n  url: file:///srv/bundles/{host}.bundle\npublic_keys: /etc/datum/bundle_signers\n",
    );
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("the bundle is not signed, and public keys are configured"),
        "{}",
        run.stderr
    );
    assert!(!host.path("/srv/app").exists());
    // Without keys nothing is applied: nothing could show who made it.
    host.config("bundle:\n  url: /srv/bundles/{host}.bundle\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "refusing unverified input: no `public_keys` is configured, so nothing can show who made the input"
        ),
        "{}",
        run.stderr
    );
    assert!(!host.path("/srv/app").exists());
    assert_eq!(host.metrics()["datum_insecure_allow_unsigned"].one(), 0.0);
    // Only the loudly named setting applies it (its integrity still
    // checked), and every run says so, in the report and the metrics.
    host.config("bundle:\n  url: /srv/bundles/{host}.bundle\ninsecure_allow_unsigned: true\n");
    for code in [2, 0] {
        let run = host.agent(&[]);
        assert_eq!(run.code, code, "{}", run.stderr);
        assert!(
            run.stdout.contains(
                "note: insecure_allow_unsigned: no `public_keys` is configured, so input is applied without checking who made it"
            ),
            "{}",
            run.stdout
        );
        assert_eq!(host.report()["insecure_allow_unsigned"], true);
        assert_eq!(host.metrics()["datum_insecure_allow_unsigned"].one(), 1.0);
    }
}

#[test]
fn noop_changes_nothing_and_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    git_fleet(tmp.path(), &host);
    host.config(GIT_CONFIG);
    let run = host.agent(&["--noop"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!host.path("/srv/app").exists());
    assert!(!host.path("/var/lib/datum/agent/applied.json").exists());
    assert_eq!(host.report()["summary"]["would_change"], 3);
    assert_eq!(host.report()["resources"]["noop"], true);
}

#[test]
fn a_bad_configuration_is_shown_with_its_place() {
    let host = Host::new();
    host.config("git:\n  remotes: [/srv/fleet.git]\n  brnach: main\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let path = host.path("/etc/datum/agent.yaml");
    assert!(
        run.stderr.contains(&format!("{}:3:3", path.display())),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("unknown key `brnach` in `git`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("did you mean `branch`?"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("is not a valid agent configuration (1 error)"),
        "{}",
        run.stderr
    );
    // Nothing ran, so nothing was reported.
    assert!(!host.path("/var/lib/datum/reports").exists());
    let missing = Host::new();
    let run = missing.agent(&[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("cannot read the agent configuration"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_loop_runs_again_at_each_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    git_fleet(tmp.path(), &host);
    host.config(&format!("{GIT_CONFIG}interval: 1s\n"));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("datum"))
        .args(["agent", "--root"])
        .arg(host.root.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let reports = host.path("/var/lib/datum/reports");
    let mut runs = 0;
    // Bounded, generously: three runs of a one-second interval.
    while start.elapsed() < Duration::from_secs(120) {
        runs = if reports.exists() {
            host.runs().len()
        } else {
            0
        };
        if runs >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(runs >= 3, "only {runs} runs in 120 seconds");
    let ids = host.runs();
    // The first converged, the next ones found nothing to do.
    let first: Value =
        serde_json::from_str(&host.read(&format!("/var/lib/datum/reports/{}", ids[0]))).unwrap();
    let second: Value =
        serde_json::from_str(&host.read(&format!("/var/lib/datum/reports/{}", ids[1]))).unwrap();
    assert_eq!(
        (
            first["exit_status"].as_i64(),
            second["exit_status"].as_i64()
        ),
        (Some(2), Some(0))
    );
    // The second run waited for this host's next slot after the first
    // ended: never sooner, however loaded the machine (a late start only
    // comes later). That the loop goes on at all is the bounded wait above.
    let at = |v: &Value| {
        let t = datum_agent::report::Timestamp::parse_rfc3339(v.as_str().unwrap()).unwrap();
        SystemTime::UNIX_EPOCH + t.since_epoch()
    };
    let schedule = datum_agent::schedule::Schedule::new(Duration::from_secs(1)).unwrap();
    let slot = schedule.next_slot("web-001", at(&first["finished"]));
    assert!(
        at(&second["started"]) >= slot,
        "{} started before the slot after {}",
        second["started"],
        first["finished"]
    );
}

#[test]
fn the_systemd_units_pass_systemd_analyze_verify() {
    if !datum_testkit::tools::installed(&["systemd-analyze"]) {
        return;
    }
    let version = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    let units = crate::common::repo_root().join("contrib/systemd");
    let tmp = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("datum");
    let names = [
        "datum-agent.service",
        "datum-agent-once.service",
        "datum-agent.timer",
    ];
    for name in names {
        let text = fs::read_to_string(units.join(name)).unwrap();
        // Verified against the binary just built, which is what
        // /usr/bin/datum is once installed.
        let local = text.replace("/usr/bin/datum ", &format!("{} ", binary.display()));
        let local = local.replace("/usr/bin/datum\n", &format!("{}\n", binary.display()));
        if name.ends_with(".service") {
            assert_ne!(local, text, "{name} does not run /usr/bin/datum");
        }
        fs::write(tmp.path().join(name), local).unwrap();
    }
    let out = Command::new("systemd-analyze")
        .current_dir(tmp.path())
        .args(["verify", "--man=no"])
        .args(names)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // What the units promise: the timer starts one run, at a fixed random
    // offset per host; one run's "changed" is a success; the two ways of
    // running exclude each other.
    let timer = fs::read_to_string(units.join("datum-agent.timer")).unwrap();
    for line in [
        "Unit=datum-agent-once.service",
        "RandomizedDelaySec=30min",
        "FixedRandomDelay=true",
        "Conflicts=datum-agent.service",
    ] {
        assert!(timer.lines().any(|l| l == line), "{line}");
    }
    let once = fs::read_to_string(units.join("datum-agent-once.service")).unwrap();
    assert!(
        once.lines()
            .any(|l| l == "ExecStart=/usr/bin/datum agent --once")
    );
    assert!(once.lines().any(|l| l == "SuccessExitStatus=2"));
    let service = fs::read_to_string(units.join("datum-agent.service")).unwrap();
    assert!(
        service
            .lines()
            .any(|l| l == "ExecStart=/usr/bin/datum agent")
    );
    assert!(service.lines().any(|l| l == "Conflicts=datum-agent.timer"));
}

/// Git mode, with the fleet at the top of the repository.
const SECRET_CONFIG: &str =
    "git:\n  remotes: [/srv/fleet.git]\n  branch: main\ninsecure_allow_unsigned: true\n";

/// The secret tests' fleet, its secret encrypted, committed and pushed to
/// `/srv/fleet.git` of a machine that is web-01 (whose SSH host key it
/// declares), with `/etc/app` for the secret's File.
fn secret_host(f: &SecretFleet) -> Host {
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    ok(git(&f.fleet()).args(["init", "-q"]));
    ok(git(&f.fleet()).args(["add", "-A"]));
    ok(git(&f.fleet()).args(["commit", "-q", "-m", "a secret"]));
    let host = Host::new();
    host.write("/etc/datum/host", "web-01\n");
    fs::create_dir_all(host.path("/etc/app")).unwrap();
    let remote = host.path("/srv/fleet.git");
    Repo::bare(&remote);
    ok(git(&f.fleet())
        .args(["push", "-q"])
        .arg(&remote)
        .arg("HEAD:refs/heads/main"));
    host
}

#[test]
fn the_identity_setting_names_the_key_secrets_are_decrypted_with() {
    let f = SecretFleet::new();
    let host = secret_host(&f);
    // The host key lives at a path of the operator's choosing, not sshd's.
    host.write(
        "/etc/datum/keys/web-01",
        &fs::read_to_string(f.key("web-01")).unwrap(),
    );
    assert!(!host.path("/etc/ssh/ssh_host_ed25519_key").exists());
    host.config(&format!(
        "{SECRET_CONFIG}identity: /etc/datum/keys/web-01\n"
    ));
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let target = host.path("/etc/app/db-password");
    assert_eq!(fs::read_to_string(&target).unwrap(), PLAINTEXT);
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    assert_eq!(host.report()["summary"]["changed"], 1);
    assert_eq!(host.agent(&[]).code, 0, "converged");
    // Nothing the agent kept (its repository, reports, state, metrics)
    // holds the plaintext: only the target does.
    let mut files = Vec::new();
    files_under(host.root.path(), &target, &mut files);
    assert!(files.len() > 5, "{files:?}");
    for (path, bytes) in &files {
        assert!(
            !contains(bytes, PLAINTEXT.as_bytes()),
            "{} holds the plaintext",
            path.display()
        );
    }
}

#[test]
fn without_the_identity_setting_a_key_elsewhere_fails_the_secret_file_clearly() {
    let f = SecretFleet::new();
    let host = secret_host(&f);
    host.write(
        "/etc/datum/keys/web-01",
        &fs::read_to_string(f.key("web-01")).unwrap(),
    );
    host.config(SECRET_CONFIG);
    let run = host.agent(&[]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "failed: File[db-password] /etc/app/db-password\n  error: cannot decrypt secret secrets/db.age: cannot read identity /etc/ssh/ssh_host_ed25519_key: No such file or directory (os error 2) (the host key, given by --identity or the agent's `identity`, default /etc/ssh/ssh_host_ed25519_key)\n"
        ),
        "{}",
        run.stdout
    );
    assert!(!host.path("/etc/app/db-password").exists());
    let r = host.report();
    assert_eq!(r["summary"]["failed"], 1, "{r}");
    assert_eq!(r["resources"]["resources"][0]["status"], "failed", "{r}");
}

/// `ca_file` is read under `--root` at each run: a file that cannot be used
/// refuses the run, naming it, and applies nothing; a usable one lets the
/// run go on (the bundle here is a file, so no TLS is involved: HTTPS with
/// a private CA is tested in the agent crate's `delivery` tests).
#[test]
fn a_ca_file_that_cannot_be_used_refuses_the_run_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let host = Host::new();
    let repo = Repo::new(&tmp.path().join("work"));
    make_bundles(&repo, &host.path("/srv/bundles"), None);
    host.config(
        "bundle:\n  url: /srv/bundles/{host}.bundle\nca_file: /etc/datum/ca.pem\ninsecure_allow_unsigned: true\n",
    );
    let shown = host.path("/etc/datum/ca.pem").display().to_string();
    for (text, expected) in [
        (
            None,
            format!("cannot read the CA file {shown}: No such file"),
        ),
        (
            Some("not a certificate\n"),
            format!("the CA file {shown} holds no certificate"),
        ),
    ] {
        if let Some(text) = text {
            host.write("/etc/datum/ca.pem", text);
        }
        let run = host.agent(&[]);
        assert_eq!(run.code, 1, "{}", run.stdout);
        assert!(
            run.stderr.contains(&expected) && run.stderr.contains("`ca_file`"),
            "{expected}\n{}",
            run.stderr
        );
        assert!(!host.path("/srv/app").exists());
    }
    let ca = fs::read_to_string(fixture("agent/ca.pem")).unwrap();
    host.write("/etc/datum/ca.pem", &ca);
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(host.path("/srv/app").exists());
}

/// git's transport does not read `ca_file`: a configuration where it could
/// serve nothing but an `https://` remote is refused before anything runs.
#[test]
fn a_ca_file_for_an_https_git_remote_is_refused_naming_both() {
    let host = Host::new();
    host.config(
        "git:\n  remotes: ['https://git.example.net/fleet.git']\nca_file: /etc/datum/ca.pem\n",
    );
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let path = host.path("/etc/datum/agent.yaml");
    for expected in [
        format!("{}:3:1", path.display()),
        "`ca_file` is not used for the git remote `https://git.example.net/fleet.git`".to_owned(),
        "is not a valid agent configuration (1 error)".to_owned(),
    ] {
        assert!(run.stderr.contains(&expected), "{expected}\n{}", run.stderr);
    }
    assert!(!host.path("/var/lib/datum/reports").exists());
}
