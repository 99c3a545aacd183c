use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use datum_agent::http::FetchOptions;

use datum_agent::report::{
    self, Counts, FailedCheck, KEEP, LAST, Mode, PendingInput, RefusedInput, ReportError, Reports,
    RolledBack, RunId, RunRecord, Timestamp,
};
use serde_json::json;

use datum_testkit::http::{Reply, down, response, serve};

/// A run that started at `secs` past 2026-01-01T00:00:00Z.
fn record(reports: &Reports, secs: u64) -> RunRecord {
    let base = Timestamp::parse_rfc3339("2026-01-01T00:00:00Z").unwrap();
    let started = Timestamp::from_millis(base.since_epoch().as_millis() as u64 + secs * 1000);
    let finished = Timestamp::from_millis(started.since_epoch().as_millis() as u64 + 1_250);
    RunRecord {
        run_id: reports.next_run_id(started).unwrap(),
        host: "web-001".into(),
        started,
        finished,
        mode: Mode::Bundle,
        source: Some("https://config.example.net/bundles/web-001.bundle".into()),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        cached_input: secs % 2 == 1,
        fetch_failures_total: secs,
        notes: vec![format!("run {secs}")],
        counts: Counts {
            unchanged: 3,
            changed: 2,
            would_change: 0,
            failed: 1,
            skipped: 1,
        },
        resources: json!({"resources": [{"id": "File[motd]", "status": "changed",
                           "changes": [{"attribute": "content", "diff": "-a\n+b\n"}]}],
                           "summary": {"changed": 2}}),
        exit_status: 6,
        facts: json!({"os": "debian-13", "arch": "x86_64"}),
        label_mismatches: vec![datum_agent::facts::LabelMismatch {
            label: "os".into(),
            declared: "debian-12".into(),
            fact: "os".into(),
            observed: Some("debian-13".into()),
        }],
        insecure_allow_unsigned: false,
        input_expires: None,
        input_refusals_total: Default::default(),
        pending: (secs % 3 == 1).then(|| PendingInput {
            commit: Some("89abcdef0123456789abcdef0123456789abcdef".into()),
            serial: Some(41 + secs),
            due: 1_767_229_200,
        }),
        rolled_back: (secs % 3 == 2).then(|| RolledBack {
            commit: None,
            serial: Some(40 + secs),
            failed_checks: vec![FailedCheck {
                id: "Health[nginx]".into(),
                output: "connection refused".into(),
            }],
        }),
        refused: (secs % 3 == 2).then(|| RefusedInput {
            commit: Some("fedcba9876543210fedcba9876543210fedcba98".into()),
            serial: None,
            reason: "labels".into(),
        }),
    }
}

#[test]
fn the_directory_keeps_the_last_twenty_runs_and_last_json_is_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let reports = Reports::new(dir.path().join("reports"));
    assert_eq!(reports.last().unwrap(), None);
    assert!(reports.run_ids().unwrap().is_empty());
    let mut written = Vec::new();
    for i in 0..KEEP as u64 + 5 {
        let r = record(&reports, i * 1800);
        reports.write(&r).unwrap();
        written.push(r);
        if i == 0 {
            fs::write(reports.dir().join("notes.txt"), "mine").unwrap();
        }
    }
    let ids = reports.run_ids().unwrap();
    assert_eq!(ids.len(), 20);
    let newest: Vec<RunId> = written[5..].iter().map(|r| r.run_id.clone()).collect();
    assert_eq!(ids, newest);
    assert_eq!(reports.last().unwrap().as_ref(), written.last());
    let mut names: Vec<String> = fs::read_dir(reports.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 22, "{names:?}");
    assert!(names.contains(&LAST.to_owned()) && names.contains(&"notes.txt".to_owned()));
    assert_eq!(names[0], "20260101T023000Z-0000.json");
    // The newest run's own file and last.json hold the same text.
    let newest_file = reports.dir().join(format!("{}.json", written[24].run_id));
    assert_eq!(
        fs::read_to_string(newest_file).unwrap(),
        fs::read_to_string(reports.dir().join(LAST)).unwrap()
    );
    let mode = fs::metadata(reports.dir().join(LAST))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn runs_within_one_second_get_distinct_growing_ids() {
    let dir = tempfile::tempdir().unwrap();
    let reports = Reports::new(dir.path());
    let mut ids = Vec::new();
    for _ in 0..3 {
        let r = record(&reports, 7);
        reports.write(&r).unwrap();
        ids.push(r.run_id.to_string());
    }
    assert_eq!(
        ids,
        [
            "20260101T000007Z-0000",
            "20260101T000007Z-0001",
            "20260101T000007Z-0002"
        ]
    );
}

#[test]
fn every_field_round_trips_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let reports = Reports::new(dir.path());
    let r = record(&reports, 61);
    reports.write(&r).unwrap();
    assert_eq!(reports.last().unwrap(), Some(r.clone()));
    let text = fs::read_to_string(dir.path().join(LAST)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let want = json!({
        "datum": "v1alpha1",
        "type": "RunReport",
        "run_id": "20260101T000101Z-0000",
        "host": "web-001",
        "started": "2026-01-01T00:01:01.000Z",
        "finished": "2026-01-01T00:01:02.250Z",
        "mode": "bundle",
        "source": "https://config.example.net/bundles/web-001.bundle",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "cached_input": true,
        "fetch_failures_total": 61,
        "notes": ["run 61"],
        "summary": {"changed": 2, "failed": 1, "skipped": 1, "unchanged": 3, "would_change": 0},
        "resources": r.resources,
        "exit_status": 6,
        "facts": {"os": "debian-13", "arch": "x86_64"},
        "label_mismatches": [{"label": "os", "declared": "debian-12", "fact": "os", "observed": "debian-13"}],
        "insecure_allow_unsigned": false,
        "input_expires": null,
        "input_refusals_total": {},
        "pending": {"commit": "89abcdef0123456789abcdef0123456789abcdef", "serial": 102, "due": 1_767_229_200},
        "rolled_back": null,
        "refused": null,
    });
    assert_eq!(v, want);
    assert_eq!(r.duration(), Duration::from_millis(1250));
    // The contract's envelope first, then the fields in a fixed order, so
    // the same run always gives the same bytes.
    assert!(
        text.starts_with(
            "{\n  \"datum\": \"v1alpha1\",\n  \"type\": \"RunReport\",\n  \"run_id\": "
        ),
        "{text}"
    );
    assert!(text.find("\"notes\"").unwrap() < text.find("\"summary\"").unwrap());
    assert!(text.ends_with("}\n"));
    let local = RunRecord {
        mode: Mode::Local,
        source: None,
        commit: None,
        ..r
    };
    let v: serde_json::Value = serde_json::from_str(&local.to_json()).unwrap();
    assert_eq!(v["mode"], "local");
    assert_eq!(v["source"], serde_json::Value::Null);
    assert_eq!(RunRecord::from_json(&local.to_json()).unwrap(), local);
}

#[test]
fn a_report_written_before_facts_were_recorded_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let r = record(&Reports::new(dir.path()), 3);
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    let map = v.as_object_mut().unwrap();
    map.remove("facts");
    map.remove("label_mismatches");
    let old = RunRecord::from_json(&v.to_string()).unwrap();
    assert_eq!(old.facts, serde_json::Value::Null);
    assert!(old.label_mismatches.is_empty());
    assert_eq!(old.host, r.host);
}

#[test]
fn pending_and_rolled_back_inputs_round_trip_and_older_reports_read_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let reports = Reports::new(dir.path());
    for secs in [1, 2] {
        let r = record(&reports, secs);
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        if secs == 1 {
            assert_eq!(v["pending"]["serial"], 42);
            assert_eq!(v["pending"]["due"], 1_767_229_200);
            assert_eq!(v["rolled_back"], serde_json::Value::Null);
        } else {
            assert_eq!(v["pending"], serde_json::Value::Null);
            assert_eq!(v["rolled_back"]["failed_checks"][0]["id"], "Health[nginx]");
            assert_eq!(v["refused"]["reason"], "labels");
        }
        assert_eq!(RunRecord::from_json(&r.to_json()).unwrap(), r);
        // Reports written before rollouts lack both fields.
        let mut v = v;
        let map = v.as_object_mut().unwrap();
        map.remove("pending");
        map.remove("rolled_back");
        map.remove("refused");
        let old = RunRecord::from_json(&v.to_string()).unwrap();
        assert_eq!(
            (old.pending, old.rolled_back, old.refused),
            (None, None, None)
        );
    }
}

#[test]
fn a_damaged_last_json_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let reports = Reports::new(dir.path());
    fs::write(dir.path().join(LAST), "{\"type\": \"Manifest\"}").unwrap();
    let err = reports.last().unwrap_err();
    assert!(matches!(err, ReportError::Parse { .. }));
    assert_eq!(
        err.to_string(),
        format!("{} is not a run report", dir.path().join(LAST).display())
    );
    let mut r = record(&reports, 0);
    r.started = Timestamp::from_millis(0);
    let text = r.to_json().replace("1970-01-01T00:00:00.000Z", "yesterday");
    assert!(RunRecord::from_json(&text).is_err());
}

fn within(ms: u64) -> FetchOptions {
    FetchOptions {
        timeout: Duration::from_millis(ms),
        env_proxy: false,
        ..FetchOptions::default()
    }
}

#[test]
fn posting_is_best_effort_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let reports = Reports::new(dir.path());
    let r = record(&reports, 5);
    let server = serve(vec![Reply::Send(response("200 OK", b"")), Reply::Silent]);
    let url = format!("{}/datum/reports", server.base);
    assert!(report::post(&url, &r, &within(5000)).is_none());
    // Only the post's own timeout ends it: the server waits for it to
    // hang up (and `requests` below waits for the server).
    let warning = report::post(&url, &r, &within(300)).unwrap();
    assert!(
        matches!(warning.0, datum_agent::http::FetchError::Timeout { .. }),
        "{warning}"
    );
    assert!(
        warning
            .to_string()
            .starts_with("the run report was not sent: POST "),
        "{warning}"
    );
    let requests = server.requests();
    let sent: serde_json::Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(sent["run_id"], r.run_id.as_str());
    assert_eq!(
        RunRecord::from_json(&String::from_utf8_lossy(&requests[0].body)).unwrap(),
        r
    );
    let warning = report::post(&format!("{}/r", down()), &r, &within(5000)).unwrap();
    assert!(
        warning.to_string().contains("connection refused"),
        "{warning}"
    );
}
