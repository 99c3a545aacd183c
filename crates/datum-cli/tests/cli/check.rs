use crate::common::{example, run_in};

#[test]
fn the_example_fleet_checks_clean() {
    let run = run_in(&example("fleet"), &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "checked 5 hosts against 9 layers: no errors, no warnings\n"
    );
}

#[test]
fn the_conflict_fleet_fails_with_the_report() {
    let run = run_in(&example("conflict"), &["check"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr);
    assert_eq!(
        run.stdout,
        "checked 2 hosts against 2 layers: 1 error, no warnings\n"
    );
}

#[test]
fn check_json_is_one_document() {
    let run = run_in(&example("conflict"), &["check", "--format", "json"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["errors"], 1);
    assert_eq!(v["diagnostics"][0]["code"], "conflict");
    assert_eq!(
        v["diagnostics"][0]["primary"]["location"],
        "roles/web/layer.yaml:15:11"
    );
}
