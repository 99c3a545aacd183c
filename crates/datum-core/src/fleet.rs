//! The loaded repository: hosts by name, layers in fold order, interned
//! labels and resource ids, payload digests, and the index that finds the
//! layers matching a host.
//!
//! Loading never stops at the first problem. Every problem becomes a
//! diagnostic; a document that fails is set aside, remembering which hosts
//! it touches, so that every host no broken document touches still resolves.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::diagnostic::Diagnostic;
use crate::document::{self, Broken, FieldValue, FileDocs, HOST_LABEL, LabelDecl, LayerDoc};
use crate::intern::{Interner, Sym};
use crate::reader::{ReadError, Reader, SourceError};
use crate::schema::{Field, ResourceId, Value, suggest};
use crate::source::{FileId, Files, Pos, Span};

/// Document files larger than this are refused: no real fleet file comes
/// near it, and the limit bounds the memory one file can take.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// A host, by its position in name order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// A layer, by its position in fold order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LayerId(pub u32);

/// An interned resource id.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResId(pub u32);

/// A label with the place it was written.
#[derive(Clone, Debug)]
pub struct Label {
    pub key: Sym,
    pub value: Sym,
    pub key_span: Span,
    pub value_span: Span,
}

#[derive(Debug)]
pub struct Host {
    pub name: Box<str>,
    pub name_span: Span,
    /// Sorted by key symbol, for lookup; includes `datum/host`.
    pub labels: Vec<Label>,
}

impl Host {
    pub fn label(&self, key: Sym) -> Option<Sym> {
        self.labels
            .binary_search_by(|l| l.key.cmp(&key))
            .ok()
            .map(|i| self.labels[i].value)
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
}

#[derive(Debug)]
pub struct Layer {
    pub file: FileId,
    /// The document's path relative to the fleet root.
    pub path: String,
    /// How the layer is shown: its path without a trailing `/layer.yaml`.
    pub display: String,
    pub name: Box<str>,
    pub precedence: i32,
    pub precedence_span: Span,
    pub match_span: Span,
    /// Sorted by key symbol. Empty: matches every host.
    pub matcher: Vec<Label>,
    pub resources: Vec<LayerResource>,
}

/// A document that failed to load.
#[derive(Debug, Clone)]
pub struct BrokenDoc {
    pub path: String,
    pub what: &'static str,
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
    fn intern(&mut self, id: &ResourceId) -> ResId {
        if let Some(&r) = self.map.get(id) {
            return r;
        }
        let r = ResId(self.ids.len() as u32);
        self.map.insert(id.clone(), r);
        self.text.push(id.to_string());
        self.ids.push(id.clone());
        r
    }

    fn finish(&mut self) {
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

/// Finds the layers matching a host without looking at every layer: each
/// layer is filed under its rarest label pair, so a host only inspects the
/// layers filed under the pairs it carries.
#[derive(Debug, Default)]
struct MatchIndex {
    always: Vec<LayerId>,
    by_pair: FxHashMap<(Sym, Sym), Vec<LayerId>>,
}

/// A loaded fleet.
#[derive(Debug)]
pub struct Fleet {
    pub files: Files,
    pub name: Option<Box<str>>,
    /// `Fleet.labels`, when declared.
    pub declared: Option<BTreeMap<String, BTreeSet<String>>>,
    pub syms: Interner,
    /// Sorted by name.
    pub hosts: Vec<Host>,
    /// In fold order: precedence, then document path component by component.
    pub layers: Vec<Layer>,
    pub resources: ResourceTable,
    pub sources: BTreeMap<String, SourceInfo>,
    /// Problems found while loading, sorted by place.
    pub diagnostics: Vec<Diagnostic>,
    /// Documents that failed to load.
    pub broken: Vec<BrokenDoc>,
    /// Broken documents that touch every host.
    blocks_all: Vec<u32>,
    /// Broken documents that touch each host, by host.
    blocks: Vec<Vec<u32>>,
    /// Host names whose own documents failed, with those documents.
    broken_hosts: BTreeMap<String, Vec<u32>>,
    index: MatchIndex,
    host_key: Sym,
}

/// Why a layer does or does not match a host, label by label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCheck {
    pub key: Sym,
    pub wanted: Sym,
    /// What the host carries for the key, if anything.
    pub found: Option<Sym>,
}

impl LabelCheck {
    pub fn holds(&self) -> bool {
        self.found == Some(self.wanted)
    }
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

    /// The symbols of a label pair as hosts carry it; `None` when no host
    /// can carry it (a key or value never seen).
    pub fn label_pair(&self, key: &str, value: &str) -> Option<(Sym, Sym)> {
        pair_sym(&self.syms, &self.hosts, key, value)
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

    /// The layers matching a host, in fold order.
    pub fn matching(&self, id: HostId) -> Vec<LayerId> {
        let host = self.host(id);
        let mut out: Vec<LayerId> = self.index.always.clone();
        for label in &host.labels {
            if let Some(layers) = self.index.by_pair.get(&(label.key, label.value)) {
                out.extend(
                    layers
                        .iter()
                        .filter(|&&l| self.layer_holds(l, host))
                        .copied(),
                );
            }
        }
        out.sort_unstable();
        out
    }

    fn layer_holds(&self, layer: LayerId, host: &Host) -> bool {
        self.layer(layer)
            .matcher
            .iter()
            .all(|m| host.label(m.key) == Some(m.value))
    }

    /// Each label of a layer's matcher against what a host carries.
    pub fn check_match(&self, layer: LayerId, host: HostId) -> Vec<LabelCheck> {
        let host = self.host(host);
        self.layer(layer)
            .matcher
            .iter()
            .map(|m| LabelCheck {
                key: m.key,
                wanted: m.value,
                found: host.label(m.key),
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

/// One file's documents before the fleet is assembled.
struct Loaded {
    path: String,
    docs: FileDocs,
    diags: Vec<Diagnostic>,
    /// Set when the file could not be read at all: it may touch any host.
    unreadable: bool,
}

/// Reads and validates a whole fleet. Fails only when the repository
/// cannot be listed; every problem inside it is a diagnostic on the result.
pub fn load(reader: &dyn Reader) -> Result<Fleet, ReadError> {
    let mut paths = reader.discover()?;
    paths.sort_by(|a, b| cmp_paths(a, b));
    paths.dedup();

    // Read every candidate; keep document files. Order is restored after.
    let read: Vec<(String, Result<Vec<u8>, ReadError>)> = paths
        .into_par_iter()
        .map(|p| {
            let r = reader.read(&p, MAX_FILE_BYTES);
            (p, r)
        })
        .collect();
    let mut files = Files::default();
    let mut unreadable = Vec::new();
    let mut texts: Vec<(FileId, bool)> = Vec::new();
    for (path, result) in read {
        match result {
            Ok(bytes) => {
                if !document::is_document_file(&bytes) {
                    continue;
                }
                match String::from_utf8(bytes) {
                    Ok(text) => texts.push((files.add(path, text), true)),
                    Err(e) => {
                        let bytes = e.into_bytes();
                        let valid = std::str::from_utf8(&bytes)
                            .map_err(|e| e.valid_up_to())
                            .err()
                            .unwrap_or(0);
                        let at = position_of(&bytes[..valid]);
                        let text = String::from_utf8_lossy(&bytes).into_owned();
                        let id = files.add(path, text);
                        unreadable.push(
                            Diagnostic::error("not-utf8", "this file is not valid UTF-8")
                                .at(Span::point(id, at), "invalid byte")
                                .hint("save the file as UTF-8"),
                        );
                        texts.push((id, false));
                    }
                }
            }
            Err(e) => {
                unreadable.push(Diagnostic::error("unreadable", e.to_string()).note(format!(
                    "{} was not read, so every host is held back: it could have held any layer",
                    match &e {
                        ReadError::Io { path, .. } | ReadError::TooLarge { path, .. } =>
                            path.as_str(),
                    }
                )))
            }
        }
    }

    let loaded: Vec<Loaded> = texts
        .par_iter()
        .map(|&(id, utf8)| {
            let text = files.get(id).text();
            let mut diags = Vec::new();
            let mut docs = document::decode_file(id, text, &mut diags);
            if !utf8 {
                // The documents are only a guess at what the file holds: keep
                // what they touch, and report the encoding alone.
                diags.clear();
                let mut broken = std::mem::take(&mut docs.broken);
                broken.extend(docs.hosts.drain(..).map(|h| Broken::Host(Some(h.name))));
                broken.extend(
                    docs.layers
                        .drain(..)
                        .map(|l| Broken::Layer(Some(l.matcher))),
                );
                if !docs.fleets.is_empty() {
                    docs.fleets.clear();
                    broken.push(Broken::Fleet);
                }
                docs.broken = broken;
            }
            Loaded {
                path: files.path(id).to_owned(),
                docs,
                diags,
                unreadable: false,
            }
        })
        .collect();
    let mut loaded = loaded;
    for d in &unreadable {
        if d.code == "unreadable" {
            loaded.push(Loaded {
                path: String::new(),
                docs: FileDocs::default(),
                diags: Vec::new(),
                unreadable: true,
            });
        }
    }
    let mut asm = Assembler::new(files);
    asm.diags.extend(unreadable);
    asm.assemble(loaded, reader);
    Ok(asm.finish())
}

/// Line and column just after `bytes`.
fn position_of(bytes: &[u8]) -> Pos {
    let line = bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let last = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&bytes[last..]).chars().count() as u32 + 1;
    Pos { line, col }
}

/// A layer being assembled, with where it came from.
struct PendingLayer {
    file: FileId,
    path: String,
    doc: LayerDoc,
    ok: bool,
}

struct PendingHost {
    name: Box<str>,
    name_span: Span,
    labels: Vec<LabelDecl>,
    path: String,
    ok: bool,
}

/// What a broken document touches, once labels are interned.
enum Touch {
    All,
    Host(Box<str>),
    Matcher(Vec<LabelDecl>),
}

struct Assembler {
    files: Files,
    diags: Vec<Diagnostic>,
    syms: Interner,
    resources: ResourceTable,
    broken: Vec<BrokenDoc>,
    touches: Vec<Touch>,
    fleet_name: Option<Box<str>>,
    declared: Option<BTreeMap<String, BTreeSet<String>>>,
    hosts: Vec<PendingHost>,
    layers: Vec<PendingLayer>,
    sources: BTreeMap<String, SourceInfo>,
}

impl Assembler {
    fn new(files: Files) -> Assembler {
        Assembler {
            files,
            diags: Vec::new(),
            syms: Interner::default(),
            resources: ResourceTable::default(),
            broken: Vec::new(),
            touches: Vec::new(),
            fleet_name: None,
            declared: None,
            hosts: Vec::new(),
            layers: Vec::new(),
            sources: BTreeMap::new(),
        }
    }

    fn set_aside(&mut self, path: &str, what: &'static str, touch: Touch) {
        self.broken.push(BrokenDoc {
            path: path.to_owned(),
            what,
        });
        self.touches.push(touch);
    }

    fn assemble(&mut self, loaded: Vec<Loaded>, reader: &dyn Reader) {
        let mut fleet_seen = false;
        let mut root_file = false;
        for file in loaded {
            self.diags.extend(file.diags);
            if file.unreadable {
                self.set_aside("(unreadable file)", "file", Touch::All);
                continue;
            }
            let path = file.path;
            let docs = file.docs;
            if path == "datum.yaml" {
                root_file = true;
            }
            for fleet in docs.fleets {
                if path != "datum.yaml" {
                    self.diags.push(
                        Diagnostic::error(
                            "misplaced-fleet",
                            "a Fleet document belongs in datum.yaml at the fleet root",
                        )
                        .at(fleet.span, "Fleet document")
                        .hint("move it to datum.yaml, or remove it: a fleet has exactly one"),
                    );
                    continue;
                }
                if fleet_seen {
                    self.diags.push(
                        Diagnostic::error(
                            "duplicate-fleet",
                            "datum.yaml holds more than one Fleet document",
                        )
                        .at(fleet.span, "second Fleet document")
                        .hint("a fleet has exactly one Fleet document; merge them"),
                    );
                    self.set_aside(&path, "Fleet document", Touch::All);
                    continue;
                }
                fleet_seen = true;
                self.fleet_name = Some(fleet.name);
                self.declared = fleet.labels.map(|labels| {
                    labels
                        .into_iter()
                        .map(|l| {
                            let values = l.values.into_iter().map(|(v, _)| v.into()).collect();
                            (l.key.into(), values)
                        })
                        .collect()
                });
            }
            for b in docs.broken {
                let (what, touch) = match b {
                    Broken::Fleet => ("Fleet document", Touch::All),
                    Broken::Host(Some(name)) => ("Host document", Touch::Host(name)),
                    Broken::Host(None) => ("Host document", Touch::Matcher(vec![bogus_label()])),
                    Broken::Layer(Some(m)) => ("Layer document", Touch::Matcher(m)),
                    Broken::Layer(None) => ("Layer document", Touch::All),
                };
                if what == "Fleet document" {
                    fleet_seen = true;
                }
                self.set_aside(&path, what, touch);
            }
            let file_id = docs.layer_spans.first().map(|s| s.file);
            let layer_count = docs.layer_spans.len();
            for doc in docs.layers {
                self.layers.push(PendingLayer {
                    file: file_id.unwrap_or(FileId(0)),
                    path: path.clone(),
                    doc,
                    ok: true,
                });
            }
            if layer_count > 1 {
                for span in &docs.layer_spans[1..] {
                    self.diags.push(
                        Diagnostic::error("two-layers", "a file holds at most one Layer document")
                            .at(*span, "another Layer in the same file")
                            .also(docs.layer_spans[0], "first Layer of this file")
                            .hint("a layer is identified by its file: move this one to a file of its own"),
                    );
                }
                for l in self.layers.iter_mut().filter(|l| l.path == path) {
                    l.ok = false;
                }
            }
            for host in docs.hosts {
                self.hosts.push(PendingHost {
                    name: host.name,
                    name_span: host.name_span,
                    labels: host.labels,
                    path: path.clone(),
                    ok: true,
                });
            }
        }
        if !fleet_seen {
            let (msg, hint) = if root_file {
                (
                    "datum.yaml holds no Fleet document",
                    "add a document with `datum: v1alpha1`, `type: Fleet` and `name:`",
                )
            } else {
                (
                    "the fleet root has no datum.yaml",
                    "create datum.yaml with `datum: v1alpha1`, `type: Fleet` and `name:`",
                )
            };
            self.diags
                .push(Diagnostic::error("no-fleet", msg).hint(hint));
            self.set_aside("datum.yaml", "Fleet document", Touch::All);
        }
        self.check_hosts();
        self.check_layers(reader);
    }

    fn check_hosts(&mut self) {
        self.hosts.sort_by(|a, b| a.name.cmp(&b.name));
        let mut i = 0;
        while i < self.hosts.len() {
            let mut j = i + 1;
            while j < self.hosts.len() && self.hosts[j].name == self.hosts[i].name {
                j += 1;
            }
            if j - i > 1 {
                // Order the duplicates by place so the report is stable.
                let mut group: Vec<usize> = (i..j).collect();
                group.sort_by(|&a, &b| {
                    cmp_paths(&self.hosts[a].path, &self.hosts[b].path).then(
                        self.hosts[a]
                            .name_span
                            .start
                            .cmp(&self.hosts[b].name_span.start),
                    )
                });
                let first = self.hosts[group[0]].name_span;
                for &k in &group[1..] {
                    let h = &self.hosts[k];
                    self.diags.push(
                        Diagnostic::error(
                            "duplicate-host",
                            format!("host `{}` is declared more than once", h.name),
                        )
                        .at(h.name_span, "declared again here")
                        .also(first, "first declared here")
                        .hint("host names are unique in a fleet: remove one, or rename it"),
                    );
                }
                for k in i..j {
                    self.hosts[k].ok = false;
                }
            }
            i = j;
        }
        for k in 0..self.hosts.len() {
            let labels = std::mem::take(&mut self.hosts[k].labels);
            let ok = labels.iter().all(|l| self.check_declared(l, false));
            self.hosts[k].labels = labels;
            if !ok {
                self.hosts[k].ok = false;
            }
        }
        for k in 0..self.hosts.len() {
            if !self.hosts[k].ok {
                let (path, name) = (self.hosts[k].path.clone(), self.hosts[k].name.clone());
                self.set_aside(&path, "Host document", Touch::Host(name));
            }
        }
    }

    /// Against `Fleet.labels`, when declared. Returns whether the label is allowed.
    fn check_declared(&mut self, label: &LabelDecl, matcher: bool) -> bool {
        let Some(declared) = &self.declared else {
            return true;
        };
        if matcher && &*label.key == HOST_LABEL {
            return true;
        }
        let Some(values) = declared.get(&*label.key) else {
            let hint = match suggest(&label.key, declared.keys().map(String::as_str)) {
                Some(n) => format!(
                    "did you mean `{n}`? datum.yaml declares {}",
                    key_list(declared)
                ),
                None => format!(
                    "datum.yaml declares {}; declare the key there if it is new",
                    key_list(declared)
                ),
            };
            self.diags.push(
                Diagnostic::error(
                    "undeclared-label",
                    format!("label key `{}` is not declared in datum.yaml", label.key),
                )
                .at(label.key_span, "undeclared key")
                .hint(hint),
            );
            return false;
        };
        if !values.contains(&*label.value) {
            let hint = match suggest(&label.value, values.iter().map(String::as_str)) {
                Some(n) => format!(
                    "did you mean `{n}`? `{}` takes {}",
                    label.key,
                    value_list(values)
                ),
                None => format!(
                    "`{}` takes {}; declare the value in datum.yaml if it is new",
                    label.key,
                    value_list(values)
                ),
            };
            self.diags.push(
                Diagnostic::error(
                    "undeclared-label",
                    format!(
                        "`{}` is not a declared value of label `{}`",
                        label.value, label.key
                    ),
                )
                .at(label.value_span, "undeclared value")
                .hint(hint),
            );
            return false;
        }
        true
    }

    fn check_layers(&mut self, reader: &dyn Reader) {
        // Two files shown as the same layer.
        self.layers.sort_by(|a, b| cmp_paths(&a.path, &b.path));
        let mut by_display: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, l) in self.layers.iter().enumerate() {
            by_display
                .entry(display_name(&l.path).to_owned())
                .or_default()
                .push(i);
        }
        for (display, group) in &by_display {
            // Two layers of one file are reported as such.
            let paths: BTreeSet<&str> = group
                .iter()
                .map(|&k| self.layers[k].path.as_str())
                .collect();
            if paths.len() > 1 {
                let first = self.layers[group[0]].doc.match_span;
                let first_path = self.layers[group[0]].path.clone();
                for &k in group.iter().filter(|&&k| self.layers[k].path != first_path) {
                    let span = Span::point(self.layers[k].file, Pos { line: 1, col: 1 });
                    self.diags.push(
                        Diagnostic::error(
                            "duplicate-layer",
                            format!(
                                "{} and {} are both the layer `{display}`",
                                first_path, self.layers[k].path
                            ),
                        )
                        .at(span, "second file")
                        .also(first, "first file")
                        .hint("keep one of layer.yaml and layer.yml"),
                    );
                }
                for &k in group {
                    self.layers[k].ok = false;
                }
            }
        }
        // Declared labels in matchers.
        for k in 0..self.layers.len() {
            let matcher = std::mem::take(&mut self.layers[k].doc.matcher);
            let ok = matcher.iter().all(|l| self.check_declared(l, true));
            self.layers[k].doc.matcher = matcher;
            if !ok {
                self.layers[k].ok = false;
            }
        }
        self.check_sources(reader);
    }

    /// Every `source` exists inside the root; each distinct payload is read once.
    fn check_sources(&mut self, reader: &dyn Reader) {
        let mut wanted: BTreeSet<&str> = BTreeSet::new();
        for l in &self.layers {
            for r in &l.doc.resources {
                for f in &r.fields {
                    if f.field == Field::Source
                        && let FieldValue::Value(Value::Str(p)) = &f.value
                    {
                        wanted.insert(p);
                    }
                }
            }
        }
        let wanted: Vec<&str> = wanted.into_iter().collect();
        let results: Vec<Result<SourceInfo, SourceError>> = wanted
            .par_iter()
            .map(|p| {
                reader.read_source(p).map(|bytes| SourceInfo {
                    sha256: hex(&Sha256::digest(&bytes)),
                    size: bytes.len() as u64,
                })
            })
            .collect();
        let mut failed: BTreeMap<String, SourceError> = BTreeMap::new();
        for (p, r) in wanted.iter().zip(results) {
            match r {
                Ok(info) => {
                    self.sources.insert((*p).to_owned(), info);
                }
                Err(e) => {
                    failed.insert((*p).to_owned(), e);
                }
            }
        }
        for k in 0..self.layers.len() {
            let mut bad = Vec::new();
            for r in &self.layers[k].doc.resources {
                for f in &r.fields {
                    if f.field == Field::Source
                        && let FieldValue::Value(Value::Str(p)) = &f.value
                        && let Some(e) = failed.get(&**p)
                    {
                        bad.push((p.to_string(), f.span, e.clone()));
                    }
                }
            }
            for (p, span, e) in bad {
                let hint = match e {
                    SourceError::Missing => {
                        "source paths are relative to the fleet root (the directory holding datum.yaml); check the name, and that the file is committed"
                    }
                    SourceError::Escapes { .. } => {
                        "payloads must live inside the fleet repository; copy the file in instead of linking to it"
                    }
                    SourceError::NotAFile => {
                        "source names a file; a Directory resource manages directories"
                    }
                    SourceError::Io(_) => "check the file's permissions",
                };
                self.diags.push(
                    Diagnostic::error("invalid-source", format!("source `{p}` {e}"))
                        .at(span, "source")
                        .hint(hint),
                );
                self.layers[k].ok = false;
            }
        }
    }

    fn finish(mut self) -> Fleet {
        // Layers: the broken ones set aside, the rest in fold order.
        let pending = std::mem::take(&mut self.layers);
        let mut layers = Vec::with_capacity(pending.len());
        for l in pending {
            if !l.ok {
                self.set_aside(&l.path, "Layer document", Touch::Matcher(l.doc.matcher));
                continue;
            }
            let matcher = self.intern_matcher(&l.doc.matcher);
            let resources = l
                .doc
                .resources
                .into_iter()
                .map(|r| LayerResource {
                    id: self.resources.intern(&r.id),
                    span: r.span,
                    fields: r
                        .fields
                        .into_iter()
                        .map(|f| LayerField {
                            field: f.field,
                            span: f.span,
                            setting: match f.value {
                                FieldValue::Value(v) => Setting::Value(v),
                                FieldValue::Unset => Setting::Unset,
                                FieldValue::Refs(refs) => Setting::Refs(
                                    refs.iter()
                                        .map(|(id, s)| (self.resources.intern(id), *s))
                                        .collect(),
                                ),
                            },
                        })
                        .collect(),
                })
                .collect();
            layers.push(Layer {
                file: l.file,
                display: display_name(&l.path).to_owned(),
                path: l.path,
                name: l.doc.name,
                precedence: l.doc.precedence,
                precedence_span: l.doc.precedence_span,
                match_span: l.doc.match_span,
                matcher,
                resources,
            });
        }
        layers.sort_by(|a, b| {
            a.precedence
                .cmp(&b.precedence)
                .then_with(|| cmp_paths(&a.path, &b.path))
        });
        self.resources.finish();

        // Hosts, after the matchers: a host name is indexed only when some
        // matcher names it, so the table of label symbols stays small (and
        // fast to probe) however many hosts there are.
        let host_key = self.syms.intern(HOST_LABEL);
        let pending = std::mem::take(&mut self.hosts);
        let mut hosts = Vec::with_capacity(pending.len());
        self.syms.reserve(pending.len());
        for h in pending.into_iter().filter(|h| h.ok) {
            let mut labels: Vec<Label> = Vec::with_capacity(h.labels.len() + 1);
            labels.extend(h.labels.iter().map(|l| Label {
                key: self.syms.intern(&l.key),
                value: self.syms.intern(&l.value),
                key_span: l.key_span,
                value_span: l.value_span,
            }));
            let name = match self.syms.get(&h.name) {
                Some(sym) => sym,
                None => self.syms.add_unindexed(&h.name),
            };
            labels.push(Label {
                key: host_key,
                value: name,
                key_span: h.name_span,
                value_span: h.name_span,
            });
            labels.sort_by_key(|l| l.key);
            hosts.push(Host {
                name: h.name,
                name_span: h.name_span,
                labels,
            });
        }

        // What the broken documents touch.
        let mut blocks_all = Vec::new();
        let mut blocks = vec![Vec::new(); hosts.len()];
        let mut broken_hosts: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let touches = std::mem::take(&mut self.touches);
        let mut hosts_by_pair: Option<FxHashMap<(Sym, Sym), Vec<u32>>> = None;
        for (i, touch) in touches.iter().enumerate() {
            let i = i as u32;
            match touch {
                Touch::All => blocks_all.push(i),
                Touch::Host(name) => {
                    broken_hosts.entry(name.to_string()).or_default().push(i);
                    if let Ok(h) = hosts.binary_search_by(|h: &Host| (*h.name).cmp(name)) {
                        blocks[h].push(i);
                    }
                }
                Touch::Matcher(m) => {
                    let wanted: Option<Vec<(Sym, Sym)>> = m
                        .iter()
                        .map(|l| pair_sym(&self.syms, &hosts, &l.key, &l.value))
                        .collect();
                    // A label no host carries: the document touches no host.
                    let Some(wanted) = wanted else { continue };
                    // Only hosts carrying the rarest wanted label can match:
                    // many broken host layers must not each scan every host.
                    let by_pair = hosts_by_pair.get_or_insert_with(|| pair_index(&hosts));
                    let candidates: Box<dyn Iterator<Item = u32>> = match wanted
                        .iter()
                        .map(|p| by_pair.get(p).map_or(&[][..], Vec::as_slice))
                        .min_by_key(|c| c.len())
                    {
                        Some(c) => Box::new(c.iter().copied()),
                        None => Box::new(0..hosts.len() as u32),
                    };
                    for h in candidates {
                        let host = &hosts[h as usize];
                        if wanted.iter().all(|&(k, v)| host.label(k) == Some(v)) {
                            blocks[h as usize].push(i);
                        }
                    }
                }
            }
        }

        let index = build_index(&hosts, &layers);
        let mut diagnostics = std::mem::take(&mut self.diags);
        let files = self.files;
        diagnostics.sort_by(|a, b| a.sort_key(&files).cmp(&b.sort_key(&files)));
        diagnostics.dedup();
        Fleet {
            files,
            name: self.fleet_name,
            declared: self.declared,
            syms: self.syms,
            hosts,
            layers,
            resources: self.resources,
            sources: self.sources,
            diagnostics,
            broken: self.broken,
            blocks_all,
            blocks,
            broken_hosts,
            index,
            host_key,
        }
    }

    fn intern_matcher(&mut self, m: &[LabelDecl]) -> Vec<Label> {
        let mut out: Vec<Label> = m
            .iter()
            .map(|l| Label {
                key: self.syms.intern(&l.key),
                value: self.syms.intern(&l.value),
                key_span: l.key_span,
                value_span: l.value_span,
            })
            .collect();
        out.sort_by_key(|l| l.key);
        out
    }
}

/// A label no host can carry, for a host document whose name is unknown.
fn bogus_label() -> LabelDecl {
    let span = Span::point(FileId(0), Pos::default());
    LabelDecl {
        key: "datum/unknown".into(),
        value: "".into(),
        key_span: span,
        value_span: span,
    }
}

/// The symbols of a label pair as hosts carry it, if any host can.
/// `datum/host` values are host names, which are not all indexed.
fn pair_sym(syms: &Interner, hosts: &[Host], key: &str, value: &str) -> Option<(Sym, Sym)> {
    let k = syms.get(key)?;
    if key == HOST_LABEL {
        let h = hosts.binary_search_by(|h| (*h.name).cmp(value)).ok()?;
        return Some((k, hosts[h].label(k)?));
    }
    Some((k, syms.get(value)?))
}

/// Each label pair with the hosts carrying it.
fn pair_index(hosts: &[Host]) -> FxHashMap<(Sym, Sym), Vec<u32>> {
    let mut map: FxHashMap<(Sym, Sym), Vec<u32>> = FxHashMap::default();
    for (h, host) in hosts.iter().enumerate() {
        for l in &host.labels {
            map.entry((l.key, l.value)).or_default().push(h as u32);
        }
    }
    map
}

fn build_index(hosts: &[Host], layers: &[Layer]) -> MatchIndex {
    let mut count: FxHashMap<(Sym, Sym), u32> = FxHashMap::default();
    for h in hosts {
        for l in &h.labels {
            *count.entry((l.key, l.value)).or_default() += 1;
        }
    }
    let mut index = MatchIndex::default();
    for (i, layer) in layers.iter().enumerate() {
        let id = LayerId(i as u32);
        let rarest = layer
            .matcher
            .iter()
            .map(|m| {
                (
                    count.get(&(m.key, m.value)).copied().unwrap_or(0),
                    m.key,
                    m.value,
                )
            })
            .min();
        match rarest {
            None => index.always.push(id),
            Some((_, k, v)) => index.by_pair.entry((k, v)).or_default().push(id),
        }
    }
    index
}

fn key_list(declared: &BTreeMap<String, BTreeSet<String>>) -> String {
    declared
        .keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn value_list(values: &BTreeSet<String>) -> String {
    values
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::MemReader;

    pub(crate) const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: test\n";

    fn host(name: &str, labels: &str) -> String {
        format!("datum: v1alpha1\ntype: Host\nname: {name}\nlabels: {labels}\n---\n")
    }

    fn layer(prec: i32, labels: &str, resources: &str) -> String {
        format!(
            "datum: v1alpha1\ntype: Layer\nname: l\nprecedence: {prec}\nmatch: {{labels: {labels}}}\nresources:\n{resources}"
        )
    }

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
        let codes: Vec<&str> = fleet.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["duplicate-host", "two-layers"]);
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
        assert_eq!(fleet.diagnostics[0].code, "no-fleet");
        assert_eq!(fleet.blockers(fleet.host_id("web-001").unwrap()).len(), 1);
    }

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
