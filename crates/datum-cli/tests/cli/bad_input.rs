//! Every kind of bad input: exit status 1, `path:line:column`, the line
//! itself and a hint, and never a panic. Fixture fleets are folders under
//! `tests/fixtures/bad/`; cases that cannot live in git (bad encodings,
//! links out of the tree, huge files) are built in a temporary directory.

use std::fs;
use std::path::Path;

use crate::common::{Run, copy_tree, fixture, run_in};

/// Runs `check` on a broken fleet and asserts the shape every error has.
fn check_fails(fleet: &Path) -> Run {
    let run = run_in(fleet, &["check"]);
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.starts_with("error"), "{}", run.stderr);
    let located = run.stderr.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("--> ") && l[4..].split(':').count() >= 3
    });
    assert!(located, "no path:line:column in\n{}", run.stderr);
    assert!(
        run.stderr.contains("= hint: "),
        "no hint in\n{}",
        run.stderr
    );
    run
}

macro_rules! bad {
    ($($name:ident => $dir:literal,)*) => {$(
        #[test]
        fn $name() {
            let run = check_fails(&fixture(concat!("bad/", $dir)));
            insta::assert_snapshot!(run.stderr);
        }
    )*};
}

bad! {
    malformed_yaml => "malformed-yaml",
    duplicate_key => "duplicate-key",
    yaml_anchor => "yaml-anchor",
    yaml_alias => "yaml-alias",
    unknown_top_level_key => "unknown-top-level-key",
    unknown_resource_type => "unknown-resource-type",
    unknown_field => "unknown-field",
    wrong_type => "wrong-type",
    unquoted_mode => "unquoted-mode",
    invalid_mode => "invalid-mode",
    source_missing => "source-missing",
    source_parent => "source-parent",
    requires_missing => "requires-missing",
    requires_cycle => "requires-cycle",
    duplicate_host => "duplicate-host",
    duplicate_layer_name => "duplicate-layer-name",
    reserved_label => "reserved-label",
    two_layers_in_a_file => "two-layers-in-a-file",
    unsupported_version => "unsupported-version",
    missing_required_field => "missing-required-field",
    duplicate_path => "duplicate-path",
    undeclared_label => "undeclared-label",
    invalid_host_name => "invalid-host-name",
    flow_list_brackets => "flow-list-brackets",
    empty_alternatives => "empty-alternatives",
}

/// A copy of a fixture fleet to break further.
fn scratch(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(name), &dir.path().join("fleet"));
    dir
}

#[test]
fn render_of_a_broken_host_fails_without_output() {
    let run = run_in(&fixture("bad/unquoted-mode"), &["render", "web-001"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("roles/web/layer.yaml:13:11"),
        "{}",
        run.stderr
    );
}

#[test]
fn not_utf8() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    let mut bytes = fs::read(fleet.join("roles/web/layer.yaml")).unwrap();
    bytes.extend(b"  File[motd]:\n    content: caf\xe9\n");
    fs::write(fleet.join("roles/web/layer.yaml"), bytes).unwrap();
    let run = check_fails(&fleet);
    insta::assert_snapshot!(run.stderr);
}

/// A document saved as UTF-16 or UTF-32 (with a byte order mark or
/// without), as some editors save by default, is an error at its file,
/// never skipped as if it were not a document.
#[test]
fn a_document_in_utf16_or_utf32_is_an_error_at_its_file() {
    type Encode = fn(&str) -> Vec<u8>;
    let encodings: [(&str, Encode); 4] = [
        ("UTF-16LE", |t| {
            let mut b = vec![0xff, 0xfe];
            b.extend(t.encode_utf16().flat_map(u16::to_le_bytes));
            b
        }),
        ("UTF-16BE", |t| {
            t.encode_utf16().flat_map(u16::to_be_bytes).collect()
        }),
        ("UTF-32LE", |t| {
            let mut b = vec![0xff, 0xfe, 0, 0];
            b.extend(t.chars().flat_map(|c| (c as u32).to_le_bytes()));
            b
        }),
        ("UTF-32BE", |t| {
            t.chars().flat_map(|c| (c as u32).to_be_bytes()).collect()
        }),
    ];
    for (name, encode) in encodings {
        let dir = tempfile::tempdir().unwrap();
        let fleet = dir.path().join("fleet");
        copy_tree(&crate::common::example("fleet"), &fleet);
        let layer = fleet.join("roles/web/layer.yaml");
        let text = fs::read_to_string(&layer).unwrap();
        fs::write(&layer, encode(&text)).unwrap();
        let run = check_fails(&fleet);
        assert!(
            run.stderr.starts_with(&format!(
                "error: this file is {name}, not UTF-8\n --> roles/web/layer.yaml:1:1\n"
            )),
            "{name}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!(
                "= hint: save the file as UTF-8 (`iconv -f {name} -t UTF-8`)"
            )),
            "{name}: {}",
            run.stderr
        );
        assert!(!run.stdout.contains("0 layers"), "{name}: {}", run.stdout);
    }
}

#[cfg(unix)]
#[test]
fn source_through_a_link_out_of_the_root() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    fs::write(dir.path().join("outside.conf"), "secret").unwrap();
    std::os::unix::fs::symlink("../../outside.conf", fleet.join("files/linked.conf")).unwrap();
    let layer = fs::read_to_string(fleet.join("roles/web/layer.yaml"))
        .unwrap()
        .replace("mdoe:", "mode:")
        .replace("source: files/nginx.conf", "source: files/linked.conf");
    fs::write(fleet.join("roles/web/layer.yaml"), layer).unwrap();
    let run = check_fails(&fleet);
    assert!(
        run.stderr.contains(
            "error: source `files/linked.conf` is a symbolic link that leads out of the fleet root"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("roles/web/layer.yaml:14:13"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("    source: files/linked.conf"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_50_mb_document_is_refused_quickly() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    let mut text = String::from("datum: v1alpha1\ntype: Host\nname: big\nlabels:\n");
    let line = format!("  k{{}}: {}\n", "v".repeat(90));
    let mut i = 0;
    while text.len() < 50 << 20 {
        text.push_str(&line.replace("{}", &i.to_string()));
        i += 1;
    }
    fs::write(fleet.join("big.yaml"), text).unwrap();
    let run = run_in(&fleet, &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("big.yaml is 52"),
        "{}",
        &run.stderr[..run.stderr.len().min(2000)]
    );
    assert!(
        run.stderr.contains("over the limit of 33554432 bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_document_nested_10000_deep_is_refused() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    let layer = fs::read_to_string(fleet.join("roles/web/layer.yaml"))
        .unwrap()
        .replace("mdoe:", "mode:");
    fs::write(fleet.join("roles/web/layer.yaml"), layer).unwrap();
    for (name, nested) in [
        ("block.yaml", format!("{}x", "- ".repeat(10_000))),
        (
            "flow.yaml",
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
        ),
    ] {
        let text =
            format!("datum: v1alpha1\ntype: Host\nname: deep\nlabels:\n  role:\n    {nested}\n");
        fs::write(fleet.join(name), text).unwrap();
        let run = check_fails(&fleet);
        assert!(
            run.stderr
                .contains("collections are nested more than 32 levels deep"),
            "{}",
            &run.stderr[..run.stderr.len().min(3000)]
        );
        fs::remove_file(fleet.join(name)).unwrap();
    }
}

#[test]
fn every_independent_error_is_reported_in_one_run() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    fs::write(fleet.join("more.yaml"), "datum: v1alpha1\ntype: Host\nname: db-001\nlabels:\n  role: db\n  datum/x: y\n---\ndatum: v1alpha1\ntype: Host\nname: db-002\nlabels:\n  role: db\n").unwrap();
    fs::create_dir_all(fleet.join("roles/db")).unwrap();
    fs::write(
        fleet.join("roles/db/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: db\nprecedence: 30\nmatch: {labels: {role: db}}\nresources:\n  Service[postgresql]:\n    requires: Package[postgresql]\n",
    )
    .unwrap();
    let run = check_fails(&fleet);
    // The broken role layer, the reserved label on db-001, and the missing
    // reference on db-002, which no broken document touches.
    insta::assert_snapshot!(run.stderr);
    assert_eq!(
        run.stdout,
        "checked 2 hosts against 2 layers: 3 errors, no warnings\n"
    );
}

/// `limits: {source_bytes: N}` in datum.yaml: a payload over it is an error
/// at the `source` line that names it; the default (64 MiB) lets it pass.
#[test]
fn a_source_over_the_fleets_limit() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    let layer = fs::read_to_string(fleet.join("roles/web/layer.yaml"))
        .unwrap()
        .replace("mdoe:", "mode:");
    fs::write(fleet.join("roles/web/layer.yaml"), layer).unwrap();
    fs::write(fleet.join("files/nginx.conf"), vec![b'#'; 4096]).unwrap();
    assert_eq!(run_in(&fleet, &["check"]).code, 0);

    let root = fs::read_to_string(fleet.join("datum.yaml")).unwrap();
    fs::write(
        fleet.join("datum.yaml"),
        format!("{root}limits:\n  source_bytes: 4095\n"),
    )
    .unwrap();
    let run = check_fails(&fleet);
    assert!(
        run.stderr.contains(
            "error: source `files/nginx.conf` is 4096 bytes, over the fleet's limit of 4095 bytes for a payload"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("roles/web/layer.yaml:14:13"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("raise `limits: {source_bytes: N}`"),
        "{}",
        run.stderr
    );

    fs::write(
        fleet.join("datum.yaml"),
        format!("{root}limits:\n  source_bytes: 4096\n"),
    )
    .unwrap();
    assert_eq!(run_in(&fleet, &["check"]).code, 0);
}

#[test]
fn limits_that_are_not_limits() {
    let dir = scratch("bad/unknown-field");
    let fleet = dir.path().join("fleet");
    let root = fs::read_to_string(fleet.join("datum.yaml")).unwrap();
    for (limits, expect) in [
        (
            "limits:\n  source_bytes: -1\n",
            "`source_bytes` must be a positive number of bytes",
        ),
        (
            "limits:\n  source_bytes: \"10\"\n",
            "`source_bytes` must be a positive number of bytes",
        ),
        (
            "limits:\n  sourcebytes: 10\n",
            "unknown limit `sourcebytes`",
        ),
        ("limits: 10\n", "`limits` must be a mapping"),
    ] {
        fs::write(fleet.join("datum.yaml"), format!("{root}{limits}")).unwrap();
        let run = check_fails(&fleet);
        assert!(run.stderr.contains(expect), "{limits}:\n{}", run.stderr);
        assert!(run.stderr.contains("datum.yaml:"), "{}", run.stderr);
    }
}
