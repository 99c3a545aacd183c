use super::*;
use crate::loader::load;
use crate::reader::MemReader;
use crate::testkit::{FLEET, host};

/// Twelve hosts: two canaries (web-001, db-001), web-001..web-006 and
/// db-001..db-006, in london (odd) and paris (even).
fn hosts() -> String {
    let mut out = String::new();
    for role in ["web", "db"] {
        for i in 1..=6 {
            let site = if i % 2 == 1 { "london" } else { "paris" };
            let canary = if i == 1 { ", canary: 'yes'" } else { "" };
            out += &host(
                &format!("{role}-{i:03}"),
                &format!("{{role: {role}, site: {site}{canary}}}"),
            );
        }
    }
    out
}

fn fleet_with(rollout: &str) -> Fleet {
    let r = MemReader::new()
        .file("datum.yaml", format!("{FLEET}rollout:\n{rollout}"))
        .file("hosts.yaml", hosts());
    load(&r).unwrap()
}

fn names(fleet: &Fleet, w: &Wave) -> Vec<String> {
    w.hosts
        .iter()
        .map(|&h| fleet.host(h).name.to_string())
        .collect()
}

fn codes(plan: &Plan) -> Vec<Code> {
    plan.problems.iter().map(|d| d.code).collect()
}

const THREE: &str = concat!(
    "  - name: canary\n    hosts: canary=yes\n",
    "  - name: london\n    hosts: site=london\n    after: 30m\n",
    "  - name: rest\n    after: 2h\n",
);

#[test]
fn three_waves_take_their_hosts_in_order_and_start_after_each_other() {
    let fleet = fleet_with(THREE);
    assert!(fleet.diagnostics.is_empty(), "{:?}", fleet.diagnostics);
    let plan = plan(&fleet);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let got: Vec<(&str, u64, Vec<String>)> = plan
        .waves
        .iter()
        .map(|w| (w.name.as_str(), w.start, names(&fleet, w)))
        .collect();
    assert_eq!(
        got,
        [
            ("canary", 0, vec!["db-001".into(), "web-001".into()]),
            (
                "london",
                1800,
                vec![
                    "db-003".into(),
                    "db-005".into(),
                    "web-003".into(),
                    "web-005".into()
                ]
            ),
            (
                "rest",
                1800 + 7200,
                [
                    "db-002", "db-004", "db-006", "web-002", "web-004", "web-006"
                ]
                .map(String::from)
                .to_vec()
            ),
        ]
    );
    // Every host is in exactly one wave.
    let total: usize = plan.waves.iter().map(|w| w.hosts.len()).sum();
    assert_eq!(total, fleet.hosts.len());
    assert_eq!(plan.wave_of(fleet.host_id("web-001").unwrap()), Some(0));
}

#[test]
fn hosts_no_wave_takes_join_the_last_wave() {
    let fleet =
        fleet_with("  - name: canary\n    hosts: canary=yes\n  - name: web\n    hosts: role=web\n");
    let plan = plan(&fleet);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let last = &plan.waves[1];
    assert_eq!(last.hosts.len(), 10);
    assert_eq!(last.leftover, 5, "db-002..db-006 joined the last wave");
}

#[test]
fn a_percent_wave_takes_a_share_rounded_up_by_the_hash_of_the_name() {
    let fleet = fleet_with("  - name: early\n    percent: 25\n  - name: rest\n    after: 1h\n");
    let plan = plan(&fleet);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    assert_eq!(plan.waves[0].hosts.len(), 3, "25% of 12");
    let mut by_hash: Vec<&str> = fleet.hosts.iter().map(|h| &*h.name).collect();
    by_hash.sort_by_key(|n| rank(n));
    let mut want: Vec<String> = by_hash[..3].iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names(&fleet, &plan.waves[0]), want);
    // A small share of a few hosts is still one host, never none.
    let fleet =
        fleet_with("  - name: one\n    hosts: role=web\n    percent: 0.5\n  - name: rest\n");
    let plan = super::plan(&fleet);
    assert_eq!(plan.waves[0].hosts.len(), 1);
    assert_eq!(plan.waves[1].hosts.len(), 11);
}

#[test]
fn a_percent_wave_keeps_its_hosts_when_the_plan_is_computed_again() {
    let decl = "  - name: early\n    percent: 50\n  - name: rest\n";
    let a = plan(&fleet_with(decl));
    let b = plan(&fleet_with(decl));
    assert_eq!(a.waves, b.waves);
}

#[test]
fn the_first_wave_that_takes_a_host_keeps_it() {
    let fleet = fleet_with(
        "  - name: one\n    hosts: datum/host=web-001\n  - name: web\n    hosts: role=web\n  - name: rest\n",
    );
    let plan = plan(&fleet);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    assert_eq!(names(&fleet, &plan.waves[0]), ["web-001"]);
    assert_eq!(plan.waves[1].hosts.len(), 5);
}

#[test]
fn a_wave_whose_hosts_all_went_earlier_is_empty() {
    let fleet = fleet_with(
        "  - name: web\n    hosts: role=web\n  - name: london-web\n    hosts: role=web site=london\n  - name: rest\n",
    );
    let plan = plan(&fleet);
    assert_eq!(codes(&plan), [Code::EmptyWave]);
    let d = &plan.problems[0];
    assert!(d.notes[0].contains("in an earlier wave"), "{:?}", d.notes);
    assert!(d.notes[0].contains("(web)"), "{:?}", d.notes);
}

#[test]
fn a_wave_selecting_a_label_no_host_carries_is_empty_with_a_suggestion() {
    let fleet = fleet_with("  - name: c\n    hosts: role=wbe\n  - name: rest\n");
    let plan = plan(&fleet);
    assert_eq!(codes(&plan), [Code::EmptyWave]);
    assert_eq!(
        plan.problems[0]
            .hint
            .as_deref()
            .map(|h| h.contains("`web`")),
        Some(true)
    );
}

#[test]
fn a_wave_after_one_taking_every_remaining_host_is_unreachable() {
    let fleet = fleet_with("  - name: all\n  - name: late\n    hosts: role=web\n");
    let plan = plan(&fleet);
    assert_eq!(codes(&plan), [Code::UnreachableWave]);
    let fleet = fleet_with("  - name: all\n    percent: 100\n  - name: late\n");
    assert_eq!(codes(&super::plan(&fleet)), [Code::UnreachableWave]);
}

#[test]
fn a_host_named_by_two_waves_is_an_error() {
    let fleet = fleet_with(
        "  - name: a\n    hosts: datum/host=web-001\n  - name: b\n    hosts: datum/host=web-002,web-001\n  - name: rest\n",
    );
    let plan = plan(&fleet);
    assert_eq!(codes(&plan), [Code::HostInTwoWaves]);
}

#[test]
fn a_malformed_selector_is_an_error_at_its_place() {
    let fleet = fleet_with("  - name: a\n    hosts: role\n  - name: rest\n");
    let plan = plan(&fleet);
    assert_eq!(codes(&plan), [Code::InvalidSelector]);
    let span = plan.problems[0].primary.as_ref().unwrap().span;
    assert_eq!(fleet.files.location(span), "datum.yaml:6:12");
}

#[test]
fn no_declaration_is_one_wave_of_every_host() {
    let r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file("hosts.yaml", hosts());
    let fleet = load(&r).unwrap();
    let plan = plan(&fleet);
    assert!(!plan.declared);
    assert_eq!(plan.waves.len(), 1);
    assert_eq!(plan.waves[0].hosts.len(), 12);
}

#[test]
fn mistakes_in_the_declaration_are_load_errors_at_their_place() {
    let cases = [
        (
            "  - name: a\n    after: 10 minutes ago\n",
            Code::InvalidDuration,
        ),
        ("  - name: a\n    after: 90\n", Code::InvalidDuration),
        ("  - name: a\n    after: -5m\n", Code::InvalidDuration),
        ("  - name: a\n    after: 31d\n", Code::InvalidDuration),
        ("  - name: a\n    after: 1.5s\n", Code::InvalidDuration),
        ("  - name: a\n    percent: 0\n", Code::OutOfRange),
        ("  - name: a\n    percent: 101\n", Code::OutOfRange),
        ("  - name: a\n    percent: lots\n", Code::WrongType),
        ("  - name: a\n  - name: a\n", Code::DuplicateWave),
        ("  - name: a\n    host: role=web\n", Code::UnknownKey),
        ("  - hosts: role=web\n", Code::MissingKey),
        ("  - name: 'two words'\n", Code::InvalidValue),
        ("  []\n", Code::EmptyValue),
    ];
    for (decl, code) in cases {
        let decl = if decl == "  []\n" { " []\n" } else { decl };
        let fleet = fleet_with(decl);
        let got: Vec<Code> = fleet.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(got, [code], "{decl}");
    }
}

#[test]
fn durations_read_as_jiff_reads_them() {
    let fleet = fleet_with(
        "  - name: a\n    after: 1h 30m\n  - name: b\n    after: PT2H\n  - name: c\n    after: 0\n",
    );
    assert!(fleet.diagnostics.is_empty(), "{:?}", fleet.diagnostics);
    let starts: Vec<u64> = plan(&fleet).waves.iter().map(|w| w.start).collect();
    assert_eq!(starts, [5400, 5400 + 7200, 5400 + 7200]);
    assert_eq!(duration_text(5400), "1h 30m");
    assert_eq!(percent_text(50), "0.5");
    assert_eq!(percent_text(1225), "12.25");
}
