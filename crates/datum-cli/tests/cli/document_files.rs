//! Which YAML files are documents: decided by parsing, never by a text
//! prefix, so no host or layer is ever skipped in silence, and a payload
//! of any size costs no more than its first keys.

use std::fs;
use std::path::Path;

use crate::common::{Run, copy_tree, example, run_in};

/// A copy of the example fleet, to add files to.
pub fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), &dir.path().join("fleet"));
    dir
}

/// Host documents that each write `datum` in a way a line-prefix test
/// missed, by file name.
pub const ODD_HOSTS: [(&str, &str); 5] = [
    (
        "odd/bom.yaml",
        "\u{feff}datum: v1alpha1\ntype: Host\nname: bom-001\nlabels: {role: web, site: london, environment: staging}\n",
    ),
    (
        "odd/quoted.yaml",
        "\"datum\": v1alpha1\ntype: Host\nname: quoted-001\nlabels: {role: web, site: london, environment: staging}\n",
    ),
    (
        "odd/spaced.yml",
        "datum : v1alpha1\ntype: Host\nname: spaced-001\nlabels: {role: web, site: london, environment: staging}\n",
    ),
    (
        "odd/flow.yaml",
        "{datum: v1alpha1, type: Host, name: flow-001, labels: {role: web, site: london, environment: staging}}\n",
    ),
    (
        "odd/later.yaml",
        "# the version last\ntype: Host\nname: later-001\nlabels: {role: web, site: london, environment: staging}\ndatum: v1alpha1\n",
    ),
];

pub fn write(fleet: &Path, path: &str, text: &str) {
    let full = fleet.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, text).unwrap();
}

fn host_names(run: &Run) -> Vec<&str> {
    run.stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

#[test]
fn datum_written_any_way_is_a_document() {
    let dir = scratch();
    let fleet = dir.path().join("fleet");
    for (path, text) in ODD_HOSTS {
        write(&fleet, path, text);
    }
    let run = run_in(&fleet, &["hosts", "environment=staging", "site=london"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        host_names(&run),
        [
            "bom-001",
            "flow-001",
            "later-001",
            "quoted-001",
            "spaced-001"
        ]
    );
    let run = run_in(&fleet, &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "checked 10 hosts against 9 layers: no errors, no warnings\n"
    );
}

#[test]
fn a_host_without_its_version_line_is_an_error_at_its_type() {
    let dir = scratch();
    let fleet = dir.path().join("fleet");
    write(
        &fleet,
        "inventory/forgot.yaml",
        "# a new host\ntype: Host\nname: web-009\nlabels:\n  role: web\n  site: london\n  environment: staging\n",
    );
    let run = run_in(&fleet, &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stderr);
    // The host is held back, not missing: asking for it says why.
    let run = run_in(&fleet, &["render", "web-009"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("this looks like a Datum document but has no `datum:` version"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_layer_and_a_fleet_without_their_version_lines_are_errors_too() {
    let dir = scratch();
    let fleet = dir.path().join("fleet");
    let layer = fs::read_to_string(fleet.join("roles/web/layer.yaml")).unwrap();
    write(
        &fleet,
        "roles/web/layer.yaml",
        &layer.replace("datum: v1alpha1\n", ""),
    );
    write(
        &fleet,
        "extra.yaml",
        "{\"type\": \"Layer\", name: extra, precedence: 1, match: {}}\n",
    );
    let run = run_in(&fleet, &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for place in ["roles/web/layer.yaml:1:1", "extra.yaml:1:2"] {
        assert!(run.stderr.contains(place), "{place}:\n{}", run.stderr);
    }
    assert_eq!(
        run.stderr
            .matches("this looks like a Datum document but has no `datum:` version")
            .count(),
        2,
        "{}",
        run.stderr
    );
}

/// Payloads that only look like documents at a glance stay payloads, and
/// one named by a `source` is still read whole.
#[test]
fn payloads_stay_payloads() {
    let dir = scratch();
    let fleet = dir.path().join("fleet");
    for (path, text) in [
        ("files/nested.yaml", "server:\n  datum: v1alpha1\n"),
        ("files/list.yaml", "- datum: v1alpha1\n  type: Host\n"),
        ("files/k8s.yaml", "kind: Deployment\nspec:\n  type: Host\n"),
        (
            "files/later.yaml",
            "a: 1\n---\ndatum: v1alpha1\ntype: Host\n",
        ),
        ("files/template.yaml", "{% if x %}\ntype: {{ t }}\n"),
    ] {
        write(&fleet, path, text);
    }
    let run = run_in(&fleet, &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "checked 5 hosts against 9 layers: no errors, no warnings\n"
    );
}

/// A 40 MB payload that no `source` names is no document, however large:
/// it is neither refused nor read past its first document's keys.
#[test]
fn a_40_mb_payload_holds_nothing_back() {
    let dir = scratch();
    let fleet = dir.path().join("fleet");
    let line = format!("  - {}\n", "x".repeat(76));
    let lines = (40 << 20) / line.len();
    for (path, head) in [
        ("files/data.yaml", "kind: Data\n---\nitems:\n"),
        ("files/list.yaml", "items:\n"),
    ] {
        let mut text = String::with_capacity(40 << 20);
        text.push_str(head);
        for _ in 0..lines {
            text.push_str(&line);
        }
        write(&fleet, path, &text);
    }
    let start = std::time::Instant::now();
    let run = run_in(&fleet, &["check"]);
    let took = start.elapsed();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "checked 5 hosts against 9 layers: no errors, no warnings\n"
    );
    eprintln!("check with two 40 MB payloads: {took:?}");
}
