//! Alternatives in matchers (`role: [web, cache]`): a layer matching two
//! roles, why it does not match a third, `datum hosts` selecting the same
//! way, and the latent conflict `check` finds between alternatives that
//! overlap. The fleet is `tests/fixtures/alternation/`.

use std::path::PathBuf;

use crate::common::{fixture, run_in};

fn fleet() -> PathBuf {
    fixture("alternation")
}

#[test]
fn a_layer_listing_two_roles_reaches_both() {
    for (host, role) in [("web-001", "web"), ("cache-001", "cache")] {
        let run = run_in(&fleet(), &["explain", "Package[haproxy]", "--host", host]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stdout,
            format!(
                "Package[haproxy] haproxy\n  contributed by\n    roles/edge  precedence 30  matched environment=production, role={role}\n  fields\n    ensure  installed  roles/edge\n"
            )
        );
    }
    let run = run_in(&fleet(), &["query", "Package[haproxy].ensure"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    cache-001  installed              roles/edge
    db-001     (no Package[haproxy])
    web-001    installed              roles/edge
    web-002    (no Package[haproxy])
    ");
}

#[test]
fn why_not_names_the_alternatives_and_what_the_host_has() {
    let run = run_in(
        &fleet(),
        &["explain", "Package[haproxy]", "--host", "db-001"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    db-001 has no Package[haproxy]
      declared by layers that do not match db-001
        roles/edge needs role in {web, cache}; db-001 has role=db
    ");
    let run = run_in(
        &fleet(),
        &["explain", "Package[haproxy]", "--host", "web-002"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("roles/edge needs environment=production; web-002 has environment=staging\n"),
        "{}",
        run.stdout
    );
    let run = run_in(
        &fleet(),
        &[
            "explain",
            "Package[haproxy]",
            "--host",
            "db-001",
            "--format",
            "json",
        ],
    );
    assert!(
        run.stdout.contains("\"wanted\": [\n"),
        "alternatives are a list in JSON:\n{}",
        run.stdout
    );
}

#[test]
fn hosts_takes_alternatives_in_a_set() {
    let run = run_in(&fleet(), &["hosts", "role in (web,cache)"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout, @r"
    cache-001  environment=production  role=cache  site=frankfurt
    web-001    environment=production  role=web    site=london
    web-002    environment=staging     role=web    site=frankfurt
    ");
    let run = run_in(
        &fleet(),
        &["hosts", "role in (web,cache)", "environment=production"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout
            .lines()
            .map(|l| l.split(' ').next().unwrap())
            .collect::<Vec<_>>(),
        ["cache-001", "web-001"]
    );
    let run = run_in(&fleet(), &["hosts", "role in (web,cahce)"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("no host carries `role=cahce`")
            && run.stderr.contains("did you mean `cache`?"),
        "{}",
        run.stderr
    );
    let run = run_in(&fleet(), &["hosts", "role=web,"]);
    assert_eq!(run.code, 64, "{}", run.stderr);
}

#[test]
fn overlapping_alternatives_are_a_latent_conflict() {
    let run = run_in(&fleet(), &["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stderr);
}
