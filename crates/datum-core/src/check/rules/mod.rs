//! The warnings of `check`: mistakes that resolution alone keeps quiet,
//! because a layer that does not match is simply absent (docs/design.md).
//!
//! One file per rule. Each reads the loaded fleet and what resolving every
//! host found, through the shared [`Context`], and returns its warnings;
//! `check` sorts them by place.

mod latent_overlap;
mod uncarried_label;
mod unmatched_layer;

use rustc_hash::FxHashSet;

use crate::diagnostic::Diagnostic;
use crate::fleet::{BrokenKind, Fleet, HostId, LayerId};
use crate::matcher::Label;
use crate::resolve::FleetResolution;
use crate::selector::Carried;

/// What the rules share, computed once.
pub(crate) struct Context<'f> {
    pub fleet: &'f Fleet,
    pub all: &'f FleetResolution,
    /// The labels hosts carry.
    pub carried: Carried<'f>,
    /// For each layer, whether some host matches it.
    pub matched: Vec<bool>,
    /// The matching layers of each host that broken documents hold back
    /// (those hosts have no resolution to read them from).
    pub held_back: Vec<Vec<LayerId>>,
}

impl<'f> Context<'f> {
    fn new(fleet: &'f Fleet, all: &'f FleetResolution) -> Context<'f> {
        let mut matched = vec![false; fleet.layers.len()];
        for res in &all.resolutions {
            for &l in res.layers.iter() {
                matched[l.0 as usize] = true;
            }
        }
        let held_back: Vec<Vec<LayerId>> = (0..fleet.hosts.len() as u32)
            .map(HostId)
            .filter(|&h| all.of(h).is_none())
            .map(|h| fleet.matching(h))
            .collect();
        for &l in held_back.iter().flatten() {
            matched[l.0 as usize] = true;
        }
        Context {
            fleet,
            all,
            carried: Carried::of(fleet),
            matched,
            held_back,
        }
    }

    /// Whether a matcher label names a host whose own document failed to
    /// load: that error is already reported, and explains the rest.
    fn names_broken_host(&self, label: &Label) -> bool {
        label.key == self.fleet.host_key()
            && self
                .fleet
                .broken_host(self.fleet.sym(label.value))
                .is_some()
    }

    /// `role=web, site=london`, sorted; `role in {web, cache}` for a key
    /// listed with alternatives. Given the labels of two matchers one after
    /// the other, a key both constrain shows the values both accept: each
    /// matcher lists a value of a key once, so a value seen again starts
    /// the other matcher's values, and what a host may carry is the
    /// intersection of the runs.
    fn labels_text<'a>(&self, labels: impl IntoIterator<Item = &'a Label>) -> String {
        let mut runs: Vec<(&str, Vec<Vec<&str>>)> = Vec::new();
        for l in labels {
            let (key, value) = (self.fleet.sym(l.key), self.fleet.sym(l.value));
            let at = match runs.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    runs.push((key, Vec::new()));
                    runs.len() - 1
                }
            };
            let key_runs = &mut runs[at].1;
            match key_runs.last_mut() {
                Some(run) if !run.contains(&value) => run.push(value),
                _ => key_runs.push(vec![value]),
            }
        }
        let mut pairs: Vec<String> = runs
            .into_iter()
            .map(|(key, key_runs)| {
                let mut values: Vec<&str> = key_runs[0]
                    .iter()
                    .copied()
                    .filter(|v| key_runs[1..].iter().all(|r| r.contains(v)))
                    .collect();
                if values.is_empty() {
                    values = key_runs.concat();
                }
                match &values[..] {
                    [one] => format!("{key}={one}"),
                    many => format!("{key} in {{{}}}", many.join(", ")),
                }
            })
            .collect();
        pairs.sort();
        pairs.join(", ")
    }
}

/// Every warning of every rule, in no particular order.
pub(crate) fn warnings(fleet: &Fleet, all: &FleetResolution) -> Vec<Diagnostic> {
    let cx = Context::new(fleet, all);
    let mut out = Vec::new();
    // A layer whose matcher names a label no host carries is reported for
    // that label, which says more than "matches no host".
    let mut explained: FxHashSet<LayerId> = FxHashSet::default();
    // A host document that failed to load carries labels nobody knows, so
    // "no host carries" could be false: its error comes first, and these
    // warnings wait until it is fixed.
    let labels_known = !fleet
        .broken
        .iter()
        .any(|d| matches!(d.what, BrokenKind::Host | BrokenKind::File));
    if labels_known {
        uncarried_label::run(&cx, &mut explained, &mut out);
        unmatched_layer::run(&cx, &explained, &mut out);
    }
    latent_overlap::run(&cx, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use crate::check::check;
    use crate::diagnostic::Code;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::testkit::{FLEET, host, layer};

    /// Every diagnostic of `check`, drawn as text.
    fn rendered(r: &MemReader) -> Vec<String> {
        let fleet = load(r).unwrap();
        let all = resolve_all(&fleet);
        check(&fleet, &all)
            .diagnostics
            .iter()
            .map(|d| crate::present::diagnostic::to_text(d, &fleet.files))
            .collect()
    }

    fn codes(r: &MemReader) -> Vec<Code> {
        let fleet = load(r).unwrap();
        let all = resolve_all(&fleet);
        check(&fleet, &all)
            .diagnostics
            .iter()
            .map(|d| d.code)
            .collect()
    }

    #[test]
    fn a_misspelt_requires_entry_suggests_the_declared_resource_only_when_near() {
        let r = |entry: &str| {
            MemReader::new()
                .file("datum.yaml", FLEET)
                .file("hosts.yaml", host("web-001", "{role: web}"))
                .file(
                    "a/layer.yaml",
                    layer(
                        30,
                        "{role: web}",
                        &format!(
                            "  Package[nginx]: {{}}\n  Service[postgresql]: {{}}\n  Service[nginx]:\n    requires: [\"{entry}\"]\n"
                        ),
                    ),
                )
        };
        let near = rendered(&r("Package[ngnix]")).concat();
        assert!(
            near.contains("hint: did you mean Package[nginx]? Otherwise declare Package[ngnix]"),
            "{near}"
        );
        // Service[postgresql] is near in text, but of another type.
        let far = rendered(&r("Package[postgresql]")).concat();
        assert!(far.contains("names Package[postgresql]"), "{far}");
        assert!(!far.contains("did you mean"), "{far}");
    }

    #[test]
    fn a_held_back_host_matching_both_layers_is_no_latent_overlap() {
        // web-001 matches both layers, but a broken layer holds it back, so
        // no conflict is reported for it; "no host matches both" would be false.
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("web-001", "{role: web, tier: edge}"))
            .file(
                "a/layer.yaml",
                layer(30, "{role: web}", "  Package[px]:\n    version: '1'\n"),
            )
            .file(
                "b/layer.yaml",
                layer(30, "{tier: edge}", "  Package[px]:\n    version: '2'\n"),
            )
            .file(
                "c/layer.yaml",
                layer(40, "{role: web}", "  Package[py]:\n    ensure: instaled\n"),
            );
        assert_eq!(codes(&r), [Code::InvalidValue]);
    }

    #[test]
    fn two_layers_that_would_set_a_var_differently_on_one_host_are_a_latent_conflict() {
        let vars = |name: &str, v: &str| {
            format!(
                "datum: v1alpha1\ntype: Layer\nname: {name}\nprecedence: 20\nmatch: {{labels: {v}}}\nvars:\n"
            )
        };
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file(
                "hosts.yaml",
                host("db-001", "{role: db, site: london}")
                    + &host("web-001", "{role: web, site: paris}"),
            )
            .file(
                "a/layer.yaml",
                vars("a", "{site: london}") + "  dns: 10.1.0.53\n",
            )
            .file(
                "b/layer.yaml",
                vars("b", "{role: web}") + "  dns: 10.9.9.9\n",
            );
        let all = rendered(&r);
        assert_eq!(all.len(), 1, "{all:#?}");
        assert!(
            all[0].starts_with(
                "warning: a and b set vars.dns differently at precedence 20, and one host could match both"
            ),
            "{}",
            all[0]
        );
        assert!(
            all[0].contains("a host with role=web, site=london would not resolve"),
            "{}",
            all[0]
        );
        // Once a host matches both, it is the conflict, not the warning.
        let r = r.file("more.yaml", host("web-002", "{role: web, site: london}"));
        assert_eq!(codes(&r), [Code::Conflict]);
        // Equal values never conflict.
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("db-001", "{role: db, site: london}"))
            .file(
                "a/layer.yaml",
                vars("a", "{site: london}") + "  dns: [a, b]\n",
            )
            .file("b/layer.yaml", vars("b", "{role: web}") + "  dns: [a, b]\n");
        assert_eq!(codes(&r), [Code::UncarriedLabel]);
    }

    #[test]
    fn labels_of_a_broken_host_document_are_unknown_so_no_label_warning() {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("Web_001", "{role: web}"))
            .file("a/layer.yaml", layer(30, "{role: web}", ""));
        assert_eq!(codes(&r), [Code::InvalidHostName]);
        let r = r.file("hosts.yaml", host("web-001", "{role: db}"));
        assert_eq!(codes(&r), [Code::UncarriedLabel]);
    }

    #[test]
    fn a_latent_overlap_on_sensitive_content_never_shows_it() {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file(
                "hosts.yaml",
                host("web-001", "{role: web}") + &host("db-001", "{tier: edge}"),
            )
            .file(
                "base/layer.yaml",
                layer(0, "{}", "  File[key]:\n    path: /k\n    sensitive: true\n"),
            )
            .file(
                "a/layer.yaml",
                layer(30, "{role: web}", "  File[key]:\n    content: hunter2\n"),
            )
            .file(
                "b/layer.yaml",
                layer(30, "{tier: edge}", "  File[key]:\n    content: swordfish\n"),
            );
        let text = rendered(&r).concat();
        assert_eq!(rendered(&r).len(), 1);
        assert!(
            text.contains("  (sensitive)  a  matches role=web\n"),
            "{text}"
        );
        assert!(
            !text.contains("hunter2") && !text.contains("swordfish"),
            "{text}"
        );
        // Once a host matches both, the conflict error hides it the same way.
        let r = r.file("hosts.yaml", host("web-001", "{role: web, tier: edge}"));
        let text = rendered(&r).concat();
        assert!(
            text.starts_with(
                "error: conflicting values for File[key].content\n  (sensitive)  a  precedence 30\n"
            ),
            "{text}"
        );
        assert!(
            !text.contains("hunter2") && !text.contains("swordfish"),
            "{text}"
        );
    }

    #[test]
    fn sets_are_united_and_never_overlap() {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file(
                "hosts.yaml",
                host("web-001", "{role: web}") + &host("db-001", "{tier: edge}"),
            )
            .file(
                "a/layer.yaml",
                layer(
                    30,
                    "{role: web}",
                    "  Package[px]:\n    requires: Package[pa]\n  Package[pa]: {}\n",
                ),
            )
            .file(
                "b/layer.yaml",
                layer(
                    30,
                    "{tier: edge}",
                    "  Package[px]:\n    requires: Package[pb]\n  Package[pb]: {}\n",
                ),
            );
        assert!(codes(&r).is_empty());
    }

    #[test]
    fn thousands_of_host_overrides_at_one_precedence_stay_cheap() {
        // Every override sets the same field differently: pairwise, that would
        // be millions of comparisons; pinned layers are never compared.
        let n = 4000;
        let mut r = MemReader::new().file("datum.yaml", FLEET);
        let mut hosts = String::new();
        for i in 0..n {
            hosts.push_str(&host(&format!("h{i}"), "{role: web}"));
            r.add(
                &format!("hosts/h{i}/layer.yaml"),
                layer(
                    100,
                    &format!("{{datum/host: h{i}}}"),
                    &format!("  Package[px]:\n    version: '{i}'\n"),
                ),
            );
        }
        r.add("hosts.yaml", hosts);
        let pairs = || super::latent_overlap::PAIRS.with(std::cell::Cell::get);
        let before = pairs();
        assert!(codes(&r).is_empty());
        assert_eq!(pairs() - before, 0, "pinned layers were compared");
    }

    #[test]
    fn layers_overlapping_pairwise_are_one_warning_per_field() {
        // 40 layers of one precedence, each for its own tier, all also
        // matching any host: every pair could meet on one host.
        let mut r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("h1", "{role: db}"));
        for i in 0..40 {
            r.add(
                &format!("l/{i:02}.yaml"),
                layer(
                    30,
                    &format!("{{tier{i}: x}}"),
                    &format!("  Package[px]:\n    version: '{i}'\n"),
                ),
            );
        }
        let all = rendered(&r);
        let latent: Vec<&String> = all
            .iter()
            .filter(|d| d.contains("differently at precedence"))
            .collect();
        assert_eq!(latent.len(), 1, "{all:#?}");
        let w = latent[0];
        assert!(
            w.starts_with(
                "warning: 40 layers set Package[px].version differently at precedence 30, and one host could match two of them\n  \
                 0  l/00.yaml  matches tier0=x\n"
            ),
            "{w}"
        );
        assert!(w.contains("  4  l/04.yaml  matches tier4=x\n  and 35 more layers\n  no host matches two of them yet; a host with tier0=x, tier1=x would not resolve (l/00.yaml and l/01.yaml)\n"), "{w}");
        // The first few places, not forty.
        assert_eq!(w.matches("  --> ").count(), 5, "{w}");
    }
}
