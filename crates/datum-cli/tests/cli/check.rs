use crate::common::{example, fixture, run_in};

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
    assert_eq!(v["datum"], "v1alpha1");
    assert_eq!(v["type"], "Check");
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["diagnostics"][0]["code"], "conflict");
    assert_eq!(
        v["diagnostics"][0]["primary"]["location"],
        serde_json::json!({"path": "roles/web/layer.yaml", "line": 15, "column": 11})
    );
    // The hosts a problem hits are a list, not prose.
    assert_eq!(v["diagnostics"][0]["hosts"], serde_json::json!(["web-001"]));
}

/// The warnings of the `check/warnings` fixture, by the first line of each.
fn warnings_run() -> crate::common::Run {
    let run = run_in(&fixture("check/warnings"), &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "checked 3 hosts against 11 layers: no errors, 5 warnings\n"
    );
    run
}

/// The one warning of a run whose first line is `first`.
fn warning<'a>(stderr: &'a str, first: &str) -> &'a str {
    let found: Vec<&str> = stderr
        .split("\n\n")
        .filter(|w| w.starts_with(first))
        .collect();
    assert_eq!(found.len(), 1, "{first:?} in\n{stderr}");
    found[0]
}

#[test]
fn a_layer_that_matches_no_host() {
    let run = warnings_run();
    assert_eq!(
        warning(&run.stderr, "warning: roles/db-frankfurt matches no host"),
        "warning: roles/db-frankfurt matches no host
 --> roles/db-frankfurt/layer.yaml:6:1
  |
6 | match:
  | ^^^^^ matcher
  |
  = note: no host carries all of role=db, site=frankfurt
  = hint: `datum hosts KEY=VALUE ...` lists the hosts a matcher selects; remove the layer if no host should get it"
    );
}

#[test]
fn a_matcher_value_no_host_carries_names_the_nearest() {
    let run = warnings_run();
    assert_eq!(
        warning(&run.stderr, "warning: no host carries `role=wbe`"),
        "warning: no host carries `role=wbe`
 --> roles/wbe-typo/layer.yaml:7:11
  |
7 |     role: wbe
  |           ^^^ matcher of roles/wbe-typo
  |
  = note: so roles/wbe-typo matches no host
  = hint: did you mean `web`? hosts carry `role` with `db`, `web`"
    );
    // A mistyped host override is the same mistake, against host names.
    assert_eq!(
        warning(&run.stderr, "warning: no host carries `datum/host=web-01`"),
        "warning: no host carries `datum/host=web-01`
 --> hosts/web-01/layer.yaml:7:17
  |
7 |     datum/host: web-01
  |                 ^^^^^^ matcher of hosts/web-01
  |
  = note: so hosts/web-01 matches no host
  = hint: did you mean `web-001`? hosts carry `datum/host` with `db-001`, `web-001`, `web-002`"
    );
}

#[test]
fn a_matcher_key_no_host_carries_names_the_nearest() {
    let run = warnings_run();
    assert_eq!(
        warning(&run.stderr, "warning: no host carries label key `stie`"),
        "warning: no host carries label key `stie`
 --> roles/wbe-typo/layer.yaml:8:5
  |
8 |     stie: london
  |     ^^^^ matcher of roles/wbe-typo
  |
  = note: so roles/wbe-typo matches no host
  = hint: did you mean `site`? hosts carry `datum/host`, `role`, `site`, `tier`"
    );
    // Explained by its labels, the layer is not also reported as matching no host.
    assert!(
        !run.stderr
            .contains("warning: roles/wbe-typo matches no host")
    );
}

#[test]
fn a_latent_overlap_is_a_conflict_waiting_for_its_host() {
    let run = warnings_run();
    assert_eq!(
        warning(&run.stderr, "warning: extra/edge.yaml and roles/web"),
        "warning: extra/edge.yaml and roles/web set File[nginx].mode differently at precedence 30, and one host could match both
  0644  extra/edge.yaml  matches tier=edge
  0640  roles/web        matches role=web
  no host matches both yet; a host with role=web, tier=edge would not resolve
  --> extra/edge.yaml:13:11
  --> roles/web/layer.yaml:11:11
  = hint: give the layer that should win a higher precedence, or make the matchers exclusive: one key that each requires with a different value"
    );
    // roles/db and roles/web disagree too, but no host can carry both roles;
    // the host overrides disagree with each other and with extra/db-override,
    // but each holds on one host only, which none of the others matches.
    assert_eq!(
        run.stderr.matches("differently").count(),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn warnings_are_deterministic_and_reported_once() {
    let first = warnings_run();
    for _ in 0..3 {
        let again = run_in(&fixture("check/warnings"), &["check"]);
        assert_eq!(again.stderr, first.stderr);
    }
    let blocks: Vec<&str> = first.stderr.split("\n\n").collect();
    let mut unique = blocks.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), blocks.len());
}

#[test]
fn a_declared_value_no_host_carries_yet_is_no_typo() {
    let run = run_in(&fixture("check/declared"), &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: roles/cache matches no host
 --> roles/cache/layer.yaml:6:1
  |
6 | match:
  | ^^^^^ matcher
  |
  = note: no host carries `role=cache`
  = hint: `datum hosts KEY=VALUE ...` lists the hosts a matcher selects; remove the layer if no host should get it

"
    );
}

#[test]
fn an_undeclared_host_label_key_is_an_error_with_a_suggestion() {
    let run = run_in(&fixture("check/undeclared-host-key"), &["check"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: label key `rloe` is not declared in datum.yaml
 --> hosts.yaml:4:10
  |
4 | labels: {rloe: web}
  |          ^^^^ undeclared key
  |
  = hint: did you mean `role`? datum.yaml declares `role`

"
    );
}

#[test]
fn deny_warnings_turns_them_into_errors() {
    let run = run_in(&fixture("check/declared"), &["check", "--deny-warnings"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("error: roles/cache matches no host\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stdout,
        "checked 1 host against 2 layers: 1 error, no warnings\n"
    );
}

#[test]
fn check_json_carries_the_warnings() {
    let run = run_in(&fixture("check/warnings"), &["check", "--format", "json"]);
    assert_eq!(run.code, 0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["summary"]["warnings"], 5);
    assert_eq!(v["summary"]["errors"], 0);
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "latent-conflict",
            "uncarried-label",
            "unmatched-layer",
            "uncarried-label",
            "uncarried-label"
        ]
    );
    let latent = &v["diagnostics"][0];
    assert_eq!(latent["severity"], "warning");
    assert_eq!(
        crate::common::place(&latent["primary"]["location"]),
        "extra/edge.yaml:13:11"
    );
    assert_eq!(
        crate::common::place(&latent["secondary"][0]["location"]),
        "roles/web/layer.yaml:11:11"
    );
}

#[test]
fn text_output_draws_a_few_of_each_kind_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: x\n",
    )
    .unwrap();
    let mut labels = String::new();
    for i in 0..60 {
        labels.push_str(&format!("  \"bad key {i}\": x\n"));
    }
    std::fs::write(
        root.join("hosts.yaml"),
        format!("datum: v1alpha1\ntype: Host\nname: h1\nlabels:\n{labels}"),
    )
    .unwrap();
    let run = run_in(root, &["check"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "checked 0 hosts against 0 layers: 60 errors, no warnings\n"
    );
    assert_eq!(run.stderr.matches("error: ").count(), 20, "{}", run.stderr);
    assert!(
        run.stderr.ends_with(
            "note: and 40 more errors of this kind (invalid-label) not shown; `--format json` lists every one\n\n"
        ),
        "{}",
        run.stderr
    );
    let json = run_in(root, &["check", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 60);
    assert_eq!(
        v["codes"],
        serde_json::json!([{"code": "invalid-label", "count": 60}])
    );
}
