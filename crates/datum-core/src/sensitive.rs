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
//! once (it is part of the fleet's resolution, `FleetResolution`); a view of one
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
    use crate::diff::{Side, diff};
    use crate::explain::{Explanation, Target};
    use crate::loader::load;
    use crate::query::{Answer, Shown, query};
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::schema::ResourceId;
    use crate::testkit::{FLEET, host, layer};

    /// web-001 and db-001 share File[k]'s content from base; only a layer
    /// for web hosts marks it sensitive, another layer matching no host
    /// marks File[a], and a higher layer turns File[b]'s flag off.
    fn fleet(content: &str) -> MemReader {
        MemReader::new()
            .file("datum.yaml", FLEET)
            .file(
                "hosts.yaml",
                host("web-001", "{role: web}") + &host("db-001", "{role: db}"),
            )
            .file(
                "base/layer.yaml",
                layer(
                    0,
                    "{}",
                    &format!("  File[k]:\n    path: /k\n    content: {content}\n  File[a]:\n    path: /a\n  File[b]:\n    path: /b\n  File[c]:\n    path: /c\n"),
                ),
            )
            .file(
                "web/layer.yaml",
                layer(10, "{role: web}", "  File[k]:\n    sensitive: true\n  File[b]:\n    sensitive: true\n  File[c]:\n    sensitive: false\n"),
            )
            .file(
                "nobody/layer.yaml",
                layer(10, "{role: nobody}", "  File[a]:\n    sensitive: true\n"),
            )
            .file(
                "top/layer.yaml",
                layer(20, "{}", "  File[b]:\n    sensitive: false\n"),
            )
    }

    fn id(fleet: &Fleet, s: &str) -> ResId {
        fleet
            .resources
            .lookup(&ResourceId::parse(s).unwrap())
            .unwrap()
    }

    #[test]
    fn any_layer_anywhere_is_enough_and_a_false_never_undoes_it() {
        let fleet = load(&fleet("x")).unwrap();
        let all = Sensitive::of(&fleet);
        let [k, a, b, c] = ["File[k]", "File[a]", "File[b]", "File[c]"].map(|s| id(&fleet, s));
        assert!(all.marks(k) && all.marks(a) && all.marks(b) && !all.marks(c));
        assert!(all.hides(k, Field::Content) && !all.hides(k, Field::Path));
        for x in [k, a, b, c] {
            assert_eq!(is_sensitive(&fleet, x), all.marks(x));
        }
        let some = Sensitive::among(&fleet, |r| r == b);
        assert!(some.marks(b) && !some.marks(a));
    }

    #[test]
    fn no_view_shows_on_one_host_what_a_layer_of_another_hides() {
        let old = load(&fleet("hunter2")).unwrap();
        let old_all = resolve_all(&old);
        // Explain the host whose own layers never mark File[k].
        let db = old.host_id("db-001").unwrap();
        let res = crate::resolve::resolve_host(&old, db);
        let ex = Explanation::new(&old, db, &res);
        let text = crate::present::explain::render(&ex, &ex.answer(&Target::Host));
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("content  (sensitive)  base"), "{text}");
        // Query: every host's row, and the summary, hide it alike.
        let k = ResourceId::parse("File[k]").unwrap();
        let hosts = [
            old.host_id("db-001").unwrap(),
            old.host_id("web-001").unwrap(),
        ];
        let q = query(&old, &old_all, &k, Field::Content, &hosts).unwrap();
        for (_, a) in &q.rows {
            assert!(
                matches!(
                    a,
                    Answer::Value {
                        value: Shown::Sensitive,
                        ..
                    }
                ),
                "{a:?}"
            );
        }
        assert_eq!(q.summary().len(), 1);
        // Diff: the content changes on both hosts, shown on neither.
        let new = load(&fleet("swordfish")).unwrap();
        let new_all = resolve_all(&new);
        let d = diff(
            Some(Side {
                fleet: &old,
                all: &old_all,
            }),
            Some(Side {
                fleet: &new,
                all: &new_all,
            }),
        );
        let text = crate::present::diff::render(&d, "old", "new");
        assert!(
            !text.contains("hunter2") && !text.contains("swordfish"),
            "{text}"
        );
        assert!(text.contains("(sensitive) changed"), "{text}");
    }
}
