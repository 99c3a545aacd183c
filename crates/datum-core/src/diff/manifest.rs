//! How one host's manifest becomes another: layers, resources, fields and
//! entries of sets that appear, go or change, each with the layers
//! responsible, across two fleets whose ids differ (everything is compared
//! by text).

use super::{Side, merge_join};
use crate::fleet::{Fleet, LayerId};
use crate::resolve::{Resolution, ResolvedResource, SetEntry};
use crate::schema::{Field, Value};
use crate::template::Rendered;

/// How one host's manifest changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ManifestDiff {
    /// Layers the host matches now and did not, by display name.
    pub layers_added: Vec<String>,
    /// Layers the host matched and no longer does.
    pub layers_removed: Vec<String>,
    /// The whole fold order on each side, when the layers the host matches
    /// on both sides come in another order (a precedence change, a
    /// renamed file): the manifest's `layers` differ even when no field
    /// does, and which layer wins a future field changes.
    pub layers_order: Option<LayerOrder>,
    /// Resources that appear, go or change, sorted by id.
    pub resources: Vec<ResourceDiff>,
}

/// A host's layers in fold order, on each side.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayerOrder {
    pub old: Vec<String>,
    pub new: Vec<String>,
}

impl ManifestDiff {
    pub fn is_empty(&self) -> bool {
        self.layers_added.is_empty()
            && self.layers_removed.is_empty()
            && self.layers_order.is_none()
            && self.resources.is_empty()
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Presence {
    Added,
    Removed,
    Changed,
}

impl Presence {
    pub fn word(self) -> &'static str {
        match self {
            Presence::Added => "added",
            Presence::Removed => "removed",
            Presence::Changed => "changed",
        }
    }
}

/// One resource that appears, goes or changes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceDiff {
    pub id: String,
    pub presence: Presence,
    /// What it manages (its path or name), on the new side if it has one.
    pub summary: Option<String>,
    /// The layers declaring it, for an added or removed resource.
    pub layers: Vec<String>,
    /// For an added resource every field; for a changed one the fields
    /// that change; for a removed one none.
    pub fields: Vec<FieldDiff>,
}

/// One field, or one entry of `requires`/`restart_on`, on both sides.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldDiff {
    /// The field's name; `source_sha256` for a payload's bytes.
    pub field: &'static str,
    pub old: FieldSide,
    pub new: FieldSide,
}

/// A field's value on one side, and the layers responsible for it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldSide {
    pub value: Shown,
    /// The layer whose value stands (or whose `null` unset the field);
    /// for an entry of a set, every layer listing it.
    pub layers: Vec<String>,
}

/// A value as it may be shown.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shown {
    /// The field is not in the manifest.
    Absent,
    Value(Value),
    /// An entry of `requires` or `restart_on`.
    Entry(String),
    /// A payload's SHA-256.
    Digest(String),
    /// Content, or a payload digest, of a resource marked sensitive on
    /// either side: never shown.
    Sensitive,
}

impl FieldSide {
    fn absent() -> FieldSide {
        FieldSide {
            value: Shown::Absent,
            layers: Vec::new(),
        }
    }
}

/// Both fold orders, when the layers on both sides (`la`, `lb`: sorted
/// names) are not in the same order on each.
fn layer_order(
    old: &Fleet,
    a: &[LayerId],
    new: &Fleet,
    b: &[LayerId],
    la: &[String],
    lb: &[String],
) -> Option<LayerOrder> {
    let ordered = |fleet: &Fleet, layers: &[LayerId]| -> Vec<String> {
        layers
            .iter()
            .map(|&l| fleet.layer(l).display.clone())
            .collect()
    };
    let (oa, ob) = (ordered(old, a), ordered(new, b));
    let shared = |order: &[String], other: &[String]| -> Vec<String> {
        order
            .iter()
            .filter(|l| other.binary_search(l).is_ok())
            .cloned()
            .collect()
    };
    (shared(&oa, lb) != shared(&ob, la)).then_some(LayerOrder { old: oa, new: ob })
}

/// How the manifest of one resolution becomes that of another, each on its
/// own side. Public so that a benchmark or another tool can compare two
/// resolutions directly.
pub fn manifest_diff(
    old_side: Side<'_>,
    a: &Resolution,
    new_side: Side<'_>,
    b: &Resolution,
) -> ManifestDiff {
    let (old, new) = (old_side.fleet, new_side.fleet);
    // Content hidden on either side stays hidden: see `crate::sensitive`.
    let hidden = |a: &ResolvedResource, b: &ResolvedResource| {
        old_side.all.sensitive.marks(a.id) || new_side.all.sensitive.marks(b.id)
    };
    let names = |fleet: &Fleet, layers: &[LayerId]| -> Vec<String> {
        let mut v: Vec<String> = layers
            .iter()
            .map(|&l| fleet.layer(l).display.clone())
            .collect();
        v.sort();
        v
    };
    let (la, lb) = (names(old, &a.layers), names(new, &b.layers));
    let mut out = ManifestDiff {
        layers_added: lb.iter().filter(|l| !la.contains(l)).cloned().collect(),
        layers_removed: la.iter().filter(|l| !lb.contains(l)).cloned().collect(),
        layers_order: layer_order(old, &a.layers, new, &b.layers, &la, &lb),
        resources: Vec::new(),
    };
    // Resources are sorted by id text in both fleets.
    let (ra, rb) = (&a.resources, &b.resources);
    let by_id = |i: usize, j: usize| {
        old.resources
            .text(ra[i].id)
            .cmp(new.resources.text(rb[j].id))
    };
    for step in merge_join(ra.len(), rb.len(), by_id) {
        match step {
            (Some(i), None) => {
                let sensitive = old_side.all.sensitive.marks(ra[i].id);
                out.resources
                    .push(one_sided(old, &ra[i], None, Presence::Removed, sensitive));
            }
            (None, Some(j)) => {
                let sensitive = new_side.all.sensitive.marks(rb[j].id);
                let rendered = b.rendered(rb[j].id);
                out.resources
                    .push(one_sided(new, &rb[j], rendered, Presence::Added, sensitive));
            }
            (Some(i), Some(j)) => {
                let sensitive = hidden(&ra[i], &rb[j]);
                let fields = changed_fields(
                    Some((old, &ra[i], a.rendered(ra[i].id))),
                    new,
                    (&rb[j], b.rendered(rb[j].id)),
                    sensitive,
                );
                if !fields.is_empty() {
                    out.resources.push(ResourceDiff {
                        id: new.resources.text(rb[j].id).to_owned(),
                        presence: Presence::Changed,
                        summary: rb[j].summary(new).map(str::to_owned),
                        // Each changed field names its own layers.
                        layers: Vec::new(),
                        fields,
                    });
                }
            }
            (None, None) => {}
        }
    }
    out
}

/// A resource on one side only: added with every field, or removed.
/// `sensitive`: whether the resource's content is hidden.
fn one_sided(
    fleet: &Fleet,
    r: &ResolvedResource,
    rendered: Option<&Rendered>,
    presence: Presence,
    sensitive: bool,
) -> ResourceDiff {
    ResourceDiff {
        id: fleet.resources.text(r.id).to_owned(),
        presence,
        summary: r.summary(fleet).map(str::to_owned),
        layers: r
            .declared_by
            .iter()
            .map(|&(l, _)| fleet.layer(l).display.clone())
            .collect(),
        fields: match presence {
            Presence::Added => changed_fields(None, fleet, (r, rendered), sensitive),
            _ => Vec::new(),
        },
    }
}

/// The fields of one resource that differ between two sides, in schema
/// order; without an old side, every field the new side has. `sensitive`:
/// whether the resource's content is hidden.
/// A template's rendering is the resource's `content`.
fn changed_fields(
    old: Option<(&Fleet, &ResolvedResource, Option<&Rendered>)>,
    new: &Fleet,
    (b, rb): (&ResolvedResource, Option<&Rendered>),
    sensitive: bool,
) -> Vec<FieldDiff> {
    let kind = new.resources.get(b.id).kind;
    let mut out = Vec::new();
    for &field in kind.fields() {
        if field.is_set() {
            let (of, a) = old.map_or((new, &[][..]), |(f, a, _)| (f, a.entries(field)));
            entry_changes(of, a, new, b.entries(field), field, &mut out);
            continue;
        }
        let old_value = old.and_then(|(f, a, ra)| value_of(f, a, ra, field));
        if old_value != value_of(new, b, rb, field) {
            out.push(FieldDiff {
                field: field.name(),
                old: old.map_or_else(FieldSide::absent, |(f, a, ra)| {
                    scalar_side(f, a, ra, field, sensitive)
                }),
                new: scalar_side(new, b, rb, field, sensitive),
            });
        }
        // A payload's bytes: a `secret` ciphertext's hash says the secret
        // changed (its plaintext is never known here), so it is shown
        // even for a sensitive File.
        let (name, hidden) = match field {
            Field::Source => ("source_sha256", sensitive),
            Field::Secret => ("secret_sha256", false),
            _ => continue,
        };
        if old.and_then(|(f, a, _)| digest(f, a, field)) != digest(new, b, field) {
            out.push(FieldDiff {
                field: name,
                old: old.map_or_else(FieldSide::absent, |(f, a, _)| {
                    digest_side(f, a, field, hidden)
                }),
                new: digest_side(new, b, field, hidden),
            });
        }
    }
    out
}

/// A field's final value; `content` rendered from a template when there is one.
fn value_of<'f>(
    fleet: &'f Fleet,
    r: &ResolvedResource,
    rendered: Option<&'f Rendered>,
    field: Field,
) -> Option<&'f Value> {
    match rendered {
        Some(x) if field == Field::Content => Some(&x.content),
        _ => r.value(fleet, field),
    }
}

/// Entries of a set that appear or go; the ones on both sides are no change.
fn entry_changes(
    old: &Fleet,
    a: &[SetEntry],
    new: &Fleet,
    b: &[SetEntry],
    field: Field,
    out: &mut Vec<FieldDiff>,
) {
    let by_id = |i: usize, j: usize| old.resources.text(a[i].id).cmp(new.resources.text(b[j].id));
    for step in merge_join(a.len(), b.len(), by_id) {
        let (old_side, new_side) = match step {
            (Some(i), None) => (entry_side(old, &a[i]), FieldSide::absent()),
            (None, Some(j)) => (FieldSide::absent(), entry_side(new, &b[j])),
            _ => continue,
        };
        out.push(FieldDiff {
            field: field.name(),
            old: old_side,
            new: new_side,
        });
    }
}

fn entry_side(fleet: &Fleet, e: &SetEntry) -> FieldSide {
    let mut layers: Vec<String> = Vec::new();
    for c in e.by.iter() {
        let name = &fleet.layer(c.layer).display;
        if !layers.contains(name) {
            layers.push(name.clone());
        }
    }
    FieldSide {
        value: Shown::Entry(fleet.resources.text(e.id).to_owned()),
        layers,
    }
}

fn scalar_side(
    fleet: &Fleet,
    r: &ResolvedResource,
    rendered: Option<&Rendered>,
    field: Field,
    sensitive: bool,
) -> FieldSide {
    // Rendered content: the layer that chose the template is responsible.
    if let (Some(x), Field::Content) = (rendered, field)
        && let Some(t) = r.field(Field::Template)
    {
        return FieldSide {
            value: if sensitive {
                Shown::Sensitive
            } else {
                Shown::Value(x.content.clone())
            },
            layers: vec![fleet.layer(t.winner().layer).display.clone()],
        };
    }
    let Some(f) = r.field(field) else {
        return FieldSide::absent();
    };
    let layers = vec![fleet.layer(f.winner().layer).display.clone()];
    let value = match f.value(fleet) {
        None => Shown::Absent,
        Some(_) if sensitive && field == Field::Content => Shown::Sensitive,
        Some(v) => Shown::Value(v.clone()),
    };
    FieldSide { value, layers }
}

/// The SHA-256 of a File's `source` payload or `secret` ciphertext.
fn digest<'f>(fleet: &'f Fleet, r: &ResolvedResource, field: Field) -> Option<&'f str> {
    let path = r.value(fleet, field)?.as_str()?;
    fleet.sources.get(path).map(|s| s.sha256.as_str())
}

fn digest_side(fleet: &Fleet, r: &ResolvedResource, field: Field, sensitive: bool) -> FieldSide {
    let Some(sha) = digest(fleet, r, field) else {
        return FieldSide::absent();
    };
    let layer = r
        .field(field)
        .map(|f| fleet.layer(f.winner().layer).display.clone());
    FieldSide {
        value: if sensitive {
            Shown::Sensitive
        } else {
            Shown::Digest(sha.to_owned())
        },
        layers: layer.into_iter().collect(),
    }
}
