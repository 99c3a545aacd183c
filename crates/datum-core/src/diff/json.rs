//! A fleet diff as data for `--format json`: every host named (no `and N
//! more`), every value typed as in a manifest, every error as `check`
//! reports it, with `{path, line, column}`. Sensitive content is `null`
//! with `"redacted": true`.

use std::borrow::Cow;

use super::{FieldSide, FleetDiff, Group, ManifestDiff, ResourceDiff, Shown, Side};
use crate::diagnostic::Diagnostic;
use crate::emit::{self, Tree};
use crate::fleet::{Fleet, HostId};
use crate::manifest::value_tree;

/// The whole diff; `old` and `new` say what each side is.
pub fn tree<'a>(d: &'a FleetDiff<'a>, old: &'a str, new: &'a str) -> Tree<'a> {
    let summary = Tree::map()
        .with("changed", Tree::Int(d.changed() as i64))
        .with("added", Tree::Int(d.added.len() as i64))
        .with("removed", Tree::Int(d.removed.len() as i64))
        .with("unchanged", Tree::Int(d.unchanged as i64))
        .with("failing", Tree::Int(d.failing().len() as i64));
    let added = d
        .new
        .map(|side| d.added.iter().map(|&h| added(side, h)).collect())
        .unwrap_or_default();
    let removed = d
        .old
        .map(|side| {
            d.removed
                .iter()
                .map(|&h| Tree::str(&*side.fleet.host(h).name))
                .collect()
        })
        .unwrap_or_default();
    Tree::document("Diff")
        .with("old", Tree::str(old))
        .with("new", Tree::str(new))
        .with("changed", Tree::Bool(d.has_changes()))
        .with("summary", summary)
        .with("summary_line", Tree::str(d.summary()))
        .with("added", Tree::List(added))
        .with("removed", Tree::List(removed))
        .with("failing", Tree::strs(d.failing()))
        .with(
            "groups",
            Tree::List(d.groups.iter().map(|g| group(d, g)).collect()),
        )
        .with(
            "layer_names",
            Tree::map()
                .with("old", layer_names(d.old))
                .with("new", layer_names(d.new)),
        )
}

/// Each layer of one side as it is shown, with its `name`, sorted; empty
/// when the side has no fleet.
fn layer_names(side: Option<Side<'_>>) -> Tree<'_> {
    let mut layers: Vec<_> = side
        .map(|s| s.fleet.layers.iter().collect())
        .unwrap_or_default();
    layers.sort_by(|a, b| a.display.cmp(&b.display));
    Tree::List(
        layers
            .into_iter()
            .map(|l| {
                Tree::map()
                    .with("layer", Tree::str(l.display.as_str()))
                    .with("name", Tree::str(&*l.name))
            })
            .collect(),
    )
}

fn added<'a>(side: Side<'a>, h: HostId) -> Tree<'a> {
    let fleet = side.fleet;
    let name = &*fleet.host(h).name;
    let labels = fleet
        .labels_of(h)
        .into_iter()
        .map(|(k, v)| (Cow::Borrowed(k), Tree::str(v)))
        .collect();
    let errors: Vec<Tree<'a>> = super::failures(side, h)
        .iter()
        .map(|f| diagnostic(fleet, &f.diagnostic(fleet, &[name])))
        .collect();
    Tree::map()
        .with("host", Tree::str(name))
        .with("labels", Tree::Map(labels))
        .with("resolves", Tree::Bool(errors.is_empty()))
        .with("errors", Tree::List(errors))
}

fn group<'a>(d: &'a FleetDiff<'a>, g: &'a Group<'a>) -> Tree<'a> {
    let o = &d.outcomes[g.outcome];
    let labels = g
        .labels
        .iter()
        .map(|c| {
            let side = |v: &'a Option<String>| v.as_deref().map_or(Tree::Null, Tree::str);
            Tree::map()
                .with("key", Tree::str(c.key.as_str()))
                .with("old", side(&c.old))
                .with("new", side(&c.new))
        })
        .collect();
    let errors = |side: Option<Side<'a>>, list: &'a [super::Failure<'a>]| {
        Tree::List(match side {
            Some(s) => list
                .iter()
                .map(|f| diagnostic(s.fleet, &f.diagnostic(s.fleet, &g.hosts)))
                .collect(),
            None => Vec::new(),
        })
    };
    Tree::map()
        .with("kind", Tree::str(d.group_kind(g).word()))
        .with("hosts", Tree::strs(g.hosts.iter().copied()))
        .with("old_resolves", Tree::Bool(!o.old_fails))
        .with("new_resolves", Tree::Bool(!o.new_fails))
        .with("labels", Tree::List(labels))
        .with("layers", layers(&o.manifest))
        .with(
            "resources",
            Tree::List(o.manifest.resources.iter().map(resource).collect()),
        )
        .with(
            "errors",
            Tree::map()
                .with("introduced", errors(d.new, &o.introduced))
                .with("persisting", errors(d.new, &o.persisting))
                .with("fixed", errors(d.old, &o.fixed)),
        )
}

fn layers(m: &ManifestDiff) -> Tree<'_> {
    Tree::map()
        .with(
            "added",
            Tree::strs(m.layers_added.iter().map(String::as_str)),
        )
        .with(
            "removed",
            Tree::strs(m.layers_removed.iter().map(String::as_str)),
        )
        .with(
            "order",
            m.layers_order.as_ref().map_or(Tree::Null, |o| {
                Tree::map()
                    .with("old", Tree::strs(o.old.iter().map(String::as_str)))
                    .with("new", Tree::strs(o.new.iter().map(String::as_str)))
            }),
        )
}

fn resource(r: &ResourceDiff) -> Tree<'_> {
    let fields = r
        .fields
        .iter()
        .map(|f| {
            Tree::map()
                .with("field", Tree::str(f.field))
                .with("old", side(&f.old))
                .with("new", side(&f.new))
        })
        .collect();
    Tree::map()
        .with("id", Tree::str(r.id.as_str()))
        .with("change", Tree::str(r.presence.word()))
        .with(
            "summary",
            r.summary.as_deref().map_or(Tree::Null, Tree::str),
        )
        .with("layers", Tree::strs(r.layers.iter().map(String::as_str)))
        .with("fields", Tree::List(fields))
}

fn side(s: &FieldSide) -> Tree<'_> {
    let value = match &s.value {
        Shown::Absent | Shown::Sensitive => Tree::Null,
        Shown::Value(v) => value_tree(v),
        Shown::Entry(id) => Tree::str(id.as_str()),
        Shown::Digest(sha) => Tree::str(sha.as_str()),
    };
    Tree::map()
        .with("present", Tree::Bool(s.value != Shown::Absent))
        .with("value", value)
        .with("redacted", Tree::Bool(s.value == Shown::Sensitive))
        .with("layers", Tree::strs(s.layers.iter().map(String::as_str)))
}

/// A diagnostic as `check --format json` gives it, owning its text.
fn diagnostic(fleet: &Fleet, d: &Diagnostic) -> Tree<'static> {
    emit::diagnostic(&fleet.files, d).into_owned()
}
