//! Explain on small fleets: targets, answers, and both renderings.

use super::*;
use crate::loader::load;
use crate::present::explain as text;
use crate::reader::MemReader;

const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: test\n";
const HOSTS: &str = "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {role: web, site: london}\n---\ndatum: v1alpha1\ntype: Host\nname: db-001\nlabels: {role: db}\n";

// Matchers.
const EVERY: &str = "{}";
const WEB: &str = "{labels: {role: web}}";
const LONDON: &str = "{labels: {site: london}}";
const WEB_001: &str = "{labels: {datum/host: web-001}}";
const DB: &str = "{labels: {role: db}}";

fn layer(prec: i32, matcher: &str, resources: &str) -> String {
    format!(
        "datum: v1alpha1\ntype: Layer\nname: l\nprecedence: {prec}\nmatch: {matcher}\nresources:\n{resources}"
    )
}

/// A fleet of web-001 and db-001 with layers given as (directory,
/// precedence, matcher, resources); each is `<directory>/layer.yaml`.
fn fleet(layers: &[(&str, i32, &str, &str)]) -> Fleet {
    let mut r = MemReader::new()
        .file("datum.yaml", FLEET)
        .file("hosts.yaml", HOSTS);
    for &(dir, prec, matcher, resources) in layers {
        // Each layer named after its directory: names are unique in a fleet.
        r.add(
            &format!("{dir}/layer.yaml"),
            layer(prec, matcher, resources).replace("name: l\n", &format!("name: {dir}\n")),
        );
    }
    let fleet = load(&r).unwrap();
    assert!(
        !fleet.has_errors(),
        "{:?}",
        fleet
            .diagnostics
            .iter()
            .map(|d| &d.message)
            .collect::<Vec<_>>()
    );
    fleet
}

/// The text answer for `target` on `host`, and whether it was found.
fn explain(fleet: &Fleet, host: &str, target: &str) -> (String, bool) {
    let host = fleet.host_id(host).unwrap();
    let resolution = crate::resolve::resolve_host(fleet, host);
    let ex = Explanation::new(fleet, host, &resolution);
    let target = if target.is_empty() {
        Target::Host
    } else {
        Target::parse(target).unwrap()
    };
    let answer = ex.answer(&target);
    (text::render(&ex, &answer), answer.found())
}

fn id(s: &str) -> ResourceId {
    ResourceId::parse(s).unwrap()
}

#[test]
fn targets_split_the_field_off_after_the_brackets() {
    assert_eq!(
        Target::parse("File[app.conf]"),
        Ok(Target::Resource(id("File[app.conf]")))
    );
    assert_eq!(
        Target::parse("File[app.conf].mode"),
        Ok(Target::Field(id("File[app.conf]"), Field::Mode))
    );
    assert_eq!(
        Target::parse("Service[a.b].restart_on"),
        Ok(Target::Field(id("Service[a.b]"), Field::RestartOn))
    );
}

#[test]
fn bad_targets_say_what_is_wrong() {
    let err = |s: &str| Target::parse(s).unwrap_err();
    let shape = |s: &str| TargetError::Id(IdError::Shape { text: s.into() });
    assert_eq!(err("nginx"), shape("nginx"));
    assert!(err("nginx").is_malformed());
    assert_eq!(
        err("nginx").hint().as_deref(),
        Some(
            "a resource id is Type[title], such as Package[nginx] or File[motd], and a field follows a dot: File[motd].mode"
        )
    );
    assert_eq!(
        err("File[a]b]"),
        TargetError::Id(IdError::Title {
            text: "File[a]b]".into()
        })
    );
    assert_eq!(err("File[a]mode"), shape("File[a]mode"));
    // The message quotes the whole target, not only its id.
    assert_eq!(
        err("File[].mode").to_string(),
        "`File[].mode` has an invalid title"
    );
    let unknown = err("Fiel[x].mode");
    assert!(!unknown.is_malformed());
    assert_eq!(
        unknown.hint().as_deref(),
        Some(
            "did you mean `File`? The types are Cron, Directory, Exec, File, Group, Health, Mount, Package, Repository, Service, Symlink, Sysctl, User"
        )
    );
    let typo = err("File[x].mdoe");
    assert!(!typo.is_malformed());
    assert_eq!(typo.to_string(), "File has no field `mdoe`");
    assert_eq!(
        typo.hint().as_deref(),
        Some(
            "did you mean `mode`? File takes path, ensure, owner, group, mode, source, content, template, secret, sensitive, requires"
        )
    );
    // A field of another type is not a field of this one.
    assert_eq!(
        err("File[x].enabled").to_string(),
        "File has no field `enabled`"
    );
    let dot = err("File[x].");
    assert_eq!(dot.to_string(), "`File[x].` names no field after the dot");
    assert!(
        dot.hint().unwrap().starts_with("File takes path, "),
        "{:?}",
        dot.hint()
    );
}

#[test]
fn displaced_values_read_highest_first() {
    let f = fleet(&[
        (
            "base",
            0,
            EVERY,
            "  File[x]:\n    path: /x\n    mode: \"0644\"\n",
        ),
        ("roles/web", 30, WEB, "  File[x]:\n    mode: \"0640\"\n"),
        (
            "hosts/web-001",
            100,
            WEB_001,
            "  File[x]:\n    mode: \"0600\"\n",
        ),
    ]);
    let (text, found) = explain(&f, "web-001", "File[x]");
    assert!(found);
    assert!(
        text.contains(
            "    mode  0600  hosts/web-001  overrides 0640 from roles/web, 0644 from base\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    base           precedence 0    matched every host\n"),
        "{text}"
    );
}

#[test]
fn agreeing_layers_are_named() {
    let f = fleet(&[
        (
            "roles/web",
            30,
            WEB,
            "  File[x]:\n    path: /x\n    owner: root\n",
        ),
        ("sites/london", 30, LONDON, "  File[x]:\n    owner: root\n"),
    ]);
    let (text, _) = explain(&f, "web-001", "File[x]");
    assert!(
        text.contains("    owner  root  sites/london  agreed by roles/web\n"),
        "{text}"
    );
    let (chain, _) = explain(&f, "web-001", "File[x].owner");
    assert_eq!(
        chain,
        "File[x].owner root\n  contributions\n    roles/web     precedence 30  root  agreed  matched role=web     roles/web/layer.yaml:9:12\n    sites/london  precedence 30  root  set     matched site=london  sites/london/layer.yaml:8:12\n"
    );
}

#[test]
fn null_is_shown_as_unset_by_its_layer() {
    let f = fleet(&[
        (
            "base",
            0,
            EVERY,
            "  File[x]:\n    path: /x\n    content: hello\n    requires: Package[a]\n  Package[a]: {}\n",
        ),
        (
            "roles/web",
            30,
            WEB,
            "  File[x]:\n    content: null\n    requires: null\n",
        ),
    ]);
    let (text, _) = explain(&f, "web-001", "File[x]");
    assert!(
        text.contains("    content  (unset)  roles/web  overrides hello from base\n"),
        "{text}"
    );
    assert!(
        text.contains("  requires\n    Package[a]  base  dropped by null from roles/web\n"),
        "{text}"
    );
    let host = f.host_id("web-001").unwrap();
    let res = crate::resolve::resolve_host(&f, host);
    let ex = Explanation::new(&f, host, &res);
    let r = res
        .resource(&f, f.resources.lookup(&id("File[x]")).unwrap())
        .unwrap();
    let content = r.field(Field::Content).unwrap();
    assert_eq!(ex.state(r, content), State::Unset);
    let requires = r.field(Field::Requires).unwrap();
    assert_eq!(ex.state(r, requires), State::Unset);
    let roles: Vec<Role> = ex.roles(r, requires).into_iter().map(|(_, r)| r).collect();
    assert_eq!(roles, [Role::Dropped, Role::Unset]);
}

#[test]
fn an_emptied_set_names_the_null() {
    let f = fleet(&[(
        "roles/web",
        30,
        WEB,
        "  Service[x]:\n    restart_on: null\n",
    )]);
    let (text, _) = explain(&f, "web-001", "Service[x]");
    assert!(
        text.ends_with("  restart_on\n    (unset)  roles/web\n"),
        "{text}"
    );
}

#[test]
fn conflicts_show_every_side() {
    let f = fleet(&[
        (
            "roles/web",
            30,
            WEB,
            "  File[x]:\n    path: /x\n    mode: \"0640\"\n",
        ),
        (
            "sites/london",
            30,
            LONDON,
            "  File[x]:\n    mode: \"0600\"\n",
        ),
    ]);
    let (text, found) = explain(&f, "web-001", "File[x]");
    assert!(found);
    assert!(
        text.contains("    mode  conflict  at precedence 30\n      0640  roles/web     precedence 30\n      0600  sites/london  precedence 30\n"),
        "{text}"
    );
    // The fields that resolve still answer.
    assert!(text.contains("    path  /x        roles/web\n"), "{text}");
}

#[test]
fn a_conflict_below_the_winner_is_still_shown() {
    let f = fleet(&[
        (
            "roles/web",
            30,
            WEB,
            "  File[x]:\n    path: /x\n    mode: \"0640\"\n",
        ),
        (
            "sites/london",
            30,
            LONDON,
            "  File[x]:\n    mode: \"0600\"\n",
        ),
        (
            "hosts/web-001",
            100,
            WEB_001,
            "  File[x]:\n    mode: \"0400\"\n",
        ),
    ]);
    let (text, _) = explain(&f, "web-001", "File[x]");
    assert!(
        text.contains("    mode  0400  hosts/web-001  overrides 0600 from sites/london, 0640 from roles/web; conflict at precedence 30\n      0640  roles/web     precedence 30\n      0600  sites/london  precedence 30\n"),
        "{text}"
    );
}

#[test]
fn why_not_names_the_failing_label() {
    let f = fleet(&[
        ("roles/db", 30, DB, "  Package[pg]: {}\n"),
        (
            "extra",
            40,
            "{labels: {role: web, tier: gold, site: paris}}",
            "  Package[pg]: {}\n",
        ),
    ]);
    let (text, found) = explain(&f, "web-001", "Package[pg]");
    assert!(!found);
    assert_eq!(
        text,
        "web-001 has no Package[pg]\n  declared by layers that do not match web-001\n    roles/db needs role=db; web-001 has role=web\n    extra needs site=paris and tier=gold; web-001 has site=london and no label tier\n"
    );
}

#[test]
fn why_not_a_field_names_the_layers_that_set_it() {
    let f = fleet(&[
        ("base", 0, EVERY, "  File[x]:\n    path: /x\n"),
        ("roles/db", 30, DB, "  File[x]:\n    owner: pg\n"),
    ]);
    let (text, found) = explain(&f, "web-001", "File[x].owner");
    assert!(!found);
    assert_eq!(
        text,
        "web-001 has no File[x].owner\n  set by layers that do not match web-001\n    roles/db needs role=db; web-001 has role=web\n"
    );
    let (text, found) = explain(&f, "web-001", "File[x].group");
    assert!(!found);
    assert_eq!(
        text,
        "web-001 has no File[x].group\n  no layer sets File[x].group, for any host\n"
    );
}

#[test]
fn an_id_no_layer_declares_names_the_nearest_declared_one() {
    // Package[ngnx] is only named, never declared: it is no suggestion.
    let f = fleet(&[(
        "base",
        0,
        EVERY,
        "  Package[nginx-full]: {}\n  File[x]:\n    path: /x\n    requires: Package[ngnx]\n",
    )]);
    let host = f.host_id("web-001").unwrap();
    let res = crate::resolve::resolve_host(&f, host);
    let ex = Explanation::new(&f, host, &res);
    let Answer::Absent(a) = ex.answer(&Target::Resource(id("Package[ngnx]"))) else {
        panic!("found")
    };
    let nearest = f.resources.lookup(&id("Package[nginx-full]"));
    assert_eq!(a.why, WhyNot::Undeclared { nearest });
    let (text, _) = explain(&f, "web-001", "Package[nginxx]");
    assert_eq!(
        text,
        "web-001 has no Package[nginxx]\n  no layer declares Package[nginxx]; the nearest resource id is Package[nginx-full]\n"
    );
}

#[test]
fn sensitive_content_is_never_shown() {
    let secret = "hunter2-secret";
    let f = fleet(&[
        (
            "base",
            0,
            EVERY,
            format!("  File[k]:\n    path: /k\n    content: {secret}-old\n").as_str(),
        ),
        (
            "roles/web",
            30,
            WEB,
            format!("  File[k]:\n    content: {secret}\n    sensitive: true\n").as_str(),
        ),
        // A higher layer turning the flag off does not reveal what a lower one hid.
        (
            "hosts/web-001",
            100,
            WEB_001,
            "  File[k]:\n    sensitive: false\n",
        ),
    ]);
    let host = f.host_id("web-001").unwrap();
    let res = crate::resolve::resolve_host(&f, host);
    let ex = Explanation::new(&f, host, &res);
    let mut all = String::new();
    for target in [
        Target::Host,
        Target::Resource(id("File[k]")),
        Target::Field(id("File[k]"), Field::Content),
    ] {
        let answer = ex.answer(&target);
        all.push_str(&text::render(&ex, &answer));
        let mut buf = Vec::new();
        crate::emit::write_json(&mut buf, &json::tree(&ex, &answer, &[])).unwrap();
        all.push_str(&String::from_utf8(buf).unwrap());
    }
    assert!(!all.contains(secret), "{all}");
    assert!(
        all.contains(
            "    content    (sensitive)  roles/web      overrides (sensitive) from base\n"
        ),
        "{all}"
    );
    assert!(all.contains("\"redacted\": true"), "{all}");
}

#[test]
fn requires_entries_name_every_layer_that_listed_them() {
    let f = fleet(&[
        (
            "base",
            0,
            EVERY,
            "  Package[a]: {}\n  Service[s]:\n    requires: Package[a]\n",
        ),
        (
            "roles/web",
            30,
            WEB,
            "  Package[b]: {}\n  Service[s]:\n    requires: [\"Package[a]\", \"Package[b]\"]\n    restart_on: Package[gone]\n",
        ),
    ]);
    let (text, _) = explain(&f, "web-001", "Service[s]");
    assert!(
        text.ends_with("  restart_on\n    Package[gone]  roles/web  web-001 has no Package[gone]\n  requires\n    Package[a]  base, roles/web\n    Package[b]  roles/web\n"),
        "{text}"
    );
}

#[test]
fn the_whole_host_lists_labels_layers_then_resources() {
    let f = fleet(&[
        ("base", 0, EVERY, "  Package[a]: {}\n"),
        (
            "roles/web",
            30,
            "{labels: {site: london, role: web}}",
            "  Package[b]:\n    ensure: installed\n",
        ),
    ]);
    let (text, found) = explain(&f, "web-001", "");
    assert!(found);
    assert_eq!(
        text,
        "host web-001\n  labels\n    datum/host  web-001\n    role        web\n    site        london\n  layers\n    base       precedence 0   matched every host\n    roles/web  precedence 30  matched role=web, site=london\n\nPackage[a] a\n  contributed by\n    base  precedence 0  matched every host\n\nPackage[b] b\n  contributed by\n    roles/web  precedence 30  matched role=web, site=london\n  fields\n    ensure  installed  roles/web\n"
    );
}

proptest::proptest! {
    #[test]
    fn any_text_parses_or_is_refused_without_panicking(s in "\\PC{0,40}") {
        let _ = Target::parse(&s).map_err(|e| (e.to_string(), e.hint()));
    }

    #[test]
    fn ids_and_fields_read_back(title in "[a-z0-9][a-z0-9._-]{0,20}", k in 0usize..8, f in 0usize..20) {
        let kind = Kind::ALL[k];
        let field = kind.fields()[f % kind.fields().len()];
        let id = ResourceId { kind, title: title.into() };
        proptest::prop_assert_eq!(Target::parse(&id.to_string()), Ok(Target::Resource(id.clone())));
        proptest::prop_assert_eq!(
            Target::parse(&format!("{id}.{field}")),
            Ok(Target::Field(id, field))
        );
    }
}

/// The answer as one line of JSON.
fn json_line(f: &Fleet, host: &str, target: Target) -> String {
    let host = f.host_id(host).unwrap();
    let res = crate::resolve::resolve_host(f, host);
    let ex = Explanation::new(f, host, &res);
    let problems = ex.problems();
    let mut buf = Vec::new();
    crate::emit::write_json_line(&mut buf, &json::tree(&ex, &ex.answer(&target), &problems))
        .unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn json_keeps_dropped_entries_and_the_null_that_dropped_them() {
    let f = fleet(&[
        (
            "base",
            0,
            EVERY,
            "  Package[a]: {}\n  Service[s]:\n    requires: Package[a]\n",
        ),
        (
            "roles/web",
            30,
            WEB,
            "  Service[s]:\n    requires: null\n    restart_on: []\n",
        ),
    ]);
    let s = Target::Field(id("Service[s]"), Field::Requires);
    let line = json_line(&f, "web-001", s);
    assert!(line.contains(r#""field":{"field":"requires","state":"unset","value":[],"entries":[],"dropped":[{"id":"Package[a]","on_host":true,"listed_by":[{"layer":"base","name":"base","precedence":0,"location":{"path":"base/layer.yaml","line":9,"column":15}}],"dropped_by":{"layer":"roles/web","name":"roles/web","precedence":30,"location":{"path":"roles/web/layer.yaml","line":8,"column":15}}"#), "{line}");
    assert!(
        line.contains(
            r#""unset_by":{"layer":"roles/web","name":"roles/web","precedence":30,"role":"unset","value":null,"#
        ),
        "{line}"
    );
    let (text, _) = explain(&f, "web-001", "Service[s]");
    assert!(text.ends_with("  restart_on\n    (empty)  roles/web\n  requires\n    Package[a]  base  dropped by null from roles/web\n"), "{text}");
}

#[test]
fn json_says_why_not() {
    let f = fleet(&[("base", 0, EVERY, "  File[x]:\n    path: /x\n")]);
    let line = json_line(&f, "web-001", Target::Resource(id("File[y]")));
    assert!(line.contains(r#""found":false,"#), "{line}");
    assert!(line.ends_with(r#""resource":"File[y]","field":null,"why_not":{"reason":"undeclared","layers":[],"nearest":"File[x]"}}
"#), "{line}");
    let line = json_line(&f, "web-001", Target::Field(id("File[x]"), Field::Owner));
    assert!(line.ends_with(r#""resource":"File[x]","field":"owner","why_not":{"reason":"field_unset","layers":[],"nearest":null}}
"#), "{line}");
}

#[test]
fn a_failing_writer_is_an_error_not_a_panic() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let f = fleet(&[("base", 0, EVERY, "  Package[a]: {}\n")]);
    let host = f.host_id("web-001").unwrap();
    let res = crate::resolve::resolve_host(&f, host);
    let ex = Explanation::new(&f, host, &res);
    let err = text::write(
        &mut crate::present::Plain(Full),
        &ex,
        &ex.answer(&Target::Host),
    )
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
}
