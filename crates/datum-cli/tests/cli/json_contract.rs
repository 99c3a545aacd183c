//! One JSON contract (docs/json.md): every `--format json` output, of every
//! command, on good fleets, broken fleets and bad command lines, is one
//! object with `datum` and `type`, and validates against the JSON Schema
//! the page gives for that type. The schemas are read from the page, so the
//! page and the program cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Run, copy_tree, datum, example, fixture, repo_root, run_in};
use crate::diff::Git;

/// The page's schemas: the shared `$defs`, and one schema per `type`.
struct Contract {
    defs: serde_json::Map<String, Value>,
    shapes: BTreeMap<String, Value>,
}

impl Contract {
    fn read() -> Contract {
        let page = std::fs::read_to_string(repo_root().join("docs/json.md")).unwrap();
        let mut blocks = Vec::new();
        let mut lines = page.lines();
        while let Some(line) = lines.next() {
            if line == "```json" {
                let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
                blocks.push(body.join("\n"));
            }
        }
        let mut defs = None;
        let mut shapes = BTreeMap::new();
        for block in blocks {
            let v: Value = serde_json::from_str(&block)
                .unwrap_or_else(|e| panic!("a ```json block of docs/json.md: {e}\n{block}"));
            match v["properties"]["type"]["const"].as_str().map(str::to_owned) {
                Some(kind) => {
                    let old = shapes.insert(kind.clone(), v);
                    assert!(old.is_none(), "two schemas for `{kind}`");
                }
                // The shared definitions, or an example output.
                None if v.get("$defs").is_some() && v.get("datum").is_none() => {
                    assert!(defs.is_none(), "one block of shared definitions");
                    defs = v["$defs"].as_object().cloned();
                }
                None => {}
            }
        }
        Contract {
            defs: defs.expect("docs/json.md has its shared $defs"),
            shapes,
        }
    }

    /// The schema for `kind`, with the shared definitions merged into its
    /// own so every `#/$defs/NAME` resolves.
    fn schema(&self, kind: &str) -> Value {
        let mut schema = self
            .shapes
            .get(kind)
            .unwrap_or_else(|| panic!("docs/json.md has no schema for `{kind}`"))
            .clone();
        let mut defs = self.defs.clone();
        if let Some(own) = schema["$defs"].as_object() {
            defs.extend(own.clone());
        }
        schema["$defs"] = Value::Object(defs);
        schema
    }

    /// What is wrong with `doc` as its `type`'s shape; empty when nothing.
    fn problems(&self, doc: &Value) -> Vec<String> {
        let kind = doc["type"]
            .as_str()
            .unwrap_or_else(|| panic!("no `type`: {doc}"));
        let schema = self.schema(kind);
        let validator = jsonschema::draft202012::new(&schema)
            .unwrap_or_else(|e| panic!("the schema of `{kind}` compiles: {e}"));
        validator
            .iter_errors(doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }
}

/// Keys Datum defines are snake_case; maps keyed by what the fleet wrote
/// (labels, a manifest's resources, a selector, a layer's matcher) are not
/// Datum's keys.
fn bad_keys(v: &Value, at: &str, found: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let snake = k
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !snake {
                    found.push(format!("{at}/{k}"));
                }
                if matches!(
                    k.as_str(),
                    "labels" | "resources" | "selector" | "matcher" | "matched"
                ) && x.is_object()
                {
                    continue;
                }
                bad_keys(x, &format!("{at}/{k}"), found);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                bad_keys(x, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

/// Checks one run's stdout against the contract; gives its `type`.
fn conforms(contract: &Contract, what: &str, run: &Run) -> String {
    assert_ne!(run.code, 101, "{what} panicked:\n{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: stdout is not one JSON value ({e}):\n{}",
            run.stdout
        )
    });
    assert_eq!(doc["datum"], "v1alpha1", "{what}: {doc}");
    let problems = contract.problems(&doc);
    assert!(
        problems.is_empty(),
        "{what}:\n{}\n{doc:#}",
        problems.join("\n")
    );
    let mut keys = Vec::new();
    bad_keys(&doc, "", &mut keys);
    assert!(keys.is_empty(), "{what}: keys not in snake_case: {keys:?}");
    doc["type"].as_str().unwrap().to_owned()
}

/// For other tests' runs with `--format json`: the output follows the
/// contract. Gives its `type`.
pub(crate) fn assert_conforms(what: &str, run: &Run) -> String {
    conforms(&Contract::read(), what, run)
}

#[test]
fn every_json_output_follows_the_schema_of_its_type() {
    let contract = Contract::read();
    let mut seen = BTreeSet::new();
    let mut check = |dir: &Path, args: &[&str]| {
        let mut args = args.to_vec();
        args.extend(["--format", "json"]);
        let run = run_in(dir, &args);
        let what = format!("datum {} (in {})", args.join(" "), dir.display());
        seen.insert(conforms(&contract, &what, &run));
        run
    };
    let fleet = example("fleet");
    let conflict = example("conflict");
    let layers = fixture("explain/layers");
    let query = fixture("query");

    assert_eq!(check(&fleet, &["render", "web-001"]).code, 0);
    assert_eq!(check(&fleet, &["render", "web-004"]).code, 1);
    assert_eq!(check(&conflict, &["render", "web-001"]).code, 1);

    for args in [
        &["explain", "--host", "web-001"][..],
        &["explain", "File[nginx-config]", "--host", "web-001"],
        &["explain", "File[nginx-config].mode", "--host", "web-001"],
        &[
            "explain",
            "File[nginx-config].requires",
            "--host",
            "web-001",
        ],
        &["explain", "File[nosuch]", "--host", "web-001"],
        &["explain", "File[motd].mode", "--host", "db-002"],
    ] {
        check(&fleet, args);
    }
    check(
        &layers,
        &["explain", "Service[app-metrics]", "--host", "web-001"],
    );
    check(
        &conflict,
        &["explain", "File[nginx-config].mode", "--host", "web-001"],
    );
    check(&conflict, &["explain", "--host", "web-001"]);

    check(&fleet, &["check"]);
    assert_eq!(check(&conflict, &["check"]).code, 1);
    check(&fixture("check/warnings"), &["check"]);
    check(&fixture("names"), &["check"]);
    for bad in std::fs::read_dir(fixture("bad")).unwrap() {
        check(&bad.unwrap().path(), &["check"]);
    }

    let templates = example("templates");
    for args in [
        &["render", "web-001"][..],
        &["explain", "--host", "web-001"],
        &["explain", "File[resolv].content", "--host", "web-001"],
        &["explain", "File[resolv]", "--host", "web-001"],
        &["explain", "vars.search_domain", "--host", "web-001"],
        &["explain", "vars.nosuch", "--host", "web-001"],
        &["query", "vars.search_domain"],
        &["query", "vars.search_domain", "--summary"],
        &["query", "File[resolv].content"],
    ] {
        check(&templates, args);
    }

    check(&fleet, &["facts"]);
    check(&fleet, &["facts", "--root", &query.display().to_string()]);
    check(&fleet, &["hosts"]);
    check(&fleet, &["layers"]);
    check(&fleet, &["layers", "--host", "web-001"]);
    assert_eq!(
        check(
            &fleet,
            &["hosts", "role in (web,db)", "environment=production"]
        )
        .code,
        0
    );
    assert_eq!(
        check(&fleet, &["hosts", "role!=web,datum/host=*-001"]).code,
        0
    );
    assert_eq!(check(&fleet, &["hosts", "colour=blue"]).code, 1);

    let waves = example("rollout");
    check(&waves, &["rollout", "plan"]);
    check(&waves, &["rollout", "plan", "--hosts"]);
    check(&fleet, &["rollout", "plan"]);
    assert_eq!(
        check(&fixture("rollout/broken"), &["rollout", "plan"]).code,
        1
    );

    check(&fleet, &["query", "File[motd].mode"]);
    check(&fleet, &["query", "File[motd].mode", "--summary"]);
    check(&query, &["query", "File[app-secret].content"]);
    check(&query, &["query", "File[app-secret].content", "--summary"]);
    check(&conflict, &["query", "File[nginx-config].mode"]);

    let machine = tempfile::tempdir().unwrap();
    let root = machine.path().to_str().unwrap();
    for args in [
        &["apply", "--host", "web-001", "--root", root, "--noop"][..],
        &["apply", "--host", "web-001", "--root", root],
        &["apply", "--host", "web-001", "--root", root, "--report"],
    ] {
        check(&fleet, args);
    }
    // The run report --report leaves, as the agent's: a RunReport.
    let last = machine.path().join("var/lib/datum/reports/last.json");
    let report = Run {
        code: 0,
        stdout: std::fs::read_to_string(&last).unwrap(),
        stderr: String::new(),
    };

    assert_eq!(
        check(&fleet, &["apply", "--host", "web-004", "--root", root]).code,
        1
    );

    // A command line clap refuses still answers in JSON, with status 64.
    assert_eq!(check(&fleet, &["query", "--no-such-flag"]).code, 64);

    seen.insert(conforms(&contract, "last.json", &report));

    // The status of a rollout, from a directory of run reports.
    let rollout = crate::rollout_status::Rollout::new();
    rollout.one_failed_wave();
    let run = rollout.rollout("status", &["--format", "json"]);
    seen.insert(conforms(&contract, "datum rollout status", &run));
    let run = rollout.rollout("gate", &["--max-failed", "20%", "--format", "json"]);
    assert_eq!(run.code, 1);
    seen.insert(conforms(&contract, "datum rollout gate", &run));

    let g = Git::with_example("fleet", "");
    copy_tree(&example("changes/web-tls-conflict"), &g.fleet);
    g.commit("a change that breaks two hosts");
    let mut run_diff = |args: &[&str]| {
        let run = g.datum(args);
        seen.insert(conforms(&contract, &format!("datum {args:?}"), &run));
        run
    };
    assert_eq!(
        run_diff(&["diff", "HEAD~1", "HEAD", "--format", "json"]).code,
        1
    );
    run_diff(&["diff", "HEAD", "HEAD~1", "--format", "json"]);
    assert_eq!(
        run_diff(&["diff", "HEAD~1", "nosuch", "--format", "json"]).code,
        64
    );

    // Every shape the page documents was met, and no other.
    let documented: BTreeSet<String> = contract.shapes.keys().cloned().collect();
    assert_eq!(seen, documented);
}

#[test]
fn a_failure_prints_one_error_object_and_keeps_its_status() {
    let contract = Contract::read();
    let run = run_in(
        &example("conflict"),
        &["render", "web-001", "--format", "json"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(conforms(&contract, "render of a conflict", &run), "Error");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["exit_status"], 1);
    assert_eq!(v["diagnostics"][0]["code"], "conflict");
    assert_eq!(v["diagnostics"][0]["hosts"], json!(["web-001"]));
    // Stderr says the same in words, as without --format json.
    let text = run_in(&example("conflict"), &["render", "web-001"]);
    assert_eq!(run.stderr, text.stderr);
    assert_eq!(text.stdout, "");

    let usage = datum()
        .args(["hosts", "--format", "json", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(64));
    let v: Value = serde_json::from_slice(&usage.stdout).unwrap();
    assert_eq!(v["type"], "Error");
    assert_eq!(v["exit_status"], 64);
    assert_eq!(v["error"]["message"], "unexpected argument '--bogus' found");
    // Without --format json, stdout stays empty.
    let plain = datum().args(["hosts", "--bogus"]).output().unwrap();
    assert_eq!(plain.status.code(), Some(64));
    assert!(plain.stdout.is_empty());
}

#[test]
fn the_schemas_refuse_what_the_contract_rules_out() {
    let contract = Contract::read();
    let run = run_in(&example("conflict"), &["check", "--format", "json"]);
    let good: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(contract.problems(&good).is_empty());
    let spoilt = |f: &dyn Fn(&mut Value)| {
        let mut doc = good.clone();
        f(&mut doc);
        assert!(!contract.problems(&doc).is_empty(), "accepted: {doc:#}");
    };
    // A place written as text, a summary that is a sentence, a key spelt
    // otherwise, a key the page does not list, hosts as prose.
    spoilt(&|d| d["diagnostics"][0]["primary"]["location"] = json!("roles/web/layer.yaml:15:11"));
    spoilt(&|d| d["summary"] = json!("checked 2 hosts"));
    spoilt(&|d| d["held-back"] = json!([]));
    spoilt(&|d| d["diagnostics"][0]["severity"] = json!("fatal"));
    spoilt(&|d| d["diagnostics"][0]["hosts"] = json!("web-001 and web-002"));
    spoilt(&|d| d["datum"] = json!("v2"));
}
