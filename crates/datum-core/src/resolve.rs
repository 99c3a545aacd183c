//! The fold: for one set of matching layers, every field's winner, what it
//! displaced, who agreed, and every problem that keeps the result from being
//! a manifest.
//!
//! A resolution depends only on the layers that matched, so hosts matching
//! the same layers share one. Nothing is thrown away: the contributions of
//! every layer stay attached to each field, which is what explain, query and
//! diff read.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::fleet::{Fleet, HostId, LayerField, LayerId, ResId, Setting};
use crate::schema::{Field, Kind, Value};
use crate::source::Span;

/// One field as one layer sets it: indices into the fleet's layers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Contrib {
    pub layer: LayerId,
    /// Index of the resource in the layer.
    pub resource: u32,
    /// Index of the field in that resource.
    pub field: u32,
}

/// An entry of `requires` or `restart_on` that survived the fold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetEntry {
    pub id: ResId,
    /// The layers that listed it, in fold order.
    pub by: Box<[Contrib]>,
}

/// One field of one resource after the fold.
#[derive(Clone, Debug)]
pub struct ResolvedField {
    pub field: Field,
    /// Every layer that set the field, in fold order.
    pub contribs: Box<[Contrib]>,
    /// Where the winning precedence group starts in `contribs`.
    pub top: u32,
    /// Whether layers of equal precedence disagree on this field.
    pub conflict: bool,
    /// For `requires` and `restart_on`: the entries kept, sorted by id.
    pub entries: Box<[SetEntry]>,
}

impl ResolvedField {
    /// The layer whose value stands: the last of the winning group.
    pub fn winner(&self) -> Contrib {
        self.contribs[self.contribs.len() - 1]
    }

    /// Layers at the winning precedence that set the same value earlier in fold order.
    pub fn agreeing(&self) -> &[Contrib] {
        &self.contribs[self.top as usize..self.contribs.len() - 1]
    }

    /// Contributions of lower precedence, highest first.
    pub fn displaced(&self) -> impl Iterator<Item = Contrib> + '_ {
        self.contribs[..self.top as usize].iter().rev().copied()
    }

    /// The final value of a scalar field; `None` when unset (or a set).
    pub fn value<'f>(&self, fleet: &'f Fleet) -> Option<&'f Value> {
        match &fleet.setting(self.winner()).setting {
            Setting::Value(v) => Some(v),
            _ => None,
        }
    }

    /// For `requires` and `restart_on`: the highest precedence that set the
    /// field to `null`; entries listed below it were dropped.
    pub fn unset_floor(&self, fleet: &Fleet) -> Option<i32> {
        unset_floor(fleet, &self.contribs)
    }

    /// Whether the field appears in the manifest.
    pub fn is_present(&self, fleet: &Fleet) -> bool {
        if self.field.is_set() {
            !self.entries.is_empty()
        } else {
            self.value(fleet).is_some()
        }
    }
}

#[derive(Clone, Debug)]
pub struct ResolvedResource {
    pub id: ResId,
    /// The layers declaring it, in fold order, with the resource's index in each.
    pub declared_by: Box<[(LayerId, u32)]>,
    /// Fields some layer mentions, in schema order.
    pub fields: Box<[ResolvedField]>,
    /// Conflicts among its fields (also in the resolution's problems).
    pub problems: Box<[Problem]>,
}

impl ResolvedResource {
    pub fn field(&self, field: Field) -> Option<&ResolvedField> {
        self.fields.iter().find(|f| f.field == field)
    }

    /// The final value of a scalar field.
    pub fn value<'f>(&self, fleet: &'f Fleet, field: Field) -> Option<&'f Value> {
        self.field(field)?.value(fleet)
    }

    /// The entries of `requires` or `restart_on`.
    pub fn entries(&self, field: Field) -> &[SetEntry] {
        self.field(field).map_or(&[], |f| &f.entries)
    }

    /// What the resource manages: its `path`, or its `name` (the title by default).
    pub fn summary<'f>(&self, fleet: &'f Fleet) -> Option<&'f str> {
        let kind = fleet.resources.get(self.id).kind;
        match self.value(fleet, kind.summary_field()) {
            Some(Value::Str(s)) => Some(s),
            _ if kind.is_path() => None,
            _ => Some(&fleet.resources.get(self.id).title),
        }
    }
}

/// Why a set of layers gives no manifest.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Problem {
    /// Layers of equal precedence set different values.
    Conflict {
        resource: ResId,
        field: Field,
        /// Every contribution of the disagreeing precedence, in fold order.
        sides: Box<[Contrib]>,
    },
    /// A required field has no value; with where the matching layers declare the resource.
    Missing {
        resource: ResId,
        field: Field,
        declared: Box<[Span]>,
    },
    /// A File has both `source` and `content`.
    Exclusive {
        resource: ResId,
        source: Contrib,
        content: Contrib,
    },
    /// An entry of `requires` or `restart_on` names a resource the host lacks.
    Dangling {
        resource: ResId,
        field: Field,
        target: ResId,
        by: Contrib,
    },
    /// Resources that require each other in a circle: each with the entry
    /// leading to the next; the last leads back to the first.
    Cycle { steps: Box<[(ResId, Contrib)]> },
    /// Two resources manage the same thing: each with where its value (or,
    /// for a name defaulting to the title, the resource) is written.
    Duplicate {
        field: Field,
        value: String,
        resources: Box<[(ResId, Span)]>,
    },
}

/// The result of folding one set of layers.
#[derive(Clone, Debug)]
pub struct Resolution {
    /// The matching layers, in fold order.
    pub layers: Box<[LayerId]>,
    /// Sorted by id. Shared between resolutions where the same layers
    /// declare a resource.
    pub resources: Box<[Arc<ResolvedResource>]>,
    /// Empty when the resolution is a manifest.
    pub problems: Box<[Problem]>,
}

impl Resolution {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn resource(&self, fleet: &Fleet, id: ResId) -> Option<&ResolvedResource> {
        let rank = fleet.resources.rank(id);
        self.resources
            .binary_search_by_key(&rank, |r| fleet.resources.rank(r.id))
            .ok()
            .map(|i| &*self.resources[i])
    }
}

impl Fleet {
    /// The field a contribution points at.
    pub fn setting(&self, c: Contrib) -> &LayerField {
        &self.layer(c.layer).resources[c.resource as usize].fields[c.field as usize]
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

    /// Resolves one host.
    pub fn resolve_host(&self, host: HostId) -> Resolution {
        resolve(self, &self.matching(host))
    }
}

/// For one set of layers: each resource with the layers declaring it (and
/// the resource's index in each), in fold order; resources sorted by id.
type Declarations = Vec<(ResId, Box<[Declaration]>)>;

/// A layer declaring a resource, with the resource's index in that layer.
type Declaration = (LayerId, u32);

fn declarations(fleet: &Fleet, layers: &[LayerId]) -> Declarations {
    let mut slots: FxHashMap<ResId, usize> =
        FxHashMap::with_capacity_and_hasher(64, Default::default());
    let mut decls: Vec<(ResId, Vec<(LayerId, u32)>)> = Vec::with_capacity(64);
    for &l in layers {
        for (ri, r) in fleet.layer(l).resources.iter().enumerate() {
            let slot = *slots.entry(r.id).or_insert_with(|| {
                decls.push((r.id, Vec::with_capacity(2)));
                decls.len() - 1
            });
            decls[slot].1.push((l, ri as u32));
        }
    }
    decls.sort_unstable_by_key(|(id, _)| fleet.resources.rank(*id));
    decls
        .into_iter()
        .map(|(id, d)| (id, d.into_boxed_slice()))
        .collect()
}

/// Folds one resource from the layers declaring it. The result depends on
/// nothing else, so hosts whose layer sets differ elsewhere share it.
fn fold_resource(fleet: &Fleet, id: ResId, declared_by: &[(LayerId, u32)]) -> ResolvedResource {
    let kind = fleet.resources.get(id).kind;
    let mut contribs: Vec<(usize, Contrib)> = Vec::with_capacity(8);
    for &(l, ri) in declared_by {
        let r = &fleet.layer(l).resources[ri as usize];
        for (fi, f) in r.fields.iter().enumerate() {
            let c = Contrib {
                layer: l,
                resource: ri,
                field: fi as u32,
            };
            contribs.push((kind.rank(f.field), c));
        }
    }
    // Schema order; stable, so within a field contributions stay in fold order.
    contribs.sort_by_key(|&(rank, _)| rank);
    let mut problems = Vec::new();
    let mut fields = Vec::new();
    let mut rest = &contribs[..];
    while let Some(&(rank, first)) = rest.first() {
        let n = rest.iter().take_while(|(r, _)| *r == rank).count();
        let field = fleet.setting(first).field;
        let group: Box<[Contrib]> = rest[..n].iter().map(|&(_, c)| c).collect();
        rest = &rest[n..];
        fields.push(fold_field(fleet, id, field, group, &mut problems));
    }
    ResolvedResource {
        id,
        declared_by: declared_by.into(),
        fields: fields.into_boxed_slice(),
        problems: problems.into_boxed_slice(),
    }
}

/// Folds a set of layers, given in fold order.
pub fn resolve(fleet: &Fleet, layers: &[LayerId]) -> Resolution {
    let resources = declarations(fleet, layers)
        .into_iter()
        .map(|(id, d)| Arc::new(fold_resource(fleet, id, &d)))
        .collect();
    assemble(fleet, layers, resources)
}

/// A resolution from its folded resources: their problems, then the checks
/// of the manifest as a whole.
fn assemble(
    fleet: &Fleet,
    layers: &[LayerId],
    resources: Box<[Arc<ResolvedResource>]>,
) -> Resolution {
    let mut problems: Vec<Problem> = resources
        .iter()
        .flat_map(|r| r.problems.iter().cloned())
        .collect();
    let mut resolution = Resolution {
        layers: layers.into(),
        resources,
        problems: Box::new([]),
    };
    validate(fleet, &resolution, &mut problems);
    problems.sort();
    problems.dedup();
    resolution.problems = problems.into_boxed_slice();
    resolution
}

fn fold_field(
    fleet: &Fleet,
    resource: ResId,
    field: Field,
    contribs: Box<[Contrib]>,
    problems: &mut Vec<Problem>,
) -> ResolvedField {
    let mut top = 0;
    let mut conflict = false;
    let mut start = 0;
    while start < contribs.len() {
        let prec = fleet.precedence(contribs[start]);
        let end = start
            + contribs[start..]
                .iter()
                .take_while(|&&c| fleet.precedence(c) == prec)
                .count();
        let group = &contribs[start..end];
        if !field.is_set() {
            let first = &fleet.setting(group[0]).setting;
            if group[1..]
                .iter()
                .any(|&c| fleet.setting(c).setting != *first)
            {
                conflict = true;
                problems.push(Problem::Conflict {
                    resource,
                    field,
                    sides: group.into(),
                });
            }
        }
        top = start;
        start = end;
    }
    let entries = if field.is_set() {
        set_entries(fleet, &contribs)
    } else {
        Box::new([])
    };
    ResolvedField {
        field,
        top: top as u32,
        conflict,
        contribs,
        entries,
    }
}

/// Unites the entries of a set; `null` drops those of strictly lower precedence.
fn set_entries(fleet: &Fleet, contribs: &[Contrib]) -> Box<[SetEntry]> {
    let floor = unset_floor(fleet, contribs);
    let mut entries: Vec<(ResId, Contrib)> = Vec::new();
    for &c in contribs {
        if floor.is_some_and(|f| fleet.precedence(c) < f) {
            continue;
        }
        if let Setting::Refs(refs) = &fleet.setting(c).setting {
            entries.extend(refs.iter().map(|&(id, _)| (id, c)));
        }
    }
    entries.sort_by_key(|&(id, c)| (fleet.resources.rank(id), c.layer));
    let mut out: Vec<SetEntry> = Vec::new();
    for (id, c) in entries {
        match out.last_mut() {
            Some(e) if e.id == id => {
                let mut by = std::mem::take(&mut e.by).into_vec();
                by.push(c);
                e.by = by.into_boxed_slice();
            }
            _ => out.push(SetEntry {
                id,
                by: Box::new([c]),
            }),
        }
    }
    out.into_boxed_slice()
}

fn unset_floor(fleet: &Fleet, contribs: &[Contrib]) -> Option<i32> {
    contribs
        .iter()
        .filter(|&&c| fleet.setting(c).setting == Setting::Unset)
        .map(|&c| fleet.precedence(c))
        .max()
}

/// Checks a folded set of layers as a whole manifest.
fn validate(fleet: &Fleet, res: &Resolution, problems: &mut Vec<Problem>) {
    let has = |id: ResId| res.resource(fleet, id).is_some();
    let mut edges: Vec<Vec<(usize, Contrib)>> = vec![Vec::new(); res.resources.len()];
    let index_of = |id: ResId| {
        let rank = fleet.resources.rank(id);
        res.resources
            .binary_search_by_key(&rank, |r| fleet.resources.rank(r.id))
            .ok()
    };
    // (class, what it manages, resource, where): sorted, equal neighbours are duplicates.
    let mut claims: Vec<(u8, &str, ResId, Span)> = Vec::with_capacity(res.resources.len());
    for (i, r) in res.resources.iter().enumerate() {
        let kind = fleet.resources.get(r.id).kind;
        for &field in kind.required() {
            let f = r.field(field);
            if f.is_some_and(|f| f.conflict) {
                continue;
            }
            if f.and_then(|f| f.value(fleet)).is_none() {
                problems.push(Problem::Missing {
                    resource: r.id,
                    field,
                    declared: r
                        .declared_by
                        .iter()
                        .map(|&(l, i)| fleet.layer(l).resources[i as usize].span)
                        .collect(),
                });
            }
        }
        if kind == Kind::File
            && let (Some(s), Some(c)) = (r.field(Field::Source), r.field(Field::Content))
            && s.value(fleet).is_some()
            && c.value(fleet).is_some()
        {
            problems.push(Problem::Exclusive {
                resource: r.id,
                source: s.winner(),
                content: c.winner(),
            });
        }
        for field in [Field::Requires, Field::RestartOn] {
            for e in r.entries(field) {
                if !has(e.id) {
                    problems.push(Problem::Dangling {
                        resource: r.id,
                        field,
                        target: e.id,
                        by: e.by[0],
                    });
                } else if let Some(j) = index_of(e.id) {
                    edges[i].push((j, e.by[0]));
                }
            }
        }
        // What the resource manages, to find two resources managing one thing.
        let summary_field = kind.summary_field();
        let f = r.field(summary_field);
        if f.is_some_and(|f| f.conflict) {
            continue;
        }
        let class = if kind.is_path() { 0 } else { kind as u8 + 1 };
        if let Some(s) = r.summary(fleet) {
            let span = match f {
                Some(f) if f.value(fleet).is_some() => fleet.setting(f.winner()).span,
                _ => {
                    let (l, i) = r.declared_by[0];
                    fleet.layer(l).resources[i as usize].span
                }
            };
            claims.push((class, s, r.id, span));
        }
    }
    // Stable: resources stay in id order within a group.
    claims.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for group in claims.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if group.len() > 1 {
            problems.push(Problem::Duplicate {
                field: if group[0].0 == 0 {
                    Field::Path
                } else {
                    Field::Name
                },
                value: group[0].1.to_owned(),
                resources: group.iter().map(|&(_, _, id, span)| (id, span)).collect(),
            });
        }
    }
    if edges.iter().all(Vec::is_empty) {
        return;
    }
    for cycle in crate::graph::shortest_cycles(&edges) {
        let steps = cycle
            .iter()
            .map(|&(node, via)| (res.resources[node].id, via))
            .collect();
        problems.push(Problem::Cycle { steps });
    }
}

/// Every host's resolution, shared between hosts that match the same layers.
#[derive(Debug)]
pub struct FleetResolution {
    /// One per distinct set of matching layers.
    pub resolutions: Vec<Resolution>,
    /// For each host, its resolution; `None` when broken documents hold it back.
    pub by_host: Vec<Option<u32>>,
}

impl FleetResolution {
    pub fn of(&self, host: HostId) -> Option<&Resolution> {
        self.by_host[host.0 as usize].map(|i| &self.resolutions[i as usize])
    }
}

/// Resolves every host no broken document touches, in parallel. The result
/// does not depend on the number of threads.
///
/// Work is shared at two levels: hosts matching the same layers share one
/// resolution, and resolutions in which the same layers declare a resource
/// share that resource's fold.
pub fn resolve_all(fleet: &Fleet) -> FleetResolution {
    let sets: Vec<Option<Vec<LayerId>>> = (0..fleet.hosts.len() as u32)
        .into_par_iter()
        .map(|h| {
            let h = HostId(h);
            fleet.blockers(h).is_empty().then(|| fleet.matching(h))
        })
        .collect();
    let mut distinct: FxHashMap<&[LayerId], u32> = FxHashMap::default();
    let mut order: Vec<&[LayerId]> = Vec::new();
    let by_host = sets
        .iter()
        .map(|s| {
            s.as_deref().map(|s| {
                *distinct.entry(s).or_insert_with(|| {
                    order.push(s);
                    order.len() as u32 - 1
                })
            })
        })
        .collect();
    let decls: Vec<Declarations> = order.par_iter().map(|s| declarations(fleet, s)).collect();
    // Each distinct (resource, declaring layers) is folded once.
    let mut folds: FxHashMap<(ResId, &[Declaration]), u32> = FxHashMap::default();
    let mut unique: Vec<(ResId, &[Declaration])> = Vec::new();
    let slots: Vec<Vec<u32>> = decls
        .iter()
        .map(|d| {
            d.iter()
                .map(|(id, by)| {
                    *folds.entry((*id, by)).or_insert_with(|| {
                        unique.push((*id, by));
                        unique.len() as u32 - 1
                    })
                })
                .collect()
        })
        .collect();
    let folded: Vec<Arc<ResolvedResource>> = unique
        .par_iter()
        .map(|&(id, by)| Arc::new(fold_resource(fleet, id, by)))
        .collect();
    let resolutions = order
        .par_iter()
        .zip(slots.par_iter())
        .map(|(set, slots)| {
            let resources = slots
                .iter()
                .map(|&i| Arc::clone(&folded[i as usize]))
                .collect();
            assemble(fleet, set, resources)
        })
        .collect();
    FleetResolution {
        resolutions,
        by_host,
    }
}
