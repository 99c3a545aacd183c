//! `diff`: what a change to the repository does to every host.
//!
//! [`diff`] takes two loaded and resolved fleets (any two sources: git
//! revisions, a working tree, memory) and compares every host's manifest.
//! A manifest depends only on the host's resolution, which hosts matching
//! the same layers share, so the work is done once per distinct pair of
//! (old resolution, new resolution): with thousands of hosts and a few
//! dozen layer sets, a few dozen comparisons. Hosts whose changes come out
//! the same are then grouped, so a reviewer reads each change once with the
//! hosts it hits.
//!
//! What counts is what a host receives: its labels, its layers (their fold
//! order too: a precedence change that moves a layer changes the host even
//! when no field changes), and every
//! field of every resource as the manifest has it, `source_sha256`
//! included, so a payload whose bytes change shows even when no document
//! does. Provenance moving without the value changing is no change. Each
//! changed value names the layer that set it on each side. Hosts that fail
//! to resolve on either side are reported with the errors the change
//! introduces, fixes or leaves in place.
//!
//! [`json::tree`] gives the result as data; `present` draws it as text;
//! [`stat`] and [`affected`] sum it up (`--stat`, `--name-only`).

pub mod json;
mod manifest;
mod stat;

use std::cmp::Ordering;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub use manifest::{
    FieldDiff, FieldSide, LayerOrder, ManifestDiff, Presence, ResourceDiff, Shown, manifest_diff,
};
pub use stat::{StatRow, affected, stat};

use crate::diagnostic::{Code, Diagnostic};
use crate::fleet::{BrokenKind, Fleet, Host, HostId};
use crate::report::{host_list, problem_diagnostic};
use crate::resolve::{FleetResolution, Problem};

/// One side of a comparison: a loaded fleet and its resolution.
#[derive(Clone, Copy)]
pub struct Side<'f> {
    pub fleet: &'f Fleet,
    pub all: &'f FleetResolution,
}

/// Every host's change between two sides.
pub struct FleetDiff<'f> {
    /// `None` when the fleet does not exist on that side (every host is
    /// added, or removed).
    pub old: Option<Side<'f>>,
    pub new: Option<Side<'f>>,
    /// Hosts only on the new side, in name order.
    pub added: Vec<HostId>,
    /// Hosts only on the old side, in name order.
    pub removed: Vec<HostId>,
    /// Hosts on both sides that change or fail, grouped by identical
    /// change; new failures first, then changes, then fixes, then hosts
    /// that fail the same way on both sides. Within a kind, by first host.
    pub groups: Vec<Group<'f>>,
    /// The distinct outcomes that groups point at.
    pub outcomes: Vec<Outcome<'f>>,
    /// Hosts on both sides with identical manifests.
    pub unchanged: usize,
}

/// Hosts on both sides that change the same way.
#[derive(Debug)]
pub struct Group<'f> {
    /// In name order.
    pub hosts: Vec<&'f str>,
    /// Labels that changed, sorted by key.
    pub labels: Vec<LabelChange>,
    /// Index into [`FleetDiff::outcomes`].
    pub outcome: usize,
}

/// A label whose value changed, appeared or went away.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelChange {
    pub key: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What became of one pair of resolutions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Outcome<'f> {
    pub old_fails: bool,
    pub new_fails: bool,
    /// Errors of the new side that the old side did not have.
    pub introduced: Vec<Failure<'f>>,
    /// Errors of the old side that the new side no longer has.
    pub fixed: Vec<Failure<'f>>,
    /// Errors of the new side that the old side had too.
    pub persisting: Vec<Failure<'f>>,
    /// When both sides resolve: how the manifest changes.
    pub manifest: ManifestDiff,
}

/// Why a host does not resolve on one side.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Failure<'f> {
    /// A resolution problem (a conflict, a missing field, ...).
    Problem(&'f Problem),
    /// A document the host depends on failed to load.
    Blocked { path: String, what: BrokenKind },
}

/// What a group of hosts amounts to, in the order groups are listed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The new side fails with errors the old side did not have.
    Breaks,
    /// Both sides resolve (or fail alike) and something changed.
    Changes,
    /// The old side failed and the new side resolves, or fails less.
    Fixes,
    /// Both sides fail with the same errors, nothing else changed.
    StillFails,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Breaks => "breaks",
            Kind::Changes => "changes",
            Kind::Fixes => "fixes",
            Kind::StillFails => "still_fails",
        }
    }
}

impl Outcome<'_> {
    /// Whether anything about the host changes.
    pub fn changed(&self) -> bool {
        self.old_fails != self.new_fails
            || !self.introduced.is_empty()
            || !self.fixed.is_empty()
            || !self.manifest.is_empty()
    }
}

impl<'f> FleetDiff<'f> {
    pub fn group_kind(&self, g: &Group<'f>) -> Kind {
        kind(&self.outcomes[g.outcome], &g.labels)
    }

    /// How many hosts on both sides change.
    pub fn changed(&self) -> usize {
        self.groups
            .iter()
            .filter(|g| self.group_kind(g) != Kind::StillFails)
            .map(|g| g.hosts.len())
            .sum()
    }

    /// Hosts on the new side that do not resolve, in name order.
    pub fn failing(&self) -> Vec<&'f str> {
        let mut out: Vec<&str> = self
            .groups
            .iter()
            .filter(|g| self.outcomes[g.outcome].new_fails)
            .flat_map(|g| g.hosts.iter().copied())
            .collect();
        if let Some(new) = self.new {
            out.extend(
                self.added
                    .iter()
                    .filter(|&&h| !failures(new, h).is_empty())
                    .map(|&h| &*new.fleet.host(h).name),
            );
        }
        out.sort_unstable();
        out
    }

    /// Whether any host is added, removed or changed.
    pub fn has_changes(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty() || self.changed() > 0
    }

    /// The summary line: `2 hosts change, 1 added, 1 removed, 3 unchanged`.
    pub fn summary(&self) -> String {
        let mut parts = vec![
            match self.changed() {
                1 => "1 host changes".to_owned(),
                n => format!("{n} hosts change"),
            },
            format!("{} added", self.added.len()),
            format!("{} removed", self.removed.len()),
            format!("{} unchanged", self.unchanged),
        ];
        let failing = self.failing().len();
        if failing > 0 {
            parts.push(format!("{failing} failing"));
        }
        parts.join(", ")
    }
}

fn kind(outcome: &Outcome<'_>, labels: &[LabelChange]) -> Kind {
    if outcome.new_fails && (!outcome.old_fails || !outcome.introduced.is_empty()) {
        Kind::Breaks
    } else if outcome.old_fails && (!outcome.new_fails || !outcome.fixed.is_empty()) {
        Kind::Fixes
    } else if outcome.changed() || !labels.is_empty() {
        Kind::Changes
    } else {
        Kind::StillFails
    }
}

/// Where a host stands on one side: its resolution, or held back (each
/// held-back host is its own case: what blocks it depends on the host).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum State {
    Resolved(u32),
    HeldBack(HostId),
}

fn state(side: Side<'_>, h: HostId) -> State {
    match side.all.by_host[h.0 as usize] {
        Some(i) => State::Resolved(i),
        None => State::HeldBack(h),
    }
}

/// Why a host fails on one side; empty when it resolves.
pub fn failures<'f>(side: Side<'f>, h: HostId) -> Vec<Failure<'f>> {
    failures_of(side, state(side, h))
}

fn failures_of<'f>(side: Side<'f>, st: State) -> Vec<Failure<'f>> {
    match st {
        State::Resolved(i) => side.all.resolutions[i as usize]
            .problems
            .iter()
            .map(Failure::Problem)
            .collect(),
        State::HeldBack(h) => side
            .fleet
            .blockers(h)
            .into_iter()
            .map(|b| Failure::Blocked {
                path: b.path.clone(),
                what: b.what,
            })
            .collect(),
    }
}

impl Failure<'_> {
    /// The failure as reported on `hosts` (sorted, at least one), as
    /// `check` reports it.
    pub fn diagnostic(&self, fleet: &Fleet, hosts: &[&str]) -> Diagnostic {
        match self {
            Failure::Problem(p) => problem_diagnostic(fleet, p, hosts),
            Failure::Blocked { path, what } => {
                Diagnostic::error(Code::HeldBack, format!("{path} ({what}) failed to load"))
                    .note(format!("{} depend on it", host_list(hosts)))
                    .hint("`datum check` shows its errors")
            }
        }
    }
}

/// A failure's identity across the two sides, whose ids differ: its message.
fn failure_key(fleet: &Fleet, f: &Failure<'_>) -> String {
    f.diagnostic(fleet, &["-"]).message
}

/// Compares every host of two sides.
pub fn diff<'f>(old: Option<Side<'f>>, new: Option<Side<'f>>) -> FleetDiff<'f> {
    let old_hosts = old.map_or(&[][..], |s| &s.fleet.hosts[..]);
    let new_hosts = new.map_or(&[][..], |s| &s.fleet.hosts[..]);
    let (added, removed, common) = match_hosts(old_hosts, new_hosts);
    let (Some(old), Some(new)) = (old, new) else {
        return FleetDiff {
            old,
            new,
            added,
            removed,
            groups: Vec::new(),
            outcomes: Vec::new(),
            unchanged: 0,
        };
    };
    let (outcomes, host_outcome) = outcomes(old, new, &common);
    let (mut groups, unchanged) = group(old, new, &common, &host_outcome, &outcomes);
    groups.sort_by(|a, b| {
        kind(&outcomes[a.outcome], &a.labels)
            .cmp(&kind(&outcomes[b.outcome], &b.labels))
            .then_with(|| a.hosts[0].cmp(b.hosts[0]))
    });
    FleetDiff {
        old: Some(old),
        new: Some(new),
        added,
        removed,
        groups,
        outcomes,
        unchanged,
    }
}

/// Hosts only in the new side (added), only in the old one (removed), and
/// in both, by name. Both host lists are sorted by name.
fn match_hosts(old: &[Host], new: &[Host]) -> (Vec<HostId>, Vec<HostId>, Vec<(HostId, HostId)>) {
    let mut added = Vec::new();
    let mut removed = Vec::new();
    let mut common = Vec::new();
    let by_name = |i: usize, j: usize| old[i].name.cmp(&new[j].name);
    for step in merge_join(old.len(), new.len(), by_name) {
        match step {
            (Some(i), None) => removed.push(HostId(i as u32)),
            (None, Some(j)) => added.push(HostId(j as u32)),
            (Some(i), Some(j)) => common.push((HostId(i as u32), HostId(j as u32))),
            (None, None) => {}
        }
    }
    (added, removed, common)
}

/// The distinct outcomes of the hosts in both sides, and the index of each
/// host's outcome. Each distinct pair of states is compared once, and pairs
/// that come out the same share one outcome.
fn outcomes<'f>(
    old: Side<'f>,
    new: Side<'f>,
    common: &[(HostId, HostId)],
) -> (Vec<Outcome<'f>>, Vec<usize>) {
    let mut pair_of: FxHashMap<(State, State), usize> = FxHashMap::default();
    let mut pairs: Vec<(State, State)> = Vec::new();
    let host_pair: Vec<usize> = common
        .iter()
        .map(|&(o, n)| {
            let key = (state(old, o), state(new, n));
            *pair_of.entry(key).or_insert_with(|| {
                pairs.push(key);
                pairs.len() - 1
            })
        })
        .collect();
    let computed: Vec<Outcome<'f>> = pairs
        .par_iter()
        .map(|&(o, n)| outcome(old, new, o, n))
        .collect();
    let mut outcomes: Vec<Outcome<'f>> = Vec::new();
    let mut unique: FxHashMap<&Outcome<'f>, usize> = FxHashMap::default();
    let mut pair_outcome = Vec::with_capacity(computed.len());
    for o in &computed {
        let next = unique.len();
        let k = *unique.entry(o).or_insert(next);
        if k == outcomes.len() {
            outcomes.push(o.clone());
        }
        pair_outcome.push(k);
    }
    let host_outcome = host_pair.iter().map(|&p| pair_outcome[p]).collect();
    (outcomes, host_outcome)
}

/// The hosts in both sides grouped by label changes and outcome, in the
/// order first met, and how many hosts did not change at all.
fn group<'f>(
    old: Side<'f>,
    new: Side<'f>,
    common: &[(HostId, HostId)],
    host_outcome: &[usize],
    outcomes: &[Outcome<'f>],
) -> (Vec<Group<'f>>, usize) {
    let mut groups: Vec<Group<'f>> = Vec::new();
    let mut group_of: FxHashMap<(Vec<LabelChange>, usize), usize> = FxHashMap::default();
    let mut unchanged = 0;
    for (&(o, n), &outcome) in common.iter().zip(host_outcome) {
        let labels = label_changes(old.fleet, o, new.fleet, n);
        let out = &outcomes[outcome];
        if labels.is_empty() && !out.changed() && !out.new_fails && !out.old_fails {
            unchanged += 1;
            continue;
        }
        let name = &*new.fleet.host(n).name;
        let next = groups.len();
        let g = *group_of.entry((labels.clone(), outcome)).or_insert(next);
        if g == groups.len() {
            groups.push(Group {
                hosts: Vec::new(),
                labels,
                outcome,
            });
        }
        groups[g].hosts.push(name);
    }
    (groups, unchanged)
}

fn label_changes(old: &Fleet, o: HostId, new: &Fleet, n: HostId) -> Vec<LabelChange> {
    let (a, b) = (old.labels_of(o), new.labels_of(n));
    merge_join(a.len(), b.len(), |i, j| a[i].0.cmp(b[j].0))
        .into_iter()
        .filter_map(|(i, j)| {
            let (x, y) = (i.map(|i| a[i]), j.map(|j| b[j]));
            let key = x.or(y)?.0;
            let (old_v, new_v) = (x.map(|l| l.1), y.map(|l| l.1));
            (old_v != new_v).then(|| LabelChange {
                key: key.to_owned(),
                old: old_v.map(str::to_owned),
                new: new_v.map(str::to_owned),
            })
        })
        .collect()
}

/// Walks two sorted lists together: each step holds an index into the
/// first, the second, or both when their items compare equal.
fn merge_join(
    n: usize,
    m: usize,
    cmp: impl Fn(usize, usize) -> Ordering,
) -> Vec<(Option<usize>, Option<usize>)> {
    let mut out = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        let order = if i == n {
            Ordering::Greater
        } else if j == m {
            Ordering::Less
        } else {
            cmp(i, j)
        };
        match order {
            Ordering::Less => {
                out.push((Some(i), None));
                i += 1;
            }
            Ordering::Greater => {
                out.push((None, Some(j)));
                j += 1;
            }
            Ordering::Equal => {
                out.push((Some(i), Some(j)));
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn outcome<'f>(old: Side<'f>, new: Side<'f>, o: State, n: State) -> Outcome<'f> {
    let old_failures = failures_of(old, o);
    let new_failures = failures_of(new, n);
    let mut out = Outcome {
        old_fails: !old_failures.is_empty(),
        new_fails: !new_failures.is_empty(),
        ..Outcome::default()
    };
    if out.old_fails || out.new_fails {
        let old_keys: Vec<String> = old_failures
            .iter()
            .map(|f| failure_key(old.fleet, f))
            .collect();
        let new_keys: Vec<String> = new_failures
            .iter()
            .map(|f| failure_key(new.fleet, f))
            .collect();
        for (f, k) in new_failures.into_iter().zip(&new_keys) {
            if old_keys.contains(k) {
                out.persisting.push(f);
            } else {
                out.introduced.push(f);
            }
        }
        out.fixed = old_failures
            .into_iter()
            .zip(&old_keys)
            .filter(|(_, k)| !new_keys.contains(k))
            .map(|(f, _)| f)
            .collect();
        return out;
    }
    let (State::Resolved(a), State::Resolved(b)) = (o, n) else {
        return out;
    };
    out.manifest = manifest_diff(
        old,
        &old.all.resolutions[a as usize],
        new,
        &new.all.resolutions[b as usize],
    );
    out
}

#[cfg(test)]
mod tests;
