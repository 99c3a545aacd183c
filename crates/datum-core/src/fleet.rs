//! The loaded fleet: hosts by name, layers in fold order, interned labels
//! and resource ids, payload digests, and which broken documents hold back
//! which hosts. The data every later stage reads, and every question asked
//! of it directly (`impl Fleet` is here alone): the layers matching a host
//! (through [`crate::matcher`]), the field a contribution points at, the
//! resource id nearest a mistyped one. The loader builds it.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::diagnostic::Diagnostic;
use crate::document::{HOST_LABEL, KeyDecl, RolloutDecl};
use crate::intern::{Interner, Sym};
use crate::matcher::{self, Label, LabelCheck, MatchIndex};
use crate::schema::{Field, ResourceId, Value, nearest, suggest};
use crate::source::{FileId, Files, Span};
use crate::vars::VarSetting;

/// A host, by its position in name order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// A layer, by its position in fold order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LayerId(pub u32);

/// An interned resource id.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResId(pub u32);

/// One field as one layer sets it: indices into the fleet's layers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Contrib {
    pub layer: LayerId,
    /// Index of the resource in the layer.
    pub resource: u32,
    /// Index of the field in that resource.
    pub field: u32,
}

/// One var as one layer sets it: the layer, and the var's index in it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarContrib {
    pub layer: LayerId,
    pub var: u32,
}

#[derive(Debug)]
pub struct Host {
    pub name: Box<str>,
    pub name_span: Span,
    /// Sorted by key symbol, for lookup; includes `datum/host`.
    pub labels: Vec<Label>,
    /// `keys`: the public keys it decrypts secrets with, as written.
    pub keys: Vec<KeyDecl>,
}

impl Host {
    pub fn label(&self, key: Sym) -> Option<Sym> {
        matcher::carried(&self.labels, key)
    }
}

/// A value a layer sets, with resource ids interned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    Value(Value),
    /// `null`: unsets what lower layers set.
    Unset,
    Refs(Box<[(ResId, Span)]>),
}

#[derive(Debug)]
pub struct LayerField {
    pub field: Field,
    pub span: Span,
    pub setting: Setting,
}

#[derive(Debug)]
pub struct LayerResource {
    pub id: ResId,
    pub span: Span,
    pub fields: Vec<LayerField>,
    /// A problem inside its declaration was reported ([`crate::document::ResourceDecl::set_aside`]):
    /// its other fields are checked, what a missing field would cause is
    /// not reported, and the hosts of its layer get no manifest.
    pub set_aside: bool,
}

/// A var a layer sets under `vars:`.
#[derive(Debug)]
pub struct LayerVar {
    pub name: Box<str>,
    pub name_span: Span,
    /// The value as written.
    pub span: Span,
    pub setting: VarSetting,
}

#[derive(Debug)]
pub struct Layer {
    pub file: FileId,
    /// The document's path relative to the fleet root.
    pub path: String,
    /// How the layer is shown: its path without a trailing `/layer.yaml`.
    pub display: String,
    /// `name:`, unique in the fleet: what people call the layer.
    pub name: Box<str>,
    pub name_span: Span,
    pub precedence: i32,
    pub precedence_span: Span,
    pub match_span: Span,
    /// Sorted by key symbol. Empty: matches every host.
    pub matcher: Vec<Label>,
    pub resources: Vec<LayerResource>,
    /// `vars:`, sorted by name.
    pub vars: Vec<LayerVar>,
}

/// A document that failed to load.
#[derive(Debug, Clone)]
pub struct BrokenDoc {
    pub path: String,
    pub what: BrokenKind,
    /// Loaded with parts set aside (a layer with a resource in error): it
    /// still takes part in `check`'s resolution, but no host it touches
    /// gets a manifest.
    pub partial: bool,
}

/// What failed to load: a file that could not be read, or a document of
/// one type. Printed as `file`, `Fleet document`, ...
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BrokenKind {
    File,
    Fleet,
    Host,
    Layer,
}

impl BrokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BrokenKind::File => "file",
            BrokenKind::Fleet => "Fleet document",
            BrokenKind::Host => "Host document",
            BrokenKind::Layer => "Layer document",
        }
    }
}

impl std::fmt::Display for BrokenKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A payload named by `source`, as read.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    pub sha256: String,
    pub size: u64,
}

/// Every resource id any layer names, interned, with its rank in sorted order.
#[derive(Debug, Default)]
pub struct ResourceTable {
    map: FxHashMap<ResourceId, ResId>,
    ids: Vec<ResourceId>,
    text: Vec<String>,
    rank: Vec<u32>,
}

impl ResourceTable {
    pub(crate) fn intern(&mut self, id: &ResourceId) -> ResId {
        if let Some(&r) = self.map.get(id) {
            return r;
        }
        let r = ResId(self.ids.len() as u32);
        self.map.insert(id.clone(), r);
        self.text.push(id.to_string());
        self.ids.push(id.clone());
        r
    }

    pub(crate) fn finish(&mut self) {
        let mut order: Vec<u32> = (0..self.ids.len() as u32).collect();
        order.sort_by(|&a, &b| self.text[a as usize].cmp(&self.text[b as usize]));
        self.rank = vec![0; order.len()];
        for (rank, &i) in order.iter().enumerate() {
            self.rank[i as usize] = rank as u32;
        }
    }

    pub fn get(&self, r: ResId) -> &ResourceId {
        &self.ids[r.0 as usize]
    }

    /// `Type[title]`.
    pub fn text(&self, r: ResId) -> &str {
        &self.text[r.0 as usize]
    }

    /// Position in the sorted order of ids.
    pub fn rank(&self, r: ResId) -> u32 {
        self.rank[r.0 as usize]
    }

    pub fn lookup(&self, id: &ResourceId) -> Option<ResId> {
        self.map.get(id).copied()
    }

    /// Every id, sorted.
    pub fn all(&self) -> impl Iterator<Item = ResId> + '_ {
        let mut v: Vec<ResId> = (0..self.ids.len() as u32).map(ResId).collect();
        v.sort_by_key(|&r| self.rank(r));
        v.into_iter()
    }
}

/// A loaded fleet.
#[derive(Debug)]
pub struct Fleet {
    pub files: Files,
    pub name: Option<Box<str>>,
    /// `Fleet.labels`, when declared.
    pub declared: Option<BTreeMap<String, BTreeSet<String>>>,
    /// Declared label keys tied to a fact (`fact:` in `Fleet.labels`):
    /// the fact, and where the tie is written.
    pub ties: BTreeMap<String, (String, Span)>,
    pub syms: Interner,
    /// Sorted by name.
    pub hosts: Vec<Host>,
    /// In fold order: precedence, then document path component by component.
    pub layers: Vec<Layer>,
    pub resources: ResourceTable,
    /// Payloads named by `source` and `secret` (the ciphertext), by path.
    pub sources: BTreeMap<String, SourceInfo>,
    /// When some layer names a template: every file under `templates/`,
    /// by path, with its text in the file table, or why it cannot be used.
    pub templates: BTreeMap<String, Result<FileId, String>>,
    /// For each `secret`, the text of the `.recipients` file beside it, if
    /// there is one.
    pub recipients: BTreeMap<String, Option<String>>,
    /// Secrets a layer names that do not exist yet (an error each, at the
    /// `secret` line): what `datum secret encrypt` is there to create.
    pub missing_secrets: Vec<String>,
    /// `admins` in `datum.yaml`: keys every secret is also encrypted to.
    pub admins: Vec<KeyDecl>,
    /// `rollout` in `datum.yaml`: the waves as written, when declared
    /// (the `rollout` module says which hosts each takes).
    pub rollout: Option<RolloutDecl>,
    /// The largest payload a `source` may name, in bytes (`limits` in
    /// `datum.yaml`, else [`crate::reader::DEFAULT_SOURCE_LIMIT`]).
    pub source_limit: u64,
    /// Problems found while loading, sorted by place.
    pub diagnostics: Vec<Diagnostic>,
    /// Documents that failed to load.
    pub broken: Vec<BrokenDoc>,
    /// Broken documents that touch every host.
    pub(crate) blocks_all: Vec<u32>,
    /// Broken documents that touch each host, by host.
    pub(crate) blocks: Vec<Vec<u32>>,
    /// Host names whose own documents failed, with those documents.
    pub(crate) broken_hosts: BTreeMap<String, Vec<u32>>,
    pub(crate) index: MatchIndex,
    pub(crate) host_key: Sym,
}

impl Fleet {
    pub fn host_id(&self, name: &str) -> Option<HostId> {
        self.hosts
            .binary_search_by(|h| (*h.name).cmp(name))
            .ok()
            .map(|i| HostId(i as u32))
    }

    pub fn host(&self, id: HostId) -> &Host {
        &self.hosts[id.0 as usize]
    }

    pub fn layer(&self, id: LayerId) -> &Layer {
        &self.layers[id.0 as usize]
    }

    pub fn sym(&self, s: Sym) -> &str {
        self.syms.name(s)
    }

    /// The key of the label every host carries with its own name.
    pub fn host_key(&self) -> Sym {
        self.host_key
    }

    /// A host's labels as text, sorted by key.
    pub fn labels_of(&self, id: HostId) -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = self
            .host(id)
            .labels
            .iter()
            .map(|l| (self.sym(l.key), self.sym(l.value)))
            .collect();
        v.sort_unstable();
        v
    }

    /// The labels of a host that are tied to a fact, in key order, with
    /// the places of the label and of the tie ([`crate::facts`]).
    pub fn tied(&self, id: HostId) -> Vec<crate::facts::Tied> {
        let host = self.host(id);
        self.ties
            .iter()
            .filter_map(|(key, (fact, tie))| {
                let k = self.syms.get(key)?;
                let label = host.labels.iter().find(|l| l.key == k)?;
                Some(crate::facts::Tied {
                    key: key.clone(),
                    value: self.sym(label.value).to_owned(),
                    fact: fact.clone(),
                    declared: self
                        .declared
                        .as_ref()
                        .and_then(|d| d.get(key))
                        .map(|v| v.iter().cloned().collect()),
                    places: Some((label.value_span, *tie)),
                })
            })
            .collect()
    }

    /// The broken documents that keep a host from resolving.
    pub fn blockers(&self, id: HostId) -> Vec<&BrokenDoc> {
        let mut ids: Vec<u32> = self.blocks_all.clone();
        ids.extend(&self.blocks[id.0 as usize]);
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter().map(|i| &self.broken[i as usize]).collect()
    }

    /// The broken documents that keep every host from resolving: a layer
    /// whose matcher cannot be read as written, datum.yaml, a file that
    /// could not be read. Until they are fixed no host has a manifest.
    pub fn blocking_every_host(&self) -> Vec<&BrokenDoc> {
        self.blocks_all
            .iter()
            .map(|&i| &self.broken[i as usize])
            .collect()
    }

    /// The files that may declare hosts no one can see: a broken Host
    /// document, a file that could not be read, and a file with a YAML
    /// syntax error (what the broken part said is unknown). Sorted.
    pub fn files_that_may_hide_hosts(&self) -> Vec<String> {
        use crate::diagnostic::Code;
        let mut paths: Vec<String> = self
            .broken
            .iter()
            .filter(|b| matches!(b.what, BrokenKind::Host | BrokenKind::File))
            .map(|b| b.path.clone())
            .chain(self.diagnostics.iter().filter_map(|d| {
                let label = d.primary.as_ref()?;
                matches!(d.code, Code::YamlSyntax | Code::NotUtf8 | Code::Unreadable)
                    .then(|| self.files.path(label.span.file).to_owned())
            }))
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }

    /// The paths whose content differs between what this fleet read and
    /// what `other` read (one side of each pair may lack the path): document
    /// files and templates by text, payloads by digest, recipients files by
    /// text. Empty when both read the same fleet. Sorted.
    pub fn inputs_differ(&self, other: &Fleet) -> Vec<String> {
        fn texts(f: &Fleet) -> BTreeMap<&str, &str> {
            (0..f.files.len() as u32)
                .map(|i| {
                    let file = f.files.get(FileId(i));
                    (file.path(), file.text())
                })
                .collect()
        }
        fn payloads(f: &Fleet) -> BTreeMap<String, Option<&str>> {
            let digests = f.sources.iter().map(|(p, s)| (p.clone(), Some(&*s.sha256)));
            let recipients = f
                .recipients
                .iter()
                .map(|(p, t)| (format!("{p}.recipients"), t.as_deref()));
            digests.chain(recipients).collect()
        }
        let mut differ: Vec<String> = Vec::new();
        let (a, b) = (texts(self), texts(other));
        for p in a.keys().chain(b.keys()) {
            if a.get(p) != b.get(p) {
                differ.push((*p).to_owned());
            }
        }
        let (a, b) = (payloads(self), payloads(other));
        for p in a.keys().chain(b.keys()) {
            if a.get(p) != b.get(p) {
                differ.push(p.clone());
            }
        }
        differ.sort();
        differ.dedup();
        differ
    }

    /// For a name that is not a loaded host: the broken documents that
    /// declared it, if any.
    pub fn broken_host(&self, name: &str) -> Option<Vec<&BrokenDoc>> {
        self.broken_hosts
            .get(name)
            .map(|ids| ids.iter().map(|&i| &self.broken[i as usize]).collect())
    }

    /// Whether loading found errors.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The symbols of a label pair as hosts carry it; `None` when no host
    /// can carry it (a key or value never seen).
    pub fn label_pair(&self, key: &str, value: &str) -> Option<(Sym, Sym)> {
        pair_sym(&self.syms, &self.hosts, key, value)
    }

    /// The layers matching a host, in fold order.
    pub fn matching(&self, id: HostId) -> Vec<LayerId> {
        self.index
            .matching(&self.host(id).labels, |l| &self.layers[l as usize].matcher)
            .into_iter()
            .map(LayerId)
            .collect()
    }

    /// Each key of a layer's matcher against what a host carries.
    pub fn check_match(&self, layer: LayerId, host: HostId) -> Vec<LabelCheck> {
        matcher::check(&self.layer(layer).matcher, &self.host(host).labels)
    }

    /// The field a contribution points at.
    pub fn setting(&self, c: Contrib) -> &LayerField {
        &self.layer(c.layer).resources[c.resource as usize].fields[c.field as usize]
    }

    /// The var a contribution points at.
    pub fn var(&self, c: VarContrib) -> &LayerVar {
        &self.layer(c.layer).vars[c.var as usize]
    }

    /// Where a contribution lists one entry of `requires` or `restart_on`.
    pub fn entry_span(&self, c: Contrib, id: ResId) -> Span {
        let field = self.setting(c);
        match &field.setting {
            Setting::Refs(refs) => refs
                .iter()
                .find(|(r, _)| *r == id)
                .map_or(field.span, |(_, s)| *s),
            _ => field.span,
        }
    }

    /// The precedence of a contribution's layer.
    pub fn precedence(&self, c: Contrib) -> i32 {
        self.layer(c.layer).precedence
    }

    /// The resource id some layer declares that is nearest to `id`, for a typo.
    pub fn nearest_declared(&self, id: &ResourceId) -> Option<ResId> {
        let declared = self.declared();
        let near = nearest(
            &id.to_string(),
            declared.iter().map(|&r| self.resources.text(r)),
        )?;
        declared
            .into_iter()
            .find(|&r| self.resources.text(r) == near)
    }

    /// The declared resource of the same type whose title is a likely typo
    /// of `id`'s (see [`suggest`]): `Package[ngnix]` gives `Package[nginx]`,
    /// and never a resource of another type.
    pub fn suggest_declared(&self, id: ResId) -> Option<ResId> {
        let target = self.resources.get(id);
        let same_kind: Vec<ResId> = self
            .declared()
            .into_iter()
            .filter(|&r| self.resources.get(r).kind == target.kind)
            .collect();
        let near = suggest(
            &target.title,
            same_kind.iter().map(|&r| &*self.resources.get(r).title),
        )?;
        same_kind
            .into_iter()
            .find(|&r| &*self.resources.get(r).title == near)
    }

    /// Every resource some layer declares, sorted, once each.
    fn declared(&self) -> Vec<ResId> {
        let mut declared: Vec<ResId> = self
            .layers
            .iter()
            .flat_map(|l| l.resources.iter().map(|r| r.id))
            .collect();
        declared.sort_unstable();
        declared.dedup();
        declared
    }
}

/// The symbols of a label pair as hosts carry it, if any host can.
/// `datum/host` values are host names, which are not all indexed.
pub(crate) fn pair_sym(
    syms: &Interner,
    hosts: &[Host],
    key: &str,
    value: &str,
) -> Option<(Sym, Sym)> {
    let k = syms.get(key)?;
    if key == HOST_LABEL {
        let h = hosts.binary_search_by(|h| (*h.name).cmp(value)).ok()?;
        return Some((k, hosts[h].label(k)?));
    }
    Some((k, syms.get(value)?))
}

/// How a layer document's path is shown: `roles/web/layer.yaml` is `roles/web`.
pub fn display_name(path: &str) -> &str {
    path.strip_suffix("/layer.yaml")
        .or_else(|| path.strip_suffix("/layer.yml"))
        .unwrap_or(path)
}

/// Compares relative paths component by component, as Rust's `Path` does:
/// `roles/web/layer.yaml` sorts before `roles/web-tls/layer.yaml`.
pub fn cmp_paths(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_by_component() {
        assert_eq!(
            cmp_paths("roles/web/layer.yaml", "roles/web-tls/layer.yaml"),
            Ordering::Less
        );
        assert_eq!(display_name("roles/web/layer.yaml"), "roles/web");
        assert_eq!(display_name("extra/tls.yaml"), "extra/tls.yaml");
        assert_eq!(display_name("x/layer.yml"), "x");
    }
}
