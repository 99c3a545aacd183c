//! A bundle's manifest read back into resources, field by field as the
//! schema types them, for apply. The manifest is the text `datum render`
//! writes; the reader is strict about what changes what is applied (an
//! unknown resource type or field, a value of the wrong type, a path that
//! is not normalised) and lenient about the rest (`labels`, `layers` and
//! top-level keys a later format may add are not read).

use std::collections::BTreeMap;

use datum_apply::spec::ResourceView;
use datum_core::VERSION;
use datum_core::diagnostic::{Code, Diagnostic};
use datum_core::schema::{
    Field, Kind, ResourceId, SECONDS_MAX, Ty, Value, normalise_abs_path, normalise_mode,
    normalise_rel_path,
};
use datum_core::settings::{self, Node, Value as Yaml};
use datum_core::source::{Files, Span};

/// One resource of a bundle's manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundledResource {
    id: ResourceId,
    values: BTreeMap<Field, Value>,
    refs: BTreeMap<Field, Vec<ResourceId>>,
}

impl ResourceView for BundledResource {
    fn id(&self) -> &ResourceId {
        &self.id
    }

    fn value(&self, field: Field) -> Option<&Value> {
        self.values.get(&field)
    }

    fn refs(&self, field: Field) -> Vec<ResourceId> {
        self.refs.get(&field).cloned().unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.str(Field::Name).unwrap_or(&self.id.title)
    }
}

/// The manifest is not one apply can use; the problems are drawn as text,
/// each with its line and column in the manifest.
#[derive(Debug, thiserror::Error)]
#[error("the bundle's manifest cannot be applied:\n{text}")]
pub struct ManifestError {
    pub text: String,
}

/// Reads the resources of `manifest` (YAML or JSON text); `name` names it
/// in messages (`web-001.bundle (manifest)`).
pub fn resources(name: &str, manifest: &[u8]) -> Result<Vec<BundledResource>, ManifestError> {
    let text = String::from_utf8_lossy(manifest).into_owned();
    let mut files = Files::default();
    let file = files.add(format!("{name} (manifest)"), text);
    let mut problems = Vec::new();
    let out = match settings::parse(file, files.get(file).text()) {
        Err(diags) => {
            problems = diags;
            Vec::new()
        }
        Ok(doc) => match doc.root() {
            None => {
                problems.push(
                    Diagnostic::error(Code::EmptyManifest, "the manifest is empty").at(
                        Span {
                            file,
                            start: Default::default(),
                            end: Default::default(),
                        },
                        "here",
                    ),
                );
                Vec::new()
            }
            Some(root) => read_manifest(root, &mut problems),
        },
    };
    if problems.is_empty() {
        return Ok(out);
    }
    let mut text = Vec::new();
    for d in &problems {
        let _ = datum_core::present::diagnostic::write(d, &files, &mut text);
    }
    Err(ManifestError {
        text: String::from_utf8_lossy(&text).trim_end().to_owned(),
    })
}

fn problem(span: Span, message: impl Into<String>, hint: &str) -> Diagnostic {
    Diagnostic::error(Code::BundleManifest, message)
        .at(span, "here")
        .hint(hint)
}

const REMAKE: &str =
    "make the bundle again with `datum bundle`, by the same Datum release as the agent";

fn read_manifest(root: Node<'_, '_>, problems: &mut Vec<Diagnostic>) -> Vec<BundledResource> {
    let mut version_seen = false;
    let mut out = Vec::new();
    for (key, key_span, value) in root.entries() {
        match key {
            "datum" => {
                version_seen = true;
                if value.scalar_text() != Some(VERSION) {
                    problems.push(problem(
                        value.span(),
                        format!("the manifest's version is not {VERSION}"),
                        REMAKE,
                    ));
                }
            }
            "resources" => match value.value() {
                Yaml::Map => {
                    for (id, id_span, fields) in value.entries() {
                        if let Some(r) = resource(id, id_span, fields, problems) {
                            out.push(r);
                        }
                    }
                }
                Yaml::Null => {}
                _ => problems.push(problem(
                    key_span,
                    format!(
                        "`resources` must be a mapping of resource ids, found {}",
                        value.found()
                    ),
                    REMAKE,
                )),
            },
            _ => {}
        }
    }
    if !version_seen {
        problems.push(problem(
            root.span(),
            "the manifest has no `datum:` version",
            REMAKE,
        ));
    }
    out
}

fn resource(
    id_text: &str,
    id_span: Span,
    fields: Node<'_, '_>,
    problems: &mut Vec<Diagnostic>,
) -> Option<BundledResource> {
    let id = match ResourceId::parse(id_text) {
        Ok(id) => id,
        Err(e) => {
            problems.push(problem(id_span, e.to_string(), REMAKE));
            return None;
        }
    };
    let mut r = BundledResource {
        id,
        values: BTreeMap::new(),
        refs: BTreeMap::new(),
    };
    if !matches!(fields.value(), Yaml::Map | Yaml::Null) {
        problems.push(problem(
            fields.span(),
            format!(
                "`{id_text}` must be a mapping of fields, found {}",
                fields.found()
            ),
            REMAKE,
        ));
        return None;
    }
    let kind = r.id.kind;
    let before = problems.len();
    for (key, key_span, node) in fields.entries() {
        if (key == "source_sha256" && kind.has(Field::Source))
            || (key == "secret_sha256" && kind.has(Field::Secret))
        {
            // Checked against the payload by the bundle decoder already.
            continue;
        }
        if key == "content_sha256" && kind.has(Field::Template) {
            // The digest of the rendered `content` beside it, for readers.
            continue;
        }
        let Some(field) = Field::parse(key).filter(|f| kind.has(*f)) else {
            problems.push(problem(
                key_span,
                format!("{kind} has no field `{key}`"),
                REMAKE,
            ));
            continue;
        };
        match read_field(kind, field, node) {
            Ok(Read::Value(v)) => {
                r.values.insert(field, v);
            }
            Ok(Read::Refs(ids)) => {
                r.refs.insert(field, ids);
            }
            Err(why) => problems.push(problem(
                node.span(),
                format!("`{key}` of {id_text} {why}"),
                REMAKE,
            )),
        }
    }
    let absent = r.values.get(&Field::Ensure).and_then(Value::as_str) == Some("absent");
    for &field in kind.required_when(absent) {
        if !r.values.contains_key(&field) {
            problems.push(problem(
                id_span,
                format!(
                    "{id_text} has no `{field}`, which {} {kind} needs",
                    if kind == Kind::Exec { "an" } else { "a" }
                ),
                REMAKE,
            ));
        }
    }
    (problems.len() == before).then_some(r)
}

enum Read {
    Value(Value),
    Refs(Vec<ResourceId>),
}

/// One field, typed as the schema says; `Err` says what is wrong.
fn read_field(kind: Kind, field: Field, node: Node<'_, '_>) -> Result<Read, String> {
    let ty = kind.ty(field);
    let value = match ty {
        Ty::Bool | Ty::Id | Ty::Seconds | Ty::Pass => read_number(ty, node)?,
        Ty::List | Ty::Argv | Ty::Env => read_list(ty, node)?,
        Ty::Refs => {
            let ids = list(node)?
                .into_iter()
                .map(|t| ResourceId::parse(t).map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?;
            return Ok(Read::Refs(ids));
        }
        _ => read_text(ty, node)?,
    };
    // A name or a line written into a system file follows its rule here
    // too: a manifest not made by `render` must not add a line to one.
    if let Some(rule) = datum_core::names::rule(kind, field) {
        let texts: Vec<&str> = match &value {
            Value::Str(t) => vec![t],
            Value::List(items) => items.iter().map(|t| &**t).collect(),
            _ => Vec::new(),
        };
        if let Some(why) = texts.iter().find_map(|t| rule.check(t)) {
            return Err(format!("is not {}: {why}", rule.what()));
        }
    }
    Ok(Read::Value(value))
}

/// A field whose value is text: content, text, a word, a mode or a path.
fn read_text(ty: Ty, node: Node<'_, '_>) -> Result<Value, String> {
    let t = match node.value() {
        Yaml::Null | Yaml::List | Yaml::Map => {
            return Err(format!("must be text, and is {}", node.found()));
        }
        _ => node.scalar_text().unwrap_or_default(),
    };
    let wrong = match ty {
        Ty::Text if t.is_empty() => Some("is empty".to_owned()),
        Ty::Word(words) if !words.contains(&t) => {
            Some(format!("is `{t}`, not one of {}", words.join(", ")))
        }
        Ty::Mode if normalise_mode(t).as_deref() != Some(t) => {
            Some(format!("is `{t}`, not a mode of four octal digits"))
        }
        Ty::AbsPath if normalise_abs_path(t).as_deref() != Ok(t) => {
            Some(format!("is `{t}`, not a normalised absolute path"))
        }
        Ty::Source | Ty::Template if normalise_rel_path(t).as_deref() != Ok(t) => {
            Some(format!("is `{t}`, not a normalised relative path"))
        }
        Ty::Schedule => datum_core::cron::check(t).map(|why| format!("is `{t}`: {why}")),
        _ => None,
    };
    match wrong {
        Some(wrong) => Err(wrong),
        None => Ok(Value::Str(t.into())),
    }
}

/// A field whose value is a boolean or a bounded number.
fn read_number(ty: Ty, node: Node<'_, '_>) -> Result<Value, String> {
    let found = node.found();
    match (ty, node.value()) {
        (Ty::Bool, Yaml::Bool(b)) => Ok(Value::Bool(b)),
        (Ty::Bool, _) => Err(format!("must be true or false, and is {found}")),
        (Ty::Id, Yaml::Int(i)) if (0..i64::from(u32::MAX)).contains(&i) => Ok(Value::Int(i)),
        (Ty::Id, _) => Err(format!("must be a user or group id, and is {found}")),
        (Ty::Pass, Yaml::Int(i @ 0..=2)) => Ok(Value::Int(i)),
        (Ty::Pass, _) => Err(format!("must be 0, 1 or 2, and is {found}")),
        (_, Yaml::Int(i)) if (1..=SECONDS_MAX).contains(&i) => Ok(Value::Int(i)),
        _ => Err(format!(
            "must be a number of seconds from 1 to {SECONDS_MAX}, and is {found}"
        )),
    }
}

/// A field whose value is a list of text: plain, a command line or an environment.
fn read_list(ty: Ty, node: Node<'_, '_>) -> Result<Value, String> {
    let entries = list(node)?;
    match ty {
        Ty::Argv if entries.first().is_none_or(|p| p.is_empty()) => {
            return Err("names no program".to_owned());
        }
        Ty::Env => {
            if let Some(bad) = entries.iter().find(|e| !is_env_entry(e)) {
                return Err(format!("holds `{bad}`, not NAME=value"));
            }
        }
        _ => {}
    }
    Ok(Value::List(entries.into_iter().map(Into::into).collect()))
}

/// `NAME=value` with a name of letters, digits and `_`, not starting with a digit.
fn is_env_entry(entry: &str) -> bool {
    entry.split_once('=').is_some_and(|(n, _)| {
        n.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
            && n.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
    })
}

fn list<'s>(node: Node<'s, '_>) -> Result<Vec<&'s str>, String> {
    if node.value() != Yaml::List {
        return Err(format!("must be a list, and is {}", node.found()));
    }
    node.items()
        .map(|item| match item.value() {
            Yaml::List | Yaml::Map | Yaml::Null => {
                Err(format!("must list text, and holds {}", item.found()))
            }
            _ => Ok(item.scalar_text().unwrap_or_default()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<BundledResource>, String> {
        resources("web-001.bundle", text.as_bytes()).map_err(|e| e.text)
    }

    #[test]
    fn every_field_type_reads_back() {
        let text = "datum: v1alpha1\ntype: Manifest\nhost: web-001\nlabels: {}\nlayers: [base]\n\
            resources:\n  File[motd]:\n    path: /etc/motd\n    mode: '0644'\n    source: files/motd\n    source_sha256: abc\n    sensitive: false\n    requires:\n    - Package[nginx]\n\
            \x20 Package[nginx]:\n    ensure: installed\n    version: '1.10'\n\
            \x20 User[ops]:\n    uid: 2000\n    groups:\n    - adm\n";
        let got = read(text).unwrap();
        assert_eq!(got.len(), 3);
        let motd = &got[0];
        assert_eq!(motd.kind(), Kind::File);
        assert_eq!(motd.str(Field::Path), Some("/etc/motd"));
        assert_eq!(motd.str(Field::Mode), Some("0644"));
        assert_eq!(motd.value(Field::Sensitive), Some(&Value::Bool(false)));
        assert_eq!(
            motd.refs(Field::Requires),
            [ResourceId::parse("Package[nginx]").unwrap()]
        );
        assert_eq!(got[1].name(), "nginx");
        assert_eq!(got[1].str(Field::Version), Some("1.10"));
        assert_eq!(got[2].value(Field::Uid), Some(&Value::Int(2000)));
        assert_eq!(
            got[2].value(Field::Groups),
            Some(&Value::List(vec!["adm".into()].into()))
        );
    }

    /// A File rendered from a template carries `template`, its rendered
    /// `content` and `content_sha256`; the content is what is applied.
    #[test]
    fn a_rendered_template_reads_back_as_its_content() {
        use datum_core::manifest::Manifest;
        use datum_core::reader::MemReader;
        let reader = MemReader::new()
            .file("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: t\n")
            .file(
                "hosts.yaml",
                "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {site: london}\n",
            )
            .file(
                "base.yaml",
                "datum: v1alpha1\ntype: Layer\nname: b\nprecedence: 0\nmatch: {}\nvars: {dns: 10.1.0.53}\nresources:\n  File[resolv]:\n    path: /etc/resolv.conf\n    template: templates/resolv.j2\n",
            )
            .file(
                "templates/resolv.j2",
                "# {{ labels.site }}\nnameserver {{ vars.dns }}\n",
            );
        let fleet = datum_core::loader::load(&reader).unwrap();
        assert!(fleet.diagnostics.is_empty(), "{:?}", fleet.diagnostics);
        let host = fleet.host_id("web-001").unwrap();
        let res = datum_core::resolve::resolve_host(&fleet, host);
        assert!(res.is_ok(), "{:?}", res.problems);
        let mut text = Vec::new();
        datum_core::emit::write_yaml(&mut text, &Manifest::new(&fleet, host, &res).tree()).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("content_sha256: "), "{text}");
        let got = read(&text).unwrap();
        assert_eq!(
            got[0].str(Field::Content),
            Some("# london\nnameserver 10.1.0.53\n")
        );
        assert_eq!(got[0].str(Field::Template), Some("templates/resolv.j2"));
    }

    #[test]
    fn an_exec_reads_back() {
        let text = "datum: v1alpha1\ntype: Manifest\nhost: h\nresources:\n  Exec[x]:\n    command: [migrate, '', --all]\n    creates: /srv/done\n    timeout: 60\n    environment: [A=1, B=]\n    run_on: ['File[a]']\n    refresh_only: true\n";
        let got = read(text).unwrap();
        let x = &got[0];
        assert_eq!(x.kind(), Kind::Exec);
        assert_eq!(
            x.value(Field::Command),
            Some(&Value::List(
                ["migrate", "", "--all"].map(Into::into).into()
            ))
        );
        assert_eq!(x.value(Field::Timeout), Some(&Value::Int(60)));
        assert_eq!(x.value(Field::RefreshOnly), Some(&Value::Bool(true)));
        assert_eq!(
            x.refs(Field::RunOn),
            [ResourceId::parse("File[a]").unwrap()]
        );
        assert_eq!(x.str(Field::Creates), Some("/srv/done"));
    }

    #[test]
    fn what_would_change_what_is_applied_is_refused_with_its_place() {
        let base = "datum: v1alpha1\ntype: Manifest\nhost: h\nresources:\n";
        for (resources, expected) in [
            ("  File[a]:\n    path: etc/a\n", "(manifest):6:11"),
            (
                "  File[a]:\n    path: /a\n    colour: red\n",
                "File has no field `colour`",
            ),
            (
                "  File[a]:\n    path: /a\n    mode: 644\n",
                "not a mode of four octal digits",
            ),
            ("  Gadget[a]: {}\n", "unknown resource type `Gadget`"),
            (
                "  Directory[a]: {}\n",
                "has no `path`, which a Directory needs",
            ),
            ("  User[a]:\n    uid: -1\n", "must be a user or group id"),
            (
                "  Service[a]:\n    enabled: 'yes'\n",
                "must be true or false",
            ),
            (
                "  File[a]:\n    path: /a\n    requires: [nope]\n",
                "`nope` is not a resource id",
            ),
            (
                "  Exec[a]:\n    creates: /a\n",
                "has no `command`, which an Exec needs",
            ),
            ("  Exec[a]:\n    command: ['']\n", "names no program"),
            (
                "  Exec[a]:\n    command: [x]\n    timeout: 0\n",
                "must be a number of seconds from 1 to 86400",
            ),
            (
                "  Exec[a]:\n    command: [x]\n    environment: [NOEQUALS]\n",
                "holds `NOEQUALS`, not NAME=value",
            ),
            (
                "  Cron[a]:\n    schedule: '61 * * * *'\n    user: root\n    command: x\n",
                "the minute field `61` holds `61`",
            ),
            (
                "  Cron[a]:\n    schedule: '@daily'\n    user: root\n    command: \"x\\n* * * * * root evil\"\n",
                "is not a command line for cron",
            ),
            (
                "  Mount[a]:\n    path: /a\n    device: tmpfs\n    fstype: tmpfs\n    pass: 3\n",
                "must be 0, 1 or 2",
            ),
            (
                "  Sysctl[a]:\n    name: net/../x\n    value: '1'\n",
                "is not a kernel parameter (sysctl) key",
            ),
        ] {
            let err = read(&format!("{base}{resources}")).unwrap_err();
            assert!(err.contains(expected), "{resources}: {err}");
            assert!(err.contains("web-001.bundle (manifest):"), "{err}");
        }
        let err = read("type: Manifest\n").unwrap_err();
        assert!(err.contains("no `datum:` version"), "{err}");
    }
}
