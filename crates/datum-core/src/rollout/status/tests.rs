use super::*;
use crate::loader::load;
use crate::reader::MemReader;
use crate::rollout::plan;
use crate::testkit::{FLEET, host};

const NEW: &str = "bbbb";
const OLD: &str = "aaaa";
/// 12:00, in milliseconds.
const NOON: u64 = 1_765_022_400_000;

/// web-001 (wave `canary`), web-002 and web-003 (wave `rest`).
fn fleet() -> Fleet {
    let r = MemReader::new()
        .file(
            "datum.yaml",
            format!(
                "{FLEET}rollout:\n  - name: canary\n    hosts: datum/host=web-001\n  - name: rest\n    after: 1h\n"
            ),
        )
        .file(
            "hosts.yaml",
            ["web-001", "web-002", "web-003"]
                .iter()
                .map(|h| host(h, "{role: web}"))
                .collect::<String>(),
        );
    load(&r).unwrap()
}

/// A report of `host`, `minutes` before noon, on `commit`.
fn at(host: &str, minutes: u64, commit: &str, exit_status: i32) -> Reported {
    Reported {
        host: host.into(),
        run_id: format!("run-{:04}", 1000 - minutes),
        finished: NOON - minutes * 60_000,
        finished_text: format!("{minutes} minutes before noon"),
        commit: Some(commit.into()),
        exit_status,
        failed: 0,
        pending: None,
        rolled_back: None,
        refused: None,
    }
}

fn states(reports: Vec<Reported>, replay: bool) -> Vec<(String, State)> {
    let fleet = fleet();
    let mut c = Collector::new(NEW, NOON, replay);
    for r in reports {
        c.add(r);
    }
    let status = c.status(&fleet, &plan(&fleet), 3600);
    status
        .waves
        .iter()
        .flat_map(|w| w.hosts.iter())
        .map(|h| (fleet.host(h.host).name.to_string(), h.state.clone()))
        .collect()
}

#[test]
fn the_order_reports_arrive_in_does_not_matter() {
    let mut reports = vec![
        at("web-001", 30, NEW, 6),
        at("web-001", 10, OLD, 0),
        at("web-002", 20, OLD, 0),
        at("web-002", 5, NEW, 2),
        at("web-003", 50, NEW, 0),
        at("web-003", 40, OLD, 0),
    ];
    let forward = states(reports.clone(), true);
    reports.reverse();
    assert_eq!(states(reports, true), forward);
    assert_eq!(
        forward,
        [
            (
                "web-001".into(),
                State::Failed {
                    exit_status: 6,
                    failed: 0
                }
            ),
            ("web-002".into(), State::Updated),
            // Applied the revision, then moved to another: behind.
            (
                "web-003".into(),
                State::Behind {
                    commit: Some(OLD.into())
                }
            ),
        ]
    );
}

#[test]
fn a_later_success_of_the_revision_clears_its_failure() {
    let got = states(
        vec![at("web-001", 30, NEW, 4), at("web-001", 10, NEW, 0)],
        true,
    );
    assert_eq!(got[0].1, State::Updated);
}

#[test]
fn reports_of_one_time_are_ordered_by_run_id() {
    let mut first = at("web-001", 10, NEW, 4);
    let mut second = at("web-001", 10, NEW, 0);
    first.run_id = "run-a".into();
    second.run_id = "run-b".into();
    assert_eq!(
        states(vec![second.clone(), first.clone()], true)[0].1,
        State::Updated
    );
    std::mem::swap(&mut first.run_id, &mut second.run_id);
    assert!(matches!(
        states(vec![second, first], true)[0].1,
        State::Failed { .. }
    ));
}

#[test]
fn a_rollback_names_the_revision_and_outlasts_later_refusals() {
    let mut back = at("web-001", 30, OLD, 1);
    back.rolled_back = Some((Some(NEW.into()), vec!["Health[site]".into()]));
    let got = states(vec![back, at("web-001", 10, OLD, 1)], true);
    assert_eq!(
        got[0].1,
        State::RolledBack {
            checks: vec!["Health[site]".into()]
        }
    );
    // A rollback of another revision says nothing of this one.
    let mut other = at("web-001", 10, OLD, 0);
    other.rolled_back = Some((Some("cccc".into()), vec![]));
    assert_eq!(
        states(vec![other], true)[0].1,
        State::Behind {
            commit: Some(OLD.into())
        }
    );
}

#[test]
fn silence_is_the_bound_and_pending_only_counts_in_the_newest_report() {
    let mut waiting = at("web-001", 70, OLD, 0);
    waiting.pending = Some((Some(NEW.into()), 1));
    // 70 minutes old with a bound of an hour: silent.
    assert_eq!(states(vec![waiting.clone()], true)[0].1, State::Silent);
    waiting.finished = NOON - 59 * 60_000;
    assert_eq!(
        states(vec![waiting.clone()], true)[0].1,
        State::Pending { due: 1 }
    );
    // A newer report without it: the host moved on.
    let got = states(vec![waiting, at("web-001", 1, "cccc", 0)], true);
    assert_eq!(
        got[0].1,
        State::Behind {
            commit: Some("cccc".into())
        }
    );
}

#[test]
fn the_gate_counts_against_every_host_of_a_wave_and_never_trips_an_empty_one() {
    let fleet = fleet();
    let mut c = Collector::new(NEW, NOON, true);
    c.add(at("web-002", 10, NEW, 4));
    let mut status = c.status(&fleet, &plan(&fleet), 3600);
    // rest: 1 of 2 failed (50%).
    let names = |g: &Gate<'_>| g.tripped.iter().map(|w| w.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&status.gate(4999, None, None)), ["rest"]);
    assert!(names(&status.gate(5000, None, None)).is_empty());
    // canary: its one host silent, 100%.
    assert_eq!(
        names(&status.gate(10_000, Some(9999), Some("canary"))),
        ["canary"]
    );
    status.waves[0].hosts.clear();
    assert!(names(&status.gate(0, Some(0), Some("canary"))).is_empty());
}

/// A host that refused the revision (its label tied to a fact disagreed,
/// the bundle was sealed to another key...) failed it, and the revision it
/// still runs, re-applied that run, is not blamed for the exit status.
#[test]
fn a_refused_revision_is_failed_and_the_one_still_run_is_not() {
    let refusing = |host: &str, minutes: u64| Reported {
        refused: Some((Some(NEW.into()), "labels".into())),
        ..at(host, minutes, OLD, 1)
    };
    let s = states(
        vec![refusing("web-001", 10), at("web-002", 5, OLD, 0)],
        true,
    );
    assert_eq!(
        s[0],
        (
            "web-001".into(),
            State::Failed {
                exit_status: 1,
                failed: 0
            }
        )
    );
    assert_eq!(
        s[1],
        (
            "web-002".into(),
            State::Behind {
                commit: Some(OLD.into())
            }
        )
    );
    // The same reports, as the status of the revision the host still runs:
    // web-001 applied it, and refused only the other one.
    let fleet = fleet();
    let mut c = Collector::new(OLD, NOON, true);
    c.add(refusing("web-001", 10));
    let status = c.status(&fleet, &plan(&fleet), 3600);
    assert_eq!(status.waves[0].hosts[0].state, State::Updated);
    // A refusal that names no commit (a damaged file) blames no revision:
    // the one the host ran, it ran fine; the same run without a refusal
    // (a stale input, exit 1) is a failure of it.
    let mut c = Collector::new(OLD, NOON, true);
    c.add(Reported {
        refused: Some((None, "damaged".into())),
        ..at("web-001", 10, OLD, 1)
    });
    let status = c.status(&fleet, &plan(&fleet), 3600);
    assert_eq!(status.waves[0].hosts[0].state, State::Updated);
    let mut c = Collector::new(OLD, NOON, true);
    c.add(at("web-001", 10, OLD, 1));
    let status = c.status(&fleet, &plan(&fleet), 3600);
    assert!(matches!(
        status.waves[0].hosts[0].state,
        State::Failed { .. }
    ));
}
