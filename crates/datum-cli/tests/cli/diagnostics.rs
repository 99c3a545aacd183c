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
