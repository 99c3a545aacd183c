//! A fleet diff in summary, for scripts and a first look: which layer's
//! resource changes on how many hosts, and which hosts a change touches.

use std::collections::{BTreeMap, BTreeSet};

use super::{FleetDiff, Kind, Presence};

/// One layer's part in one resource's change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatRow {
    /// The layer responsible (on the new side when it has one).
    pub layer: String,
    /// The resource's id, or `(layer matched)` / `(layer unmatched)` when
    /// hosts start or stop matching the layer.
    pub what: String,
    /// Hosts on both sides that see it.
    pub hosts: usize,
    /// The fields that change, sorted; `(added)` or
    /// `(removed)` for a resource that appears or goes.
    pub fields: Vec<String>,
}

/// The hosts that see one row, and its fields.
type Touched<'f> = (BTreeSet<&'f str>, Vec<String>);

/// Every (layer, resource) pair a change touches on hosts present on both
/// sides, sorted by layer, then resource. Hosts added or removed are left
/// to the summary line: each would list every resource.
pub fn stat<'f>(d: &FleetDiff<'f>) -> Vec<StatRow> {
    let mut rows: BTreeMap<(String, String), Touched<'f>> = BTreeMap::new();
    let mut add = |layer: &str, what: &str, hosts: &[&'f str], field: &str| {
        let (hs, fields) = rows.entry((layer.to_owned(), what.to_owned())).or_default();
        hs.extend(hosts.iter().copied());
        if !fields.iter().any(|f| f == field) {
            fields.push(field.to_owned());
        }
    };
    for g in &d.groups {
        if d.group_kind(g) == Kind::StillFails {
            continue;
        }
        let m = &d.outcomes[g.outcome].manifest;
        for l in &m.layers_added {
            add(l, "(layer matched)", &g.hosts, "");
        }
        for l in &m.layers_removed {
            add(l, "(layer unmatched)", &g.hosts, "");
        }
        for r in &m.resources {
            match r.presence {
                Presence::Added | Presence::Removed => {
                    let word = format!("({})", r.presence.word());
                    for l in &r.layers {
                        add(l, &r.id, &g.hosts, &word);
                    }
                }
                Presence::Changed => {
                    for f in &r.fields {
                        let side = if f.new.layers.is_empty() {
                            &f.old
                        } else {
                            &f.new
                        };
                        for l in &side.layers {
                            add(l, &r.id, &g.hosts, f.field);
                        }
                    }
                }
            }
        }
    }
    rows.into_iter()
        .map(|((layer, what), (hosts, fields))| StatRow {
            layer,
            what,
            hosts: hosts.len(),
            fields: {
                let mut f: Vec<String> = fields.into_iter().filter(|f| !f.is_empty()).collect();
                f.sort();
                f
            },
        })
        .collect()
}

/// The hosts a change touches, in name order: added, removed, and those
/// on both sides whose manifest changes or that break or are fixed.
/// Hosts failing the same way on both sides are not touched.
pub fn affected<'f>(d: &FleetDiff<'f>) -> Vec<&'f str> {
    let mut out: BTreeSet<&'f str> = BTreeSet::new();
    if let Some(new) = d.new {
        out.extend(d.added.iter().map(|&h| &*new.fleet.host(h).name));
    }
    if let Some(old) = d.old {
        out.extend(d.removed.iter().map(|&h| &*old.fleet.host(h).name));
    }
    for g in &d.groups {
        if d.group_kind(g) != Kind::StillFails {
            out.extend(g.hosts.iter().copied());
        }
    }
    out.into_iter().collect()
}
