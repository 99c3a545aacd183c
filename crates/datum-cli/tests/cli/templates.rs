//! Vars and templates: `vars:` folded like fields (an override, a `null`,
//! a conflict), explained and queried; a File's `template` rendered per
//! site with its explain chain; an undefined var named with the template's
//! place and the layers that could set it. The fleet is
//! `examples/templates/`; the broken variants are copies of it.

use std::fs;
use std::path::PathBuf;

use crate::common::{copy_tree, example, run_in};

fn fleet() -> PathBuf {
    example("templates")
}

/// A copy of the fleet with one more file.
fn with(path: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("fleet");
    copy_tree(&fleet(), &root);
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    let old = fs::read_to_string(&full).unwrap_or_default();
    fs::write(&full, old + text).unwrap();
    (dir, root)
}

#[test]
fn a_var_overridden_by_a_site_and_unset_by_a_host_is_explained() {
    let run = run_in(
        &fleet(),
        &["explain", "vars.search_domain", "--host", "web-001"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    vars.search_domain london.example.org
      contributions
        base          precedence 0   example.org         overridden  matched every host   base/layer.yaml:7:18
        sites/london  precedence 20  london.example.org  set         matched site=london  sites/london/layer.yaml:8:18
    ");
    let run = run_in(
        &fleet(),
        &["explain", "vars.search_domain", "--host", "db-001"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    vars.search_domain (unset)
      contributions
        base          precedence 0    example.org         overridden  matched every host         base/layer.yaml:7:18
        sites/london  precedence 20   london.example.org  overridden  matched site=london        sites/london/layer.yaml:8:18
        hosts/db-001  precedence 100  null                unset       matched datum/host=db-001  hosts/db-001/layer.yaml:7:18
    ");
    let run = run_in(&fleet(), &["query", "vars.search_domain"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    db-001   (unset)             hosts/db-001
    web-001  london.example.org  sites/london
    web-002  example.org         base
    ");
}

#[test]
fn a_var_nobody_sets_says_so_with_the_nearest_name() {
    let run = run_in(&fleet(), &["explain", "vars.dnss", "--host", "web-001"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "web-001 has no vars.dnss\n  no layer sets vars.dnss; the nearest var is vars.dns\n"
    );
    let run = run_in(&fleet(), &["query", "vars.dnss"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no layer sets vars.dnss\n  = hint: did you mean vars.dns?\n"
    );
    let run = run_in(&fleet(), &["query", "vars.not-a-name"]);
    assert_eq!(run.code, 64, "{}", run.stderr);
}

#[test]
fn two_layers_of_one_precedence_setting_a_var_differently_conflict() {
    let (_dir, root) = with(
        "extra/dns.yaml",
        "datum: v1alpha1\ntype: Layer\nname: dns\nprecedence: 20\nmatch: {labels: {role: web}}\nvars:\n  dns: 10.9.9.9\n",
    );
    let run = run_in(&root, &["check"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @r"
    error: conflicting values for vars.dns
      10.9.9.9   extra/dns.yaml   precedence 20
      10.2.0.53  sites/frankfurt  precedence 20
      both layers match host web-002 at equal precedence
      --> extra/dns.yaml:7:8
        |
      7 |   dns: 10.9.9.9
        |        ^^^^^^^^
      --> sites/frankfurt/layer.yaml:7:8
        |
      7 |   dns: 10.2.0.53
        |        ^^^^^^^^^
      = hint: give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap

    error: conflicting values for vars.dns
      10.9.9.9   extra/dns.yaml  precedence 20
      10.1.0.53  sites/london    precedence 20
      both layers match host web-001 at equal precedence
      --> extra/dns.yaml:7:8
        |
      7 |   dns: 10.9.9.9
        |        ^^^^^^^^
      --> sites/london/layer.yaml:7:8
        |
      7 |   dns: 10.1.0.53
        |        ^^^^^^^^^
      = hint: give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap
    ");
    // The template reads the conflicting var: the conflict alone is reported.
    assert!(!run.stderr.contains("does not render"), "{}", run.stderr);
    let run = run_in(&root, &["explain", "vars.dns", "--host", "web-001"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout, @r"
    vars.dns conflict
      contributions
        extra/dns.yaml  precedence 20  10.9.9.9   conflict  matched role=web     extra/dns.yaml:7:8
        sites/london    precedence 20  10.1.0.53  conflict  matched site=london  sites/london/layer.yaml:7:8
    ");
    // db-001 matches only one of them.
    let run = run_in(&root, &["render", "db-001"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_template_renders_per_site_as_the_files_content() {
    let run = run_in(&fleet(), &["render", "web-001"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r#"
    datum: v1alpha1
    type: Manifest
    host: web-001
    labels:
      datum/host: web-001
      role: web
      site: london
    layers:
      - base
      - sites/london
    resources:
      File[resolv]:
        path: /etc/resolv.conf
        mode: "0644"
        template: templates/resolv.conf.j2
        content: |
          # web-001 in london, written by datum
          search london.example.org
          nameserver 10.1.0.53
          # time from 0.pool.ntp.org
          # time from 1.pool.ntp.org
        content_sha256: c168efbf6af588f30d6c99d56bd994e4c19c9d1574fd363a38e8c5579b6e8fea
    "#);
    let run = run_in(&fleet(), &["query", "File[resolv].content"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r##"
    db-001   "# db-001 in london, written by datum\nnameserver …" (112 bytes)  base
    web-001  "# web-001 in london, written by datum\nsearch lon…" (139 bytes)  base
    web-002  "# web-002 in frankfurt, written by datum\nsearch …" (135 bytes)  base
    "##);
}

#[test]
fn explaining_rendered_content_names_the_template_and_every_var_read() {
    let run = run_in(
        &fleet(),
        &["explain", "File[resolv].content", "--host", "web-002"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = run.stdout.replace(&sha_of(&run.stdout), "<sha256>");
    insta::assert_snapshot!(text, @r##"
    File[resolv].content "# web-002 in frankfurt, written by datum\nsearch …" (135 bytes)
      rendered from templates/resolv.conf.j2 for web-002: 135 bytes, sha256 <sha256>
      template
        base  precedence 0  templates/resolv.conf.j2  set  matched every host  base/layer.yaml:13:15
      vars read
        vars.dns            10.2.0.53                         sites/frankfurt  sites/frankfurt/layer.yaml:7:8
        vars.ntp_servers    [0.pool.ntp.org, 1.pool.ntp.org]  base             base/layer.yaml:8:16
        vars.search_domain  example.org                       base             base/layer.yaml:7:18
      labels read
        labels.site  frankfurt
    "##);
    let run = run_in(
        &fleet(),
        &[
            "explain",
            "File[resolv].content",
            "--host",
            "db-001",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let field = &json["field"];
    assert_eq!(field["template"], "templates/resolv.conf.j2");
    assert_eq!(field["layer"], "base");
    let read: Vec<(String, String)> = field["vars_read"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // db-001 unsets search_domain; the template looked it up all the same.
    assert_eq!(
        read,
        [
            ("dns".to_owned(), "set".to_owned()),
            ("ntp_servers".to_owned(), "set".to_owned()),
            ("search_domain".to_owned(), "unset".to_owned()),
        ]
    );
}

/// The 64-hex-digit digest in a text.
fn sha_of(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap()
        .to_owned()
}

#[test]
fn an_undefined_var_names_the_host_the_place_and_the_layers_that_could_set_it() {
    let (_dir, root) = with(
        "hosts.yaml",
        "---\ndatum: v1alpha1\ntype: Host\nname: web-003\nlabels: {role: web, site: paris}\n",
    );
    let run = run_in(&root, &["render", "web-003"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.stderr, @r"
    error: File[resolv] does not render on host web-003: undefined var `vars.dns` in templates/resolv.conf.j2
     --> templates/resolv.conf.j2:5:15
      |
    5 | nameserver {{ vars.dns }}
      |               ^^^^^^^^ `vars.dns` is undefined
      |
      = note: layers that could set vars.dns: sites/frankfurt (sets it; matches site=frankfurt), sites/london (sets it; matches site=london)
      = hint: set `vars.dns` in a layer that matches the host, or guard it in the template: {% if vars.dns is defined %}

    error: web-003 does not resolve: 1 error
    ");
    // The other hosts still render.
    let run = run_in(&root, &["render", "web-002"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_template_that_is_not_there_or_not_under_templates_is_refused() {
    let (_dir, root) = with(
        "roles/web/layer.yaml",
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch: {labels: {role: web}}\nresources:\n  File[motd]:\n    path: /etc/motd\n    template: templates/motd.j2\n  File[issue]:\n    path: /etc/issue\n    template: files/issue.j2\n",
    );
    let run = run_in(&root, &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error: `template: files/issue.j2` is not a file under `templates/`\n  --> roles/web/layer.yaml:12:15\n"
        ),
        "{}",
        run.stderr
    );
    let (_dir, root) = with(
        "roles/web/layer.yaml",
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch: {labels: {role: web}}\nresources:\n  File[motd]:\n    path: /etc/motd\n    template: templates/motd.j2\n",
    );
    let run = run_in(&root, &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error: template `templates/motd.j2` does not exist\n --> roles/web/layer.yaml:9:15\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_file_with_a_template_and_content_is_refused() {
    let (_dir, root) = with(
        "sites/london/layer.yaml",
        "resources:\n  File[resolv]:\n    content: \"nameserver 1.1.1.1\\n\"\n",
    );
    let run = run_in(&root, &["render", "web-001"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "error: File[resolv] has both `content` (from sites/london) and `template` (from base)\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "= hint: a File takes one of `source`, `content`, `template` or `secret`: in the layer that should win, set the others to null (`content: null`)"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn includes_reach_only_the_templates_directory() {
    let (_dir, root) = with(
        "templates/partials/ntp.j2",
        "{% include \"../datum.yaml\" %}\n",
    );
    let run = run_in(&root, &["render", "web-001"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "does not render on host web-001: a missing include in templates/resolv.conf.j2"
        ),
        "{}",
        run.stderr
    );
}

/// An integer too large for 64 bits in `vars` is an error at its place,
/// not text that renders like a number; quoted, it is text.
#[test]
fn an_integer_beyond_64_bits_in_vars_is_refused() {
    let (_dir, root) = with(
        "sites/big/layer.yaml",
        "datum: v1alpha1\ntype: Layer\nname: big\nprecedence: 25\nmatch: {labels: {site: london}}\n\
         vars:\n  serial: 18446744073709551616\n  ports: [80, -9223372036854775809]\n  quoted: \"18446744073709551616\"\n",
    );
    let run = run_in(&root, &["check"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    for place in ["sites/big/layer.yaml:7:11", "sites/big/layer.yaml:8:15"] {
        assert!(
            run.stderr
                .contains(&format!("does not fit in 64 bits\n --> {place}\n")),
            "{place}: {}",
            run.stderr
        );
    }
    assert_eq!(
        run.stderr.matches("does not fit in 64 bits").count(),
        2,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("= hint: an integer is from -9223372036854775808 to 9223372036854775807; quote it to keep it as text"), "{}", run.stderr);
}

#[test]
fn a_template_asking_for_too_many_bytes_stops_at_the_line_that_asked() {
    let template = fleet().join("templates/resolv.conf.j2");
    let line = fs::read_to_string(&template).unwrap().lines().count() + 1;
    // 40 MB, then 80 MB more: well inside the number of steps a template
    // may take, past the bytes it may make.
    for text in [
        "{% set s = 'x' * 40000000 %}{{ (s ~ s)|length }}\n",
        "{{ '%0100000000d'|format(1)|length }}\n",
        "{% set s = 'ab' * 1000 %}{{ s|replace('a', s)|replace('a', s)|length }}\n",
        "{{ range(100000)|join('x' * 1000)|length }}\n",
    ] {
        let (_dir, root) = with("templates/resolv.conf.j2", text);
        let run = run_in(&root, &["render", "web-001"]);
        assert_eq!(run.code, 1, "{text}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("templates/resolv.conf.j2:{line}:")),
            "{text}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("64 MiB"), "{text}: {}", run.stderr);
    }
}
