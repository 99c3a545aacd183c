//! A change reaching the fleet in waves, with no server: real agents under
//! `--root` (one per host), bundles made by the real `datum bundle --all`
//! and served over HTTP on 127.0.0.1, or commits signed with `ssh-keygen`
//! keys in a bare git remote. The waves that must wait start a few seconds
//! (or an hour) after publication; a host polls until its turn comes, and
//! no assertion depends on how long that took.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use datum_testkit::http::FileServer as Server;
use datum_testkit::metrics::labels as label;
use serde_json::{Value, json};

use crate::agent::Host;
use crate::common::{Run, datum};
use crate::delivery::{FLEET, Key, Repo};

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// The delivery fleet's Fleet document with three waves: web-001 first,
/// web-002 `early` seconds later, the rest an hour after that.
fn waves(early: &str) -> String {
    format!(
        "{}rollout:\n  - name: canary\n    hosts: datum/host=web-001\n  - name: early\n    hosts: datum/host=web-002\n    after: {early}\n  - name: rest\n    after: 1h\n",
        FLEET[0].1
    )
}

const HOSTS: &str = "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n---\n\
datum: v1alpha1\ntype: Host\nname: web-002\nlabels:\n  role: web\n---\n\
datum: v1alpha1\ntype: Host\nname: web-003\nlabels:\n  role: web\n---\n\
datum: v1alpha1\ntype: Host\nname: db-001\nlabels:\n  role: db\n";

/// A machine named `name` under its own root.
fn machine(name: &str) -> Host {
    let host = Host::new();
    host.write("/etc/datum/host", &format!("{name}\n"));
    host
}

/// Runs `host`'s agent until it applies something (exit 2), at most a
/// minute; every run before that must change nothing (exit 0).
fn until_applied(host: &Host) -> Run {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let run = host.agent(&[]);
        if run.code == 2 {
            return run;
        }
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(Instant::now() < deadline, "still waiting:\n{}", run.stdout);
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The report's `pending`, and the two pending metrics (the revision's
/// labels, the due time), checked to agree.
fn pending(host: &Host) -> Option<(String, u64, i64)> {
    conforms(host);
    let r = host.report();
    let m = host.metrics();
    if r["pending"].is_null() {
        assert!(!m.contains_key("datum_pending_revision_info"));
        assert!(!m.contains_key("datum_pending_due_timestamp_seconds"));
        return None;
    }
    let p = &r["pending"];
    let commit = p["commit"].as_str().unwrap().to_owned();
    let serial = p["serial"].as_u64();
    let due = p["due"].as_i64().unwrap();
    let info = &m["datum_pending_revision_info"];
    assert_eq!(info.kind, "gauge");
    let serial_text = serial.map_or_else(String::new, |n| n.to_string());
    assert_eq!(
        info.samples[&label(&[("commit", &commit), ("serial", &serial_text)])],
        1.0
    );
    assert_eq!(
        m["datum_pending_due_timestamp_seconds"].one(),
        due as f64,
        "the due time"
    );
    Some((commit, serial.unwrap_or(0), due))
}

/// The host's last report follows the RunReport schema (docs/json.md).
fn conforms(host: &Host) {
    crate::json_contract::assert_conforms(
        "last.json",
        &Run {
            code: 0,
            stdout: host.read("/var/lib/datum/reports/last.json"),
            stderr: String::new(),
        },
    );
}

/// `datum rollout status --format json` (and `datum rollout gate
/// --max-failed 0%`'s exit status) on the last reports of `hosts`,
/// collected into one directory, for the fleet's HEAD.
fn rollout_status(fleet: &Path, hosts: &[&Host]) -> (Value, i32) {
    let dir = tempfile::tempdir().unwrap();
    for (i, h) in hosts.iter().enumerate() {
        fs::copy(
            h.path("/var/lib/datum/reports/last.json"),
            dir.path().join(format!("{i}.json")),
        )
        .unwrap();
    }
    let run = |args: &[&str]| {
        Run::from(
            datum()
                .args(["rollout"])
                .args(args)
                .arg("--reports")
                .arg(dir.path())
                .arg("--fleet")
                .arg(fleet)
                .output()
                .unwrap(),
        )
    };
    let status = run(&["status", "--format", "json"]);
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
    let gate = run(&["gate", "--max-failed", "0%"]);
    (serde_json::from_str(&status.stdout).unwrap(), gate.code)
}

/// Three hosts in bundle mode, each fetching `{host}.bundle` from one
/// server, trusting one CI key.
struct Bundles {
    tmp: tempfile::TempDir,
    repo: Repo,
    ci: Key,
    www: PathBuf,
    _server: Server,
    base: String,
}

impl Bundles {
    fn new(early: &str) -> Bundles {
        let tmp = tempfile::tempdir().unwrap();
        let mut repo = Repo::new(&tmp.path().join("work"));
        repo.write("datum.yaml", &waves(early));
        repo.write("hosts.yaml", HOSTS);
        repo.commit("three waves", None);
        let ci = Key::new(tmp.path(), "ci");
        let www = tmp.path().join("www");
        fs::create_dir_all(&www).unwrap();
        let server = Server::serve(&www);
        let base = server.base.clone();
        Bundles {
            tmp,
            repo,
            ci,
            www,
            _server: server,
            base,
        }
    }

    fn host(&self, name: &str) -> Host {
        let host = machine(name);
        host.write(
            "/etc/datum/bundle_signers",
            &self.ci.signer_line("ci@example.net"),
        );
        host.config(&format!(
            "bundle:\n  url: {}/{{host}}.bundle\npublic_keys: /etc/datum/bundle_signers\n",
            self.base
        ));
        host
    }

    /// `datum bundle --all` of HEAD into the served directory, made at
    /// `made` (SOURCE_DATE_EPOCH, what the waits count from).
    fn publish(&self, made: i64, args: &[&str]) {
        let run = Run::from(
            datum()
                .env("SOURCE_DATE_EPOCH", made.to_string())
                .args(["bundle", "--all", "--out"])
                .arg(&self.www)
                .arg("--fleet")
                .arg(self.repo.fleet())
                .arg("--sign-key")
                .arg(&self.ci.private)
                .args(args)
                .output()
                .unwrap(),
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    }
}

#[test]
fn bundles_reach_each_wave_in_its_turn_and_an_immediate_revert_overtakes_a_pending_change() {
    let mut s = Bundles::new("10s");
    let plan = Run::from(
        datum()
            .args(["rollout", "plan", "--hosts", "--fleet"])
            .arg(s.repo.fleet())
            .output()
            .unwrap(),
    );
    assert!(
        plan.stdout.contains("rollout of 4 hosts in 3 waves"),
        "{}",
        plan.stdout
    );
    let hosts: Vec<Host> = ["web-001", "web-002", "web-003"]
        .iter()
        .map(|n| s.host(n))
        .collect();
    // Release 1, published two hours ago: every wave's turn has come.
    let first = s.repo.rev("HEAD");
    s.publish(now() - 7200, &[]);
    for h in &hosts {
        let run = h.agent(&[]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert_eq!(h.read("/srv/app/motd"), "release 1\n");
        assert_eq!(pending(h), None);
    }
    // The same release re-signed now (for a later expiry, say) brings
    // nothing new: no host waits for it.
    s.publish(now(), &[]);
    for h in &hosts {
        let run = h.agent(&[]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert_eq!(pending(h), None);
    }
    // A host that has applied nothing yet waits for its wave too.
    let newcomer = s.host("web-003");

    // Release 2, published now.
    let second = s.repo.release(2, None);
    let made = now();
    s.publish(made, &[]);
    let canary = hosts[0].agent(&[]);
    assert_eq!(canary.code, 2, "{}{}", canary.stdout, canary.stderr);
    assert_eq!(hosts[0].read("/srv/app/motd"), "release 2\n");
    assert_eq!(pending(&hosts[0]), None);
    for (h, due) in [(&hosts[1], made + 10), (&hosts[2], made + 10 + 3600)] {
        // Drift is still corrected while the change waits.
        h.write("/srv/app/site.conf", "drifted\n");
        let run = h.agent(&[]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(&format!(
                "commit {second} (serial 3) waits for this host's rollout wave until"
            )),
            "{}",
            run.stdout
        );
        assert_eq!(h.read("/srv/app/motd"), "release 1\n");
        assert_eq!(h.read("/srv/app/site.conf"), "listen 80;\n");
        let r = h.report();
        assert_eq!(r["commit"], first.as_str());
        assert_eq!(r["cached_input"], false);
        assert_eq!(
            r["pending"],
            json!({"commit": second, "serial": 3, "due": due})
        );
        assert_eq!(pending(h), Some((second.clone(), 3, due)));
        // The report keeps the revision the host runs.
        let revision = h.metrics()["datum_revision_info"]
            .samples
            .keys()
            .next()
            .unwrap()
            .clone();
        assert!(
            revision.contains(&("commit".to_owned(), first.clone())),
            "{revision:?}"
        );
    }
    // The reports tell the rollout as a whole: the canary updated, two
    // hosts pending, db-001 (no agent here) silent; nothing went wrong.
    let (status, gate) = rollout_status(&s.repo.fleet(), &[&hosts[0], &hosts[1], &hosts[2]]);
    assert_eq!(
        (
            &status["summary"]["updated"],
            &status["summary"]["pending"],
            &status["summary"]["silent"]
        ),
        (&json!(1), &json!(2), &json!(1)),
        "{status}"
    );
    assert_eq!(gate, 0);
    let run = newcomer.agent(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!newcomer.path("/srv/app").exists());
    assert_eq!(newcomer.report()["commit"], Value::Null);
    assert_eq!(
        pending(&newcomer),
        Some((second.clone(), 3, made + 10 + 3600))
    );

    // The early wave's turn comes: it applies the change, nothing waits.
    until_applied(&hosts[1]);
    assert_eq!(hosts[1].read("/srv/app/motd"), "release 2\n");
    assert_eq!(hosts[1].report()["commit"], second.as_str());
    assert_eq!(pending(&hosts[1]), None);

    // The change is bad: its revert goes out immediate, to every wave at
    // once, and replaces the change still pending on the last wave, which
    // never applies it.
    s.repo.write(
        "base.yaml",
        &FLEET[2].1.replace("release 1", "release 1 again"),
    );
    let revert = s.repo.commit("revert release 2", None);
    s.publish(now(), &["--immediate"]);
    for h in hosts.iter().chain([&newcomer]) {
        let run = h.agent(&[]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert_eq!(h.read("/srv/app/motd"), "release 1 again\n");
        assert_eq!(h.report()["commit"], revert.as_str());
        assert_eq!(pending(h), None);
    }
    let _ = &s.tmp;
}

/// A host in git mode, web-001 in the second wave, trusting commits
/// signed by `ops`.
fn git_host(tmp: &Path, repo: &Repo, ops: &Key) -> Host {
    let host = machine("web-001");
    let remote = host.path("/srv/fleet.git");
    Repo::bare(&remote);
    repo.push(&remote, "HEAD", "main");
    host.write(
        "/etc/datum/allowed_signers",
        &ops.signer_line("ops@example.net"),
    );
    host.config(
        "git:\n  remotes: [/srv/fleet.git]\n  branch: main\n  fleet: fleet\nallowed_signers: /etc/datum/allowed_signers\n",
    );
    let _ = tmp;
    host
}

#[test]
fn git_mode_counts_the_wait_from_when_it_first_saw_the_tip_and_the_immediate_trailer_skips_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ops = Key::new(tmp.path(), "ops");
    let mut repo = Repo::new(&tmp.path().join("work"));
    // The first commit declares no waves: it applies at once.
    repo.commit("signed", Some(&ops));
    let host = git_host(tmp.path(), &repo, &ops);
    let remote = host.path("/srv/fleet.git");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let first = repo.rev("HEAD");

    // Waves arrive with release 2: the waves at the tip decide. web-001
    // is not the canary (db-001 is), so it waits 3 seconds from when it
    // first sees the commit.
    repo.write(
        "datum.yaml",
        &format!(
            "{}rollout:\n  - name: canary\n    hosts: datum/host=db-001\n  - name: web\n    after: 3s\n",
            FLEET[0].1
        ),
    );
    let second = repo.release(2, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let before = now();
    let run = host.agent(&[]);
    let after = now();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(host.report()["commit"], first.as_str());
    let (commit, _, due) = pending(&host).expect("pending");
    assert_eq!(commit, second);
    assert!(
        (before + 3..=after + 3).contains(&due),
        "{due} not 3s after {before}..{after}"
    );
    assert_eq!(host.report()["pending"]["serial"], Value::Null);
    // The wait is counted from the first sighting, not from each run.
    let run = host.agent(&[]);
    if run.code == 0 {
        assert_eq!(pending(&host).unwrap().2, due);
    }
    if run.code != 2 {
        until_applied(&host);
    }
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    assert_eq!(host.report()["commit"], second.as_str());
    assert_eq!(pending(&host), None);

    // Release 3 waits; its revert, signed with the trailer, overtakes it.
    repo.release(3, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(pending(&host).is_some());
    repo.write("base.yaml", &FLEET[2].1.replace("release 1", "release 2"));
    let revert = repo.commit("Revert release 3\n\nDatum-Rollout: immediate", Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("says `Datum-Rollout: immediate`: no wave to wait for"),
        "{}",
        run.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    assert_eq!(host.report()["commit"], revert.as_str());
    assert_eq!(pending(&host), None);
}

/// A check that fails on release 2, a Service and a `refresh_only` Exec
/// that a change of the motd restarts (under `--root` a Service is not
/// running, so the Exec shows the restart by what it leaves behind).
const CHECKS: &str = r#"datum: v1alpha1
type: Layer
name: checks
precedence: 40
match: {}
resources:
  Health[motd]:
    command: [sh, -c, 'read line < /srv/app/motd; echo "motd says $line"; test "$line" != "release 2" && test ! -e /srv/app/broken']
  Service[app]:
    restart_on: ["File[motd]"]
  Exec[reload]:
    command: [sh, -c, 'read line < /srv/app/motd; echo "$line" >> /srv/app/reloads']
    refresh_only: true
    run_on: ["File[motd]"]
"#;

/// The outcome of `id` in a run report's `resources`.
fn outcome<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["resources"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {report}"))
}

#[test]
fn a_failing_health_check_puts_the_host_back_and_the_bad_input_is_refused_until_a_newer_one() {
    let mut s = Bundles::new("3s");
    s.repo.write("checks.yaml", CHECKS);
    let good = s.repo.commit("health checks", None);
    let host = s.host("web-001");
    fs::write(host.path("/etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    datum_testkit::machine::install_programs(host.root.path(), &["/bin/sh", "test", "cat"]);
    s.publish(now(), &[]);
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/reloads"), "release 1\n");

    // Release 2 fails its check: the host is put back on release 1 in the
    // same run, and the reload runs again for the file put back.
    let bad = s.repo.release(2, None);
    s.publish(now(), &[]);
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("health failed: Health[motd] sh -c"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "note: health checks failed after applying commit {bad} (Health[motd]): applying the last verified input again (commit {good})"
        )),
        "{}",
        run.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(
        host.read("/srv/app/reloads"),
        "release 1\nrelease 2\nrelease 1\n"
    );
    conforms(&host);
    let r = host.report();
    assert_eq!(r["exit_status"], 6);
    assert_eq!(r["commit"], good.as_str());
    assert_eq!(r["source"], "/var/lib/datum/agent/verified.bundle");
    assert_eq!(r["cached_input"], true);
    assert_eq!(
        r["rolled_back"],
        json!({"commit": bad, "serial": 4, "failed_checks": [
            {"id": "Health[motd]", "output": "motd says release 2\n"}
        ]})
    );
    // The report is the run that put the host back: the motd changed back,
    // the service owed its restart, and the checks passed again.
    assert_eq!(outcome(&r, "File[motd]")["status"], "changed");
    let service = outcome(&r, "Service[app]");
    assert!(
        service["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("no restart needed (File[motd] changed)"),
        "{service}"
    );
    assert_eq!(r["resources"]["health"][0]["status"], "passed");
    let m = host.metrics();
    assert_eq!(
        m["datum_rolled_back_revision_info"].samples[&label(&[("commit", &bad), ("serial", "4")])],
        1.0
    );
    assert_eq!(m["datum_last_run_exit_status"].one(), 6.0);
    let applied = host.read("/var/lib/datum/agent/applied.json");
    assert!(applied.contains("\"serial\": 3"), "{applied}");
    // The rollout as a whole: the canary rolled back, and the gate stops.
    let (status, gate) = rollout_status(&s.repo.fleet(), &[&host]);
    assert_eq!(status["summary"]["rolled_back"], 1, "{status}");
    assert_eq!(gate, 1);

    // The next runs refuse it, and keep the host on release 1 (drift
    // included), without applying release 2 again.
    host.write("/srv/app/motd", "drifted\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "this host applied it and took it back, since its health checks failed (Health[motd])"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(
        host.read("/srv/app/reloads"),
        "release 1\nrelease 2\nrelease 1\nrelease 1\n"
    );
    let r = host.report();
    assert_eq!(r["rolled_back"]["commit"], bad.as_str());
    assert_eq!(r["commit"], good.as_str());
    assert_eq!(
        host.metrics()["datum_input_refusals_total"].samples[&label(&[("reason", "rolled_back")])],
        1.0
    );
    assert_eq!(host.agent(&[]).code, 1);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");

    // A newer input is applied.
    let fixed = s.repo.release(3, None);
    s.publish(now(), &[]);
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 3\n");
    let r = host.report();
    assert_eq!(r["commit"], fixed.as_str());
    assert_eq!(r["rolled_back"], Value::Null);
    assert!(
        !host
            .metrics()
            .contains_key("datum_rolled_back_revision_info")
    );
}

#[test]
fn in_git_mode_a_commit_whose_check_fails_is_taken_back_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ops = Key::new(tmp.path(), "ops");
    let mut repo = Repo::new(&tmp.path().join("work"));
    repo.write("checks.yaml", CHECKS);
    let good = repo.commit("health checks", Some(&ops));
    let host = git_host(tmp.path(), &repo, &ops);
    fs::write(host.path("/etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    datum_testkit::machine::install_programs(host.root.path(), &["/bin/sh", "test", "cat"]);
    let remote = host.path("/srv/fleet.git");
    assert_eq!(host.agent(&[]).code, 2);

    let bad = repo.release(2, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    conforms(&host);
    let r = host.report();
    assert_eq!(r["commit"], good.as_str());
    assert_eq!(
        r["rolled_back"],
        json!({"commit": bad, "serial": null, "failed_checks": [
            {"id": "Health[motd]", "output": "motd says release 2\n"}
        ]})
    );
    let applied = host.read("/var/lib/datum/agent/applied.json");
    assert!(applied.contains(&good), "{applied}");

    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "refusing commit {bad}: this host applied it and took it back"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");

    let fixed = repo.release(3, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 3\n");
    assert_eq!(host.report()["commit"], fixed.as_str());
    assert_eq!(host.report()["rolled_back"], Value::Null);
}

#[test]
fn each_bundle_signs_its_waves_start_after_the_making_time_and_immediate_signs_none() {
    let mut s = Bundles::new("90s");
    let made = 1_750_000_000;
    let not_before = |host: &str| {
        let bytes = fs::read(s.www.join(format!("{host}.bundle"))).unwrap();
        let decoded = datum_core::bundle::decode(&bytes).unwrap();
        decoded.header.not_before
    };
    s.publish(made, &[]);
    // The canary's wave starts at once: no wait, whatever the clocks say.
    assert_eq!(not_before("web-001"), None);
    assert_eq!(not_before("web-002"), Some(made + 90));
    assert_eq!(not_before("web-003"), Some(made + 90 + 3600));
    assert_eq!(not_before("db-001"), Some(made + 90 + 3600));
    s.publish(made, &["--immediate"]);
    for host in ["web-001", "web-002", "web-003", "db-001"] {
        assert_eq!(not_before(host), None, "{host}");
    }
    // Waves that cannot be computed stop the bundles, unless immediate.
    s.repo.write(
        "datum.yaml",
        &format!(
            "{}rollout:\n  - name: canary\n    hosts: datum/host=nohost\n  - name: rest\n    after: 1h\n",
            FLEET[0].1
        ),
    );
    s.repo.commit("a wave that takes no host", None);
    let run = Run::from(
        datum()
            .args(["bundle", "--all", "--out"])
            .arg(&s.www)
            .arg("--fleet")
            .arg(s.repo.fleet())
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("wave `canary` takes no host"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("the rollout waves in datum.yaml have errors"),
        "{}",
        run.stderr
    );
    s.publish(made, &["--immediate"]);
    let _ = &s.tmp;
}

/// The waves' fleet written into `dir`, outside git, its motd `motd`.
fn write_outside_git(dir: &Path, motd: &str) {
    for (path, text) in FLEET {
        let text = match *path {
            "datum.yaml" => waves("1h"),
            "hosts.yaml" => HOSTS.to_owned(),
            _ => text.replace("release 1", motd),
        };
        let file = dir.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
}

#[test]
fn bundles_made_outside_git_wait_too_though_nothing_tells_one_release_from_another() {
    let s = Bundles::new("1h");
    let plain = s.tmp.path().join("plain");
    let write = |motd: &str| write_outside_git(&plain, motd);
    let publish = |made: i64| {
        let run = Run::from(
            datum()
                .env("SOURCE_DATE_EPOCH", made.to_string())
                .args(["bundle", "--all", "--out"])
                .arg(&s.www)
                .arg("--fleet")
                .arg(&plain)
                .arg("--sign-key")
                .arg(&s.ci.private)
                .output()
                .unwrap(),
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    };
    let host = s.host("web-002");
    write("outside git 1");
    publish(now() - 7200);
    assert_eq!(host.agent(&[]).code, 2);
    write("outside git 2");
    publish(now());
    let run = host.agent(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "outside git 1\n");
    let p = &host.report()["pending"];
    assert_eq!(p["commit"], Value::Null);
    assert_eq!(p["serial"], Value::Null);
}

#[test]
fn a_check_failing_after_drift_is_corrected_takes_nothing_back() {
    let s = Bundles::new("3s");
    let mut repo = s.repo;
    repo.write("checks.yaml", CHECKS);
    repo.commit("health checks", None);
    let s = Bundles { repo, ..s };
    let host = s.host("web-001");
    fs::write(host.path("/etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    datum_testkit::machine::install_programs(host.root.path(), &["/bin/sh", "test", "cat"]);
    s.publish(now(), &[]);
    assert_eq!(host.agent(&[]).code, 2);
    // Something else breaks the host; the run that corrects a drifted
    // file asks the checks, which fail: the input is the one it ran
    // already, so there is nothing to take back.
    host.write("/srv/app/broken", "");
    host.write("/srv/app/motd", "drifted\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(host.report()["rolled_back"], Value::Null);
    assert!(!host.path("/var/lib/datum/agent/refused.json").exists());
    let run = host.agent(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn a_first_input_that_fails_its_check_has_nothing_to_go_back_to_and_stays() {
    let s = Bundles::new("3s");
    let mut repo = s.repo;
    repo.write("checks.yaml", CHECKS);
    repo.commit("health checks", None);
    let bad = repo.release(2, None);
    let s = Bundles { repo, ..s };
    let host = s.host("web-001");
    fs::write(host.path("/etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    datum_testkit::machine::install_programs(host.root.path(), &["/bin/sh", "test", "cat"]);
    s.publish(now(), &[]);
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("and this host applied nothing before it to go back to: it stays applied"),
        "{}",
        run.stdout
    );
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    let r = host.report();
    assert_eq!(r["commit"], bad.as_str());
    assert_eq!(r["rolled_back"], Value::Null);
    assert!(
        host.read("/var/lib/datum/agent/applied.json")
            .contains(&bad)
    );
}

/// Checks that fail on any motd starting with `bad`.
const BAD_CHECKS: &str = r#"datum: v1alpha1
type: Layer
name: checks
precedence: 40
match: {}
resources:
  Health[motd]:
    command: [sh, -c, 'read line < /srv/app/motd; echo "motd says $line"; case "$line" in bad*) exit 1;; esac']
"#;

/// Commits the fleet with `text` as the motd.
fn motd(repo: &mut Repo, text: &str, key: Option<&Key>) -> String {
    repo.write("base.yaml", &FLEET[2].1.replace("release 1", text));
    repo.commit(text, key)
}

/// A machine whose checks can run (`sh`, `test`, `cat`).
fn checkable(host: &Host) {
    fs::write(host.path("/etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    datum_testkit::machine::install_programs(host.root.path(), &["/bin/sh", "test", "cat"]);
}

#[test]
fn a_bundle_taken_back_stays_refused_after_a_newer_one_is_taken_back_too() {
    let s = Bundles::new("3s");
    let mut repo = s.repo;
    repo.write("checks.yaml", BAD_CHECKS);
    repo.commit("health checks", None);
    let mut s = Bundles { repo, ..s };
    let host = s.host("web-001");
    checkable(&host);
    s.publish(now(), &[]);
    assert_eq!(host.agent(&[]).code, 2);
    let served = s.www.join("web-001.bundle");

    // Two bad releases, each taken back in turn.
    motd(&mut s.repo, "bad one", None);
    s.publish(now(), &[]);
    let first = fs::read(&served).unwrap();
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    let first_serial = host.report()["rolled_back"]["serial"].as_u64().unwrap();
    motd(&mut s.repo, "bad two", None);
    s.publish(now(), &[]);
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");

    // A store serving the first bad bundle again: it stays refused.
    fs::write(&served, &first).unwrap();
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "this host applied it and took it back, since its health checks failed (Health[motd])"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(host.report()["rolled_back"]["serial"], first_serial);

    // A record that cannot be read refuses it too.
    host.write("/var/lib/datum/agent/refused.json", "{\"inputs\": 3");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("it cannot be shown not to be an input this host took back"),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    fs::remove_file(host.path("/var/lib/datum/agent/refused.json")).unwrap();

    // A fix is applied.
    motd(&mut s.repo, "release 4", None);
    s.publish(now(), &[]);
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 4\n");
}

#[test]
fn in_git_mode_an_ancestor_of_a_commit_taken_back_stays_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ops = Key::new(tmp.path(), "ops");
    let mut repo = Repo::new(&tmp.path().join("work"));
    repo.write("checks.yaml", BAD_CHECKS);
    repo.commit("health checks", Some(&ops));
    let host = git_host(tmp.path(), &repo, &ops);
    checkable(&host);
    let remote = host.path("/srv/fleet.git");
    assert_eq!(host.agent(&[]).code, 2);

    let c1 = motd(&mut repo, "bad one", Some(&ops));
    repo.push(&remote, "HEAD", "main");
    assert_eq!(host.agent(&[]).code, 6);
    let c2 = motd(&mut repo, "bad two", Some(&ops));
    repo.push(&remote, "HEAD", "main");
    assert_eq!(host.agent(&[]).code, 6);
    assert_eq!(host.report()["rolled_back"]["commit"], c2.as_str());

    // A lagging mirror serves the first one again.
    repo.push(&remote, &c1, "main");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "refusing commit {c1}: this host applied it and took it back"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");

    // With only the second one on record, the first is refused as its
    // ancestor.
    let refused = host.read("/var/lib/datum/agent/refused.json");
    let mut record: Value = serde_json::from_str(&refused).unwrap();
    record["inputs"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["commit"] == c2.as_str());
    host.write("/var/lib/datum/agent/refused.json", &record.to_string());
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "refusing commit {c1}: it is no newer than commit {c2}, which this host applied and took back"
        )),
        "{}",
        run.stderr
    );

    let fixed = motd(&mut repo, "release 3", Some(&ops));
    repo.push(&remote, "HEAD", "main");
    assert_eq!(host.agent(&[]).code, 2);
    assert_eq!(host.report()["commit"], fixed.as_str());
}

#[test]
fn a_bundle_made_outside_git_taken_back_is_told_from_the_fix_by_its_contents() {
    let s = Bundles::new("1h");
    let plain = s.tmp.path().join("plain");
    let publish = |text: &str| {
        write_outside_git(&plain, text);
        fs::write(plain.join("checks.yaml"), BAD_CHECKS).unwrap();
        let run = Run::from(
            datum()
                .args(["bundle", "--all", "--out"])
                .arg(&s.www)
                .arg("--fleet")
                .arg(&plain)
                .arg("--sign-key")
                .arg(&s.ci.private)
                .output()
                .unwrap(),
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    };
    let host = s.host("web-001");
    checkable(&host);
    publish("outside git 1");
    assert_eq!(host.agent(&[]).code, 2);
    // The same bundle again is the same input: nothing to apply.
    assert_eq!(host.agent(&[]).code, 0);
    publish("bad outside git");
    let run = host.agent(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "outside git 1\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("this host applied it and took it back"),
        "{}",
        run.stderr
    );
    // The fix has other contents: applied.
    publish("outside git 2");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "outside git 2\n");
}

#[test]
fn in_git_mode_the_old_tip_served_again_does_not_restart_the_wait_of_the_pending_one() {
    let tmp = tempfile::tempdir().unwrap();
    let ops = Key::new(tmp.path(), "ops");
    let mut repo = Repo::new(&tmp.path().join("work"));
    let first = repo.commit("signed", Some(&ops));
    let host = git_host(tmp.path(), &repo, &ops);
    let remote = host.path("/srv/fleet.git");
    assert_eq!(host.agent(&[]).code, 2);
    // web-001 waits an hour for release 2.
    repo.write(
        "datum.yaml",
        &format!(
            "{}rollout:\n  - name: canary\n    hosts: datum/host=db-001\n  - name: web\n    after: 1h\n",
            FLEET[0].1
        ),
    );
    let second = repo.release(2, Some(&ops));
    repo.push(&remote, "HEAD", "main");
    assert_eq!(host.agent(&[]).code, 0);
    let waiting = host.read("/var/lib/datum/agent/pending.json");
    assert!(waiting.contains(&second), "{waiting}");

    // A lagging mirror serves the commit the host runs: applied (drift
    // corrected), and the wait for release 2 goes on from when it began.
    repo.push(&remote, &first, "main");
    host.write("/srv/app/motd", "drifted\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
    assert_eq!(host.read("/var/lib/datum/agent/pending.json"), waiting);
    repo.push(&remote, &second, "main");
    assert_eq!(host.agent(&[]).code, 0);
    assert_eq!(host.read("/var/lib/datum/agent/pending.json"), waiting);
    assert_eq!(host.read("/srv/app/motd"), "release 1\n");
}

#[test]
fn a_kept_bundle_older_than_the_record_is_refused_and_the_record_stays() {
    let mut s = Bundles::new("3s");
    let host = s.host("web-001");
    s.publish(now(), &[]);
    assert_eq!(host.agent(&[]).code, 2);
    let old = fs::read(host.path("/var/lib/datum/agent/verified.bundle")).unwrap();
    s.repo.release(2, None);
    s.publish(now(), &[]);
    assert_eq!(host.agent(&[]).code, 2);
    let record = host.read("/var/lib/datum/agent/applied.json");

    // The kept bundle is the older one (a write that failed), and the
    // store cannot be reached: the host does not go back to it.
    fs::write(host.path("/var/lib/datum/agent/verified.bundle"), &old).unwrap();
    fs::remove_file(s.www.join("web-001.bundle")).unwrap();
    host.write("/srv/app/motd", "drifted\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "kept as the last verified bundle, is not the input recorded as applied: refusing to go back"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(host.read("/srv/app/motd"), "drifted\n");
    assert_eq!(host.read("/var/lib/datum/agent/applied.json"), record);

    // The next bundle fetched replaces it.
    s.publish(now(), &[]);
    assert_eq!(host.agent(&[]).code, 2);
    assert_eq!(host.read("/srv/app/motd"), "release 2\n");
    assert_eq!(
        fs::read(host.path("/var/lib/datum/agent/verified.bundle")).unwrap(),
        fs::read(s.www.join("web-001.bundle")).unwrap()
    );
}
