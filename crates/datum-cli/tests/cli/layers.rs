//! `datum layers`: the map of a fleet.

use crate::common::{example, fixture, run_in};

#[test]
fn every_layer_in_fold_order_on_the_example_fleet() {
    let run = run_in(&example("fleet"), &["layers"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn one_host_narrows_to_its_layers_and_says_why() {
    let run = run_in(&example("fleet"), &["layers", "--host", "web-003"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
    let run = run_in(&example("fleet"), &["layers", "--host", "web-01"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("the nearest host name is `web-001`"),
        "{}",
        run.stderr
    );
}

#[test]
fn alternatives_read_as_a_set() {
    let run = run_in(&fixture("alternation"), &["layers", "--host", "web-002"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("role in (web,db),site=frankfurt  role=web,site=frankfurt"),
        "{}",
        run.stdout
    );
}

#[test]
fn json_gives_each_layer_with_its_matcher_and_reach() {
    let run = run_in(
        &example("fleet"),
        &["layers", "--host", "web-001", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    crate::json_contract::assert_conforms("layers --host --format json", &run);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["host"], "web-001");
    let layers = v["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 5);
    assert_eq!(layers[3]["layer"], "roles/web");
    assert_eq!(layers[3]["precedence"], 30);
    assert_eq!(layers[3]["matcher"], serde_json::json!({"role": ["web"]}));
    assert_eq!(layers[3]["matched"], serde_json::json!({"role": "web"}));
    assert_eq!(layers[3]["hosts"], 3);
    let all = run_in(&example("fleet"), &["layers", "--format", "json"]);
    crate::json_contract::assert_conforms("layers --format json", &all);
    let v: serde_json::Value = serde_json::from_str(&all.stdout).unwrap();
    assert_eq!(v["host"], serde_json::Value::Null);
    assert_eq!(v["layers"].as_array().unwrap().len(), 9);
    assert!(v["layers"][0].get("matched").is_none());
}
