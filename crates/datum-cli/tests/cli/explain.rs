//! `datum explain`: the shape of SPEC §6 exactly, every kind of answer
//! (field chain, whole host, why not), a host that fails to resolve, and
//! JSON that locates every contribution. Fleets the examples do not cover
//! are folders under `tests/fixtures/explain/`.

use std::path::{Path, PathBuf};

use crate::common::{Run, example, fixture, place, run_in};

/// The output SPEC §6 prints for `datum explain File[nginx-config] --host web-001`.
const SPEC_EXAMPLE: &str = "\
File[nginx-config] /etc/nginx/nginx.conf
  contributed by
    roles/web      precedence 30   matched role=web
    hosts/web-001  precedence 100  matched datum/host=web-001
  fields
    path    /etc/nginx/nginx.conf  roles/web
    owner   root                   roles/web
    group   root                   roles/web
    mode    0600                   hosts/web-001  overrides 0640 from roles/web
    source  files/nginx.conf       roles/web
  requires
    Package[nginx]  roles/web
";

fn layers() -> PathBuf {
    fixture("explain/layers")
}

/// `datum explain ARGS --host HOST --fleet FLEET`, the target first as SPEC §6 writes it.
fn explain(fleet: &Path, host: &str, args: &[&str]) -> Run {
    let mut all = vec!["explain"];
    all.extend(args);
    all.extend(["--host", host]);
    run_in(fleet, &all)
}

#[test]
fn the_spec_example_comes_out_exactly() {
    let run = explain(&example("fleet"), "web-001", &["File[nginx-config]"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(run.stdout, SPEC_EXAMPLE);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn a_field_gives_its_whole_chain() {
    let run = explain(&layers(), "web-001", &["File[app-config].mode"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    File[app-config].mode 0600
      contributions
        base           precedence 0    0644  overridden  matched every host          base/layer.yaml:9:11
        roles/web      precedence 30   0640  overridden  matched role=web            roles/web/layer.yaml:12:11
        hosts/web-001  precedence 100  0600  set         matched datum/host=web-001  hosts/web-001/layer.yaml:10:11
    ");
}

#[test]
fn a_set_field_gives_its_entries_and_chain() {
    let run = explain(&layers(), "web-001", &["File[app-config].requires"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r#"
    File[app-config].requires Package[app]
      entries
        Package[app]  roles/web, sites/london
      contributions
        roles/web     precedence 30  [Package[app]]  listed  matched role=web     roles/web/layer.yaml:15:7
        sites/london  precedence 30  [Package[app]]  listed  matched site=london  sites/london/layer.yaml:12:15
    "#);
}

#[test]
fn the_whole_host_gives_layers_then_every_resource() {
    let run = explain(&example("fleet"), "web-001", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(
            "host web-001\n  labels\n    datum/host   web-001\n    environment  production\n    role         web\n    site         london\n  layers\n    base                     precedence 0    matched every host\n    environments/production  precedence 10   matched environment=production\n    sites/london             precedence 20   matched site=london\n    roles/web                precedence 30   matched role=web\n    hosts/web-001            precedence 100  matched datum/host=web-001\n\n"
        ),
        "{}",
        run.stdout
    );
    // Each resource reads as it does alone.
    assert!(run.stdout.contains(&format!("\n\n{SPEC_EXAMPLE}\n")));
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn several_displaced_values_read_highest_first() {
    let run = explain(&layers(), "web-001", &["File[app-config]"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "    mode     0600           hosts/web-001  overrides 0640 from roles/web, 0644 from base\n"
        ),
        "{}",
        run.stdout
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn layers_agreeing_at_equal_precedence_are_shown() {
    let run = explain(&layers(), "web-001", &["File[app-config]"]);
    assert!(
        run.stdout
            .contains("    group    www            sites/london   agreed by roles/web\n"),
        "{}",
        run.stdout
    );
    let chain = explain(&layers(), "web-001", &["File[app-config].group"]);
    assert!(
        chain
            .stdout
            .contains("roles/web     precedence 30  www  agreed  matched role=web"),
        "{}",
        chain.stdout
    );
}

#[test]
fn a_null_reads_as_unset_by_its_layer() {
    let run = explain(&layers(), "web-001", &["File[app-config]"]);
    assert!(
        run.stdout.contains(
            "    content  (unset)        hosts/web-001  overrides \"default\\n\" from base\n"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_layer_matching_every_host_says_so() {
    let run = explain(&example("fleet"), "db-001", &["File[motd]"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("  contributed by\n    base  precedence 0  matched every host\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn sensitive_content_is_never_printed() {
    for format in ["text", "json"] {
        let run = explain(&layers(), "web-001", &["--format", format]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!run.stdout.contains("secret-value"), "{}", run.stdout);
    }
    let run = explain(&layers(), "web-001", &["File[app-key]"]);
    assert!(
        run.stdout
            .contains("    content    (sensitive)   roles/web  overrides (sensitive) from base\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn why_not_names_the_label_that_failed() {
    let run = explain(&example("fleet"), "web-001", &["Package[postgresql]"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout, @r"
    web-001 has no Package[postgresql]
      declared by layers that do not match web-001
        roles/db needs role=db; web-001 has role=web
    ");
}

#[test]
fn why_not_names_a_label_the_host_lacks() {
    let run = explain(&layers(), "web-001", &["Service[app-metrics].ensure"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout, @r"
    web-001 has no Service[app-metrics].ensure
      declared by layers that do not match web-001
        extra/gold needs tier=gold; web-001 has no label tier
    ");
}

#[test]
fn why_not_a_field_names_the_layers_that_set_it() {
    let run = explain(&layers(), "web-001", &["File[app-key].owner"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout, @r"
    web-001 has no File[app-key].owner
      no layer sets File[app-key].owner, for any host
    ");
    // web-001 has the file; only a layer it does not match sets the owner.
    let run = explain(&layers(), "web-001", &["File[app-config].owner"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout, @r"
    web-001 has no File[app-config].owner
      set by layers that do not match web-001
        roles/db needs role=db; web-001 has role=web
    ");
}

#[test]
fn an_id_no_layer_declares_names_the_nearest() {
    let run = explain(&example("fleet"), "web-001", &["File[ngnix-config]"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout, @r"
    web-001 has no File[ngnix-config]
      no layer declares File[ngnix-config]; the nearest resource id is File[nginx-config]
    ");
}

#[test]
fn a_failing_host_is_explained_with_both_sides_of_the_conflict() {
    let run = explain(&example("conflict"), "web-001", &["File[nginx-config]"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout, @r"
    File[nginx-config] /etc/nginx/nginx.conf
      contributed by
        roles/web      precedence 30  matched role=web
        roles/web-tls  precedence 30  matched role=web, tls=enabled
      fields
        path    /etc/nginx/nginx.conf  roles/web
        owner   root                   roles/web
        group   root                   roles/web
        mode    conflict               at precedence 30
          0640  roles/web      precedence 30
          0600  roles/web-tls  precedence 30
        source  files/nginx.conf       roles/web
      requires
        Package[nginx]  roles/web
    ");
    // The report render gives, and why the status is 1.
    assert!(
        run.stderr
            .starts_with("error: conflicting values for File[nginx-config].mode\n"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .ends_with("error: web-001 does not resolve: 1 error\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failing_host_still_answers_for_a_field_that_resolves() {
    let run = explain(
        &example("conflict"),
        "web-001",
        &["File[nginx-config].owner"],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.starts_with("File[nginx-config].owner root\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_host_held_back_by_broken_documents_names_them() {
    let run = explain(
        &fixture("bad/unquoted-mode"),
        "web-001",
        &["File[nginx-config]"],
    );
    // Explained with what loaded (explain is the debugging tool), and the
    // status still says the host has no manifest.
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .starts_with("File[nginx-config] /etc/nginx/nginx.conf\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            "note: explained without the fields in error of roles/web/layer.yaml; web-001 has no manifest until the errors are fixed\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "error: web-001 cannot be resolved: documents it depends on failed to load: roles/web/layer.yaml (Layer document)\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unknown_host_is_refused_as_render_refuses_it() {
    let explain = explain(&example("fleet"), "web-01", &["File[motd]"]);
    let render = run_in(&example("fleet"), &["render", "web-01"]);
    assert_eq!(explain.code, 1);
    assert_eq!(explain.stdout, "");
    assert_eq!(explain.stderr, render.stderr);
}

#[test]
fn a_field_the_type_lacks_is_an_error_with_a_suggestion() {
    let run = explain(&example("fleet"), "web-001", &["File[nginx-config].mdoe"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.stderr, @r"
    error: File has no field `mdoe`
      = hint: did you mean `mode`? File takes path, ensure, owner, group, mode, source, content, template, secret, sensitive, requires
    ");
}

#[test]
fn ids_are_read_as_everywhere_else() {
    let run = explain(&example("fleet"), "web-001", &["Fiel[motd]"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @r"
    error: unknown resource type `Fiel`
      = hint: did you mean `File`? The types are Cron, Directory, Exec, File, Group, Health, Mount, Package, Repository, Service, Symlink, Sysctl, User
    ");
    // Not a resource id at all: bad usage.
    let run = explain(&example("fleet"), "web-001", &["nginx"]);
    assert_eq!(run.code, 64);
    insta::assert_snapshot!(run.stderr, @r"
    error: `nginx` is not a resource id
      = hint: a resource id is Type[title], such as Package[nginx] or File[motd], and a field follows a dot: File[motd].mode
    ");
}

#[test]
fn json_locates_every_contribution_and_label() {
    let run = explain(
        &example("fleet"),
        "web-001",
        &["File[nginx-config]", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["found"], true);
    assert_eq!(v["resolves"], true);
    let r = &v["resource"];
    assert_eq!(r["summary"], "/etc/nginx/nginx.conf");
    let by = &r["contributed_by"];
    assert_eq!(by[1]["layer"], "hosts/web-001");
    // Each layer also carries its name, as its document gives it.
    assert_eq!(by[0]["name"], "role-web");
    assert_eq!(by[1]["name"], "host-web-001");
    assert_eq!(by[1]["matched"][0]["key"], "datum/host");
    assert_eq!(
        place(&by[1]["matched"][0]["location"]),
        "hosts/web-001/layer.yaml:9:5"
    );
    let mode = &r["fields"][3];
    assert_eq!(mode["field"], "mode");
    assert_eq!(mode["value"], "0600");
    assert_eq!(mode["layer"], "hosts/web-001");
    let c = &mode["contributions"];
    assert_eq!(c[0]["role"], "overridden");
    assert_eq!(c[0]["value"], "0640");
    assert_eq!(place(&c[0]["location"]), "roles/web/layer.yaml:20:11");
    assert_eq!(c[1]["role"], "set");
    assert_eq!(
        c[1]["location"],
        serde_json::json!({"path": "hosts/web-001/layer.yaml", "line": 12, "column": 11})
    );
    let requires = &r["fields"][5];
    assert_eq!(requires["value"][0], "Package[nginx]");
    assert_eq!(
        place(&requires["entries"][0]["listed_by"][0]["location"]),
        "roles/web/layer.yaml:23:9"
    );
    // Every contribution anywhere carries a location.
    let all = explain(&example("fleet"), "web-001", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&all.stdout).unwrap();
    let mut seen = 0;
    for r in v["resources"].as_array().unwrap() {
        for f in r["fields"].as_array().unwrap() {
            for c in f["contributions"].as_array().unwrap() {
                assert!(place(&c["location"]).contains(".yaml:"), "{c}");
                seen += 1;
            }
        }
    }
    assert!(seen > 30, "{seen}");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn json_why_not_gives_each_failed_label() {
    let run = explain(
        &layers(),
        "web-001",
        &["Service[app-metrics]", "--format", "json"],
    );
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["found"], false);
    let why = &v["why_not"];
    assert_eq!(why["reason"], "unmatched");
    let gold = &why["layers"][0];
    assert_eq!(gold["layer"], "extra/gold");
    assert_eq!(gold["failed"][0]["key"], "tier");
    assert_eq!(gold["failed"][0]["wanted"], "gold");
    assert_eq!(gold["failed"][0]["found"], serde_json::Value::Null);
    assert_eq!(
        place(&gold["failed"][0]["location"]),
        "extra/gold/layer.yaml:9:5"
    );
}

#[test]
fn json_of_a_failing_host_carries_the_conflict() {
    let run = explain(
        &example("conflict"),
        "web-001",
        &["File[nginx-config].mode", "--format", "json"],
    );
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["resolves"], false);
    assert_eq!(v["problems"][0]["code"], "conflict");
    let f = &v["field"];
    assert_eq!(f["state"], "conflict");
    assert_eq!(f["value"], serde_json::Value::Null);
    let sides: Vec<(&str, &str)> = f["contributions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["value"].as_str().unwrap(), c["role"].as_str().unwrap()))
        .collect();
    assert_eq!(sides, [("0640", "conflict"), ("0600", "conflict")]);
}
