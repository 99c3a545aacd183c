//! `check` refuses the names apply could not use: user and group names,
//! package names and versions, unit names, and paths /etc/passwd holds.
//! A name written as a value is refused where it is written; a title that
//! stands for the name (no `name:`) is refused at the title.

use crate::common::{fixture, run_in};

#[test]
fn names_apply_cannot_use_fail_check_where_they_are_written() {
    let run = run_in(&fixture("names"), &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "checked 1 host against 2 layers: 9 errors, 1 warning\n"
    );
    insta::assert_snapshot!(run.stderr);
}

#[test]
fn the_same_names_are_refused_by_render_and_in_json() {
    let run = run_in(&fixture("names"), &["render", "web-001"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("error: Package[-rf] is named by its title, which is not a package name"),
        "{}",
        run.stderr
    );
    let json = run_in(&fixture("names"), &["check", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let places: Vec<(&str, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                crate::common::place(&d["primary"]["location"]),
            )
        })
        .collect();
    assert_eq!(
        places
            .iter()
            .map(|(code, at)| (*code, at.as_str()))
            .collect::<Vec<_>>(),
        [
            ("invalid-name", "extra/layer.yaml:10:11"),
            ("invalid-name", "extra/layer.yaml:11:19"),
            ("invalid-name", "extra/layer.yaml:14:12"),
            ("invalid-name", "extra/layer.yaml:17:14"),
            ("invalid-name", "extra/layer.yaml:19:11"),
            ("invalid-name", "base/layer.yaml:7:3"),
            ("invalid-name", "base/layer.yaml:9:3"),
            ("invalid-name", "base/layer.yaml:10:3"),
            ("invalid-name", "base/layer.yaml:11:3"),
            // extra/ has names in error, so its resources are set aside,
            // not the layer: its matcher is still checked.
            ("uncarried-label", "extra/layer.yaml:7:11"),
        ]
    );
}
