//! Folding one resource: its contributions grouped by field, then each
//! field's verdict (roles, conflicts, kept and dropped entries, the `null`
//! that stands), decided here and nowhere else.

use crate::fleet::{Fleet, LayerId, ResId, Setting};
use crate::schema::{Field, Kind};

use super::field::{NONE, ResolvedField, ResolvedResource, Role, SetEntry, State};
use super::{Contrib, Problem};

/// Folds one resource from the layers declaring it. The result depends on
/// nothing else, so hosts whose layer sets differ elsewhere share it.
pub(super) fn fold_resource(
    fleet: &Fleet,
    id: ResId,
    declared_by: &[(LayerId, u32)],
) -> ResolvedResource {
    let kind = fleet.resources.get(id).kind;
    let (contribs, starts) = gather(fleet, kind, declared_by);
    let mut roles = vec![Role::Set; contribs.len()].into_boxed_slice();
    let mut conflicts = Vec::new();
    let mut problems = Vec::new();
    let fields = starts
        .windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| {
            let (start, end) = (w[0], w[1]);
            let field = fleet.setting(contribs[start]).field;
            let mut out = Verdict {
                roles: &mut roles[start..end],
                conflicts: &mut conflicts,
                problems: &mut problems,
            };
            fold_field(fleet, id, field, start, &contribs[start..end], &mut out)
        })
        .collect();
    ResolvedResource {
        id,
        declared_by: declared_by.into(),
        fields,
        problems: problems.into_boxed_slice(),
        contribs,
        roles,
        conflicts: conflicts.into_boxed_slice(),
    }
}

/// Buckets of the counting sort in [`gather`]: one per field of the
/// largest type, and one for a field the type lacks (the loader refuses
/// those; they sort last).
const BUCKETS: usize = 16;

/// Every contribution to the resource, grouped by field in schema order
/// (a counting sort: a type has a handful of fields), each field's in fold
/// order; and where each bucket starts among them (a field's range is
/// from its bucket's start to the next one's).
fn gather(
    fleet: &Fleet,
    kind: Kind,
    declared_by: &[(LayerId, u32)],
) -> (Box<[Contrib]>, [usize; BUCKETS + 1]) {
    let each = || {
        declared_by.iter().flat_map(move |&(l, ri)| {
            let fields = &fleet.layer(l).resources[ri as usize].fields;
            fields.iter().enumerate().map(move |(fi, f)| {
                let c = Contrib {
                    layer: l,
                    resource: ri,
                    field: fi as u32,
                };
                (kind.rank(f.field).min(BUCKETS - 1), c)
            })
        })
    };
    let mut starts = [0usize; BUCKETS + 1];
    let mut first = None;
    for (b, c) in each() {
        starts[b + 1] += 1;
        first.get_or_insert(c);
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let Some(first) = first else {
        return (Box::new([]), starts);
    };
    let mut contribs = vec![first; starts[BUCKETS]].into_boxed_slice();
    let mut next = starts;
    for (b, c) in each() {
        contribs[next[b]] = c;
        next[b] += 1;
    }
    (contribs, starts)
}

/// Where a field's fold writes what it decides beyond the field itself.
struct Verdict<'a> {
    /// The field's slice of the resource's roles.
    roles: &'a mut [Role],
    /// The resource's disagreeing groups, as ranges of its contributions.
    conflicts: &'a mut Vec<(u32, u32)>,
    problems: &'a mut Vec<Problem>,
}

/// Folds one field: `contribs` (in fold order) start at `at` among the
/// resource's contributions.
fn fold_field(
    fleet: &Fleet,
    resource: ResId,
    field: Field,
    at: usize,
    contribs: &[Contrib],
    out: &mut Verdict<'_>,
) -> ResolvedField {
    let first_conflict = out.conflicts.len();
    let mut top = 0;
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
                out.conflicts.push(((at + start) as u32, (at + end) as u32));
                out.problems.push(Problem::Conflict {
                    resource,
                    field,
                    sides: group.into(),
                });
            }
        }
        top = start;
        start = end;
    }
    let conflicted = out.conflicts.len() > first_conflict;
    let mut f = ResolvedField {
        field,
        state: State::Set,
        conflicted,
        winner: contribs[contribs.len() - 1],
        start: at as u32,
        len: contribs.len() as u32,
        top: top as u32,
        unset_by: NONE,
        entries: Box::new([]),
        kept: 0,
    };
    if field.is_set() {
        fold_set(fleet, contribs, out.roles, &mut f);
    } else {
        let groups = &out.conflicts[first_conflict..];
        fold_scalar(fleet, contribs, at, groups, out.roles, &mut f);
    }
    f
}

/// Roles and state of a scalar field: the last contribution stands unless
/// its group disagrees; the rest of its group agreed; lower groups were
/// overridden; any disagreeing group is a conflict.
fn fold_scalar(
    fleet: &Fleet,
    contribs: &[Contrib],
    at: usize,
    groups: &[(u32, u32)],
    roles: &mut [Role],
    f: &mut ResolvedField,
) {
    let last = contribs.len() - 1;
    let stands = if fleet.setting(contribs[last]).setting == Setting::Unset {
        Role::Unset
    } else {
        Role::Set
    };
    for (i, role) in roles.iter_mut().enumerate() {
        *role = if i == last {
            stands
        } else if i >= f.top as usize {
            Role::Agreed
        } else {
            Role::Overridden
        };
    }
    for &(s, e) in groups {
        roles[s as usize - at..e as usize - at].fill(Role::Conflict);
    }
    f.state = if roles[last] == Role::Conflict {
        State::Conflict
    } else if stands == Role::Unset {
        State::Unset
    } else {
        State::Set
    };
}

/// Roles, entries and state of `requires` or `restart_on`: entries unite,
/// and a `null` drops those of strictly lower precedence.
fn fold_set(fleet: &Fleet, contribs: &[Contrib], roles: &mut [Role], f: &mut ResolvedField) {
    // Fold order rises in precedence: the last `null` is at the highest.
    let unset_by = contribs
        .iter()
        .rposition(|&c| fleet.setting(c).setting == Setting::Unset);
    let floor = unset_by.map(|i| fleet.precedence(contribs[i]));
    for (&c, role) in contribs.iter().zip(roles.iter_mut()) {
        *role = if floor.is_some_and(|floor| fleet.precedence(c) < floor) {
            Role::Dropped
        } else if fleet.setting(c).setting == Setting::Unset {
            Role::Unset
        } else {
            Role::Listed
        };
    }
    let listed = |wanted: Role| {
        contribs
            .iter()
            .zip(roles.iter())
            .filter(move |&(_, &r)| r == wanted)
            .flat_map(|(&c, _)| {
                match &fleet.setting(c).setting {
                    Setting::Refs(refs) => &refs[..],
                    _ => &[],
                }
                .iter()
                .map(move |&(id, _)| (id, c))
            })
    };
    let mut entries = entries_of(fleet, listed(Role::Listed).collect());
    let kept = entries.len();
    if floor.is_some() {
        // What a `null` dropped and no layer at or above it lists again.
        let rank = |id: ResId| fleet.resources.rank(id);
        let dropped: Vec<(ResId, Contrib)> = listed(Role::Dropped)
            .filter(|&(id, _)| {
                entries[..kept]
                    .binary_search_by_key(&rank(id), |e| rank(e.id))
                    .is_err()
            })
            .collect();
        entries.extend(entries_of(fleet, dropped));
    }
    f.unset_by = unset_by.map_or(NONE, |i| i as u32);
    f.kept = kept as u32;
    f.entries = entries.into_boxed_slice();
    f.state = if kept > 0 {
        State::Set
    } else if unset_by.is_some() {
        State::Unset
    } else {
        State::Empty
    };
}

/// Entries from (id, contribution listing it) pairs: sorted by id, each
/// with the layers listing it in fold order.
fn entries_of(fleet: &Fleet, mut pairs: Vec<(ResId, Contrib)>) -> Vec<SetEntry> {
    pairs.sort_by_key(|&(id, c)| (fleet.resources.rank(id), c.layer));
    pairs
        .chunk_by(|a, b| a.0 == b.0)
        .map(|run| SetEntry {
            id: run[0].0,
            by: run.iter().map(|&(_, c)| c).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_fits_the_buckets_of_the_counting_sort() {
        for kind in Kind::ALL {
            assert!(kind.fields().len() < BUCKETS, "{kind}");
        }
    }
}
