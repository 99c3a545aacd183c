//! Labels tied to facts (`os: {values: [...], fact: os}` in datum.yaml):
//! `datum apply`, from a fleet and from a bundle, and the agent refuse a
//! host whose declared label disagrees with the os-release planted in its
//! root (exit 1, nothing changed); the reports and metrics carry the facts.

use std::fs;

use serde_json::Value;

use crate::common::{Run, datum};
use crate::system_files::Scene;

const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: sys\nlabels:\n  role: [web]\n  os: {values: [debian-12, debian-13], fact: os}\n";

fn host(os: &str) -> String {
    format!("datum: v1alpha1\ntype: Host\nname: app-001\nlabels:\n  role: web\n  os: {os}\n")
}

fn os_release(version: &str) -> String {
    format!("PRETTY_NAME=\"Debian GNU/Linux {version}\"\nID=debian\nVERSION_ID=\"{version}\"\n")
}

fn scene(declared: &str, runs: &str) -> Scene {
    let s = Scene::new();
    fs::write(s.fleet().join("datum.yaml"), FLEET).unwrap();
    fs::write(s.fleet().join("hosts.yaml"), host(declared)).unwrap();
    s.write("etc/os-release", &os_release(runs));
    s.layer("  File[motd]:\n    path: /etc/motd\n    content: \"hello\\n\"\n");
    s
}

#[test]
fn apply_refuses_a_host_whose_os_label_disagrees_and_changes_nothing() {
    let s = scene("debian-12", "13");
    for args in [&[][..], &["--noop"]] {
        let run = s.apply(args);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        assert_eq!(run.stdout, "");
        for want in [
            "error: inventory says os=debian-12; app-001 runs debian-13\n",
            " --> hosts.yaml:6:7\n",
            "datum.yaml:6:46",
            "tied to the fact `os` here",
            "= hint: update hosts.yaml: `os: debian-13`",
            "error: refusing to apply: 1 of app-001's labels disagrees with what it observes; nothing was changed",
        ] {
            assert!(run.stderr.contains(want), "{want}\n{}", run.stderr);
        }
    }
    assert!(!s.root().join("etc/motd").exists());
    assert!(!s.root().join("var").exists(), "not even a lock or state");

    // JSON: one Error object carrying the diagnostic and its place.
    let run = s.apply(&["--format", "json"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        crate::json_contract::assert_conforms("apply refused", &run),
        "Error"
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "fact-mismatch");
    assert_eq!(
        crate::common::place(&d["primary"]["location"]),
        "hosts.yaml:6:7"
    );

    // A release datum.yaml does not declare: the hint says to declare it.
    s.write("etc/os-release", &os_release("14"));
    let run = s.apply(&[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "hint: update hosts.yaml: `os: debian-14`, and add `debian-14` to labels.os.values in datum.yaml"
        ),
        "{}",
        run.stderr
    );
    // No os-release at all: the label cannot be checked, so it is refused.
    fs::remove_file(s.root().join("etc/os-release")).unwrap();
    let run = s.apply(&[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "inventory says os=debian-12; app-001's os cannot be observed: no os-release ("
        ),
        "{}",
        run.stderr
    );
    assert!(!s.root().join("etc/motd").exists());
}

#[test]
fn a_host_whose_labels_agree_is_applied_and_its_report_carries_the_facts() {
    let s = scene("debian-13", "13.1");
    let run = s.apply(&["--format", "json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        crate::json_contract::assert_conforms("apply", &run),
        "ApplyReport"
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["facts"]["os"], "debian-13");
    assert_eq!(v["facts"]["os_version"], "13.1");
    assert_eq!(s.read("etc/motd").as_deref(), Some("hello\n"));
    // The manifest says which labels are tied, for hosts that apply a bundle.
    let render = Run::from(
        datum()
            .args(["render", "app-001", "--format", "json", "--fleet"])
            .arg(s.fleet())
            .output()
            .unwrap(),
    );
    let m: Value = serde_json::from_str(&render.stdout).unwrap();
    assert_eq!(m["label_facts"], serde_json::json!({"os": "os"}));
    assert_eq!(
        crate::json_contract::assert_conforms("render", &render),
        "Manifest"
    );
}

#[test]
fn a_bundle_carries_its_tied_labels_and_apply_checks_them() {
    let s = scene("debian-12", "12");
    let bundle = s.fleet().join("../app-001.bundle");
    let made = Run::from(
        datum()
            .args(["bundle", "app-001", "--out"])
            .arg(&bundle)
            .arg("--fleet")
            .arg(s.fleet())
            .output()
            .unwrap(),
    );
    assert_eq!(made.code, 0, "{}", made.stderr);
    let apply = |s: &Scene| {
        Run::from(
            datum()
                .args(["apply", "--host", "app-001", "--root"])
                .arg(s.root())
                .arg("--bundle")
                .arg(&bundle)
                .arg("--allow-unsigned")
                .output()
                .unwrap(),
        )
    };
    s.write("etc/os-release", &os_release("13"));
    let run = apply(&s);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("error: inventory says os=debian-12; app-001 runs debian-13"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: update the host's document: `os: debian-13`")
    );
    assert!(!s.root().join("etc/motd").exists());
    s.write("etc/os-release", &os_release("12"));
    assert_eq!(apply(&s).code, 2);
    assert_eq!(s.read("etc/motd").as_deref(), Some("hello\n"));
}

/// `datum agent --once` as app-001, under the scene's root.
fn agent(s: &Scene) -> Run {
    s.write("etc/datum/host", "app-001\n");
    Run::from(
        datum()
            .args(["agent", "--once", "--root"])
            .arg(s.root())
            .output()
            .unwrap(),
    )
}

fn last_report(s: &Scene) -> Value {
    serde_json::from_str(&s.read("var/lib/datum/reports/last.json").unwrap()).unwrap()
}

#[test]
fn the_agent_refuses_reports_and_counts_a_label_that_disagrees() {
    let s = scene("debian-12", "13");
    // The fleet as the agent's git remote, inside the root.
    let work = s.root().join("../work");
    fs::create_dir_all(&work).unwrap();
    crate::common::copy_tree(&s.fleet(), &work.join("fleet"));
    let git = |dir: &std::path::Path, args: &[&str]| {
        crate::delivery::ok(crate::delivery::git(dir).args(args));
    };
    git(&work, &["init", "-q"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "fleet"]);
    let remote = s.root().join("srv/fleet.git");
    crate::delivery::Repo::bare(&remote);
    git(
        &work,
        &[
            "push",
            "-q",
            remote.to_str().unwrap(),
            "HEAD:refs/heads/main",
        ],
    );
    s.write(
        "etc/datum/agent.yaml",
        "git:\n  remotes: [/srv/fleet.git]\n  branch: main\n  fleet: fleet\ninsecure_allow_unsigned: true\n",
    );
    let run = agent(&s);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("refusing to apply: this host's labels disagree with what it observes"),
        "{all}"
    );
    assert!(
        all.contains("inventory says os=debian-12; app-001 runs debian-13"),
        "{all}"
    );
    assert!(all.contains("hosts.yaml:6:7"), "{all}");
    assert!(!s.root().join("etc/motd").exists());
    let report = last_report(&s);
    assert_eq!(report["exit_status"], 1);
    assert_eq!(report["facts"]["os"], "debian-13");
    assert_eq!(
        report["label_mismatches"],
        serde_json::json!([{"label": "os", "declared": "debian-12", "fact": "os", "observed": "debian-13"}])
    );
    let metrics = datum_testkit::metrics::parse(
        &s.read("var/lib/prometheus/node-exporter/datum.prom")
            .unwrap(),
    );
    assert_eq!(metrics["datum_label_mismatches"].one(), 1.0);
    let info = &metrics["datum_host_facts_info"].samples;
    assert!(
        info.keys()
            .any(|k| k.contains(&("os".to_owned(), "debian-13".to_owned()))),
        "{info:?}"
    );

    // The host put right: the next run applies, and says nothing disagrees.
    s.write("etc/os-release", &os_release("12"));
    let run = agent(&s);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(s.read("etc/motd").as_deref(), Some("hello\n"));
    let report = last_report(&s);
    assert_eq!(report["label_mismatches"], serde_json::json!([]));
    assert_eq!(report["resources"]["facts"]["os"], "debian-12");
}

/// A run report as the agent writes it, of `host` at `second` past
/// 2026-01-01T00:00, observing `os`.
fn report(host: &str, second: u32, os: Option<&str>) -> String {
    let at = format!("2026-01-01T00:00:{second:02}.000Z");
    let mut v = serde_json::json!({
        "datum": "v1alpha1", "type": "RunReport",
        "run_id": format!("20260101T0000{second:02}Z-0000"), "host": host,
        "started": at, "finished": at, "mode": "git", "source": null, "commit": null,
        "cached_input": false, "fetch_failures_total": 0, "notes": [],
        "counts": {"unchanged": 1, "changed": 0, "would_change": 0, "failed": 0, "skipped": 0},
        "resources": null, "exit_status": 0,
        "facts": {"os": os, "arch": "x86_64"}, "label_mismatches": []
    });
    if os.is_none() {
        // A report written before Datum recorded facts.
        v.as_object_mut().unwrap().remove("facts");
    }
    v.to_string()
}

#[test]
fn check_reports_lists_every_host_whose_labels_disagree_with_its_last_report() {
    let s = scene("debian-12", "12");
    fs::write(
        s.fleet().join("hosts.yaml"),
        format!(
            "{}---\n{}",
            host("debian-12"),
            host("debian-13").replace("app-001", "app-002")
        ),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path();
    let put = |rel: &str, text: &str| {
        let p = reports.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    // app-001 was upgraded: its newest report says so; an older one does not.
    put(
        "app-001/20260101T000001Z-0000.json",
        &report("app-001", 1, Some("debian-12")),
    );
    put(
        "app-001/last.json",
        &report("app-001", 9, Some("debian-13")),
    );
    put("app-001/older-format.json", &report("app-001", 30, None));
    // app-002 agrees with what it reports.
    put("app-002.json", &report("app-002", 5, Some("debian-13")));
    put("ghost-001.json", &report("ghost-001", 5, Some("debian-13")));
    put("notes.json", "{\"type\": \"Manifest\"}");
    let r = reports.display().to_string();
    let run = crate::common::run_in(&s.fleet(), &["check", "--reports", &r]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for want in [
        "error: inventory says os=debian-12; app-001 runs debian-13\n --> hosts.yaml:6:7",
        &format!(
            "note: as app-001 last reported, at 2026-01-01T00:00:09.000Z ({r}/app-001/last.json)"
        ),
        "hint: update hosts.yaml: `os: debian-13`",
        &format!(
            "warning: {r}/ghost-001.json reports host `ghost-001`, which the fleet does not declare"
        ),
        &format!("warning: {r}/notes.json is not a run report Datum can read: not a run report"),
    ] {
        assert!(run.stderr.contains(want), "{want}\n{}", run.stderr);
    }
    assert!(!run.stderr.contains("app-002 runs"), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("error: inventory says").count(),
        1,
        "{}",
        run.stderr
    );

    let json = crate::common::run_in(&s.fleet(), &["check", "--reports", &r, "--format", "json"]);
    assert_eq!(
        crate::json_contract::assert_conforms("check --reports", &json),
        "Check"
    );
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    let mismatch: Vec<&Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "fact-mismatch")
        .collect();
    assert_eq!(mismatch.len(), 1);
    assert_eq!(mismatch[0]["hosts"], serde_json::json!(["app-001"]));
    assert_eq!(
        crate::common::place(&mismatch[0]["primary"]["location"]),
        "hosts.yaml:6:7"
    );

    // Without --reports, nothing is said of them; a path that is no
    // directory is bad usage.
    assert_eq!(crate::common::run_in(&s.fleet(), &["check"]).code, 0);
    let bad = crate::common::run_in(&s.fleet(), &["check", "--reports", "/nonexistent/reports"]);
    assert_eq!(bad.code, 64, "{}", bad.stderr);
}

#[test]
fn the_agent_in_bundle_mode_checks_the_labels_its_bundle_carries() {
    let s = scene("debian-13", "12");
    fs::create_dir_all(s.root().join("srv/bundles")).unwrap();
    let made = Run::from(
        datum()
            .args(["bundle", "app-001", "--out"])
            .arg(s.root().join("srv/bundles/app-001.bundle"))
            .arg("--fleet")
            .arg(s.fleet())
            .output()
            .unwrap(),
    );
    assert_eq!(made.code, 0, "{}", made.stderr);
    s.write(
        "etc/datum/agent.yaml",
        "bundle:\n  url: /srv/bundles/{host}.bundle\ninsecure_allow_unsigned: true\n",
    );
    let run = agent(&s);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("inventory says os=debian-13; app-001 runs debian-12"),
        "{all}"
    );
    assert!(!s.root().join("etc/motd").exists());
    let report = last_report(&s);
    assert_eq!(report["label_mismatches"][0]["observed"], "debian-12");
    // Nothing was applied, so the bundle is not kept as the last verified one.
    assert!(
        !s.root()
            .join("var/lib/datum/agent/verified.bundle")
            .exists()
    );
    s.write("etc/os-release", &os_release("13"));
    assert_eq!(agent(&s).code, 2);
    assert_eq!(s.read("etc/motd").as_deref(), Some("hello\n"));
}
