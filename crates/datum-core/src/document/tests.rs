//! The document decoder on small texts: what it reads and what it refuses.

use super::*;
use crate::diagnostic::Code;
use crate::source::Pos;

fn decode(text: &str) -> (FileDocs, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let docs = decode_file(FileId(0), text, &mut diags);
    (docs, diags)
}

fn codes(diags: &[Diagnostic]) -> Vec<Code> {
    diags.iter().map(|d| d.code).collect()
}

const LAYER: &str = "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels:\n    role: web\nresources:\n  Package[nginx]:\n    ensure: installed\n  File[nginx-config]:\n    path: /etc/nginx/nginx.conf\n    mode: \"640\"\n    requires: Package[nginx]\n";

#[test]
fn reads_a_layer() {
    let (docs, diags) = decode(LAYER);
    assert!(diags.is_empty(), "{diags:?}");
    let layer = &docs.layers[0];
    assert_eq!(layer.precedence, 30);
    assert_eq!(&*layer.matcher[0].key, "role");
    let file = &layer.resources[1];
    assert_eq!(file.id.to_string(), "File[nginx-config]");
    assert_eq!(
        file.fields[1].value,
        FieldValue::Value(Value::Str("0640".into()))
    );
    assert_eq!(file.fields[1].span.start, Pos { line: 13, col: 11 });
    match &file.fields[2].value {
        FieldValue::Refs(r) => assert_eq!(r[0].0.to_string(), "Package[nginx]"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn reads_hosts_and_skips_empty_documents() {
    let (docs, diags) = decode(
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n  rack: 12\n---\n---\ndatum: v1alpha1\ntype: Host\nname: db-001\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(docs.hosts.len(), 2);
    assert_eq!(&*docs.hosts[0].labels[1].value, "12");
}

#[test]
fn unknown_fields_types_and_keys_are_suggested() {
    let (_, diags) = decode(&LAYER.replace("mode:", "mdoe:"));
    assert_eq!(codes(&diags), [Code::UnknownField]);
    assert!(
        diags[0]
            .hint
            .as_ref()
            .unwrap()
            .starts_with("did you mean `mode`?")
    );
    let (_, diags) = decode(&LAYER.replace("Package[nginx]:", "Pakage[nginx]:"));
    assert_eq!(codes(&diags), [Code::InvalidResource]);
    assert!(
        diags[0]
            .hint
            .as_ref()
            .unwrap()
            .contains("did you mean `Package`?")
    );
    let (_, diags) = decode(&LAYER.replace("precedence:", "precedance:"));
    assert_eq!(codes(&diags), [Code::UnknownKey, Code::MissingKey]);
    assert!(
        diags[0]
            .hint
            .as_ref()
            .unwrap()
            .contains("did you mean `precedence`?")
    );
    let (_, diags) = decode(&LAYER.replace("path:", "target:"));
    assert!(
        diags[0]
            .hint
            .as_ref()
            .unwrap()
            .contains("`target` is a field of Symlink")
    );
}

#[test]
fn modes_must_be_quoted_octal() {
    let (_, diags) = decode(&LAYER.replace("\"640\"", "0640"));
    assert_eq!(codes(&diags), [Code::UnquotedMode]);
    assert_eq!(
        diags[0].hint.as_deref(),
        Some("write `mode: \"0640\"`: unquoted, YAML reads 0640 as a decimal number, not octal")
    );
    let (_, diags) = decode(&LAYER.replace("\"640\"", "\"0999\""));
    assert_eq!(codes(&diags), [Code::InvalidMode]);
}

#[test]
fn wrong_types_name_what_was_found() {
    let (_, diags) = decode(&LAYER.replace("precedence: 30", "precedence: high"));
    assert_eq!(
        diags[0].message,
        "`precedence` must be an integer, found text"
    );
    let (_, diags) = decode(&LAYER.replace("ensure: installed", "ensure: [installed]"));
    assert_eq!(diags[0].message, "`ensure` must be text, found a list");
    let (_, diags) = decode(&LAYER.replace("ensure: installed", "ensure: instaled"));
    assert!(
        diags[0]
            .hint
            .as_ref()
            .unwrap()
            .starts_with("did you mean `installed`?")
    );
}

#[test]
fn versions_reserved_labels_and_host_names() {
    let (docs, diags) = decode("datum: v2\ntype: Host\nname: a\n");
    assert_eq!(codes(&diags), [Code::UnsupportedVersion]);
    assert_eq!(
        diags[0].hint.as_deref(),
        Some("this build of Datum reads v1alpha1")
    );
    assert!(matches!(docs.broken[..], [Broken::Host(Some(_))]));
    let (_, diags) = decode("datum: v1alpha1\ntype: Host\nname: a\nlabels:\n  datum/role: x\n");
    assert_eq!(codes(&diags), [Code::ReservedLabel]);
    let (_, diags) = decode("datum: v1alpha1\ntype: Host\nname: Web_1\n");
    assert_eq!(codes(&diags), [Code::InvalidHostName]);
}

#[test]
fn a_bad_field_sets_aside_its_resource_not_the_layer() {
    let (docs, diags) = decode(&LAYER.replace("ensure: installed", "ensure: 3"));
    assert_eq!(diags.len(), 1);
    assert!(docs.broken.is_empty(), "{:?}", docs.broken);
    let layer = &docs.layers[0];
    assert_eq!(&*layer.matcher[0].value, "web");
    let bad = &layer.resources[0];
    assert!(bad.set_aside);
    assert!(bad.fields.iter().all(|f| f.field != Field::Ensure));
    assert!(layer.resources[1..].iter().all(|r| !r.set_aside));
}

#[test]
fn a_broken_layer_keeps_its_matcher() {
    // An error outside the resources still sets the layer aside, with its
    // matcher, so that it holds back the hosts it selects.
    let (docs, diags) = decode(&LAYER.replace("precedence: 30", "precedence: high"));
    assert_eq!(diags.len(), 1);
    match &docs.broken[..] {
        [Broken::Layer(Some(m))] => assert_eq!(&*m[0].value, "web"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn flow_list_with_brackets_hints_at_quotes() {
    let (_, diags) =
        decode(&LAYER.replace("requires: Package[nginx]", "requires: [Package[nginx]]"));
    assert!(!diags.is_empty());
}

#[test]
fn names() {
    assert!(valid_host_name("web-001.london"));
    assert!(!valid_host_name("-web"));
    assert!(!valid_host_name("web-"));
    assert!(valid_label_key("example.com/team"));
    assert!(!valid_label_key("a/b/c"));
    assert!(!valid_label_key(""));
}

#[test]
fn every_resource_declaration_has_its_lines_and_sensitive_mark() {
    let text = "datum: v1alpha1\ntype: Layer\nname: x\nprecedence: 0\nmatch: {}\nresources:\n  \
                File[a]:\n    path: /a\n    sensitive: true\n  Package[nginx]: {}\n  \
                File[b]:\n    path: /b\n    contnet: |\n      one\n      two\n";
    let (docs, _) = decode(text);
    let regions: Vec<(String, u32, u32, bool)> = docs
        .regions
        .iter()
        .map(|r| (r.id.to_string(), r.first_line, r.last_line, r.sensitive))
        .collect();
    assert_eq!(
        regions,
        [
            ("File[a]".to_owned(), 7, 9, true),
            ("Package[nginx]".to_owned(), 10, 10, false),
            ("File[b]".to_owned(), 11, 15, false),
        ]
    );
}
