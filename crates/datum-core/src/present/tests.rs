//! What each renderer tags: the parts of its lines a terminal colours,
//! found from what the text says, never from how it reads.

use std::io;

use super::*;
use crate::check::check;
use crate::diff::{Side, diff};
use crate::explain::{Explanation, Target};
use crate::fleet::Fleet;
use crate::loader::load;
use crate::reader::MemReader;
use crate::resolve::{FleetResolution, resolve_all, resolve_host};
use crate::testkit::{FLEET, host};

#[test]
fn a_table_lines_up_its_columns_and_tags_only_the_cells() {
    let rows = vec![
        vec![
            Text::from("mode"),
            Text::tagged(Tag::Winner, "0600"),
            Text::from("x").and_tagged(Tag::Displaced, "overrides 0640"),
        ],
        vec![Text::from("path"), Text::from("/etc/motd"), Text::from("")],
    ];
    assert_eq!(
        marked(|o| table(o, "  ", &rows)),
        "  mode  <Winner|0600>       x<Displaced|overrides 0640>\n  path  /etc/motd\n"
    );
    let plain = to_string(|o| table(o, "  ", &rows));
    assert_eq!(
        plain,
        "  mode  0600       xoverrides 0640\n  path  /etc/motd\n"
    );
}

#[test]
fn what_a_fleet_wrote_is_escaped_tagged_or_not() {
    let text = Text::tagged(Tag::Hosts, "a\x1b[2J").and("\nb");
    assert_eq!(marked(|o| line(o, "", text)), "<Hosts|a\\u{1b}[2J>\\nb\n");
}

/// Draws with `draw`, each tag shown as `<Tag|text>`.
fn marked(draw: impl FnOnce(&mut dyn Styled) -> io::Result<()>) -> String {
    let mut out = Marked(Vec::new());
    draw(&mut out).unwrap();
    String::from_utf8(out.0).unwrap()
}

/// A layer named after its directory, at `<dir>/layer.yaml`.
fn layer(dir: &str, prec: i32, labels: &str, mode: &str) -> (String, String) {
    (
        format!("{dir}/layer.yaml"),
        format!(
            "datum: v1alpha1\ntype: Layer\nname: {dir}\nprecedence: {prec}\nmatch: {{labels: {labels}}}\nresources:\n  File[motd]:\n    path: /etc/motd\n    mode: \"{mode}\"\n"
        ),
    )
}

/// web-001 and web-002 with a mode set at three precedences, the last on
/// web-001 alone; `web` is the mode of `roles/web`.
fn fleet(web: &str, extra: &[(String, String)]) -> (Fleet, FleetResolution) {
    let mut r = MemReader::new().file("datum.yaml", FLEET).file(
        "hosts.yaml",
        host("web-001", "{role: web}") + &host("web-002", "{role: web}"),
    );
    for (path, text) in [
        layer("base", 0, "{}", "0644"),
        layer("roles/web", 30, "{role: web}", web),
        layer("hosts/web-001", 100, "{datum/host: web-001}", "0600"),
    ]
    .iter()
    .chain(extra)
    {
        r.add(path, text.clone());
    }
    let fleet = load(&r).unwrap();
    assert!(!fleet.has_errors(), "{:?}", fleet.diagnostics);
    let all = resolve_all(&fleet);
    (fleet, all)
}

#[test]
fn explain_tags_the_winner_what_it_displaced_headings_and_sections() {
    let (f, _) = fleet("0640", &[]);
    let host = f.host_id("web-001").unwrap();
    let res = resolve_host(&f, host);
    let ex = Explanation::new(&f, host, &res);
    let answer = ex.answer(&Target::parse("File[motd]").unwrap());
    let text = marked(|o| explain::write(o, &ex, &answer));
    assert!(
        text.starts_with("<Heading|File[motd] /etc/motd>\n"),
        "{text}"
    );
    assert!(text.contains("  <Section|fields>\n"), "{text}");
    assert!(
        text.contains(
            "    mode  <Winner|0600>       <Winner|hosts/web-001>  <Displaced|overrides 0640 from roles/web, 0644 from base>\n"
        ),
        "{text}"
    );
    // Rows that say nothing of a winner are left alone.
    assert!(
        text.contains("    base           precedence 0    matched every host\n"),
        "{text}"
    );
    let answer = ex.answer(&Target::parse("File[motd].mode").unwrap());
    let text = marked(|o| explain::write(o, &ex, &answer));
    assert!(
        text.contains("<Displaced|0640>  <Displaced|overridden>  matched role=web"),
        "{text}"
    );
    assert!(text.contains("<Winner|0600>  <Winner|set>"), "{text}");
}

#[test]
fn diff_tags_what_goes_what_comes_and_whom_it_concerns() {
    let (old, old_all) = fleet("0640", &[]);
    let (new, new_all) = fleet("0644", &[layer("extra", 10, "{role: web}", "0644")]);
    let d = diff(
        Some(Side {
            fleet: &old,
            all: &old_all,
        }),
        Some(Side {
            fleet: &new,
            all: &new_all,
        }),
    );
    let text = marked(|o| diff::write(o, &d, "old", "new"));
    assert!(
        text.contains("<Changed|changed>: <Hosts|web-002>\n"),
        "{text}"
    );
    assert!(text.contains("    <Added|+ extra>\n"), "{text}");
    assert!(text.contains("  <Changed|~> File[motd]"), "{text}");
    assert!(
        text.contains("mode  <Removed|0640> → <Added|0644>"),
        "{text}"
    );
}

#[test]
fn check_tags_its_counts_and_a_conflict_its_severity_hosts_places_and_hint() {
    let clash = (
        "roles/db/layer.yaml".to_owned(),
        "datum: v1alpha1\ntype: Layer\nname: roles/db\nprecedence: 30\nmatch: {labels: {role: web}}\nresources:\n  File[motd]:\n    mode: \"0444\"\n".to_owned(),
    );
    let (f, all) = fleet("0640", &[clash]);
    let report = check(&f, &all);
    let text = marked(|o| check::summary(o, &report));
    assert_eq!(
        text,
        "checked 2 hosts against 4 layers: <Failure|1 error>, <Good|no warnings>\n"
    );
    let text = marked(|o| diagnostic::draw(&report.diagnostics[0], &f.files, o));
    assert!(
        text.starts_with("<Severity(Error)|error>: conflicting values for File[motd].mode\n"),
        "{text}"
    );
    assert!(
        text.contains("  both layers match hosts <Hosts|web-001, web-002> at equal precedence\n"),
        "{text}"
    );
    assert!(
        text.contains("  <Place|-->> roles/db/layer.yaml:"),
        "{text}"
    );
    assert!(text.contains("  = <Hint|hint>: give the layer"), "{text}");
}
