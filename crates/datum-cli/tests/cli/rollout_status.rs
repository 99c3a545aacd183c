//! `datum rollout status` and `datum rollout gate` on a directory of run
//! reports: written by hand in the layouts operators collect them in, and
//! one left by a real `datum agent --once` under `--root`.

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::common::{Run, copy_tree, datum, example};
use crate::delivery::Repo;

/// The time every status below is taken at.
pub(crate) const AS_OF: &str = "2026-12-06T12:00:00Z";

/// The example rollout fleet (three waves) committed twice: `old`, then
/// `new`, the revision being rolled out (HEAD).
pub(crate) struct Rollout {
    _tmp: tempfile::TempDir,
    pub(crate) repo: Repo,
    pub(crate) old: String,
    pub(crate) new: String,
    pub(crate) reports: PathBuf,
}

impl Rollout {
    pub(crate) fn new() -> Rollout {
        let tmp = tempfile::tempdir().unwrap();
        let mut repo = Repo::new(&tmp.path().join("work"));
        fs::remove_dir_all(repo.fleet()).unwrap();
        copy_tree(&example("rollout"), &repo.fleet());
        let old = repo.commit("the rollout fleet", None);
        repo.write("base/notes.txt", "a change\n");
        let new = repo.commit("a change", None);
        let reports = tmp.path().join("reports");
        fs::create_dir_all(&reports).unwrap();
        Rollout {
            _tmp: tmp,
            repo,
            old,
            new,
            reports,
        }
    }

    /// Writes a report at `rel` below the reports directory.
    pub(crate) fn put(&self, rel: &str, report: &Value) {
        let path = self.reports.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, serde_json::to_string_pretty(report).unwrap()).unwrap();
    }

    /// `datum --fleet FLEET ARGS`.
    pub(crate) fn datum(&self, args: &[&str]) -> Run {
        let run = Run::from(
            datum()
                .arg("--fleet")
                .arg(self.repo.fleet())
                .args(args)
                .output()
                .unwrap(),
        );
        assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
        run
    }

    /// `datum rollout SUB --reports DIR --at AS_OF ARGS`.
    pub(crate) fn rollout(&self, sub: &str, args: &[&str]) -> Run {
        let dir = self.reports.display().to_string();
        let mut all = vec!["rollout", sub, "--reports", &dir, "--at", AS_OF];
        all.extend(args);
        self.datum(&all)
    }

    /// Reports of the canaries failing, one host silent, one moved on, and
    /// the rest in every other state, in the layouts collectors use.
    pub(crate) fn one_failed_wave(&self) {
        let (old, new) = (self.old.as_str(), self.new.as_str());
        // canary: web-001's run of the change failed (DIR/<host>/last.json).
        self.put("web-001/last.json", &report("web-001", "11:30", new, 6, 1));
        // canary: db-001 applied it, its checks failed, it put the old one
        // back (a collector's store: DIR/<host>/<run-id>.json).
        let mut back = report("db-001", "11:20", old, 2, 0);
        back["rolled_back"] = json!({"commit": new, "serial": null,
            "failed_checks": [{"id": "Health[site]", "output": "answered 502"}]});
        self.put("db-001/20261206T112000Z-0000.json", &back);
        let ok = report("db-001", "11:40", old, 0, 0);
        self.put("db-001/20261206T114000Z-0000.json", &ok);
        // early: db-004 holds it for its wave (DIR/<host>.json).
        let mut wait = report("db-004", "11:50", old, 0, 0);
        wait["pending"] = json!({"commit": new, "serial": null, "due": 1_765_024_200});
        self.put("db-004.json", &wait);
        // early: web-002 applied it; last.json beside its own copy.
        let done = report("web-002", "11:45", new, 2, 0);
        self.put("web-002/last.json", &done);
        self.put("web-002/20261206T114500Z-0000.json", &done);
        // fleet: db-002 last reported five hours ago, db-003 never.
        self.put("db-002.json", &report("db-002", "07:00", old, 0, 0));
        // fleet: db-005 still on the old revision, web-003 updated.
        self.put("db-005.json", &report("db-005", "11:55", old, 0, 0));
        self.put("web-003.json", &report("web-003", "11:10", new, 0, 0));
        // fleet: web-004 failed the change, then moved on to another
        // commit: the failure still counts.
        self.put("web-004/a.json", &report("web-004", "10:00", new, 4, 2));
        let other = "0".repeat(40);
        self.put("web-004/b.json", &report("web-004", "11:00", &other, 0, 0));
        // fleet: web-005 on the old revision; its update came after AS_OF.
        self.put("web-005/a.json", &report("web-005", "11:00", old, 0, 0));
        self.put("web-005/b.json", &report("web-005", "13:00", new, 2, 0));
        // A host the fleet does not declare, and a file that is no report.
        self.put("gone-001.json", &report("gone-001", "11:00", new, 0, 0));
        fs::write(self.reports.join("notes.json"), "{\"not\": \"a report\"}").unwrap();
    }
}

/// A run report of `host` finished at `hhmm` on 2026-12-06, as agents
/// write them (docs/json.md, RunReport).
pub(crate) fn report(host: &str, hhmm: &str, commit: &str, exit: i32, failed: u64) -> Value {
    let compact = hhmm.replace(':', "");
    json!({
        "datum": "v1alpha1", "type": "RunReport",
        "run_id": format!("20261206T{compact}00Z-0000"),
        "host": host,
        "started": format!("2026-12-06T{hhmm}:00.000Z"),
        "finished": format!("2026-12-06T{hhmm}:05.000Z"),
        "mode": "git", "source": "https://git.example.com/fleet.git",
        "commit": commit, "cached_input": false, "fetch_failures_total": 0,
        "notes": [],
        "summary": {"changed": if exit & 2 != 0 { 1 } else { 0 }, "would_change": 0,
                    "failed": failed, "skipped": 0, "unchanged": 3},
        "resources": null, "exit_status": exit, "facts": null,
        "label_mismatches": [], "insecure_allow_unsigned": false,
        "input_expires": null, "input_refusals_total": {},
        "pending": null, "rolled_back": null
    })
}

/// The names of the hosts of wave `i` in `state`, from the JSON status.
fn in_state(v: &Value, i: usize, state: &str) -> Vec<String> {
    v["waves"][i]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["state"] == state)
        .map(|h| h["host"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn status_puts_every_host_of_every_wave_in_one_state() {
    let r = Rollout::new();
    r.one_failed_wave();
    let run = r.rollout("status", &["--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    crate::json_contract::assert_conforms("rollout status", &run);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["revision"], r.new);
    assert_eq!(v["as_of"], "2026-12-06T12:00:00.000Z");
    assert_eq!(v["silent_after_seconds"], 7200);
    let names: Vec<&str> = ["canary", "early", "fleet"].to_vec();
    let waves: Vec<&str> = v["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(waves, names);
    assert_eq!(in_state(&v, 0, "failed"), ["web-001"]);
    assert_eq!(in_state(&v, 0, "rolled_back"), ["db-001"]);
    assert_eq!(in_state(&v, 1, "pending"), ["db-004"]);
    assert_eq!(in_state(&v, 1, "updated"), ["web-002"]);
    assert_eq!(in_state(&v, 2, "silent"), ["db-002", "db-003"]);
    assert_eq!(in_state(&v, 2, "behind"), ["db-005", "web-005"]);
    assert_eq!(in_state(&v, 2, "updated"), ["web-003"]);
    assert_eq!(in_state(&v, 2, "failed"), ["web-004"]);
    // What each state says.
    let host = |w: usize, name: &str| {
        v["waves"][w]["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["host"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(host(0, "web-001")["exit_status"], 6);
    assert_eq!(host(0, "db-001")["failed_checks"], json!(["Health[site]"]));
    assert_eq!(host(0, "db-001")["run_id"], "20261206T112000Z-0000");
    assert_eq!(host(0, "db-001")["last_report"], "2026-12-06T11:40:05.000Z");
    assert_eq!(host(1, "db-004")["due"], 1_765_024_200);
    assert_eq!(host(2, "db-005")["commit"], r.old);
    assert_eq!(host(2, "db-003")["last_report"], Value::Null);
    assert_eq!(host(2, "db-002")["last_report"], "2026-12-06T07:00:05.000Z");
    assert_eq!(
        v["summary"],
        json!({"updated": 2, "pending": 1, "failed": 2, "rolled_back": 1, "silent": 2,
               "behind": 2, "hosts": 10, "waves": 3, "reports": 13})
    );
    assert_eq!(v["unknown_hosts"], json!(["gone-001"]));
    // The file that is no report is a warning, not a failure.
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["severity"], "warning");
}

#[test]
fn status_text_counts_each_wave_and_names_the_hosts_to_look_at() {
    let r = Rollout::new();
    r.one_failed_wave();
    let run = r.rollout("status", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let short = &r.new[..7];
    let text = run.stdout.replace(short, "<commit>");
    insta::assert_snapshot!(text);
    assert!(
        run.stderr.contains("notes.json is not a run report"),
        "{}",
        run.stderr
    );
    // The same reports give the same output, whatever order they are in.
    assert_eq!(r.rollout("status", &[]).stdout, run.stdout);
}

#[test]
fn status_follows_the_silence_bound_and_the_revision_asked_for() {
    let r = Rollout::new();
    r.one_failed_wave();
    // With a bound of six hours db-002 is heard from: behind.
    let run = r.rollout("status", &["--silent-after", "6h", "--format", "json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(in_state(&v, 2, "silent"), ["db-003"]);
    // The status of the old revision: hosts on it are updated, those on
    // the new one behind.
    let run = r.rollout("status", &["--rev", "HEAD~1", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["revision"], r.old);
    assert_eq!(in_state(&v, 0, "updated"), ["db-001"]);
    assert_eq!(in_state(&v, 0, "behind"), ["web-001"]);
}

#[test]
fn gate_fails_on_the_wave_that_went_wrong_and_names_its_hosts() {
    let r = Rollout::new();
    r.one_failed_wave();
    // The canaries: 2 of 2 went wrong; the fleet wave 1 of 6 (16.67%).
    let run = r.rollout("gate", &["--max-failed", "20%"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "wave canary went wrong: 2 of 2 hosts failed or rolled back (100%), more than 20%\n  \
         db-001   rolled back\n  web-001  failed\nnote: 2 hosts silent, not counted (`datum rollout status` lists them; --max-silent counts them)\n"
    );
    // A stricter bound stops the fleet wave too.
    let run = r.rollout("gate", &["--max-failed", "10%"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("wave fleet went wrong: 1 of 6 hosts failed or rolled back (16.66%), more than 10%\n  web-004  failed\n"),
        "{}",
        run.stdout
    );
    // The same verdict as JSON: every wave with its share.
    let run = r.rollout("gate", &["--max-failed", "20%", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["max_silent"], Value::Null);
    assert_eq!(
        v["summary"],
        json!({"waves": 3, "went_wrong": 1, "silent": 2})
    );
    assert_eq!(
        v["waves"][0],
        json!({"name": "canary", "count": 2, "failed": ["web-001"], "rolled_back": ["db-001"],
               "share": "100", "silent": [], "silent_share": "0", "went_wrong": true})
    );
    assert_eq!(v["waves"][2]["share"], "16.66");
    assert_eq!(v["waves"][2]["went_wrong"], false);
    // At exactly the bound a wave passes: only more fails it.
    let run = r.rollout("gate", &["--max-failed", "100%", "--wave", "canary"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // Judged alone, the early wave passes.
    let run = r.rollout("gate", &["--max-failed", "0%", "--wave", "early"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("rollout of "), "{}", run.stdout);
    assert!(run.stdout.contains(" passes: "), "{}", run.stdout);
}

#[test]
fn gate_counts_silent_hosts_only_when_asked() {
    let r = Rollout::new();
    r.one_failed_wave();
    // The fleet wave: 2 of 6 hosts silent (33.33%).
    let run = r.rollout(
        "gate",
        &[
            "--max-failed",
            "100%",
            "--max-silent",
            "30%",
            "--wave",
            "fleet",
        ],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "wave fleet went wrong: 2 of 6 hosts silent (33.33%), more than 30%\n  \
         db-002   silent\n  db-003   silent\n  web-004  failed\n"
    );
    let run = r.rollout("gate", &["--max-failed", "100%", "--max-silent", "40%"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "rollout of HEAD ({}) passes: no wave has more than 100% of its hosts failed or rolled back, nor more than 40% silent\n",
            &r.new[..7]
        )
    );
    // Both reasons at once.
    let run = r.rollout(
        "gate",
        &[
            "--max-failed",
            "10%",
            "--max-silent",
            "30%",
            "--wave",
            "fleet",
        ],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.starts_with(
            "wave fleet went wrong: 1 of 6 hosts failed or rolled back (16.66%), more than 10%; 2 of 6 hosts silent (33.33%), more than 30%\n"
        ),
        "{}",
        run.stdout
    );
    let run = r.rollout(
        "gate",
        &[
            "--max-failed",
            "0%",
            "--max-silent",
            "30%",
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["max_silent"], "30");
    assert_eq!(v["waves"][2]["silent"], json!(["db-002", "db-003"]));
    assert_eq!(v["waves"][2]["silent_share"], "33.33");
}

#[test]
fn gate_passes_a_healthy_rollout() {
    let r = Rollout::new();
    for host in ["web-001", "db-001"] {
        r.put(
            &format!("{host}.json"),
            &report(host, "11:00", &r.new, 2, 0),
        );
    }
    let run = r.rollout("gate", &["--max-failed", "0%"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "rollout of HEAD ({}) passes: no wave has more than 0% of its hosts failed or rolled back\nnote: 8 hosts silent, not counted (`datum rollout status` lists them; --max-silent counts them)\n",
            &r.new[..7]
        )
    );
}

#[test]
fn bad_usage_exits_64_with_a_hint() {
    let r = Rollout::new();
    for (args, says) in [
        (
            &["--max-failed", "ten"][..],
            "`ten` is not a percentage from 0% to 100%",
        ),
        (&["--max-failed", "101%"], "not a percentage"),
        (
            &["--max-failed", "5%", "--silent-after", "soon"],
            "`soon` is not a duration",
        ),
        (
            &["--max-failed", "5%", "--wave", "canry"],
            "has no wave `canry`",
        ),
    ] {
        let run = r.rollout("gate", args);
        assert_eq!(run.code, 64, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    let run = r.datum(&["rollout", "status", "--reports", "/nonexistent/reports"]);
    assert_eq!(run.code, 64, "{}", run.stderr);
    assert!(run.stderr.contains("is not a directory"), "{}", run.stderr);
    let run = r.datum(&["rollout", "status", "--reports", ".", "--at", "noon"]);
    assert_eq!(run.code, 64, "{}", run.stderr);
    // Outside git there is no revision to compare with.
    let plain = tempfile::tempdir().unwrap();
    copy_tree(&example("rollout"), plain.path());
    let run = Run::from(
        datum()
            .arg("--fleet")
            .arg(plain.path())
            .args(["rollout", "gate", "--max-failed", "5%", "--reports"])
            .arg(&r.reports)
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 64, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: not inside a git repository: ")
            && run
                .stderr
                .contains("hint: the hosts' reports name the commit they run"),
        "{}",
        run.stderr
    );
}

/// The report a real agent leaves, copied from its host as
/// `DIR/<host>.json`, counts as written by hand ones do.
#[test]
fn a_report_written_by_a_real_agent_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let host = crate::agent::Host::new();
    let mut repo = Repo::new(&tmp.path().join("work"));
    repo.write(
        "datum.yaml",
        "datum: v1alpha1\ntype: Fleet\nname: delivery\nrollout:\n  - name: web\n    hosts: role=web\n  - name: rest\n    after: 1h\n",
    );
    let head = repo.commit("waves", None);
    let remote = host.path("/srv/fleet.git");
    Repo::bare(&remote);
    repo.push(&remote, "HEAD", "main");
    host.config("git:\n  remotes: [/srv/fleet.git]\n  branch: main\n  fleet: fleet\ninsecure_allow_unsigned: true\n");
    let run = host.agent(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let reports = tmp.path().join("reports");
    fs::create_dir_all(&reports).unwrap();
    fs::copy(
        host.path("/var/lib/datum/reports/last.json"),
        reports.join("web-001.json"),
    )
    .unwrap();
    let run = Run::from(
        datum()
            .arg("--fleet")
            .arg(repo.fleet())
            .args(["rollout", "status", "--format", "json", "--reports"])
            .arg(&reports)
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["revision"], head);
    assert_eq!(in_state(&v, 0, "updated"), ["web-001"]);
    assert_eq!(in_state(&v, 1, "silent"), ["db-001"]);
}

#[test]
fn without_at_a_report_from_a_clock_running_ahead_counts() {
    let r = Rollout::new();
    let mut ahead = report("web-001", "11:00", &r.new, 2, 0);
    ahead["finished"] = json!("2099-01-01T00:00:00.000Z");
    r.put("web-001.json", &ahead);
    let dir = r.reports.display().to_string();
    let run = r.datum(&["rollout", "status", "--reports", &dir, "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(in_state(&v, 0, "updated"), ["web-001"]);
    // As of a time before it, it had not reported.
    let run = r.rollout("status", &["--format", "json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(in_state(&v, 0, "silent"), ["db-001", "web-001"]);
}

#[test]
fn many_unknown_hosts_are_named_a_few_at_a_time() {
    let r = Rollout::new();
    for i in 0..8 {
        let host = format!("gone-{i:03}");
        r.put(
            &format!("{host}.json"),
            &report(&host, "11:00", &r.new, 0, 0),
        );
    }
    let run = r.rollout("status", &[]);
    assert!(
        run.stdout.ends_with(
            "note: reports of 8 hosts the fleet does not declare at this revision: gone-000, gone-001, gone-002, gone-003, gone-004 and 3 more\n"
        ),
        "{}",
        run.stdout
    );
}
