//! The last mile of diagnostics: suggestions only when they are likely,
//! tables aligned on the screen, each side of a conflict shown where it is
//! written.

use std::fs;

use crate::common::{copy_tree, example, run_in};

#[test]
fn a_host_name_far_from_every_host_gets_no_suggestion() {
    let run = run_in(&example("fleet"), &["render", "nosuch"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "error: no host named `nosuch` in this fleet\n  \
         = hint: no host name is close to it; `datum hosts` lists them all\n"
    );
    let run = run_in(&example("fleet"), &["render", "db-01"]);
    assert!(
        run.stderr
            .contains("hint: the nearest host name is `db-001`"),
        "{}",
        run.stderr
    );
}

/// A layer directory in wide characters takes two columns a character: the
/// conflict table still lines up on the screen.
#[test]
fn wide_characters_keep_the_conflict_table_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    copy_tree(&example("conflict"), &fleet);
    fs::rename(fleet.join("roles/web-tls"), fleet.join("roles/ウェブ")).unwrap();
    let run = run_in(&fleet, &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stderr);
    let rows: Vec<&str> = run.stderr.lines().skip(1).take(2).collect();
    // Each row's `precedence` starts at the same screen column.
    let column = |row: &str| {
        let at = row.find("precedence").unwrap();
        unicode_width::UnicodeWidthStr::width(&row[..at])
    };
    assert_eq!(column(rows[0]), column(rows[1]), "{rows:?}");
}

/// The usual YAML slips under `resources:` are told in words at the line at
/// fault: a list where a mapping belongs, fields at the level of the ids.
#[test]
fn yaml_slips_under_resources_are_told_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path();
    fs::write(
        fleet.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: t\n",
    )
    .unwrap();
    fs::write(
        fleet.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {role: web}\n",
    )
    .unwrap();
    fs::write(
        fleet.join("listed.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: listed\nprecedence: 1\nmatch: {}\nresources:\n  - Package[nginx]:\n      ensure: installed\n",
    )
    .unwrap();
    fs::write(
        fleet.join("flat.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: flat\nprecedence: 2\nmatch: {}\nresources:\n  File[motd]:\n  path: /etc/motd\n",
    )
    .unwrap();
    let run = run_in(fleet, &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stderr);
}

/// One diagnostic is capped like the list of them: a conflict between 500
/// layers draws twenty rows and twenty places, and counts the rest in a
/// line, instead of hundreds of kilobytes; JSON still lists every side.
#[test]
fn one_conflict_across_hundreds_of_layers_is_drawn_capped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: wide\n",
    )
    .unwrap();
    std::fs::write(
        root.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n",
    )
    .unwrap();
    for i in 0..500 {
        let layer = root.join(format!("roles/l{i:03}"));
        std::fs::create_dir_all(&layer).unwrap();
        std::fs::write(
            layer.join("layer.yaml"),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: l{i:03}\nprecedence: 30\nmatch:\n  labels:\n    role: web\n\
                 resources:\n  File[motd]:\n    path: /etc/motd\n    content: \"value {i}\"\n"
            ),
        )
        .unwrap();
    }
    let run = crate::common::run_in(root, &["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr
            .matches("error: conflicting values for File[motd].content")
            .count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.len() < 8_000,
        "{} bytes:\n{}",
        run.stderr.len(),
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "\n  value 19   roles/l019  precedence 30\n  and 480 more rows not shown; `--format json` lists every one\n  all 500 layers match host web-001 at equal precedence\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("\n  and 480 more places not shown; `--format json` lists every one\n"),
        "{}",
        run.stderr
    );
    let json = crate::common::run_in(root, &["check", "--format", "json"]);
    assert!(
        json.stdout.contains("roles/l499/layer.yaml"),
        "JSON lists every side"
    );
}
