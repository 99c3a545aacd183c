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
    // Nothing selected: status 1, as grep and rg, with a note.
    let run = run_in(&example("fleet"), &["hosts", "role=db", "site=frankfurt"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert_eq!(
        run.stderr,
        "note: no host matches `role=db,site=frankfurt`\n"
    );
}

#[test]
fn every_selector_form() {
    let names = |args: &[&str]| {
        let mut all = vec!["hosts", "--names"];
        all.extend(args);
        let run = run_in(&example("fleet"), &all);
        if run.code == 0 {
            assert_eq!(run.stderr, "", "{args:?}");
        } else {
            assert!(run.stderr.starts_with("note: no host matches"), "{args:?}");
        }
        (run.code, run.stdout)
    };
    let ok = |s: &str| (0, s.to_owned());
    assert_eq!(names(&["role!=web"]), ok("cache-001\ndb-001\n"));
    assert_eq!(names(&["role in (db, cache)"]), ok("cache-001\ndb-001\n"));
    assert_eq!(names(&["role notin (web,db)"]), ok("cache-001\n"));
    assert_eq!(
        names(&["datum/host=web-*"]),
        ok("web-001\nweb-002\nweb-003\n")
    );
    assert_eq!(names(&["datum/host=web-*,site!=london"]), ok("web-003\n"));
    assert_eq!(
        names(&["datum/host=web-00?", "site==london"]),
        ok("web-001\nweb-002\n")
    );
    assert_eq!(names(&["role", "!role"]).0, 1);
    assert_eq!(names(&["!environment"]).0, 1);
    assert_eq!(names(&["environment"]).1.lines().count(), 5);
    // A typo in a negation would select every host: it is an error too.
    let run = run_in(&example("fleet"), &["hosts", "role!=wbe"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("did you mean `web`?"), "{}", run.stderr);
    // A comma is AND: the old `role=web,cache` (either value) now reads
    // `cache` as a key, which no host carries, and says how to write it.
    let run = run_in(&example("fleet"), &["hosts", "role=web,cache"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("error: no host carries label key `cache`\n")
            && run
                .stderr
                .contains("for either of two values write role in (web,cache)"),
        "{}",
        run.stderr
    );
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
    let run = run_in(&example("fleet"), &["hosts", "role in (web"]);
    assert_eq!(run.code, 64);
    assert_eq!(
        run.stderr,
        "error: `role in (web` is not a label selector: `,` or `)` expected at character 13\n  = hint: close the set: role in (a,b)\n"
    );
    let run = run_in(&example("fleet"), &["hosts", "role web"]);
    assert_eq!(run.code, 64);
    assert_eq!(
        run.stderr,
        "error: `role web` is not a label selector: `=`, `!=`, `in`, `notin` or `,` expected, found `w` at character 6\n  = hint: write role=web, role!=web, role in (web,cache), role notin (db), role (has the key) or !role, a comma between requirements; values may be globs (datum/host=web-*)\n"
    );
}

#[test]
fn hosts_of_broken_documents_are_left_out_with_a_warning() {
    let run = run_in(&fixture("bad/duplicate-host"), &["hosts"]);
    // Every host is left out here: nothing listed is status 1.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: 1 error in the fleet: hosts and layers whose documents failed to load are left out; run `datum check` to see them\nnote: the fleet has no hosts\n"
    );
}
