//! Gathers the documents of every file into one [`Assembler`]: the Fleet
//! document (exactly one, in `datum.yaml`), hosts and layers pending the
//! fleet-wide checks, and what each broken document touches.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Broken, FleetDoc, HostDoc, KeyDecl, LabelDecl, LayerDoc, RolloutDecl};
use crate::fleet::{BrokenDoc, BrokenKind, ResourceTable, SourceInfo};
use crate::intern::Interner;
use crate::reader::Reader;
use crate::source::{FileId, Files, Pos, Span};

use super::Loaded;

/// A layer being assembled, with where it came from.
pub(super) struct PendingLayer {
    pub(super) file: FileId,
    pub(super) path: String,
    pub(super) doc: LayerDoc,
    pub(super) ok: bool,
    /// Its matcher means what its author wrote: false when it names a
    /// label key or value `Fleet.labels` does not declare, so the layer,
    /// set aside, touches every host.
    pub(super) matcher_sound: bool,
}

pub(super) struct PendingHost {
    pub(super) name: Box<str>,
    pub(super) name_span: Span,
    pub(super) labels: Vec<LabelDecl>,
    pub(super) keys: Vec<KeyDecl>,
    pub(super) path: String,
    pub(super) ok: bool,
}

/// What a broken document touches, once labels are interned.
pub(super) enum Touch {
    All,
    Host(Box<str>),
    Matcher(Vec<LabelDecl>),
}

/// The fleet being assembled, from the decoded files to [`Assembler::finish`].
pub(super) struct Assembler {
    pub(super) files: Files,
    pub(super) diags: Vec<Diagnostic>,
    pub(super) syms: Interner,
    pub(super) resources: ResourceTable,
    pub(super) broken: Vec<BrokenDoc>,
    pub(super) touches: Vec<Touch>,
    pub(super) fleet_name: Option<Box<str>>,
    pub(super) source_limit: u64,
    pub(super) declared: Option<BTreeMap<String, BTreeSet<String>>>,
    pub(super) ties: BTreeMap<String, (String, Span)>,
    pub(super) hosts: Vec<PendingHost>,
    pub(super) layers: Vec<PendingLayer>,
    pub(super) sources: BTreeMap<String, SourceInfo>,
    pub(super) templates: BTreeMap<String, Result<FileId, String>>,
    pub(super) recipients: BTreeMap<String, Option<String>>,
    pub(super) missing_secrets: Vec<String>,
    pub(super) admins: Vec<KeyDecl>,
    pub(super) rollout: Option<RolloutDecl>,
}

/// What the files gathered so far say about the Fleet document.
#[derive(Default)]
struct FleetSeen {
    /// A Fleet document was read, or one was set aside as broken.
    fleet: bool,
    /// `datum.yaml` is a document file.
    root_file: bool,
}

impl Assembler {
    pub(super) fn new(files: Files) -> Assembler {
        Assembler {
            files,
            diags: Vec::new(),
            syms: Interner::default(),
            resources: ResourceTable::default(),
            broken: Vec::new(),
            touches: Vec::new(),
            fleet_name: None,
            source_limit: crate::reader::DEFAULT_SOURCE_LIMIT,
            declared: None,
            ties: BTreeMap::new(),
            hosts: Vec::new(),
            layers: Vec::new(),
            sources: BTreeMap::new(),
            templates: BTreeMap::new(),
            recipients: BTreeMap::new(),
            missing_secrets: Vec::new(),
            admins: Vec::new(),
            rollout: None,
        }
    }

    pub(super) fn set_aside(&mut self, path: &str, what: BrokenKind, touch: Touch) {
        self.broken.push(BrokenDoc {
            path: path.to_owned(),
            what,
            partial: false,
        });
        self.touches.push(touch);
    }

    /// A layer loaded with resources set aside: it holds back the hosts its
    /// matcher selects, and stays in the fleet for `check`.
    pub(super) fn set_partly_aside(&mut self, path: &str, touch: Touch) {
        self.broken.push(BrokenDoc {
            path: path.to_owned(),
            what: BrokenKind::Layer,
            partial: true,
        });
        self.touches.push(touch);
    }

    /// Takes every file's documents, then runs the checks that need them all.
    pub(super) fn assemble(&mut self, loaded: Vec<Loaded>, reader: &dyn Reader) {
        let mut seen = FleetSeen::default();
        let mut regions = Vec::new();
        for mut file in loaded {
            self.diags.extend(file.diags);
            regions.append(&mut file.docs.regions);
            if file.unreadable {
                self.set_aside("(unreadable file)", BrokenKind::File, Touch::All);
                continue;
            }
            let path = file.path;
            let docs = file.docs;
            if path == "datum.yaml" {
                seen.root_file = true;
            }
            self.take_fleets(&path, docs.fleets, &mut seen);
            self.take_broken(&path, docs.broken, &mut seen);
            self.take_layers(&path, docs.layers, &docs.layer_spans);
            self.take_hosts(&path, docs.hosts);
        }
        if !seen.fleet {
            self.no_fleet(seen.root_file);
        }
        self.hide_sensitive(regions);
        self.check_hosts();
        self.check_layers(reader);
    }

    /// Hides every line of every declaration of a resource that some
    /// declaration, in any layer, broken ones included, marks sensitive:
    /// a diagnostic that points into one (a typo, a duplicate key, `source`
    /// with `content`) names the place but never shows the line.
    fn hide_sensitive(&mut self, regions: Vec<crate::document::ResourceRegion>) {
        let mut sensitive: Vec<&crate::schema::ResourceId> = regions
            .iter()
            .filter(|r| r.sensitive)
            .map(|r| &r.id)
            .collect();
        if sensitive.is_empty() {
            return;
        }
        sensitive.sort_unstable_by(|a, b| (a.kind, &a.title).cmp(&(b.kind, &b.title)));
        sensitive.dedup();
        let hidden: Vec<_> = regions
            .iter()
            .filter(|r| {
                sensitive
                    .binary_search_by(|s| (s.kind, &s.title).cmp(&(r.id.kind, &r.id.title)))
                    .is_ok()
            })
            .map(|r| (r.file, r.first_line, r.last_line))
            .collect();
        self.files.hide_lines(hidden);
    }

    fn take_fleets(&mut self, path: &str, fleets: Vec<FleetDoc>, seen: &mut FleetSeen) {
        for fleet in fleets {
            if path != "datum.yaml" {
                self.diags.push(
                    Diagnostic::error(
                        Code::MisplacedFleet,
                        "a Fleet document belongs in datum.yaml at the fleet root",
                    )
                    .at(fleet.span, "Fleet document")
                    .hint("move it to datum.yaml, or remove it: a fleet has exactly one"),
                );
                continue;
            }
            if seen.fleet {
                self.diags.push(
                    Diagnostic::error(
                        Code::DuplicateFleet,
                        "datum.yaml holds more than one Fleet document",
                    )
                    .at(fleet.span, "second Fleet document")
                    .hint("a fleet has exactly one Fleet document; merge them"),
                );
                self.set_aside(path, BrokenKind::Fleet, Touch::All);
                continue;
            }
            seen.fleet = true;
            self.fleet_name = Some(fleet.name);
            self.admins = fleet.admins;
            self.rollout = fleet.rollout;
            if let Some(limit) = fleet.source_limit {
                self.source_limit = limit;
            }
            self.ties = fleet
                .labels
                .iter()
                .flatten()
                .filter_map(|l| {
                    let (fact, span) = l.fact.as_ref()?;
                    Some((l.key.to_string(), (fact.to_string(), *span)))
                })
                .collect();
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
    }

    fn take_broken(&mut self, path: &str, broken: Vec<Broken>, seen: &mut FleetSeen) {
        for b in broken {
            let (what, touch) = match b {
                Broken::Fleet => (BrokenKind::Fleet, Touch::All),
                Broken::Host(Some(name)) => (BrokenKind::Host, Touch::Host(name)),
                Broken::Host(None) => (BrokenKind::Host, Touch::Matcher(vec![bogus_label()])),
                Broken::Layer(Some(m)) => (BrokenKind::Layer, Touch::Matcher(m)),
                Broken::Layer(None) => (BrokenKind::Layer, Touch::All),
            };
            if what == BrokenKind::Fleet {
                seen.fleet = true;
            }
            self.set_aside(path, what, touch);
        }
    }

    /// A file holds at most one layer: with two, every layer of it is refused.
    fn take_layers(&mut self, path: &str, layers: Vec<LayerDoc>, spans: &[Span]) {
        let file_id = spans.first().map(|s| s.file);
        for doc in layers {
            self.layers.push(PendingLayer {
                file: file_id.unwrap_or(FileId(0)),
                path: path.to_owned(),
                doc,
                ok: true,
                matcher_sound: true,
            });
        }
        if spans.len() > 1 {
            for span in &spans[1..] {
                self.diags.push(
                    Diagnostic::error(Code::TwoLayers, "a file holds at most one Layer document")
                        .at(*span, "another Layer in the same file")
                        .also(spans[0], "first Layer of this file")
                        .hint(
                            "a layer is identified by its file: move this one to a file of its own",
                        ),
                );
            }
            for l in self.layers.iter_mut().filter(|l| l.path == path) {
                l.ok = false;
            }
        }
    }

    fn take_hosts(&mut self, path: &str, hosts: Vec<HostDoc>) {
        for host in hosts {
            self.hosts.push(PendingHost {
                name: host.name,
                name_span: host.name_span,
                labels: host.labels,
                keys: host.keys,
                path: path.to_owned(),
                ok: true,
            });
        }
    }

    fn no_fleet(&mut self, root_file: bool) {
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
            .push(Diagnostic::error(Code::NoFleet, msg).hint(hint));
        self.set_aside("datum.yaml", BrokenKind::Fleet, Touch::All);
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
