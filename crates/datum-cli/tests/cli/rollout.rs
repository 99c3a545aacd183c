//! `rollout:` in datum.yaml: what `check` says of it, and `datum rollout`.

use crate::common::{example, fixture, run_in};

#[test]
fn check_reports_an_empty_wave_and_an_unreachable_one_at_their_places() {
    let run = run_in(&fixture("rollout/broken"), &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "checked 10 hosts against 0 layers: 2 errors, no warnings\n"
    );
    insta::assert_snapshot!(run.stderr);
}

#[test]
fn check_passes_a_sound_rollout() {
    let run = run_in(&example("rollout"), &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
}

#[test]
fn a_bad_duration_is_a_load_error_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    crate::common::copy_tree(&example("rollout"), dir.path());
    let path = dir.path().join("datum.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("after: 30m", "after: 30 mintues")).unwrap();
    let run = run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "error: `30 mintues` is not a duration\n  --> datum.yaml:13:12\n   |\n13 |     after: 30 mintues\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: write a duration such as `30m`"),
        "{}",
        run.stderr
    );
}

#[test]
fn plan_shows_every_wave_with_its_start_and_hosts() {
    let run = run_in(&example("rollout"), &["rollout", "plan", "--hosts"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout);
    // The same fleet gives the same plan every time.
    let again = run_in(&example("rollout"), &["rollout", "plan", "--hosts"]);
    assert_eq!(again.stdout, run.stdout);
}

#[test]
fn plan_json_counts_hosts_and_names_them_only_with_hosts() {
    let run = run_in(
        &example("rollout"),
        &["rollout", "plan", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["type"], "RolloutPlan");
    let counts: Vec<i64> = v["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["count"].as_i64().unwrap())
        .collect();
    assert_eq!(counts, [2, 2, 6]);
    assert_eq!(v["waves"][2]["start_seconds"], 9000);
    assert!(v["waves"][0].get("hosts").is_none());
    let run = run_in(
        &example("rollout"),
        &["rollout", "plan", "--hosts", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["waves"][0]["hosts"],
        serde_json::json!(["db-001", "web-001"])
    );
}

#[test]
fn plan_fails_with_the_errors_of_a_broken_rollout() {
    let run = run_in(&fixture("rollout/broken"), &["rollout", "plan"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("error: wave `london` takes no host"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("london  +30m"), "{}", run.stdout);
}

#[test]
fn plan_without_a_rollout_is_one_wave_of_every_host() {
    let run = run_in(&example("fleet"), &["rollout", "plan"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "rollout of 5 hosts in 1 wave (working tree): no `rollout:` in datum.yaml, every host at once\n  wave  starts  hosts  takes\n  all   +0s     5      the rest\n"
    );
}

#[test]
fn plan_reads_a_revision_from_git() {
    let g = crate::diff::Git::with_example("fleet", "");
    let datum_yaml = g.fleet.join("datum.yaml");
    let base = std::fs::read_to_string(&datum_yaml).unwrap();
    std::fs::write(
        &datum_yaml,
        format!("{base}rollout:\n  - name: london\n    hosts: site=london\n  - name: rest\n    after: 1h\n"),
    )
    .unwrap();
    g.commit("waves by site");
    std::fs::write(
        &datum_yaml,
        format!("{base}rollout:\n  - name: staging\n    hosts: environment=staging\n  - name: rest\n    after: 4h\n"),
    )
    .unwrap();
    let committed = g.datum(&["rollout", "plan", "--rev", "HEAD", "--format", "json"]);
    assert_eq!(committed.code, 0, "{}", committed.stderr);
    let v: serde_json::Value = serde_json::from_str(&committed.stdout).unwrap();
    assert_eq!(v["waves"][0]["name"], "london");
    assert_eq!(v["waves"][0]["count"], 3);
    assert!(v["revision"].as_str().is_some());
    let working = g.datum(&["rollout", "plan", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&working.stdout).unwrap();
    assert_eq!(v["waves"][0]["name"], "staging");
    assert_eq!(v["waves"][1]["start_seconds"], 4 * 3600);
    assert_eq!(v["revision"], serde_json::Value::Null);
    let bad = g.datum(&["rollout", "plan", "--rev", "nosuch"]);
    assert_eq!(bad.code, 64, "{}", bad.stderr);
}
