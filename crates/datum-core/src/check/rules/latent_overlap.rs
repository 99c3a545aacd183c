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
use std::hash::Hash;
use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};

use super::Context;
use crate::diagnostic::{Code, Diagnostic, Line};
use crate::fleet::{Contrib, LayerId, ResId, VarContrib};
use crate::intern::Sym;
use crate::matcher::{Label, Sorted, sorted};
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
    conflicts: &KnownFields,
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
            |c| &fleet.setting(c).setting,
            conflicts.get(&key).map_or(&[], Vec::as_slice),
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
            |c| &fleet.var(c).setting,
            var_conflicts.get(name).map_or(&[], Vec::as_slice),
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
/// warning, not a million). `value`: what a side sets (two setting the
/// same value are no pair); `known`: the groups of layers some host
/// already matches together, disagreeing (conflicts `check` reports): a
/// pair inside one is not latent.
///
/// Pairs are walked in order, but those of one value, those already
/// known and those whose two sides both count already are skipped 64 at a
/// time, never looked at: 2,000 layers setting `path` alike, or in
/// conflict on one host, cost 2,000 rows of 32 words, not 2 million pairs
/// (nor a set of them).
fn latent<'v, C: Copy, V: Hash + Eq + 'v>(
    cx: &Context<'_>,
    matchers: &[Sorted],
    sides: &[C],
    layer: impl Fn(C) -> LayerId,
    value: impl Fn(C) -> &'v V,
    known: &[Box<[LayerId]>],
) -> Option<(Vec<C>, (C, C))> {
    let n = sides.len();
    let skip = Skip::new(sides, &layer, value, known);
    let mut involved = Bits::new(n);
    let mut row = Bits::new(n);
    let mut first: Option<(C, C)> = None;
    for (i, &a) in sides.iter().enumerate() {
        let la = layer(a);
        skip.row(i, &mut row);
        for w in (i + 1) / 64..row.0.len() {
            // Those after `i`, not skipped with it, and (once `i` counts)
            // not counted already.
            let mut free = !row.0[w] & Bits::above(i, w) & Bits::below(n, w);
            if involved.get(i) {
                free &= !involved.0[w];
            }
            while free != 0 {
                let j = w * 64 + free.trailing_zeros() as usize;
                free &= free - 1;
                if involved.get(i) && involved.get(j) {
                    continue;
                }
                #[cfg(test)]
                PAIRS.with(|p| p.set(p.get() + 1));
                let b = sides[j];
                let lb = layer(b);
                if la == lb
                    || !compatible(&matchers[la.0 as usize], &matchers[lb.0 as usize])
                    || cx
                        .held_back
                        .iter()
                        .any(|m| m.binary_search(&la).is_ok() && m.binary_search(&lb).is_ok())
                {
                    continue;
                }
                involved.set(i);
                involved.set(j);
                first.get_or_insert((a, b));
            }
        }
    }
    let pair = first?;
    let layers = sides
        .iter()
        .enumerate()
        .filter(|&(i, _)| involved.get(i))
        .map(|(_, c)| *c)
        .collect();
    Some((layers, pair))
}

/// A set of side numbers, 64 to a word.
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// The bits of word `w` numbered above `i`.
    fn above(i: usize, w: usize) -> u64 {
        let from = i + 1;
        if from <= w * 64 {
            !0
        } else {
            !0 << (from - w * 64)
        }
    }

    /// The bits of word `w` numbered below `n`.
    fn below(n: usize, w: usize) -> u64 {
        match n - w * 64 {
            k if k >= 64 => !0,
            k => (1 << k) - 1,
        }
    }
}

/// Groups of sides no two of which make a pair: those setting one value,
/// and those of the layers of one known conflict.
struct Skip {
    /// Each group's side numbers.
    groups: Vec<Vec<usize>>,
    /// The groups holding each side.
    of: Vec<Vec<usize>>,
    /// A group with more sides than a row has words, as a row: made once,
    /// so a big group costs a row of words per side, not its size.
    dense: FxHashMap<usize, Bits>,
    n: usize,
}

impl Skip {
    fn new<'v, C: Copy, V: Hash + Eq + 'v>(
        sides: &[C],
        layer: impl Fn(C) -> LayerId,
        value: impl Fn(C) -> &'v V,
        known: &[Box<[LayerId]>],
    ) -> Skip {
        let n = sides.len();
        let mut by_layer: FxHashMap<LayerId, Vec<usize>> = FxHashMap::default();
        let mut by_value: FxHashMap<&V, usize> = FxHashMap::default();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, &c) in sides.iter().enumerate() {
            by_layer.entry(layer(c)).or_default().push(i);
            let g = *by_value.entry(value(c)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        for members in known {
            groups.push(
                members
                    .iter()
                    .filter_map(|l| by_layer.get(l))
                    .flatten()
                    .copied()
                    .collect(),
            );
        }
        groups.retain(|g| g.len() > 1);
        let mut of = vec![Vec::new(); n];
        let mut dense = FxHashMap::default();
        for (g, members) in groups.iter().enumerate() {
            for &s in members {
                of[s].push(g);
            }
            if members.len() > n.div_ceil(64) {
                let mut row = Bits::new(n);
                for &s in members {
                    row.set(s);
                }
                dense.insert(g, row);
            }
        }
        Skip {
            groups,
            of,
            dense,
            n,
        }
    }

    /// Into `row` (cleared first): the sides that make no pair with side `i`.
    fn row(&self, i: usize, row: &mut Bits) {
        row.0.fill(0);
        debug_assert_eq!(row.0.len(), self.n.div_ceil(64));
        for &g in &self.of[i] {
            match self.dense.get(&g) {
                Some(bits) => {
                    for (w, b) in row.0.iter_mut().zip(&bits.0) {
                        *w |= b;
                    }
                }
                None => {
                    for &s in &self.groups[g] {
                        row.set(s);
                    }
                }
            }
        }
    }
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

/// The groups of layers some host already matches together, disagreeing
/// on a field (or a var): `check` reports those as conflicts. Each group
/// is its layers, sorted, once however many resolutions share it: a
/// conflict of 2,000 layers is 2,000 numbers, not 2 million pairs.
type KnownFields = FxHashMap<(ResId, Field), Vec<Box<[LayerId]>>>;
type KnownVars<'f> = FxHashMap<&'f str, Vec<Box<[LayerId]>>>;

fn known_conflicts<'f>(cx: &Context<'f>) -> (KnownFields, KnownVars<'f>) {
    let mut fields: FxHashMap<_, FxHashSet<Box<[LayerId]>>> = FxHashMap::default();
    let mut vars: FxHashMap<_, FxHashSet<Box<[LayerId]>>> = FxHashMap::default();
    let group = |layers: &mut dyn Iterator<Item = LayerId>| -> Box<[LayerId]> {
        let mut g: Vec<LayerId> = layers.collect();
        g.sort_unstable();
        g.dedup();
        g.into_boxed_slice()
    };
    for res in &cx.all.resolutions {
        for p in res.problems.iter() {
            match p {
                Problem::Conflict {
                    resource,
                    field,
                    sides,
                } => {
                    fields
                        .entry((*resource, *field))
                        .or_default()
                        .insert(group(&mut sides.iter().map(|c| c.layer)));
                }
                Problem::VarConflict { sides, .. } => {
                    let Some(first) = sides.first() else {
                        continue;
                    };
                    // The fleet's own text, so it outlives the resolution.
                    let name: &'f str = &cx.fleet.var(*first).name;
                    vars.entry(name)
                        .or_default()
                        .insert(group(&mut sides.iter().map(|c| c.layer)));
                }
                _ => {}
            }
        }
    }
    let sorted = |set: FxHashSet<Box<[LayerId]>>| {
        let mut v: Vec<Box<[LayerId]>> = set.into_iter().collect();
        v.sort_unstable();
        v
    };
    (
        fields.into_iter().map(|(k, v)| (k, sorted(v))).collect(),
        vars.into_iter().map(|(k, v)| (k, sorted(v))).collect(),
    )
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
    use super::{PAIRS, VALUES};
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

    #[test]
    fn a_conflict_among_thousands_of_layers_costs_no_pair() {
        // 1,000 layers of one precedence set one field differently and
        // every host matches them all: one conflict, which check reports,
        // and every pair of it is known. Looking at each pair (or keeping
        // a set of them) is half a million steps.
        let mut r = MemReader::new().file("datum.yaml", FLEET).file(
            "hosts.yaml",
            (0..10)
                .map(|i| host(&format!("h{i}"), &format!("{{role: r{i}}}")))
                .collect::<String>(),
        );
        let roles: Vec<String> = (0..10).map(|i| format!("r{i}")).collect();
        for l in 0..1_000 {
            r.add(
                &format!("l/{l:04}.yaml"),
                layer(
                    30,
                    &format!("{{role: [{}]}}", roles.join(", ")),
                    &format!("  File[motd]:\n    path: /etc/motd\n    content: \"{l}\"\n"),
                ),
            );
        }
        let fleet = load(&r).unwrap();
        let all = resolve_all(&fleet);
        PAIRS.with(|p| p.set(0));
        let report = check(&fleet, &all);
        assert_eq!(PAIRS.with(std::cell::Cell::get), 0, "pairs looked at");
        let codes: Vec<Code> = report.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::Conflict]);
        // Drawn capped, saying how much it leaves out.
        let text = crate::present::diagnostic::to_text(&report.diagnostics[0], &fleet.files);
        assert!(
            text.contains("\n  and 980 more rows not shown; `--format json` lists every one\n  all 1000 layers match hosts h0, h1, h2, h3, h4 and 5 more at equal precedence\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  and 980 more places not shown; `--format json` lists every one\n"),
            "{text}"
        );
        assert_eq!(text.matches("  --> ").count(), 20, "{text}");
    }

    /// A small pseudo-random number generator (a linear congruential one):
    /// the same fleets on every run.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn the_latent_layers_are_those_of_every_pair_no_host_holds_together() {
        // Layers of one precedence over `role` (one to three values) and
        // sometimes `site`; hosts carry some of the combinations. A pair is
        // latent when the values differ, some host could carry both
        // matchers, and no host matches both. Many layers, so that the
        // words of 64 sides and their edges are crossed.
        for seed in 0..12 {
            let mut rng = Lcg(seed);
            let n = 60 + rng.below(140) as usize;
            let combos: Vec<(u64, u64)> =
                (0..4).flat_map(|r| (0..3).map(move |s| (r, s))).collect();
            let hosts: Vec<(u64, u64)> = combos
                .iter()
                .copied()
                .filter(|_| rng.below(3) == 0)
                .collect();
            let mut r = MemReader::new().file("datum.yaml", FLEET).file(
                "hosts.yaml",
                hosts
                    .iter()
                    .enumerate()
                    .map(|(i, (ro, si))| {
                        host(&format!("h{i}"), &format!("{{role: r{ro}, site: s{si}}}"))
                    })
                    .collect::<String>(),
            );
            // (roles, site, value) per layer.
            let mut layers: Vec<(Vec<u64>, Option<u64>, u64)> = Vec::new();
            for l in 0..n {
                let mut roles: Vec<u64> = (0..1 + rng.below(3)).map(|_| rng.below(4)).collect();
                roles.sort_unstable();
                roles.dedup();
                let site = (rng.below(2) == 0).then(|| rng.below(3));
                let value = rng.below(4);
                let mut labels = format!(
                    "{{role: [{}]",
                    roles
                        .iter()
                        .map(|r| format!("r{r}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                if let Some(s) = site {
                    labels.push_str(&format!(", site: s{s}"));
                }
                labels.push('}');
                r.add(
                    &format!("l/{l:03}.yaml"),
                    layer(
                        30,
                        &labels,
                        &format!("  File[motd]:\n    path: /etc/motd\n    content: \"{value}\"\n"),
                    ),
                );
                layers.push((roles, site, value));
            }
            let holds = |(roles, site, _): &(Vec<u64>, Option<u64>, u64), (ro, si): (u64, u64)| {
                roles.contains(&ro) && site.is_none_or(|s| s == si)
            };
            let mut involved = vec![false; n];
            let mut first = None;
            for i in 0..n {
                for j in i + 1..n {
                    let (a, b) = (&layers[i], &layers[j]);
                    let could = combos.iter().any(|&c| holds(a, c) && holds(b, c));
                    let does = hosts.iter().any(|&h| holds(a, h) && holds(b, h));
                    if a.2 != b.2 && could && !does {
                        involved[i] = true;
                        involved[j] = true;
                        first.get_or_insert((i, j));
                    }
                }
            }
            let fleet = load(&r).unwrap();
            let all = resolve_all(&fleet);
            let report = check(&fleet, &all);
            let warnings: Vec<String> = report
                .diagnostics
                .iter()
                .filter(|d| d.code == Code::LatentConflict)
                .map(|d| crate::present::diagnostic::to_text(d, &fleet.files))
                .collect();
            let Some((a, b)) = first else {
                assert!(warnings.is_empty(), "seed {seed}: {warnings:#?}");
                continue;
            };
            assert_eq!(warnings.len(), 1, "seed {seed}: {warnings:#?}");
            let w = &warnings[0];
            let listed: Vec<usize> = (0..n).filter(|&i| involved[i]).collect();
            let (a, b) = (format!("l/{a:03}.yaml"), format!("l/{b:03}.yaml"));
            if listed.len() == 2 {
                assert!(
                    w.contains(&format!("warning: {a} and {b} set")),
                    "seed {seed}: {w}"
                );
            } else {
                assert!(
                    w.contains(&format!("warning: {} layers set", listed.len())),
                    "seed {seed}: {w}"
                );
                assert!(w.contains(&format!("({a} and {b})")), "seed {seed}: {w}");
            }
            // The first five, in order.
            let mut at = 0;
            for i in listed.iter().take(super::LAYERS_SHOWN) {
                let name = format!("  l/{i:03}.yaml  ");
                let found = w[at..]
                    .find(&name)
                    .unwrap_or_else(|| panic!("seed {seed}: {name} in {w}"));
                at += found + name.len();
            }
        }
    }
}
