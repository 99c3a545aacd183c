//! Sensitive means never shown: no output, errors included, shows a value
//! of a File that some layer marks `sensitive: true`, nor the lines that
//! declare it.

use std::fs;
use std::path::Path;

use crate::common::run_in;

/// web-001 gets File[key] with `content` from base and `source` from
/// roles/web (both `source` and `content`: an error pointing at the
/// content line); roles/db, which matches no host, misspells `content`
/// and writes a mode unquoted inside File[key]; File[other] is not
/// sensitive.
fn fleet(root: &Path) {
    fs::create_dir_all(root.join("base")).unwrap();
    fs::create_dir_all(root.join("roles/web")).unwrap();
    fs::write(
        root.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: s\n",
    )
    .unwrap();
    fs::write(
        root.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n",
    )
    .unwrap();
    fs::write(root.join("key"), "hunter2-file\n").unwrap();
    fs::write(
        root.join("base/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {}\nresources:\n  \
         File[key]:\n    path: /etc/key\n    sensitive: true\n    content: \"hunter2-inline\"\n  \
         File[other]:\n    path: /etc/other\n    content: |\n      shown\n",
    )
    .unwrap();
    fs::write(
        root.join("roles/web/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 10\nmatch:\n  labels:\n    role: web\n\
         resources:\n  File[key]:\n    source: key\n",
    )
    .unwrap();
    fs::write(
        root.join("roles/db.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: db\nprecedence: 10\nmatch:\n  labels:\n    role: db\n\
         resources:\n  File[key]:\n    contnet: \"hunter2-typo\"\n    mode: 0600 # hunter2-comment\n  \
         File[other]:\n    mode: 0600 # shown\n",
    )
    .unwrap();
}

#[test]
fn no_output_shows_a_sensitive_value_or_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    for args in [
        &["check"][..],
        &["check", "--format", "json"],
        &["render", "web-001"],
        &["explain", "--host", "web-001"],
        &["explain", "File[key]", "--host", "web-001"],
        &["query", "File[key].content"],
        &["query", "File[key].content", "--format", "json"],
    ] {
        let run = run_in(dir.path(), args);
        assert!(
            !run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"),
            "datum {args:?}:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn a_diagnostic_inside_a_sensitive_resource_names_the_place_without_the_line() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let run = run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 1);
    let note = "  = note: lines of a resource marked `sensitive: true` are not shown\n";
    assert!(
        run.stderr.contains(&format!(
            "error: File[key] has both `source` (from roles/web) and `content` (from base)\n  \
             --> base/layer.yaml:10:14  content\n  \
             --> roles/web/layer.yaml:10:13  source\n{note}"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "error: unknown field `contnet` for File\n  --> roles/db.yaml:10:5  unknown field\n{note}"
        )),
        "{}",
        run.stderr
    );
    // The same mistake in a resource that is not sensitive shows its line.
    assert!(
        run.stderr.contains("13 |     mode: 0600 # shown\n"),
        "{}",
        run.stderr
    );
}
