use crate::common::{example, fixture, run_in};

#[test]
fn each_host_with_the_layer_that_set_its_value() {
    let run = run_in(&example("fleet"), &["query", "File[nginx-config].mode"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn summary_groups_hosts_by_value() {
    let run = run_in(
        &example("fleet"),
        &["query", "File[nginx-config].mode", "--summary"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "0640                     2 hosts  roles/web\n\
         0600                     1 host   hosts/web-001\n\
         (no File[nginx-config])  2 hosts\n"
    );
}

#[test]
fn unset_failing_and_agreeing_layers_are_all_shown() {
    let fleet = fixture("query");
    let run = run_in(&fleet, &["query", "File[motd].mode"]);
    // web-003 does not resolve: listed, and the status says so.
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "note: 1 host does not resolve; `datum check` says why\n"
    );
    insta::assert_snapshot!(run.stdout);
    let run = run_in(&fleet, &["query", "File[motd].mode", "--summary"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn where_narrows_the_hosts() {
    let run = run_in(
        &fixture("query"),
        &[
            "query",
            "File[motd].mode",
            "--where",
            "role=web",
            "--where",
            "site=paris",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "web-002  0640  roles/web\n");
}

#[test]
fn sets_list_their_entries() {
    let run = run_in(
        &fixture("query"),
        &["query", "File[nginx].requires", "--where", "site=london"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "db-001   (no File[nginx])\n\
         web-001  Package[nginx]      roles/web\n\
         web-003  (does not resolve)\n"
    );
}

#[test]
fn sensitive_content_is_never_printed() {
    let fleet = fixture("query");
    for format in ["text", "json"] {
        for summary in [false, true] {
            let mut args = vec!["query", "File[secret].content", "--format", format];
            if summary {
                args.push("--summary");
            }
            let run = run_in(&fleet, &args);
            assert!(!run.stdout.contains("hunter2"), "{}", run.stdout);
            assert!(!run.stdout.contains("paris-secret"), "{}", run.stdout);
        }
    }
    let run = run_in(&fleet, &["query", "File[secret].content", "--summary"]);
    assert_eq!(
        run.stdout,
        "(sensitive)         4 hosts  base, sites/paris\n(does not resolve)  1 host\n"
    );
}

#[test]
fn json_for_hosts_and_for_the_summary() {
    let fleet = fixture("query");
    let run = run_in(&fleet, &["query", "File[motd].mode", "--format", "json"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!("json_hosts", run.stdout);
    let run = run_in(
        &fleet,
        &["query", "File[motd].mode", "--summary", "--format", "json"],
    );
    insta::assert_snapshot!("json_summary", run.stdout);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["groups"][0]["count"], 3);
    assert_eq!(v["groups"][0]["value"], "0640");
    assert_eq!(v["groups"][2]["state"], "fails");
    assert_eq!(v["groups"][2]["hosts"][0], "web-003");
}

#[test]
fn what_no_layer_declares_names_the_nearest() {
    let run = run_in(&example("fleet"), &["query", "File[nginx-confg].mode"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no layer declares File[nginx-confg]\n  = hint: did you mean File[nginx-config]?\n"
    );
}

#[test]
fn a_field_is_required() {
    let run = run_in(&example("fleet"), &["query", "File[nginx-config]"]);
    assert_eq!(run.code, 64);
    assert_eq!(
        run.stderr,
        "error: `File[nginx-config]` names no field\n  = hint: query asks about one field: File[nginx-config].mode\n"
    );
    let run = run_in(&example("fleet"), &["query", "File[nginx-config].mdoe"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("error: File has no field `mdoe`\n  = hint: did you mean `mode`?"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_where_label_no_host_carries_is_an_error() {
    let run = run_in(
        &example("fleet"),
        &["query", "File[nginx-config].mode", "--where", "site=londno"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no host carries `site=londno`\n  = hint: did you mean `london`? hosts carry `site` with `frankfurt`, `london`\n"
    );
}

#[test]
fn where_takes_every_selector_form() {
    let run = run_in(
        &example("fleet"),
        &[
            "query",
            "File[nginx-config].mode",
            "--where",
            "datum/host=web-*,site!=london",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "web-003  0640  roles/web\n");
    let run = run_in(
        &example("fleet"),
        &[
            "query",
            "File[motd].content",
            "--where",
            "role notin (web,db",
        ],
    );
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .starts_with("error: `role notin (web,db` is not a label selector: `,` or `)` expected at character 19\n"),
        "{}",
        run.stderr
    );
}
