//! Labels and matchers: which layers a host's labels match, through an
//! index built once at load time, and why a layer does or does not match,
//! key by key. The fleet (`fleet`) keeps the labels and the index
//! and asks here.

use rustc_hash::FxHashMap;

use crate::intern::Sym;
use crate::source::Span;

/// A label with the place it was written: one a host carries, or one a
/// layer's matcher asks for.
#[derive(Clone, Debug)]
pub struct Label {
    pub key: Sym,
    pub value: Sym,
    pub key_span: Span,
    pub value_span: Span,
}

/// The value carried for `key` among `labels` (sorted by key symbol).
pub fn carried(labels: &[Label], key: Sym) -> Option<Sym> {
    labels
        .binary_search_by(|l| l.key.cmp(&key))
        .ok()
        .map(|i| labels[i].value)
}

/// Why a layer does or does not match a host, key by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCheck {
    pub key: Sym,
    /// The values the matcher accepts for the key, as written: one, or
    /// several alternatives.
    pub wanted: Vec<Sym>,
    /// What the host carries for the key, if anything.
    pub found: Option<Sym>,
}

impl LabelCheck {
    pub fn holds(&self) -> bool {
        self.found.is_some_and(|f| self.wanted.contains(&f))
    }
}

/// A matcher's labels grouped by key. A key listed with several values (a
/// matcher's `role: [web, cache]`) is one label per value, side by side:
/// the values of a group are alternatives, and every group must hold.
pub fn groups(matcher: &[Label]) -> impl Iterator<Item = &[Label]> {
    matcher.chunk_by(|a, b| a.key == b.key)
}

/// Whether labels (sorted by key symbol) hold one of the values of every
/// key of a matcher.
pub fn holds(matcher: &[Label], labels: &[Label]) -> bool {
    groups(matcher).all(|group| {
        carried(labels, group[0].key).is_some_and(|v| group.iter().any(|m| m.value == v))
    })
}

/// Each key of a matcher against what labels (sorted by key symbol) carry.
pub fn check(matcher: &[Label], labels: &[Label]) -> Vec<LabelCheck> {
    groups(matcher)
        .map(|group| LabelCheck {
            key: group[0].key,
            wanted: group.iter().map(|m| m.value).collect(),
            found: carried(labels, group[0].key),
        })
        .collect()
}

/// Finds the layers matching a host without looking at every layer: each
/// layer (by its position in fold order) is filed under its rarest label
/// pair, so a host only inspects the layers filed under the pairs it
/// carries.
#[derive(Debug, Default)]
pub struct MatchIndex {
    always: Vec<u32>,
    by_pair: FxHashMap<(Sym, Sym), Vec<u32>>,
    /// Each matcher, by layer, as [`Sorted`]: a key listed with thousands
    /// of alternatives is checked by a binary search, not a scan of them.
    sorted: Vec<Sorted>,
}

/// A matcher's keys (sorted) with their values sorted.
pub type Sorted = Box<[(Sym, Box<[Sym]>)]>;

/// `matcher` as [`Sorted`].
pub fn sorted(matcher: &[Label]) -> Sorted {
    groups(matcher)
        .map(|group| {
            let mut values: Vec<Sym> = group.iter().map(|l| l.value).collect();
            values.sort_unstable();
            values.dedup();
            (group[0].key, values.into_boxed_slice())
        })
        .collect()
}

#[cfg(test)]
thread_local! {
    /// Values of a matcher's keys compared with a host's on this thread:
    /// what the tests count the cost of matching in, never time.
    pub(crate) static COMPARED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Whether labels (sorted by key symbol) hold one of the values of every
/// key of a sorted matcher.
fn holds_sorted(matcher: &Sorted, labels: &[Label]) -> bool {
    matcher.iter().all(|(key, values)| {
        carried(labels, *key).is_some_and(|v| {
            #[cfg(test)]
            COMPARED.with(|c| c.set(c.get() + values.len().max(1).ilog2() as u64 + 1));
            values.binary_search(&v).is_ok()
        })
    })
}

impl MatchIndex {
    /// Files each matcher (of the layers, in fold order) under its rarest
    /// label pair among the labels the hosts carry.
    pub fn build<'a>(
        hosts: impl Iterator<Item = &'a [Label]>,
        matchers: impl Iterator<Item = &'a [Label]>,
    ) -> MatchIndex {
        let mut count: FxHashMap<(Sym, Sym), u32> = FxHashMap::default();
        for labels in hosts {
            for l in labels {
                *count.entry((l.key, l.value)).or_default() += 1;
            }
        }
        let mut index = MatchIndex::default();
        for (i, matcher) in matchers.enumerate() {
            index.sorted.push(sorted(matcher));
            let id = i as u32;
            // The key whose values the fewest hosts carry; a host can only
            // match through one of them, and carries at most one.
            let rarest = groups(matcher)
                .map(|group| {
                    let n: u32 = group
                        .iter()
                        .map(|m| count.get(&(m.key, m.value)).copied().unwrap_or(0))
                        .sum();
                    (n, group[0].key, group)
                })
                .min_by_key(|&(n, key, _)| (n, key));
            match rarest {
                None => index.always.push(id),
                Some((_, _, group)) => {
                    for m in group {
                        index.by_pair.entry((m.key, m.value)).or_default().push(id);
                    }
                }
            }
        }
        index
    }

    /// The layers (positions in fold order, sorted) whose matcher the
    /// labels hold.
    pub fn matching(&self, labels: &[Label]) -> Vec<u32> {
        let mut out: Vec<u32> = self.always.clone();
        for label in labels {
            if let Some(layers) = self.by_pair.get(&(label.key, label.value)) {
                out.extend(
                    layers
                        .iter()
                        .filter(|&&l| holds_sorted(&self.sorted[l as usize], labels))
                        .copied(),
                );
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Each label pair with the hosts (by position) carrying it.
pub fn pair_index<'a>(hosts: impl Iterator<Item = &'a [Label]>) -> FxHashMap<(Sym, Sym), Vec<u32>> {
    let mut map: FxHashMap<(Sym, Sym), Vec<u32>> = FxHashMap::default();
    for (h, labels) in hosts.enumerate() {
        for l in labels {
            map.entry((l.key, l.value)).or_default().push(h as u32);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use crate::check::check;
    use crate::diagnostic::Code;
    use crate::explain::{Explanation, Target};
    use crate::fleet::Fleet;
    use crate::loader::load;
    use crate::present::diagnostic::to_text;
    use crate::present::explain as text;
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::testkit::{FLEET, host, layer};

    fn hosts() -> String {
        host("web-001", "{role: web, env: prod}")
            + &host("cache-001", "{role: cache, env: prod}")
            + &host("db-001", "{role: db, env: prod}")
            + &host("web-002", "{role: web, env: test}")
    }

    fn fleet(layers: &[(&str, String)]) -> Fleet {
        let mut r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", hosts());
        for (path, text) in layers {
            r.add(path, text.clone());
        }
        load(&r).unwrap()
    }

    fn matched(f: &Fleet, layer: usize) -> Vec<String> {
        (0..f.hosts.len() as u32)
            .map(crate::fleet::HostId)
            .filter(|&h| f.matching(h).contains(&crate::fleet::LayerId(layer as u32)))
            .map(|h| f.host(h).name.to_string())
            .collect()
    }

    #[test]
    fn a_matcher_of_many_alternatives_is_checked_without_scanning_them() {
        let values: Vec<String> = (0..5_000).map(|i| format!("v{i}")).collect();
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("h1", "{role: v4999, env: prod}"))
            .file(
                "l/layer.yaml",
                layer(
                    30,
                    &format!("{{role: [{}], env: [prod, test]}}", values.join(", ")),
                    "  Package[x]: {}\n",
                ),
            );
        let f = load(&r).unwrap();
        super::COMPARED.with(|c| c.set(0));
        assert_eq!(f.matching(crate::fleet::HostId(0)).len(), 1);
        let compared = super::COMPARED.with(std::cell::Cell::get);
        // A binary search of 5,000 values and one of 2: 14 steps and 2.
        assert!(compared <= 20, "{compared} values compared");
    }

    #[test]
    fn a_list_is_any_of_its_values_and_every_key_still_holds() {
        let f = fleet(&[(
            "roles/edge/layer.yaml",
            layer(30, "{role: [web, cache], env: prod}", "  Package[x]: {}\n"),
        )]);
        assert!(!f.has_errors(), "{:?}", f.diagnostics);
        assert_eq!(matched(&f, 0), ["cache-001", "web-001"]);
        // Indexed under each value of its rarest key, never twice.
        let f = fleet(&[(
            "roles/edge/layer.yaml",
            layer(30, "{role: [web, cache, web]}", "  Package[x]: {}\n"),
        )]);
        assert_eq!(f.layers[0].matcher.len(), 2, "a repeated value counts once");
        assert_eq!(matched(&f, 0), ["cache-001", "web-001", "web-002"]);
        let web = f.host_id("web-001").unwrap();
        assert_eq!(f.matching(web).len(), 1);
    }

    #[test]
    fn an_empty_list_is_an_error_at_its_line() {
        let f = fleet(&[(
            "roles/edge/layer.yaml",
            layer(30, "{role: [], env: prod}", "  Package[x]: {}\n"),
        )]);
        let d: Vec<_> = f
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::EmptyAlternatives)
            .collect();
        assert_eq!(d.len(), 1, "{:?}", f.diagnostics);
        let text = to_text(d[0], &f.files);
        assert!(text.contains("roles/edge/layer.yaml:5:24"), "{text}");
        assert!(text.contains("`role: []` lists no value"), "{text}");
        // Which hosts the layer was meant for is unknown: it holds back all.
        assert_eq!(f.blockers(f.host_id("db-001").unwrap()).len(), 1);
    }

    #[test]
    fn a_list_in_a_host_s_labels_is_still_refused() {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("web-001", "{role: [web, cache]}"));
        let f = load(&r).unwrap();
        let codes: Vec<Code> = f.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::WrongType]);
    }

    #[test]
    fn a_broken_layer_with_alternatives_holds_back_the_hosts_it_could_match() {
        let f = fleet(&[(
            "roles/edge/layer.yaml",
            layer(
                30,
                "{role: [web, cache], env: prod}",
                "  Package[x]:\n    ensure: instaled\n",
            ),
        )]);
        let blocked: Vec<&str> = f
            .hosts
            .iter()
            .enumerate()
            .filter(|(h, _)| !f.blockers(crate::fleet::HostId(*h as u32)).is_empty())
            .map(|(_, h)| &*h.name)
            .collect();
        assert_eq!(blocked, ["cache-001", "web-001"]);
    }

    #[test]
    fn declared_labels_check_every_listed_value() {
        let fleet_doc = format!("{FLEET}labels:\n  role: [web, cache, db]\n  env: [prod, test]\n");
        let r = MemReader::new()
            .file("datum.yaml", fleet_doc)
            .file("hosts.yaml", hosts())
            .file(
                "roles/edge/layer.yaml",
                layer(30, "{role: [web, cahce]}", ""),
            );
        let f = load(&r).unwrap();
        let d: Vec<_> = f.diagnostics.iter().collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, Code::UndeclaredLabel);
        assert_eq!(
            d[0].message,
            "`cahce` is not a declared value of label `role`"
        );
        assert!(
            d[0].hint
                .as_deref()
                .unwrap()
                .starts_with("did you mean `cache`?")
        );
    }

    #[test]
    fn why_not_names_the_alternatives() {
        let f = fleet(&[(
            "roles/edge/layer.yaml",
            layer(30, "{role: [web, cache], env: prod}", "  Package[x]: {}\n"),
        )]);
        let db = f.host_id("db-001").unwrap();
        let res = crate::resolve::resolve_host(&f, db);
        let ex = Explanation::new(&f, db, &res);
        let answer = ex.answer(&Target::parse("Package[x]").unwrap());
        assert_eq!(
            text::render(&ex, &answer),
            "db-001 has no Package[x]\n  declared by layers that do not match db-001\n    roles/edge needs role in {web, cache}; db-001 has role=db\n"
        );
        // Where it matches, explain names the value that made it match.
        let web = f.host_id("web-001").unwrap();
        let res = crate::resolve::resolve_host(&f, web);
        let ex = Explanation::new(&f, web, &res);
        let answer = ex.answer(&Target::parse("Package[x]").unwrap());
        assert_eq!(
            text::render(&ex, &answer),
            "Package[x] x\n  contributed by\n    roles/edge  precedence 30  matched env=prod, role=web\n"
        );
    }

    /// The codes and messages of `check`'s diagnostics.
    fn checked(f: &Fleet) -> Vec<(Code, String)> {
        let all = resolve_all(f);
        check(f, &all)
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.clone()))
            .collect()
    }

    #[test]
    fn alternatives_overlap_unless_a_key_s_values_are_disjoint() {
        let set = |v: &str| format!("  Package[xz]:\n    version: '{v}'\n");
        // role in {web, cache} and role in {cache, db} meet at cache, and
        // no host is both: a latent conflict.
        let f = fleet(&[
            (
                "a/layer.yaml",
                layer(30, "{role: [web, cache], env: test}", &set("1")),
            ),
            (
                "b/layer.yaml",
                layer(30, "{role: [cache, db], env: test}", &set("2")),
            ),
        ]);
        let found = checked(&f);
        let latent: Vec<_> = found
            .iter()
            .filter(|(c, _)| *c == Code::LatentConflict)
            .collect();
        assert_eq!(latent.len(), 1, "{found:?}");
        let all = resolve_all(&f);
        let text: String = check(&f, &all)
            .diagnostics
            .iter()
            .map(|d| to_text(d, &f.files))
            .collect();
        assert!(
            text.contains("a host with env=test, role=cache would not resolve"),
            "{text}"
        );
        assert!(
            text.contains("matches env=test, role in {web, cache}"),
            "{text}"
        );
        // Disjoint values of one key: no host can match both.
        let f = fleet(&[
            ("a/layer.yaml", layer(30, "{role: [web, cache]}", &set("1"))),
            ("b/layer.yaml", layer(30, "{role: [db, mail]}", &set("2"))),
        ]);
        assert!(
            !checked(&f).iter().any(|(c, _)| *c == Code::LatentConflict),
            "{:?}",
            checked(&f)
        );
        // A host that matches both is a conflict, reported as one.
        let f = fleet(&[
            ("a/layer.yaml", layer(30, "{role: [web, cache]}", &set("1"))),
            ("b/layer.yaml", layer(30, "{role: [db, web]}", &set("2"))),
        ]);
        let codes: Vec<Code> = checked(&f).into_iter().map(|(c, _)| c).collect();
        assert_eq!(codes, [Code::Conflict]);
    }

    #[test]
    fn every_listed_value_no_host_carries_is_a_warning() {
        let f = fleet(&[(
            "roles/edge/layer.yaml",
            layer(30, "{role: [web, cahce]}", "  Package[x]: {}\n"),
        )]);
        let all = resolve_all(&f);
        let report = check(&f, &all);
        let d: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::UncarriedLabel)
            .collect();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].message, "no host carries `role=cahce`");
        assert!(
            d[0].hint
                .as_deref()
                .unwrap()
                .starts_with("did you mean `cache`?")
        );
    }
}
