use std::fs;
use std::os::unix::fs::PermissionsExt;

use datum_agent::metrics;
use datum_agent::report::{Counts, Mode, RunId, RunRecord, Timestamp};
use datum_testkit::metrics::{labels, parse};

fn record() -> RunRecord {
    RunRecord {
        run_id: RunId::parse("20260101T000000Z-0000").unwrap(),
        host: "web-001".into(),
        started: Timestamp::parse_rfc3339("2026-01-01T00:00:00Z").unwrap(),
        finished: Timestamp::parse_rfc3339("2026-01-01T00:00:02.5Z").unwrap(),
        mode: Mode::Git,
        source: Some("ssh://git@git.example.net/fleet.git".into()),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        cached_input: false,
        fetch_failures_total: 3,
        notes: Vec::new(),
        counts: Counts {
            unchanged: 40,
            changed: 2,
            would_change: 0,
            failed: 1,
            skipped: 0,
        },
        resources: serde_json::Value::Null,
        exit_status: 6,
        facts: serde_json::json!({"os": "debian-12", "arch": "x86_64", "kernel": "6.1.0-18-amd64",
                                  "virtualization": "kvm", "cpus": 4}),
        label_mismatches: Vec::new(),
        insecure_allow_unsigned: false,
        input_expires: None,
        input_refusals_total: Default::default(),
        pending: None,
        rolled_back: None,
        refused: None,
    }
}

#[test]
fn every_metric_is_there_with_help_type_and_value() {
    let text = metrics::render(&record());
    let m = parse(&text);
    let names: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "datum_fetch_failures_total",
            "datum_host_facts_info",
            "datum_insecure_allow_unsigned",
            "datum_label_mismatches",
            "datum_last_run_cached_input",
            "datum_last_run_exit_status",
            "datum_last_run_timestamp_seconds",
            "datum_resources",
            "datum_revision_info",
            "datum_run_duration_seconds",
        ]
    );
    for (name, f) in &m {
        assert!(!f.help.is_empty(), "{name} has no help");
        let want = if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        assert_eq!(f.kind, want, "{name}");
    }
    assert_eq!(m["datum_last_run_timestamp_seconds"].one(), 1_767_225_602.5);
    assert_eq!(m["datum_last_run_exit_status"].one(), 6.0);
    assert_eq!(m["datum_fetch_failures_total"].one(), 3.0);
    assert_eq!(m["datum_run_duration_seconds"].one(), 2.5);
    assert_eq!(m["datum_last_run_cached_input"].one(), 0.0);
    let resources = &m["datum_resources"].samples;
    let by_status: Vec<(&str, f64)> = [
        ("changed", 2.0),
        ("failed", 1.0),
        ("skipped", 0.0),
        ("unchanged", 40.0),
        ("would_change", 0.0),
    ]
    .to_vec();
    assert_eq!(resources.len(), by_status.len());
    for (status, n) in by_status {
        assert_eq!(resources[&labels(&[("status", status)])], n, "{status}");
    }
    let info = &m["datum_revision_info"].samples;
    let want = labels(&[
        ("commit", "0123456789abcdef0123456789abcdef01234567"),
        ("source", "ssh://git@git.example.net/fleet.git"),
    ]);
    assert_eq!(info.get(&want), Some(&1.0), "{info:?}");
    let facts = &m["datum_host_facts_info"].samples;
    let want = labels(&[
        ("arch", "x86_64"),
        ("kernel", "6.1.0-18-amd64"),
        ("os", "debian-12"),
        ("virtualization", "kvm"),
    ]);
    assert_eq!(facts.get(&want), Some(&1.0), "{facts:?}");
    assert_eq!(m["datum_label_mismatches"].one(), 0.0);
}

#[test]
fn a_label_that_disagreed_with_the_facts_is_a_series_of_its_own() {
    let mut r = record();
    r.exit_status = 1;
    r.label_mismatches = vec![datum_agent::facts::LabelMismatch {
        label: "os".into(),
        declared: "debian-12".into(),
        fact: "os".into(),
        observed: Some("debian-13".into()),
    }];
    let m = parse(&metrics::render(&r));
    assert_eq!(m["datum_label_mismatches"].one(), 1.0);
    let each = &m["datum_label_mismatch"].samples;
    let want = labels(&[
        ("declared", "debian-12"),
        ("fact", "os"),
        ("label", "os"),
        ("observed", "debian-13"),
    ]);
    assert_eq!(each.get(&want), Some(&1.0), "{each:?}");
}

#[test]
fn label_values_are_escaped_for_the_exposition_format() {
    let mut r = record();
    let hostile = "https://x/?a=b,c}\"quoted\" back\\slash\nnext line";
    r.source = Some(hostile.into());
    r.commit = None;
    let text = metrics::render(&r);
    assert!(
        text.contains(r#"source="https://x/?a=b,c}\"quoted\" back\\slash\nnext line""#),
        "{text}"
    );
    let m = parse(&text);
    let info = &m["datum_revision_info"].samples;
    let want = labels(&[("commit", ""), ("source", hostile)]);
    assert_eq!(info.get(&want), Some(&1.0), "{info:?}");
}

#[test]
fn the_file_is_replaced_whole_and_readable_by_the_collector() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("datum.prom");
    fs::write(&path, "stale").unwrap();
    let mut r = record();
    r.cached_input = true;
    metrics::write(&path, &r).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text, metrics::render(&r));
    assert_eq!(parse(&text)["datum_last_run_cached_input"].one(), 1.0);
    let mode = fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file is left behind");
}
