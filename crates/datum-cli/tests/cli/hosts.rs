use crate::common::{example, fixture, run_in};

#[test]
fn every_host_with_its_labels() {
    let run = run_in(&example("fleet"), &["hosts"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn every_pair_of_the_selector_must_hold() {
    let run = run_in(&example("fleet"), &["hosts", "site=london", "role=web"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "web-001  environment=production  role=web  site=london\n\
         web-002  environment=production  role=web  site=london\n"
    );
    let run = run_in(&example("fleet"), &["hosts", "role=db", "site=frankfurt"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
}

#[test]
fn the_host_label_selects_one_host() {
    let run = run_in(&example("fleet"), &["hosts", "datum/host=db-001"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "db-001  environment=production  role=db  site=london\n"
    );
}

#[test]
fn json_lists_every_label_and_the_selector() {
    let run = run_in(
        &example("fleet"),
        &["hosts", "role=web", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["count"], 3);
    assert_eq!(v["hosts"][2]["labels"]["datum/host"], "web-003");
}

#[test]
fn a_label_no_host_carries_names_the_nearest() {
    let run = run_in(&example("fleet"), &["hosts", "role=wbe"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: no host carries `role=wbe`\n  = hint: did you mean `web`? hosts carry `role` with `cache`, `db`, `web`\n"
    );
    let run = run_in(&example("fleet"), &["hosts", "rloe=web"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no host carries label key `rloe`\n  = hint: did you mean `role`? hosts carry `datum/host`, `environment`, `role`, `site`\n"
    );
}

#[test]
fn a_malformed_selector_is_bad_usage() {
    let run = run_in(&example("fleet"), &["hosts", "role"]);
    assert_eq!(run.code, 64);
    assert_eq!(
        run.stderr,
        "error: `role` is not a label selector\n  = hint: write KEY=VALUE, such as role=web, role=web,cache (either value) or datum/host=web-001\n"
    );
}

#[test]
fn hosts_of_broken_documents_are_left_out_with_a_warning() {
    let run = run_in(&fixture("bad/duplicate-host"), &["hosts"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: 1 error in the fleet: hosts and layers whose documents failed to load are left out; run `datum check` to see them\n"
    );
}
