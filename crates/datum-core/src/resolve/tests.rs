//! The stored verdict against a plain re-derivation from the contributions,
//! the way explain used to work it out, on random stacks of layers.

use proptest::prelude::*;

use super::*;
use crate::fleet::Setting;
use crate::loader::load;
use crate::reader::MemReader;
use crate::schema::ResourceId;

/// What one layer writes for one field: nothing, `null`, or a value (for
/// `requires`, a list of package ids by index).
#[derive(Clone, Debug)]
enum Write {
    Nothing,
    Null,
    Value(usize),
    List(Vec<usize>),
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        2 => Just(Write::Nothing),
        1 => Just(Write::Null),
        2 => (0usize..2).prop_map(Write::Value),
    ]
}

fn list() -> impl Strategy<Value = Write> {
    prop_oneof![
        2 => Just(Write::Nothing),
        1 => Just(Write::Null),
        2 => prop::collection::btree_set(0usize..3, 0..3)
            .prop_map(|ids| Write::List(ids.into_iter().collect())),
    ]
}

/// A layer: its precedence, and what it writes for `mode`, `content` and `requires`.
type LayerSpec = (i32, Write, Write, Write);

fn fleet_of(layers: &[LayerSpec]) -> Fleet {
    let mut r = MemReader::new()
        .file("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: t\n")
        .file(
            "hosts.yaml",
            "datum: v1alpha1\ntype: Host\nname: h\nlabels: {}\n",
        )
        .file(
            "base/layer.yaml",
            "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: -1\nmatch: {}\nresources:\n  File[x]:\n    path: /x\n  Package[p0]: {}\n  Package[p1]: {}\n  Package[p2]: {}\n",
        );
    for (i, (prec, mode, content, requires)) in layers.iter().enumerate() {
        let mut body = String::from("  File[x]:\n");
        let scalar = |name: &str, w: &Write, values: [&str; 2]| match w {
            Write::Nothing | Write::List(_) => String::new(),
            Write::Null => format!("    {name}: null\n"),
            Write::Value(v) => format!("    {name}: {}\n", values[*v]),
        };
        body.push_str(&scalar("mode", mode, ["\"0600\"", "\"0640\""]));
        body.push_str(&scalar("content", content, ["a", "b"]));
        match requires {
            Write::Nothing | Write::Value(_) => {}
            Write::Null => body.push_str("    requires: null\n"),
            Write::List(ids) => {
                let ids: Vec<String> = ids.iter().map(|i| format!("\"Package[p{i}]\"")).collect();
                body.push_str(&format!("    requires: [{}]\n", ids.join(", ")));
            }
        }
        if body.ends_with(":\n") {
            body = "  File[x]: {}\n".to_owned();
        }
        r.add(
            &format!("l{i:02}/layer.yaml"),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: l{i}\nprecedence: {prec}\nmatch: {{}}\nresources:\n{body}"
            ),
        );
    }
    let fleet = load(&r).unwrap();
    assert!(!fleet.has_errors(), "{:?}", fleet.diagnostics);
    fleet
}

/// The field's contributions in fold order, read from the layers.
fn contributions(fleet: &Fleet, res: &Resolution, id: ResId, field: Field) -> Vec<Contrib> {
    let mut out = Vec::new();
    for &l in res.layers.iter() {
        for (ri, r) in fleet.layer(l).resources.iter().enumerate() {
            for (fi, f) in r.fields.iter().enumerate() {
                if r.id == id && f.field == field {
                    out.push(Contrib {
                        layer: l,
                        resource: ri as u32,
                        field: fi as u32,
                    });
                }
            }
        }
    }
    out
}

/// Precedence groups of a scalar field whose settings disagree.
fn disagreeing(fleet: &Fleet, cs: &[Contrib]) -> Vec<Vec<Contrib>> {
    cs.chunk_by(|&a, &b| fleet.precedence(a) == fleet.precedence(b))
        .filter(|g| {
            g.iter()
                .any(|&c| fleet.setting(c).setting != fleet.setting(g[0]).setting)
        })
        .map(<[Contrib]>::to_vec)
        .collect()
}

fn refs(fleet: &Fleet, c: Contrib) -> Vec<ResId> {
    match &fleet.setting(c).setting {
        Setting::Refs(r) => r.iter().map(|&(id, _)| id).collect(),
        _ => Vec::new(),
    }
}

fn is_null(fleet: &Fleet, c: Contrib) -> bool {
    fleet.setting(c).setting == Setting::Unset
}

/// Checks a set field: floor, roles, kept and dropped entries, state.
fn check_set(fleet: &Fleet, r: &ResolvedResource, f: &ResolvedField, cs: &[Contrib]) {
    let floor = cs
        .iter()
        .filter(|&&c| is_null(fleet, c))
        .map(|&c| fleet.precedence(c))
        .max();
    let below = |c: Contrib| floor.is_some_and(|fl| fleet.precedence(c) < fl);
    let unset_by = cs
        .iter()
        .rev()
        .copied()
        .find(|&c| Some(fleet.precedence(c)) == floor && is_null(fleet, c));
    assert_eq!(r.unset_by(f), unset_by);
    assert_eq!(r.unset_floor(fleet, f), floor);
    let roles: Vec<(Contrib, Role)> = cs
        .iter()
        .map(|&c| {
            let role = if below(c) {
                Role::Dropped
            } else if is_null(fleet, c) {
                Role::Unset
            } else {
                Role::Listed
            };
            (c, role)
        })
        .collect();
    assert_eq!(r.played(f).collect::<Vec<_>>(), roles);
    let gather = |keep: &dyn Fn(Contrib) -> bool, skip: &[ResId]| {
        let mut ids: Vec<(ResId, Vec<Contrib>)> = Vec::new();
        for &c in cs.iter().filter(|&&c| keep(c)) {
            for id in refs(fleet, c).into_iter().filter(|id| !skip.contains(id)) {
                match ids.iter_mut().find(|(i, _)| *i == id) {
                    Some((_, by)) => by.push(c),
                    None => ids.push((id, vec![c])),
                }
            }
        }
        ids.sort_by_key(|(id, _)| fleet.resources.rank(*id));
        ids
    };
    let as_pairs = |es: &[SetEntry]| -> Vec<(ResId, Vec<Contrib>)> {
        es.iter().map(|e| (e.id, e.by.to_vec())).collect()
    };
    let kept = gather(&|c| !below(c), &[]);
    let kept_ids: Vec<ResId> = kept.iter().map(|(id, _)| *id).collect();
    assert_eq!(as_pairs(f.entries()), kept);
    assert_eq!(as_pairs(f.dropped()), gather(&below, &kept_ids));
    let state = if !kept.is_empty() {
        State::Set
    } else if floor.is_some() {
        State::Unset
    } else {
        State::Empty
    };
    assert_eq!(f.state, state);
}

/// Checks a scalar field: conflicts, roles, agreeing, displaced, state.
fn check_scalar(fleet: &Fleet, r: &ResolvedResource, f: &ResolvedField, cs: &[Contrib]) {
    let groups = disagreeing(fleet, cs);
    let sides: Vec<Vec<Contrib>> = r.conflicts(f).map(<[Contrib]>::to_vec).collect();
    assert_eq!(sides, groups);
    assert_eq!(f.has_conflict(), !groups.is_empty());
    let last = cs.len() - 1;
    let top_prec = fleet.precedence(cs[last]);
    let top = cs
        .iter()
        .position(|&c| fleet.precedence(c) == top_prec)
        .unwrap();
    assert_eq!(r.agreeing(f), &cs[top..last]);
    let displaced: Vec<Contrib> = cs[..top].iter().rev().copied().collect();
    assert_eq!(r.displaced(f).collect::<Vec<_>>(), displaced);
    let conflicting = |c: &Contrib| groups.iter().any(|g| g.contains(c));
    let roles: Vec<(Contrib, Role)> = cs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let role = if conflicting(c) {
                Role::Conflict
            } else if i == last && is_null(fleet, *c) {
                Role::Unset
            } else if i == last {
                Role::Set
            } else if i >= top {
                Role::Agreed
            } else {
                Role::Overridden
            };
            (*c, role)
        })
        .collect();
    assert_eq!(r.played(f).collect::<Vec<_>>(), roles);
    let state = if conflicting(&cs[last]) {
        State::Conflict
    } else if is_null(fleet, cs[last]) {
        State::Unset
    } else {
        State::Set
    };
    assert_eq!(f.state, state);
    assert!(f.entries().is_empty() && f.dropped().is_empty() && r.unset_by(f).is_none());
}

fn check(layers: &[LayerSpec]) {
    let fleet = fleet_of(layers);
    let res = crate::resolve::resolve_host(&fleet, HostId(0));
    let id = fleet
        .resources
        .lookup(&ResourceId::parse("File[x]").unwrap())
        .unwrap();
    let r = res.resource(&fleet, id).unwrap();
    for f in r.fields.iter() {
        let cs = contributions(&fleet, &res, id, f.field);
        assert_eq!(r.contribs(f), &cs[..]);
        assert_eq!(f.winner(), cs[cs.len() - 1]);
        if f.field.is_set() {
            check_set(&fleet, r, f, &cs);
        } else {
            check_scalar(&fleet, r, f, &cs);
        }
    }
    // The conflicts the fields hold are the resolution's conflict problems.
    let stored: Vec<(Field, Vec<Contrib>)> = r
        .fields
        .iter()
        .flat_map(|f| r.conflicts(f).map(move |s| (f.field, s.to_vec())))
        .collect();
    let problems: Vec<(Field, Vec<Contrib>)> = res
        .problems
        .iter()
        .filter_map(|p| match p {
            Problem::Conflict { field, sides, .. } => Some((*field, sides.to_vec())),
            _ => None,
        })
        .collect();
    let mut stored_sorted = stored.clone();
    stored_sorted.sort();
    assert_eq!(stored_sorted, problems);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_stored_verdict_is_what_the_contributions_say(
        layers in prop::collection::vec((0i32..3, write(), write(), list()), 1..7),
    ) {
        check(&layers);
    }
}

#[test]
fn conflicts_below_the_winner_and_at_the_top_each_keep_their_sides() {
    use Write::*;
    // Precedence 0 disagrees, 1 agrees, 2 disagrees: two groups of sides.
    check(&[
        (0, Value(0), Nothing, List(vec![0, 1])),
        (0, Value(1), Nothing, Null),
        (1, Value(0), Null, List(vec![2])),
        (1, Value(0), Value(0), Nothing),
        (2, Value(0), Value(1), List(vec![0])),
        (2, Value(1), Value(1), Nothing),
    ]);
}
