//! `rollout:` in datum.yaml: what `check` says of it, and `datum rollout`.

use crate::common::{fixture, run_in};

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
    let run = run_in(&fixture("rollout/waves"), &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
}

#[test]
fn a_bad_duration_is_a_load_error_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    crate::common::copy_tree(&fixture("rollout/waves"), dir.path());
    let path = dir.path().join("datum.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("after: 30m", "after: 30 mintues")).unwrap();
    let run = run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "error: `30 mintues` is not a duration\n --> datum.yaml:9:12\n  |\n9 |     after: 30 mintues\n"
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
