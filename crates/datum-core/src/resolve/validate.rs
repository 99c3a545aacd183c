//! The checks of a folded set of layers as a whole manifest: required
//! fields, `source` with `content`, entries naming resources the host
//! lacks, dependency cycles, two resources managing one thing, and names
//! taken from titles that apply could not use.

use crate::fleet::{Fleet, ResId};
use crate::graph::shortest_cycles;
use crate::names;
use crate::schema::Field;
use crate::source::Span;

use super::field::ResolvedResource;
use super::{Contrib, Problem, Resolution};

/// Checks a folded set of layers as a whole manifest.
pub(super) fn validate(fleet: &Fleet, res: &Resolution, problems: &mut Vec<Problem>) {
    // The graph of `requires` and `restart_on`, by index into the resources.
    let mut edges: Vec<Vec<(usize, Contrib)>> = vec![Vec::new(); res.resources.len()];
    // (class, what it manages, resource, where): sorted, equal neighbours are duplicates.
    let mut claims: Vec<Claim<'_>> = Vec::with_capacity(res.resources.len());
    for (i, r) in res.resources.iter().enumerate() {
        missing(fleet, r, problems);
        title_name(fleet, r, problems);
        exclusive(fleet, r, problems);
        references(fleet, res, r, &mut edges[i], problems);
        claims.extend(claim(fleet, r));
    }
    duplicates(claims, problems);
    if edges.iter().all(Vec::is_empty) {
        return;
    }
    for cycle in shortest_cycles(&edges) {
        let steps = cycle
            .iter()
            .map(|&(node, via)| (res.resources[node].id, via))
            .collect();
        problems.push(Problem::Cycle { steps });
    }
}

/// Required fields without a value. A conflicting field is reported as
/// the conflict only.
fn missing(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    let kind = fleet.resources.get(r.id).kind;
    for &field in kind.required() {
        let f = r.field(field);
        if f.is_some_and(|f| f.has_conflict()) {
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
}

/// A resource named by its title (no `name:` in the manifest) whose title
/// is no name apply can use. A conflicting `name` is reported as the
/// conflict only.
fn title_name(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    let id = fleet.resources.get(r.id);
    let Some(rule) = names::title_rule(id.kind) else {
        return;
    };
    let f = r.field(Field::Name);
    if f.is_some_and(|f| f.has_conflict() || f.value(fleet).is_some()) {
        return;
    }
    if rule.check(&id.title).is_some() {
        problems.push(Problem::BadTitle {
            resource: r.id,
            declared: r
                .declared_by
                .iter()
                .map(|&(l, i)| fleet.layer(l).resources[i as usize].span)
                .collect(),
        });
    }
}

/// A File with more than one of its kinds of content set
/// ([`crate::schema::Kind::content_fields`]).
fn exclusive(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    let kind = fleet.resources.get(r.id).kind;
    let sides: Box<[Contrib]> = kind
        .content_fields()
        .iter()
        .filter_map(|&f| r.field(f))
        .filter(|f| f.value(fleet).is_some())
        .map(|f| f.winner())
        .collect();
    if sides.len() > 1 {
        problems.push(Problem::Exclusive {
            resource: r.id,
            sides,
        });
    }
}

/// Entries of `requires` and `restart_on`: dangling ones are problems, the
/// others edges of the dependency graph.
fn references(
    fleet: &Fleet,
    res: &Resolution,
    r: &ResolvedResource,
    edges: &mut Vec<(usize, Contrib)>,
    problems: &mut Vec<Problem>,
) {
    for field in [Field::Requires, Field::RestartOn] {
        for e in r.entries(field) {
            let rank = fleet.resources.rank(e.id);
            match res
                .resources
                .binary_search_by_key(&rank, |r| fleet.resources.rank(r.id))
            {
                Ok(j) => edges.push((j, e.by[0])),
                Err(_) => problems.push(Problem::Dangling {
                    resource: r.id,
                    field,
                    target: e.id,
                    by: e.by[0],
                }),
            }
        }
    }
}

/// What a resource manages: its class (0 for a path, else one per type,
/// since a Package and a Service may share a name), the path or name, the
/// resource, and where that is written.
type Claim<'f> = (u8, &'f str, ResId, Span);

fn claim<'f>(fleet: &'f Fleet, r: &ResolvedResource) -> Option<Claim<'f>> {
    let kind = fleet.resources.get(r.id).kind;
    let f = r.field(kind.summary_field());
    if f.is_some_and(|f| f.has_conflict()) {
        return None;
    }
    let class = if kind.is_path() { 0 } else { kind as u8 + 1 };
    let s = r.summary(fleet)?;
    let span = match f {
        Some(f) if f.value(fleet).is_some() => fleet.setting(f.winner()).span,
        // A name defaulting to the title: where the resource is declared.
        _ => {
            let (l, i) = r.declared_by[0];
            fleet.layer(l).resources[i as usize].span
        }
    };
    Some((class, s, r.id, span))
}

/// Resources that claim the same thing.
fn duplicates(mut claims: Vec<Claim<'_>>, problems: &mut Vec<Problem>) {
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
}
