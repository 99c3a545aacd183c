//! `datum schema`: a draft 2020-12 JSON Schema that every document of the
//! examples satisfies, that known-bad documents fail, and that agrees with
//! the loader on a corpus of field values (checked by running both).

use std::fs;
use std::path::{Path, PathBuf};

use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Value, json};

use crate::common::{Run, datum, repo_root, run_in};

/// The schema `datum schema` prints.
fn schema() -> Value {
    let run = Run::from(datum().arg("schema").output().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    serde_json::from_str(&run.stdout).unwrap()
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the schema compiles")
}

/// The same schema read as draft-07, which many editors' YAML support
/// still implements: it uses no keyword that draft lacks (`$defs` is only
/// a place `$ref` points into).
fn draft7_validator() -> jsonschema::Validator {
    let mut schema = schema();
    schema["$schema"] = json!("http://json-schema.org/draft-07/schema#");
    jsonschema::draft7::new(&schema).expect("the schema compiles as draft-07")
}

/// The problems `validator` finds in `doc`, as `path: message`.
fn problems(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// YAML text to JSON values, one per document, as an editor's language
/// server reads it: YAML 1.2's core schema for plain scalars, quoted
/// scalars as strings.
fn yaml_documents(text: &str) -> Vec<Value> {
    enum Open {
        Seq(Vec<Value>),
        Map(Map<String, Value>, Option<String>),
    }
    fn place(stack: &mut [Open], docs: &mut Vec<Value>, v: Value) {
        match stack.last_mut() {
            None => docs.push(v),
            Some(Open::Seq(items)) => items.push(v),
            Some(Open::Map(map, key)) => match key.take() {
                None => {
                    let Value::String(k) = v else {
                        panic!("non-text key {v}")
                    };
                    *key = Some(k);
                }
                Some(k) => {
                    map.insert(k, v);
                }
            },
        }
    }
    let mut docs = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    for event in Parser::new_from_str(text) {
        let (event, _) = event.expect("the YAML parses");
        match event {
            Event::Scalar(text, style, _, _) => {
                let v = if style == ScalarStyle::Plain {
                    plain(&text)
                } else {
                    Value::String(text.into_owned())
                };
                place(&mut stack, &mut docs, v);
            }
            Event::SequenceStart(..) => stack.push(Open::Seq(Vec::new())),
            Event::MappingStart(..) => stack.push(Open::Map(Map::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => {
                let v = match stack.pop().unwrap() {
                    Open::Seq(items) => Value::Array(items),
                    Open::Map(map, _) => Value::Object(map),
                };
                place(&mut stack, &mut docs, v);
            }
            Event::Alias(_) => panic!("aliases are not Datum documents"),
            _ => {}
        }
    }
    docs
}

/// A plain scalar under the YAML 1.2 core schema.
fn plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return json!(true),
        "false" | "False" | "FALSE" => return json!(false),
        _ => {}
    }
    if let Some(octal) = s.strip_prefix("0o")
        && let Ok(i) = i64::from_str_radix(octal, 8)
    {
        return json!(i);
    }
    if let Some(hex) = s.strip_prefix("0x")
        && let Ok(i) = i64::from_str_radix(hex, 16)
    {
        return json!(i);
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return json!(s.parse::<i64>().unwrap());
    }
    let floaty = s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if floaty && let Ok(f) = s.parse::<f64>() {
        return json!(f);
    }
    Value::String(s.to_owned())
}

/// Every YAML file under `dir` whose first document has a `datum` key.
/// Example directories broken on purpose, to show how Datum recovers
/// (docs/file-format.md runs them): not valid YAML, so not schema-checked.
const BROKEN_ON_PURPOSE: &[&str] = &["changes/unclosed-bracket"];

fn document_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if BROKEN_ON_PURPOSE
        .iter()
        .any(|b| dir == repo_root().join("examples").join(b))
    {
        return;
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            document_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            let text = fs::read_to_string(&path).unwrap();
            let first = yaml_documents(&text).into_iter().next();
            if first.is_some_and(|d| d.get("datum").is_some()) {
                out.push(path);
            }
        }
    }
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema() {
    let schema = schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
        panic!("not a valid schema: {e}");
    }
}

#[test]
fn the_examples_broken_on_purpose_are_broken() {
    for dir in BROKEN_ON_PURPOSE {
        let file = repo_root()
            .join("examples")
            .join(dir)
            .join("inventory/frankfurt.yaml");
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            Parser::new_from_str(&text).any(|e| e.is_err()),
            "{} parses: it is listed as broken on purpose",
            file.display()
        );
    }
}

#[test]
fn every_document_of_the_examples_validates() {
    for validator in [validator(), draft7_validator()] {
        examples_validate(&validator);
    }
}

fn examples_validate(validator: &jsonschema::Validator) {
    let mut files = Vec::new();
    document_files(&repo_root().join("examples"), &mut files);
    assert!(files.len() >= 15, "found only {files:?}");
    let mut failures = Vec::new();
    let mut documents = 0;
    for file in &files {
        for doc in yaml_documents(&fs::read_to_string(file).unwrap()) {
            documents += 1;
            for p in problems(validator, &doc) {
                failures.push(format!("{}: {p}", file.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        documents > files.len(),
        "multi-document files are read whole"
    );
}

#[test]
fn known_bad_documents_fail_where_they_are_wrong() {
    let (validator, draft7) = (validator(), draft7_validator());
    let layer = |resources: Value| {
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {}, "resources": resources})
    };
    let host = |name: Value, labels: Value| json!({"datum": "v1alpha1", "type": "Host", "name": name, "labels": labels});
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "a misspelt field",
            layer(json!({"File[x]": {"mdoe": "0640"}})),
            "/resources/File[x]",
        ),
        (
            "an unquoted mode",
            layer(json!({"File[x]": {"mode": 640}})),
            "/resources/File[x]/mode",
        ),
        (
            "a mode that is not octal",
            layer(json!({"File[x]": {"mode": "0980"}})),
            "/resources/File[x]/mode",
        ),
        (
            "an ensure word of another type",
            layer(json!({"Package[x]": {"ensure": "running"}})),
            "/resources/Package[x]/ensure",
        ),
        (
            "an unknown resource type",
            layer(json!({"Fiel[x]": {}})),
            "/resources",
        ),
        (
            "a field of another type",
            layer(json!({"Package[x]": {"path": "/x"}})),
            "/resources/Package[x]",
        ),
        (
            "a relative path",
            layer(json!({"Directory[x]": {"path": "etc/x"}})),
            "/resources/Directory[x]/path",
        ),
        (
            "a source leaving the fleet",
            layer(json!({"File[x]": {"path": "/x", "source": "../secret"}})),
            "/resources/File[x]/source",
        ),
        (
            "a quoted uid",
            layer(json!({"User[x]": {"uid": "1000"}})),
            "/resources/User[x]/uid",
        ),
        (
            "a quoted boolean",
            layer(json!({"Service[x]": {"enabled": "true"}})),
            "/resources/Service[x]/enabled",
        ),
        (
            "a requirement that is not an id",
            layer(json!({"Service[x]": {"requires": ["nginx"]}})),
            "/resources/Service[x]/requires",
        ),
        (
            "an unknown top-level key",
            json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
                   "match": {}, "resource": {}}),
            "",
        ),
        (
            "a layer without precedence",
            json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "match": {}}),
            "",
        ),
        (
            "a matcher key other than labels",
            json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
                   "match": {"label": {"role": "web"}}}),
            "/match",
        ),
        (
            "another version",
            json!({"datum": "v1", "type": "Host", "name": "a"}),
            "/datum",
        ),
        (
            "an unknown document type",
            json!({"datum": "v1alpha1", "type": "Hots", "name": "a"}),
            "/type",
        ),
        (
            "a host name in capitals",
            host(json!("Web-1"), json!({})),
            "/name",
        ),
        (
            "a reserved label",
            host(json!("web-1"), json!({"datum/role": "web"})),
            "/labels",
        ),
        (
            "an empty label value",
            host(json!("web-1"), json!({"role": ""})),
            "/labels/role",
        ),
        (
            "labels declared as a single value",
            json!({"datum": "v1alpha1", "type": "Fleet", "name": "f", "labels": {"role": "web"}}),
            "/labels/role",
        ),
    ];
    let mut wrong = Vec::new();
    for ((what, doc, at), validator) in cases.iter().flat_map(|c| [(c, &validator), (c, &draft7)]) {
        let found = problems(validator, doc);
        if !found.iter().any(|p| p.starts_with(&format!("{at}: "))) {
            wrong.push(format!(
                "{what}: expected a problem at `{at}`, got {found:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A JSON object as block YAML: mappings indented, every other value in
/// JSON's own syntax (flow YAML), keys plain where they can be.
fn block_yaml(map: &Map<String, Value>, indent: usize, out: &mut String) {
    for (key, value) in map {
        let plain = key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        let key = if plain {
            key.clone()
        } else {
            Value::String(key.clone()).to_string()
        };
        out.push_str(&format!("{:indent$}{key}:", ""));
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                block_yaml(inner, indent + 2, out);
            }
            other => out.push_str(&format!(" {other}\n")),
        }
    }
}

/// One document alone in a fleet: whether the loader takes it (no error
/// from `datum check`; layers that match no host only warn).
fn loader_accepts(doc: &Value) -> bool {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: t\n",
    )
    .unwrap();
    fs::create_dir(tmp.path().join("files")).unwrap();
    fs::write(tmp.path().join("files/x"), "x").unwrap();
    let mut text = String::new();
    block_yaml(doc.as_object().unwrap(), 0, &mut text);
    // The loader reads back exactly what the schema judged.
    assert_eq!(yaml_documents(&text), std::slice::from_ref(doc), "{text}");
    // A Fleet document is the fleet's own datum.yaml.
    let name = if doc["type"] == "Fleet" {
        "datum.yaml"
    } else {
        "doc.yaml"
    };
    fs::write(tmp.path().join(name), text).unwrap();
    let run = run_in(tmp.path(), &["check"]);
    run.code == 0
}

#[test]
fn the_schema_and_the_loader_agree_on_every_type_of_value() {
    let validator = validator();
    let field = |kind: &str, field: &str, value: Value| {
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {"labels": {"role": "nothing"}},
               "resources": {format!("{kind}[x]"): {field: value}}})
    };
    let label = |value: Value| json!({"datum": "v1alpha1", "type": "Host", "name": "h", "labels": {"role": value}});
    let cases: Vec<Value> = vec![
        field("File", "path", json!("/etc//x/")),
        field("File", "path", json!("etc/x")),
        field("File", "path", json!("/etc/../x")),
        field("File", "path", json!(null)),
        field("File", "mode", json!("640")),
        field("File", "mode", json!("0640")),
        field("File", "mode", json!("06400")),
        field("File", "mode", json!(640)),
        field("File", "source", json!("files/x")),
        field("File", "source", json!("./files/x")),
        field("File", "source", json!("/files/x")),
        field("File", "source", json!("files/../x")),
        field("File", "source", json!("./")),
        field("File", "content", json!("")),
        field("File", "content", json!(12)),
        field("File", "sensitive", json!(true)),
        field("File", "sensitive", json!("yes")),
        field("File", "owner", json!("root")),
        field("File", "owner", json!(0)),
        field("File", "owner", json!("")),
        field("File", "ensure", json!("absent")),
        field("File", "ensure", json!("installed")),
        field("Package", "version", json!(1.10)),
        field("Package", "ensure", json!("installed")),
        field("Service", "ensure", json!("running")),
        field("Service", "ensure", json!("present")),
        field("Service", "restart_on", json!("File[x]")),
        field("Service", "restart_on", json!(["File[x]", "Package[y]"])),
        field("Service", "restart_on", json!(["Fiel[x]"])),
        field("Service", "requires", json!("nginx")),
        field("Service", "requires", json!({"Package": "x"})),
        field("Service", "requires", json!(["File[ x]"])),
        field("User", "uid", json!(1000)),
        field("User", "uid", json!(-1)),
        field("User", "uid", json!(4294967295u64)),
        field("User", "uid", json!("1000")),
        field("User", "groups", json!(["a", "b"])),
        field("User", "groups", json!("a")),
        field("User", "groups", json!(["a", ""])),
        field("Group", "system", json!(false)),
        field("File", "owner", json!("a:b")),
        field("File", "owner", json!("-x")),
        field("File", "owner", json!("..")),
        field("Group", "name", json!("wheel,root")),
        field("User", "groups", json!(["adm", "sudo,root"])),
        field("User", "home", json!("/home/a:b")),
        field("User", "shell", json!("/bin/sh")),
        field("User", "shell", json!("sh")),
        field("Package", "name", json!("-rf")),
        field("Package", "name", json!("g++")),
        field("Package", "version", json!("1:1.18.0-6")),
        field("Package", "version", json!("latest")),
        field("Package", "version", json!("1:a")),
        field("Package", "version", json!("1-")),
        field("Service", "name", json!("getty@tty1")),
        field("Service", "name", json!("a@b@c")),
        field("Service", "name", json!("x;y")),
        field("Exec", "command", json!(["systemctl", "daemon-reload"])),
        field("Exec", "command", json!(["printf", ""])),
        field("Exec", "command", json!([])),
        field("Exec", "command", json!("newaliases")),
        field("Exec", "command", json!(["sleep", 5])),
        field("Exec", "unless", json!(["test", "-e", "/x"])),
        field("Exec", "onlyif", json!({"a": "b"})),
        field("Exec", "shell", json!(true)),
        field("Exec", "shell", json!("/bin/sh")),
        field("Exec", "creates", json!("/var/lib/x")),
        field("Exec", "creates", json!("var/lib/x")),
        field("Exec", "refresh_only", json!(true)),
        field("Exec", "run_on", json!("File[x]")),
        field("Exec", "run_on", json!(["Fiel[x]"])),
        field("Exec", "timeout", json!(300)),
        field("Exec", "timeout", json!(0)),
        field("Exec", "timeout", json!(86401)),
        field("Exec", "timeout", json!("300")),
        field("Exec", "user", json!("postfix")),
        field("Exec", "user", json!("a:b")),
        field("Exec", "cwd", json!("/srv/app")),
        field("Exec", "cwd", json!("srv")),
        field("Exec", "environment", json!(["LC_ALL=C", "EMPTY="])),
        field("Exec", "environment", json!(["1X=2"])),
        field("Exec", "environment", json!(["NOEQUALS"])),
        field("Exec", "environment", json!("A=1")),
        field("Exec", "ensure", json!("present")),
        field("Cron", "schedule", json!("*/15 * * * *")),
        field("Cron", "schedule", json!("@daily")),
        field("Cron", "schedule", json!("@fortnightly")),
        field("Cron", "schedule", json!("* * * *")),
        field("Cron", "schedule", json!(5)),
        field("Cron", "command", json!("date +\\%F")),
        field("Cron", "command", json!("date +%F")),
        field("Cron", "command", json!(["date"])),
        field("Cron", "user", json!("a:b")),
        field("Cron", "environment", json!(["MAILTO=ops@example.com"])),
        field("Cron", "environment", json!(["A=1\n2"])),
        field("Cron", "ensure", json!("mounted")),
        field("Mount", "ensure", json!("mounted")),
        field("Mount", "ensure", json!("present")),
        field("Mount", "device", json!("LABEL=data disk")),
        field("Mount", "device", json!("#x")),
        field("Mount", "fstype", json!("fuse.sshfs")),
        field("Mount", "fstype", json!("Ext4")),
        field("Mount", "options", json!("defaults,noatime")),
        field("Mount", "options", json!("a,,b")),
        field("Mount", "pass", json!(2)),
        field("Mount", "pass", json!(3)),
        field("Mount", "pass", json!("2")),
        field("Mount", "path", json!("mnt")),
        field("Sysctl", "value", json!(1)),
        field("Sysctl", "value", json!("32768 60999")),
        field("Sysctl", "value", json!("1\n2")),
        field("Sysctl", "name", json!("net.ipv4.ip_forward")),
        field("Sysctl", "name", json!("net/../x")),
        field("Sysctl", "name", json!("-net.x")),
        field("Package", "provider", json!("dnf")),
        field("Package", "provider", json!("yum")),
        field("Package", "name", json!("NetworkManager")),
        field("Package", "name", json!(".x")),
        field("Package", "version", json!("2:1.20.1-1.el9_2")),
        field("Package", "version", json!("latest")),
        field("Package", "version", json!("1.0^git1")),
        field("Repository", "url", json!("file:///srv/repo")),
        field("Repository", "url", json!("/srv/repo")),
        field("Repository", "url", json!("https://a b")),
        field(
            "Repository",
            "suites",
            json!(["bookworm", "bookworm-updates"]),
        ),
        field("Repository", "suites", json!(["a b"])),
        field("Repository", "components", json!(["main"])),
        field(
            "Repository",
            "key",
            json!("-----BEGIN PGP PUBLIC KEY BLOCK-----\nx\n"),
        ),
        field("Repository", "provider", json!("apt")),
        field("Repository", "name", json!("docker-ce")),
        field("Repository", "name", json!("a/b")),
        field("Repository", "ensure", json!("installed")),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {"labels": {"role": "nothing"}}, "resources": {"Cron[a.b]": null}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {"labels": {"role": "nothing"}}, "resources": {"Cron[nightly-backup]": null}}),
        json!({"datum": "v1alpha1", "type": "Fleet", "name": "f",
               "labels": {"os": {"values": ["debian-12"], "fact": "os"}}}),
        json!({"datum": "v1alpha1", "type": "Fleet", "name": "f",
               "labels": {"os": {"values": ["debian-12"], "fact": "oss"}}}),
        json!({"datum": "v1alpha1", "type": "Fleet", "name": "f",
               "labels": {"os": {"fact": "os"}}}),
        json!({"datum": "v1alpha1", "type": "Fleet", "name": "f",
               "labels": {"os": {"values": ["a"], "colour": "x"}}}),
        field("Symlink", "target", json!("../relative")),
        field("Symlink", "mode", json!("0640")),
        label(json!("web")),
        label(json!(1)),
        label(json!(true)),
        label(json!("")),
        label(json!("a\u{7}b")),
        label(json!(["web"])),
        json!({"datum": "v1alpha1", "type": "Host", "name": "h", "labels": {"a/b/c": "x"}}),
        json!({"datum": "v1alpha1", "type": "Host", "name": "h", "labels": {"datum/host": "h"}}),
        json!({"datum": "v1alpha1", "type": "Host", "name": "h-", "labels": {}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 2147483648u64, "match": {}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": -5, "match": {}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {"labels": {"datum/host": "h"}}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {"labels": {"datum/role": "h"}}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {"labels": null}}),
        json!({"datum": "v1alpha1", "type": "Layer", "name": "x", "precedence": 0,
               "match": {}, "resources": {"File[x]": null}}),
    ];
    let mut disagree = Vec::new();
    let mut accepted = 0;
    for doc in &cases {
        let schema_ok = problems(&validator, doc).is_empty();
        let loader_ok = loader_accepts(doc);
        accepted += usize::from(loader_ok);
        if schema_ok != loader_ok {
            disagree.push(format!(
                "{doc}: the schema {} it, the loader {} it",
                if schema_ok { "accepts" } else { "refuses" },
                if loader_ok { "accepts" } else { "refuses" }
            ));
        }
    }
    assert!(disagree.is_empty(), "{disagree:#?}");
    // Both answers occur, so neither side agrees by saying the same to all.
    assert!(accepted > 10 && accepted < cases.len() - 10, "{accepted}");
}
