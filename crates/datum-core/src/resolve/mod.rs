//! The fold: for one set of matching layers, every field's winner, what it
//! displaced, who agreed, and every problem that keeps the result from being
//! a manifest.
//!
//! A resolution depends only on the layers that matched, so hosts matching
//! the same layers share one. Nothing is thrown away: the contributions of
//! every layer stay attached to each field with what became of them, which
//! is what explain, query and diff read.
//!
//! - `field`: the verdict on each field, stored once ([`ResolvedField`],
//!   [`ResolvedResource`], [`Role`], [`State`]).
//! - `fold`: one resource from the layers declaring it, decided there.
//! - `validate`: the checks of a whole manifest;
//! - `vars`: the layers' `vars:`, folded as fields fold.

mod field;
mod fold;
mod validate;
mod vars;

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub use field::{ResolvedField, ResolvedResource, Role, SetEntry, State};
pub use vars::{ResolvedVar, ResolvedVars};

use crate::fleet::{Contrib, Fleet, HostId, LayerId, ResId, VarContrib};
use crate::schema::Field;
use crate::sensitive::Sensitive;
use crate::source::Span;
use crate::template::{Rendered, TemplateProblem, Templates};
use fold::fold_resource;
use validate::validate;

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
    /// A File has more than one of `source`, `content` and `template`:
    /// each that is set, by its winning contribution, in schema order.
    Exclusive {
        resource: ResId,
        sides: Box<[Contrib]>,
    },
    /// A File's template does not render for the host.
    Template {
        resource: ResId,
        problem: Box<TemplateProblem>,
    },
    /// An entry of `requires` or `restart_on` names a resource the host lacks.
    Dangling {
        resource: ResId,
        field: Field,
        target: ResId,
        by: Contrib,
    },
    /// Layers of equal precedence set one var to different values.
    VarConflict {
        name: Box<str>,
        /// Every contribution of the disagreeing precedence, in fold order.
        sides: Box<[VarContrib]>,
    },
    /// Resources that require each other in a circle: each with the entry
    /// leading to the next; the last leads back to the first.
    Cycle { steps: Box<[(ResId, Contrib)]> },
    /// A resource without `name:` whose title, its name, is not one apply
    /// can use ([`crate::names`]); with where the matching layers declare
    /// it.
    BadTitle {
        resource: ResId,
        declared: Box<[Span]>,
    },
    /// An Exec whose fields do not say when it runs, or say it two ways;
    /// with the places that show it (the declarations, or the fields).
    Exec {
        resource: ResId,
        rule: ExecRule,
        places: Box<[Span]>,
    },
    /// Two resources manage the same thing: each with where its value (or,
    /// for a name defaulting to the title, the resource) is written.
    Duplicate {
        field: Field,
        value: String,
        resources: Box<[(ResId, Span)]>,
    },
}

/// What is wrong with an Exec as a whole.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExecRule {
    /// None of `creates`, `unless`, `onlyif` or `refresh_only: true`: it
    /// would run on every apply.
    Unguarded,
    /// `refresh_only: true` with no `run_on`: nothing would ever run it.
    RefreshWithoutRunOn,
    /// `run_on` without `refresh_only: true`.
    RunOnWithoutRefresh,
    /// `shell: true` and this field lists more than the one script.
    ShellArguments(Field),
    /// Without `shell: true`, this field's program is not an absolute path
    /// and holds whitespace: a command line written as one string.
    SpacedProgram(Field),
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
    /// The layers' `vars:`, folded.
    pub vars: Arc<ResolvedVars>,
    /// The content of each File with a `template`, rendered for the one
    /// host this resolution is for, in resource order; empty for a
    /// resolution shared by hosts (one with no template).
    pub rendered: Box<[Rendered]>,
}

impl Resolution {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The rendered content of a File with a `template`.
    pub fn rendered(&self, id: ResId) -> Option<&Rendered> {
        self.rendered.iter().find(|r| r.resource == id)
    }

    pub fn resource(&self, fleet: &Fleet, id: ResId) -> Option<&ResolvedResource> {
        let rank = fleet.resources.rank(id);
        self.resources
            .binary_search_by_key(&rank, |r| fleet.resources.rank(r.id))
            .ok()
            .map(|i| &*self.resources[i])
    }
}

/// Resolves one host, its templates rendered.
pub fn resolve_host(fleet: &Fleet, host: HostId) -> Resolution {
    let base = resolve(fleet, &fleet.matching(host));
    if templated(fleet, &base).is_empty() {
        return base;
    }
    render_host(fleet, &Templates::new(fleet), host, &base)
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
    let vars = Arc::new(vars::fold_vars(fleet, layers, &mut problems));
    let mut resolution = Resolution {
        layers: layers.into(),
        resources,
        problems: Box::new([]),
        vars,
        rendered: Box::new([]),
    };
    validate(fleet, &resolution, &mut problems);
    problems.sort();
    problems.dedup();
    resolution.problems = problems.into_boxed_slice();
    resolution
}

/// Every host's resolution, shared between hosts that match the same layers.
#[derive(Debug)]
pub struct FleetResolution {
    /// One per distinct set of matching layers.
    pub resolutions: Vec<Resolution>,
    /// For each host, its resolution; `None` when broken documents hold it back.
    pub by_host: Vec<Option<u32>>,
    /// The resources whose content no view of the fleet shows.
    pub sensitive: Sensitive,
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
    resolve_where(fleet, |blockers| blockers.is_empty())
}

/// For `check` only: also the hosts held back by nothing but layers loaded
/// with resources set aside ([`crate::fleet::BrokenDoc::partial`]), so one
/// run reports every independent error. Those hosts resolve here without
/// the fields in error; nothing resolved here for them is a manifest, and
/// no command but `check` may use it.
pub fn resolve_all_for_check(fleet: &Fleet) -> FleetResolution {
    resolve_where(fleet, |blockers| blockers.iter().all(|b| b.partial))
}

/// Resolves the hosts whose blockers (the broken documents that touch
/// them) `resolvable` accepts; the others get no resolution.
fn resolve_where(
    fleet: &Fleet,
    resolvable: impl Fn(&[&crate::fleet::BrokenDoc]) -> bool + Sync,
) -> FleetResolution {
    let sets: Vec<Option<Vec<LayerId>>> = (0..fleet.hosts.len() as u32)
        .into_par_iter()
        .map(|h| {
            let h = HostId(h);
            resolvable(&fleet.blockers(h)).then(|| fleet.matching(h))
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
    let resolutions: Vec<Resolution> = order
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
    let (resolutions, by_host) = render_all(fleet, resolutions, by_host);
    FleetResolution {
        resolutions,
        by_host,
        sensitive: Sensitive::of(fleet),
    }
}

/// The Files of a resolution whose content comes from a template, with
/// the template; none whose `template` is in conflict.
fn templated<'f>(fleet: &'f Fleet, res: &Resolution) -> Vec<(ResId, &'f str)> {
    res.resources
        .iter()
        .filter_map(|r| {
            let f = r.field(Field::Template)?;
            let path = f.value(fleet)?.as_str()?;
            (!f.has_conflict()).then_some((r.id, path))
        })
        .collect()
}

/// One host's resolution from the one it shares: the same resources, and
/// its templates rendered (or why they do not render).
fn render_host(
    fleet: &Fleet,
    templates: &Templates,
    host: HostId,
    base: &Resolution,
) -> Resolution {
    let mut rendered = Vec::new();
    let mut problems = base.problems.to_vec();
    let vars = base.vars.for_templates(fleet);
    for (resource, path) in templated(fleet, base) {
        match templates.render(fleet, host, &vars, resource, path) {
            Ok(Some(r)) => rendered.push(r),
            Ok(None) => {}
            Err(problem) => problems.push(Problem::Template {
                resource,
                problem: Box::new(problem),
            }),
        }
    }
    problems.sort();
    problems.dedup();
    Resolution {
        layers: base.layers.clone(),
        resources: base.resources.clone(),
        problems: problems.into_boxed_slice(),
        vars: Arc::clone(&base.vars),
        rendered: rendered.into_boxed_slice(),
    }
}

/// Hosts whose shared resolution has templates get one of their own,
/// rendered for them, in parallel; the shared ones no host uses any more
/// are dropped. Nothing here depends on the number of threads.
fn render_all(
    fleet: &Fleet,
    shared: Vec<Resolution>,
    by_host: Vec<Option<u32>>,
) -> (Vec<Resolution>, Vec<Option<u32>>) {
    let needs: Vec<bool> = shared
        .iter()
        .map(|r| !templated(fleet, r).is_empty())
        .collect();
    if !needs.contains(&true) {
        return (shared, by_host);
    }
    let templates = Templates::new(fleet);
    let own: Vec<(usize, Resolution)> = by_host
        .par_iter()
        .enumerate()
        .filter_map(|(h, i)| {
            let i = (*i)? as usize;
            needs[i].then(|| {
                (
                    h,
                    render_host(fleet, &templates, HostId(h as u32), &shared[i]),
                )
            })
        })
        .collect();
    let mut resolutions = Vec::with_capacity(shared.len() + own.len());
    let mut remap = vec![None; shared.len()];
    for (i, r) in shared.into_iter().enumerate() {
        if !needs[i] {
            remap[i] = Some(resolutions.len() as u32);
            resolutions.push(r);
        }
    }
    let mut by_host: Vec<Option<u32>> = by_host
        .into_iter()
        .map(|i| i.and_then(|i| remap[i as usize]))
        .collect();
    for (h, r) in own {
        by_host[h] = Some(resolutions.len() as u32);
        resolutions.push(r);
    }
    (resolutions, by_host)
}

#[cfg(test)]
mod tests;
