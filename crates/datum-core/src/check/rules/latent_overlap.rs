//! A conflict waiting for its host: two layers of equal precedence set a
//! field differently, and their matchers could both hold on one host, though
//! no host matches both yet. The first host that does fails to resolve.
//!
//! Two matchers can both hold unless they require one key to have two
//! different values. A matcher on `datum/host` holds only on that host, with
//! the labels it has: if the other matcher holds there too, that host
//! matches both and the conflict is already an error; if not, it never can.
//! So layers pinned to a host are never compared, which keeps thousands of
//! host overrides at one precedence from costing a comparison per pair.
//!
//! Only layers of one precedence that touch the same field of the same
//! resource, or the same var, are compared: a var folds as a field does.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};

use super::Context;
use crate::diagnostic::{Code, Diagnostic, Line};
use crate::fleet::{Contrib, LayerId, ResId, VarContrib};
use crate::intern::Sym;
use crate::matcher::{Label, groups};
use crate::report::{align, display_setting, display_var};
use crate::resolve::Problem;
use crate::schema::Field;
use crate::source::Span;

pub(super) fn run(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let fleet = cx.fleet;
    let (conflicts, var_conflicts) = known_conflicts(cx);
    let matchers: Vec<Sorted> = fleet.layers.iter().map(|l| sorted(&l.matcher)).collect();
    let mut start = 0;
    while start < fleet.layers.len() {
        let prec = fleet.layers[start].precedence;
        let end = start
            + fleet.layers[start..]
                .iter()
                .take_while(|l| l.precedence == prec)
                .count();
        field_overlaps(cx, &matchers, start..end, &conflicts, out);
        var_overlaps(cx, &matchers, start..end, &var_conflicts, out);
        start = end;
    }
}

/// The layers of `range`, by number, that are not pinned to a host.
fn unpinned<'f>(cx: &Context<'f>, range: Range<usize>) -> impl Iterator<Item = usize> + 'f {
    let fleet = cx.fleet;
    let host_key = fleet.host_key();
    range.filter(move |&l| !fleet.layers[l].matcher.iter().any(|m| m.key == host_key))
}

/// Latent conflicts on resource fields among the layers of one precedence.
fn field_overlaps(
    cx: &Context<'_>,
    matchers: &[Sorted],
    range: Range<usize>,
    conflicts: &FxHashSet<(ResId, Field, LayerId, LayerId)>,
    out: &mut Vec<Diagnostic>,
) {
    let fleet = cx.fleet;
    // Who sets what at this precedence, layers pinned to a host left out.
    let mut by_field: FxHashMap<(ResId, crate::schema::Field), Vec<Contrib>> = FxHashMap::default();
    for l in unpinned(cx, range) {
        let layer = &fleet.layers[l];
        for (ri, r) in layer.resources.iter().enumerate() {
            for (fi, f) in r.fields.iter().enumerate() {
                if f.field.is_set() {
                    continue;
                }
                by_field.entry((r.id, f.field)).or_default().push(Contrib {
                    layer: LayerId(l as u32),
                    resource: ri as u32,
                    field: fi as u32,
                });
            }
        }
    }
    let mut keys: Vec<(ResId, Field)> = by_field
        .iter()
        .filter(|(_, c)| c.len() > 1)
        .map(|(k, _)| *k)
        .collect();
    keys.sort_unstable();
    for key in keys {
        let sides = &by_field[&key];
        let hidden = cx.all.sensitive.hides(key.0, key.1);
        let found = latent(
            cx,
            matchers,
            sides,
            |c| c.layer,
            |a, b| fleet.setting(a).setting == fleet.setting(b).setting,
            |a, b| conflicts.contains(&(key.0, key.1, a, b)),
        );
        if let Some((layers, (a, b))) = found {
            let rows: Vec<(LayerId, String, Span)> = layers
                .iter()
                .map(|&c| {
                    let value = if hidden {
                        "(sensitive)".to_owned()
                    } else {
                        display_setting(fleet, c)
                    };
                    (c.layer, value, fleet.setting(c).span)
                })
                .collect();
            let target = format!("{}.{}", fleet.resources.text(key.0), key.1);
            out.push(warning(cx, &target, &rows, (a.layer, b.layer)));
        }
    }
}

/// Latent conflicts on vars, by name, among the layers of one precedence.
fn var_overlaps(
    cx: &Context<'_>,
    matchers: &[Sorted],
    range: Range<usize>,
    var_conflicts: &KnownVars<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let fleet = cx.fleet;
    let mut by_var: BTreeMap<&str, Vec<VarContrib>> = BTreeMap::new();
    for l in unpinned(cx, range) {
        for (vi, v) in fleet.layers[l].vars.iter().enumerate() {
            by_var.entry(&v.name).or_default().push(VarContrib {
                layer: LayerId(l as u32),
                var: vi as u32,
            });
        }
    }
    for (name, sides) in by_var.iter().filter(|(_, s)| s.len() > 1) {
        let found = latent(
            cx,
            matchers,
            sides,
            |c| c.layer,
            |a, b| fleet.var(a).setting == fleet.var(b).setting,
            |a, b| var_conflicts.contains(&(*name, a, b)),
        );
        if let Some((layers, (a, b))) = found {
            let rows: Vec<(LayerId, String, Span)> = layers
                .iter()
                .map(|&c| (c.layer, display_var(fleet, c), fleet.var(c).span))
                .collect();
            out.push(warning(
                cx,
                &format!("vars.{name}"),
                &rows,
                (a.layer, b.layer),
            ));
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Pairs of sides [`latent`] has looked at on this thread: what the
    /// rule's cost is counted in by the tests, never timed.
    pub(super) static PAIRS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Values of two matchers' alternatives compared on this thread.
    pub(super) static VALUES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Every side that takes part in some latent pair (in the order given),
/// and the first pair: one warning per field (or var) and precedence,
/// however many layers (1,500 layers overlapping pairwise are one
/// warning, not a million). `same`: the two set the same value; `known`:
/// some host already matches both layers (a conflict `check` reports).
fn latent<C: Copy>(
    cx: &Context<'_>,
    matchers: &[Sorted],
    sides: &[C],
    layer: impl Fn(C) -> LayerId,
    same: impl Fn(C, C) -> bool,
    known: impl Fn(LayerId, LayerId) -> bool,
) -> Option<(Vec<C>, (C, C))> {
    let mut involved = vec![false; sides.len()];
    let mut first: Option<(C, C)> = None;
    for (i, &a) in sides.iter().enumerate() {
        for (j, &b) in sides.iter().enumerate().skip(i + 1) {
            #[cfg(test)]
            PAIRS.with(|p| p.set(p.get() + 1));
            let (la, lb) = (layer(a), layer(b));
            // Both already counted: this pair adds nothing.
            if (involved[i] && involved[j])
                || same(a, b)
                || la == lb
                || !compatible(&matchers[la.0 as usize], &matchers[lb.0 as usize])
                || known(la, lb)
                || cx
                    .held_back
                    .iter()
                    .any(|m| m.binary_search(&la).is_ok() && m.binary_search(&lb).is_ok())
            {
                continue;
            }
            involved[i] = true;
            involved[j] = true;
            first.get_or_insert((a, b));
        }
    }
    let pair = first?;
    let layers = sides
        .iter()
        .zip(&involved)
        .filter(|(_, yes)| **yes)
        .map(|(c, _)| *c)
        .collect();
    Some((layers, pair))
}

/// A matcher as [`compatible`] reads it: each key (sorted) with its values
/// (one, or alternatives) sorted, so two keys' values meet in one pass.
type Sorted = Vec<(Sym, Box<[Sym]>)>;

fn sorted(matcher: &[Label]) -> Sorted {
    groups(matcher)
        .map(|group| {
            let mut values: Vec<Sym> = group.iter().map(|l| l.value).collect();
            values.sort_unstable();
            (group[0].key, values.into_boxed_slice())
        })
        .collect()
}

/// Whether some host could carry both matchers: no key whose values (one,
/// or alternatives) in one are disjoint from its values in the other.
/// Each key's values are walked once, side by side: two layers of 500
/// alternatives cost 1,000 steps, not 250,000.
fn compatible(a: &Sorted, b: &Sorted) -> bool {
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let (Some((kx, x)), Some((ky, y))) = (a.peek(), b.peek()) {
        match kx.cmp(ky) {
            Ordering::Less => {
                a.next();
            }
            Ordering::Greater => {
                b.next();
            }
            Ordering::Equal => {
                if !meet(x, y) {
                    return false;
                }
                a.next();
                b.next();
            }
        }
    }
    true
}

/// Whether two sorted lists share a value.
fn meet(x: &[Sym], y: &[Sym]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        #[cfg(test)]
        VALUES.with(|p| p.set(p.get() + 1));
        match x[i].cmp(&y[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => return true,
        }
    }
    false
}

/// Pairs of layers some host already matches together, where they disagree:
/// `check` reports those as conflicts.
type KnownVars<'f> = FxHashSet<(&'f str, LayerId, LayerId)>;

fn known_conflicts<'f>(
    cx: &Context<'f>,
) -> (FxHashSet<(ResId, Field, LayerId, LayerId)>, KnownVars<'f>) {
    let mut set = FxHashSet::default();
    let mut vars = FxHashSet::default();
    for res in &cx.all.resolutions {
        for p in res.problems.iter() {
            match p {
                Problem::Conflict {
                    resource,
                    field,
                    sides,
                } => {
                    for (i, a) in sides.iter().enumerate() {
                        for b in &sides[i + 1..] {
                            let (x, y) = (a.layer.min(b.layer), a.layer.max(b.layer));
                            set.insert((*resource, *field, x, y));
                        }
                    }
                }
                Problem::VarConflict { sides, .. } => {
                    for (i, a) in sides.iter().enumerate() {
                        for b in &sides[i + 1..] {
                            let (x, y) = (a.layer.min(b.layer), a.layer.max(b.layer));
                            // The fleet's own text, so it outlives the resolution.
                            vars.insert((&*cx.fleet.var(*a).name, x, y));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (set, vars)
}

/// How many layers a latent-conflict warning lists before `and N more`.
pub const LAYERS_SHOWN: usize = 5;

/// One warning for one field (or var), `target`, at one precedence: the
/// layers that take part in some latent pair with their values and places
/// (in fold order; the first few shown), and the layers of the first such
/// pair, which say what host would fail.
fn warning(
    cx: &Context<'_>,
    target: &str,
    layers: &[(LayerId, String, Span)],
    (a, b): (LayerId, LayerId),
) -> Diagnostic {
    let fleet = cx.fleet;
    let matches = |labels: &[Label]| {
        if labels.is_empty() {
            "matches every host".to_owned()
        } else {
            format!("matches {}", cx.labels_text(labels))
        }
    };
    let shown = &layers[..layers.len().min(LAYERS_SHOWN)];
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|(l, value, _)| {
            let l = fleet.layer(*l);
            vec![value.clone(), l.display.clone(), matches(&l.matcher)]
        })
        .collect();
    let mut body: Vec<Line> = align(&rows).into_iter().map(Line::from).collect();
    if layers.len() > shown.len() {
        body.push(Line::from(format!(
            "and {} more layers",
            layers.len() - shown.len()
        )));
    }
    let (la, lb) = (fleet.layer(a), fleet.layer(b));
    let both = cx.labels_text(la.matcher.iter().chain(&lb.matcher));
    let (message, yet) = if layers.len() == 2 {
        (
            format!(
                "{} and {} set {target} differently at precedence {}, and one host could match both",
                la.display, lb.display, la.precedence
            ),
            "no host matches both yet",
        )
    } else {
        (
            format!(
                "{} layers set {target} differently at precedence {}, and one host could match two of them",
                layers.len(),
                la.precedence
            ),
            "no host matches two of them yet",
        )
    };
    body.push(Line::from(if both.is_empty() {
        format!("{yet}; any host would not resolve")
    } else if layers.len() == 2 {
        format!("{yet}; a host with {both} would not resolve")
    } else {
        format!(
            "{yet}; a host with {both} would not resolve ({} and {})",
            la.display, lb.display
        )
    }));
    let mut d = Diagnostic::warning(Code::LatentConflict, message)
        .with_body(body)
        .hint("give the layer that should win a higher precedence, or make the matchers exclusive: one key that each requires with a different value");
    for (_, _, span) in shown {
        d = d.place(*span, "");
    }
    d
}

#[cfg(test)]
mod tests {
    use super::VALUES;
    use crate::check::check;
    use crate::diagnostic::Code;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::testkit::{FLEET, host, layer};

    #[test]
    fn matchers_with_many_alternatives_are_compared_in_one_pass_each() {
        // 20 layers of one precedence, each listing 500 values of `role`
        // of its own and, last, one value all share: every pair could
        // meet on a host with role=shared. Comparing each alternative of
        // one with each of the other is 250,000 per pair.
        let mut r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("h1", "{role: other}"));
        for l in 0..20 {
            let values: Vec<String> = (0..500).map(|i| format!("v{l}-{i}")).collect();
            r.add(
                &format!("l{l:02}/layer.yaml"),
                layer(
                    30,
                    &format!("{{role: [{}, shared]}}", values.join(", ")),
                    &format!("  File[motd]:\n    path: /etc/motd\n    content: \"{l}\"\n"),
                ),
            );
        }
        let fleet = load(&r).unwrap();
        let all = resolve_all(&fleet);
        VALUES.with(|v| v.set(0));
        let report = check(&fleet, &all);
        let compared = VALUES.with(std::cell::Cell::get);
        let latent = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::LatentConflict)
            .count();
        assert_eq!(latent, 1);
        // 19 pairs are compared (the first layer with each other one, then
        // every layer is accounted for): at most 1,002 steps each.
        assert!(compared <= 19 * 1_002, "{compared} values compared");
    }
}
