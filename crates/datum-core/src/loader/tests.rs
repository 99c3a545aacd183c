//! Loading small in-memory fleets: the fleet-wide checks and what broken documents hold back.

use super::*;
use crate::reader::MemReader;

const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: test\n";

fn host(name: &str, labels: &str) -> String {
    format!("datum: v1alpha1\ntype: Host\nname: {name}\nlabels: {labels}\n---\n")
}

use crate::testkit::layer;

#[test]
fn loads_hosts_and_layers_in_fold_order() {
    let r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file(
            "hosts.yaml",
            host("web-001", "{role: web}") + &host("db-001", "{role: db}"),
        )
        .file("roles/web-tls/layer.yaml", layer(30, "{role: web}", ""))
        .file("roles/web/layer.yaml", layer(30, "{role: web}", ""))
        .file(
            "base/layer.yaml",
            "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {}\n",
        );
    let fleet = load(&r).unwrap();
    assert!(fleet.diagnostics.is_empty(), "{:?}", fleet.diagnostics);
    let names: Vec<&str> = fleet.layers.iter().map(|l| l.display.as_str()).collect();
    assert_eq!(names, ["base", "roles/web", "roles/web-tls"]);
    let web = fleet.host_id("web-001").unwrap();
    let m: Vec<&str> = fleet
        .matching(web)
        .iter()
        .map(|&l| fleet.layer(l).display.as_str())
        .collect();
    assert_eq!(m, ["base", "roles/web", "roles/web-tls"]);
    let db = fleet.host_id("db-001").unwrap();
    assert_eq!(fleet.matching(db).len(), 1);
    assert_eq!(
        fleet.labels_of(db),
        [("datum/host", "db-001"), ("role", "db")]
    );
}

#[test]
fn duplicate_hosts_and_two_layers_in_a_file() {
    let r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file("a.yaml", host("web-001", "{}"))
        .file("b.yaml", host("web-001", "{}"))
        .file(
            "two.yaml",
            layer(1, "{role: web}", "") + "\n---\n" + &layer(2, "{role: web}", ""),
        );
    let fleet = load(&r).unwrap();
    let codes: Vec<Code> = fleet.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::DuplicateHost, Code::TwoLayers]);
    assert!(fleet.host_id("web-001").is_none());
    assert_eq!(fleet.broken_host("web-001").unwrap().len(), 2);
    assert!(fleet.layers.is_empty());
}

#[test]
fn broken_documents_hold_back_only_the_hosts_they_touch() {
    let r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file(
            "hosts.yaml",
            host("web-001", "{role: web}") + &host("db-001", "{role: db}"),
        )
        .file(
            "roles/web/layer.yaml",
            layer(
                30,
                "{role: web}",
                "  Package[nginx]:\n    ensure: instaled\n",
            ),
        );
    let fleet = load(&r).unwrap();
    assert_eq!(fleet.diagnostics.len(), 1);
    let web = fleet.host_id("web-001").unwrap();
    let db = fleet.host_id("db-001").unwrap();
    assert_eq!(fleet.blockers(web).len(), 1);
    assert!(fleet.blockers(db).is_empty());
}

#[test]
fn declared_labels_catch_typos() {
    let fleet_doc = format!("{FLEET}labels:\n  role: [web, db]\n");
    let r = MemReader::new()
        .file("datum.yaml", fleet_doc)
        .file("hosts.yaml", host("web-001", "{role: wbe}"))
        .file("roles/web/layer.yaml", layer(30, "{rle: web}", ""));
    let fleet = load(&r).unwrap();
    let hints: Vec<&str> = fleet
        .diagnostics
        .iter()
        .map(|d| d.hint.as_deref().unwrap())
        .collect();
    assert_eq!(hints.len(), 2);
    assert!(
        hints.iter().any(|h| h.starts_with("did you mean `web`?")),
        "{hints:?}"
    );
    assert!(
        hints.iter().any(|h| h.starts_with("did you mean `role`?")),
        "{hints:?}"
    );
}

#[test]
fn a_declared_label_may_be_tied_to_a_fact_and_both_forms_read_the_same() {
    let fleet_doc = format!(
        "{FLEET}labels:\n  role: [web, db]\n  os: {{values: [debian-12, debian-13], fact: os}}\n"
    );
    let r = MemReader::new()
        .file("datum.yaml", fleet_doc)
        .file("hosts.yaml", host("web-001", "{role: web, os: debian-12}"))
        .file("hosts2.yaml", host("db-001", "{role: db}"));
    let fleet = load(&r).unwrap();
    assert!(fleet.diagnostics.is_empty(), "{:?}", fleet.diagnostics);
    let declared = fleet.declared.as_ref().unwrap();
    assert_eq!(declared["os"].len(), 2);
    assert_eq!(declared["role"].len(), 2);
    assert_eq!(fleet.ties["os"].0, "os");
    assert!(!fleet.ties.contains_key("role"));
    let web = fleet.tied(fleet.host_id("web-001").unwrap());
    assert_eq!(
        (
            web[0].key.as_str(),
            web[0].value.as_str(),
            web[0].fact.as_str()
        ),
        ("os", "debian-12", "os")
    );
    let (label, tie) = web[0].places.unwrap();
    assert_eq!(fleet.files.get(label.file).path(), "hosts.yaml");
    assert_eq!(label.start.line, 4);
    assert_eq!(
        (fleet.files.get(tie.file).path(), tie.start.line),
        ("datum.yaml", 6)
    );
    // A host without the label has nothing to compare.
    assert!(fleet.tied(fleet.host_id("db-001").unwrap()).is_empty());
}

#[test]
fn a_tie_to_an_unknown_fact_or_a_declaration_without_values_is_refused_at_its_line() {
    let fleet_doc = format!(
        "{FLEET}labels:\n  os:\n    values: [debian-12]\n    fact: oss\n  site: {{fact: arch, valeus: [a]}}\n"
    );
    let r = MemReader::new()
        .file("datum.yaml", fleet_doc)
        .file("hosts.yaml", host("web-001", "{os: debian-12}"));
    let fleet = load(&r).unwrap();
    let found: Vec<(&str, &str, u32)> = fleet
        .diagnostics
        .iter()
        .map(|d| {
            let span = d.primary.as_ref().unwrap().span;
            (d.code.as_str(), d.message.as_str(), span.start.line)
        })
        .collect();
    assert_eq!(
        found,
        [
            ("unknown-fact", "`oss` is not a fact Datum observes", 7),
            (
                "missing-key",
                "the declaration of `site` has no `values`",
                8
            ),
            (
                "unknown-key",
                "unknown key `valeus` in the declaration of `site`",
                8
            ),
        ]
    );
    assert_eq!(
        fleet.diagnostics[0].hint.as_deref(),
        Some(
            "did you mean `os`? a label can be tied to `os`, `os_id`, `os_version`, `arch` and `virtualization`"
        )
    );
    assert!(fleet.blockers(fleet.host_id("web-001").unwrap()).len() == 1);
}

#[test]
fn sources_must_exist_inside_the_root() {
    let r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file("files/ok", "hello")
        .link("files/out", "../../etc/passwd")
        .file(
            "roles/web/layer.yaml",
            layer(30, "{role: web}", "  File[a]:\n    path: /a\n    source: ./files/ok\n  File[b]:\n    path: /b\n    source: files/missing\n  File[c]:\n    path: /c\n    source: files/out\n"),
        );
    let fleet = load(&r).unwrap();
    let msgs: Vec<&str> = fleet
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        msgs,
        [
            "source `files/missing` does not exist",
            "source `files/out` is a symbolic link that leads out of the fleet root (to files/../../etc/passwd)"
        ]
    );
    assert_eq!(
        fleet.sources["files/ok"].sha256,
        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    );
}

#[test]
fn missing_fleet_document_holds_back_everything() {
    let r = MemReader::new().file("hosts.yaml", host("web-001", "{}"));
    let fleet = load(&r).unwrap();
    assert_eq!(fleet.diagnostics[0].code, Code::NoFleet);
    assert_eq!(fleet.blockers(fleet.host_id("web-001").unwrap()).len(), 1);
}

#[test]
fn a_layer_name_taken_twice_sets_the_second_aside() {
    let named = |name: &str, prec: i32| {
        format!("datum: v1alpha1\ntype: Layer\nname: {name}\nprecedence: {prec}\nmatch: {{}}\n")
    };
    let r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file("hosts.yaml", host("web-001", "{}"))
        .file("b/layer.yaml", named("web", 2))
        .file("a/layer.yaml", named("web", 1))
        .file("c/layer.yaml", named("other", 3));
    let fleet = load(&r).unwrap();
    let codes: Vec<Code> = fleet.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::DuplicateLayerName]);
    assert_eq!(
        fleet.diagnostics[0].message,
        "layers a and b are both named `web`"
    );
    let names: Vec<&str> = fleet.layers.iter().map(|l| &*l.name).collect();
    assert_eq!(names, ["web", "other"]);
}

#[test]
fn a_layer_whose_matcher_cannot_be_read_as_written_holds_back_every_host() {
    let fleet_doc = format!("{FLEET}labels:\n  role: [web, db]\n");
    let hosts = host("web-001", "{role: web}") + &host("db-001", "{role: db}");
    let blocked = |layer_text: String| {
        let r = MemReader::new()
            .file("datum.yaml", fleet_doc.clone())
            .file("hosts.yaml", hosts.clone())
            .file("roles/web/layer.yaml", layer_text);
        let fleet = load(&r).unwrap();
        assert!(!fleet.diagnostics.is_empty());
        ["web-001", "db-001"].map(|h| !fleet.blockers(fleet.host_id(h).unwrap()).is_empty())
    };
    // An undeclared value: `wbe` was meant for some hosts, none knows which.
    assert_eq!(blocked(layer(30, "{role: wbe}", "")), [true, true]);
    // An undeclared key.
    assert_eq!(blocked(layer(30, "{rle: web}", "")), [true, true]);
    // `match` misspelt, so missing.
    let text = layer(30, "{role: web}", "").replace("match:", "mtach:");
    assert_eq!(blocked(text), [true, true]);
    // A syntax error after a matcher that was read whole.
    let text = layer(30, "{role: web}", "  Package[nginx]: {ensure: [installed\n");
    assert_eq!(blocked(text), [true, true]);
    // An error inside a resource of a layer whose matcher is sound holds
    // back only the hosts it selects.
    let text = layer(
        30,
        "{role: web}",
        "  Package[nginx]:\n    ensure: instaled\n",
    );
    assert_eq!(blocked(text), [true, false]);
}
