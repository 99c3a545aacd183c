//! The one rule for what is never shown: the `content` of a resource that
//! any layer of the fleet marks `sensitive: true`.
//!
//! The rule looks at every layer, not only at the layers matching the hosts
//! in view. A report about several hosts (a conflict in `check`, a `query`
//! summary, a `diff` group, a latent conflict between layers no host
//! matches yet) must never show a value that some matching layer hides,
//! and two reports read side by side must not either: if hiding depended
//! on the hosts in view, `explain db-001` could print the very content that
//! `explain web-001` hides, or one `query` row the value another row hides.
//! Whether a resource's content may be shown is therefore a property of the
//! resource id in the fleet, the same in every view. Any one layer is
//! enough: a higher layer turning the flag off never reveals what a lower
//! one hid.
//!
//! Every view asks here: explain, query, diff, the conflict report and the
//! latent-conflict check. Views over the whole fleet build a [`Sensitive`]
//! once (it is part of [`crate::resolve::FleetResolution`]); a view of one
//! host asks only about the resources it shows.

use crate::fleet::{Fleet, LayerResource, ResId, Setting};
use crate::schema::{Field, Value};

/// The resources some layer marks sensitive, sorted by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sensitive {
    ids: Box<[ResId]>,
}

impl Sensitive {
    /// Every resource of the fleet that some layer marks sensitive: one
    /// pass over the layers.
    pub fn of(fleet: &Fleet) -> Sensitive {
        Sensitive::among(fleet, |_| true)
    }

    /// Of the resources `wanted` accepts, those some layer marks sensitive;
    /// for a view that shows only a few resources.
    pub fn among(fleet: &Fleet, wanted: impl Fn(ResId) -> bool) -> Sensitive {
        let mut ids: Vec<ResId> = fleet
            .layers
            .iter()
            .flat_map(|l| &l.resources)
            .filter(|r| wanted(r.id) && marks(r))
            .map(|r| r.id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        Sensitive {
            ids: ids.into_boxed_slice(),
        }
    }

    /// Whether some layer marks the resource sensitive (for a resource
    /// [`Sensitive::among`] was not asked about: no).
    pub fn marks(&self, id: ResId) -> bool {
        self.ids.binary_search(&id).is_ok()
    }

    /// Whether a value of this field of this resource must not be shown.
    pub fn hides(&self, id: ResId, field: Field) -> bool {
        field == Field::Content && self.marks(id)
    }
}

/// Whether some layer of the fleet marks one resource sensitive.
pub fn is_sensitive(fleet: &Fleet, id: ResId) -> bool {
    fleet
        .layers
        .iter()
        .flat_map(|l| &l.resources)
        .any(|r| r.id == id && marks(r))
}

/// Whether a layer's declaration of a resource says `sensitive: true`.
fn marks(r: &LayerResource) -> bool {
    let yes = Setting::Value(Value::Bool(true));
    r.fields
        .iter()
        .any(|f| f.field == Field::Sensitive && f.setting == yes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::schema::ResourceId;

    #[test]
    fn any_layer_anywhere_is_enough_and_a_false_never_undoes_it() {
        let layer = |name: &str, prec: i32, matcher: &str, body: &str| {
            format!(
                "datum: v1alpha1\ntype: Layer\nname: {name}\nprecedence: {prec}\nmatch: {matcher}\nresources:\n{body}"
            )
        };
        let r = MemReader::new()
            .file("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: t\n")
            .file(
                "hosts.yaml",
                "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {role: web}\n",
            )
            .file(
                "base/layer.yaml",
                layer("base", 0, "{}", "  File[a]:\n    path: /a\n  File[b]:\n    path: /b\n  File[c]:\n    path: /c\n"),
            )
            // Matches no host: it still hides File[a] everywhere.
            .file(
                "db/layer.yaml",
                layer("db", 10, "{labels: {role: db}}", "  File[a]:\n    sensitive: true\n"),
            )
            .file(
                "web/layer.yaml",
                layer("web", 10, "{labels: {role: web}}", "  File[b]:\n    sensitive: true\n  File[c]:\n    sensitive: false\n"),
            )
            .file(
                "top/layer.yaml",
                layer("top", 20, "{}", "  File[b]:\n    sensitive: false\n"),
            );
        let fleet = load(&r).unwrap();
        let id = |s: &str| {
            fleet
                .resources
                .lookup(&ResourceId::parse(s).unwrap())
                .unwrap()
        };
        let all = Sensitive::of(&fleet);
        let (a, b, c) = (id("File[a]"), id("File[b]"), id("File[c]"));
        assert!(all.marks(a) && all.marks(b) && !all.marks(c));
        assert!(all.hides(a, Field::Content) && !all.hides(a, Field::Path));
        for x in [a, b, c] {
            assert_eq!(is_sensitive(&fleet, x), all.marks(x));
        }
        let some = Sensitive::among(&fleet, |r| r == b);
        assert!(some.marks(b) && !some.marks(a));
    }
}
