//! A matcher label key or value that no host carries: the layer silently
//! matches nothing, which is how a typo (`role: wbe`) looks. The warning
//! names the nearest key, or the nearest value of that key, that hosts do
//! carry, by edit distance with an adjacent swap as one edit.

use rustc_hash::{FxHashMap, FxHashSet};

use super::Context;
use crate::diagnostic::{Code, Diagnostic};
use crate::fleet::LayerId;
use crate::intern::Sym;
use crate::matcher::{Label, groups};
use crate::selector::Uncarried;

/// How many values of one key of one matcher are reported one by one; the
/// rest are one warning (a layer may list thousands of alternatives).
pub const VALUES_SHOWN: usize = 10;

/// How many distinct labels a run looks for a "did you mean" for: each
/// search compares the label with every value of its key that hosts carry.
/// Past that, a warning says what hosts carry without a suggestion.
pub const SEARCHED_MAX: usize = 64;

pub(super) fn run(cx: &Context<'_>, explained: &mut FxHashSet<LayerId>, out: &mut Vec<Diagnostic>) {
    // Each distinct label is explained once, however many layers name it.
    let mut known: FxHashMap<(Sym, Sym), Option<Uncarried>> = FxHashMap::default();
    let mut searched = 0;
    for (i, layer) in cx.fleet.layers.iter().enumerate() {
        for group in groups(&layer.matcher) {
            let mut found: Vec<(&Label, Uncarried)> = Vec::new();
            for label in group {
                if cx.names_broken_host(label) || declared(cx, label) {
                    continue;
                }
                let uncarried = known
                    .entry((label.key, label.value))
                    .or_insert_with(|| {
                        let (key, value) = (cx.fleet.sym(label.key), cx.fleet.sym(label.value));
                        let search = searched < SEARCHED_MAX;
                        let u = cx.carried.explain_searching(key, value, search);
                        searched += usize::from(search && u.is_some());
                        u
                    })
                    .clone();
                match uncarried {
                    // No host has the key: one warning says so for every value.
                    Some(u @ Uncarried::Key { .. }) => {
                        found = vec![(label, u)];
                        break;
                    }
                    Some(u) => found.push((label, u)),
                    None => {}
                }
            }
            if found.is_empty() {
                continue;
            }
            for (label, uncarried) in found.iter().take(VALUES_SHOWN) {
                let span = match uncarried {
                    Uncarried::Key { .. } => label.key_span,
                    Uncarried::Value { .. } => label.value_span,
                };
                out.push(
                    Diagnostic::warning(Code::UncarriedLabel, uncarried.message())
                        .at(span, format!("matcher of {}", layer.display))
                        .note(if cx.matched[i] {
                            format!(
                                "{} matches hosts through its other values only",
                                layer.display
                            )
                        } else {
                            format!("so {} matches no host", layer.display)
                        })
                        .hint(uncarried.hint(&cx.carried)),
                );
            }
            if let Some((label, _)) = found.get(VALUES_SHOWN) {
                let key = cx.fleet.sym(label.key);
                out.push(
                    Diagnostic::warning(
                        Code::UncarriedLabel,
                        format!(
                            "no host carries {} more values of `{key}` that {} lists",
                            found.len() - VALUES_SHOWN,
                            layer.display
                        ),
                    )
                    .at(label.value_span, format!("matcher of {}", layer.display))
                    .note(format!(
                        "the first {VALUES_SHOWN} are reported one by one above"
                    ))
                    .hint(format!(
                        "hosts carry `{key}` with {}",
                        cx.carried.value_list(key)
                    )),
                );
            }
            explained.insert(LayerId(i as u32));
        }
    }
}

/// Whether `Fleet.labels` declares the label: then it is no typo, only a
/// value no host has yet, and the layer is reported as matching no host.
fn declared(cx: &Context<'_>, label: &Label) -> bool {
    cx.fleet.declared.as_ref().is_some_and(|d| {
        d.get(cx.fleet.sym(label.key))
            .is_some_and(|values| values.contains(cx.fleet.sym(label.value)))
    })
}

#[cfg(test)]
mod tests {
    use super::{SEARCHED_MAX, VALUES_SHOWN};
    use crate::check::check;
    use crate::diagnostic::Code;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::schema::STEPS;
    use crate::testkit::{FLEET, host, layer};

    /// The `uncarried-label` warnings of `check`, as text, and the steps of
    /// edit distance their suggestions took.
    fn warnings(r: &MemReader) -> (Vec<String>, u64) {
        let fleet = load(r).unwrap();
        let all = resolve_all(&fleet);
        STEPS.with(|s| s.set(0));
        let report = check(&fleet, &all);
        let steps = STEPS.with(std::cell::Cell::get);
        let texts = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::UncarriedLabel)
            .map(|d| crate::present::diagnostic::to_text(d, &fleet.files))
            .collect();
        (texts, steps)
    }

    fn hosts(n: usize) -> String {
        (0..n)
            .map(|i| host(&format!("h{i}"), &format!("{{role: role-{i}}}")))
            .collect()
    }

    #[test]
    fn thousands_of_uncarried_alternatives_are_a_few_warnings_and_a_few_searches() {
        let values: Vec<String> = (0..2_000).map(|i| format!("rolf-{i}")).collect();
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", hosts(50))
            .file(
                "l/layer.yaml",
                layer(
                    10,
                    &format!("{{role: [role-1, {}]}}", values.join(", ")),
                    "  Package[x]: {}\n",
                ),
            );
        let (texts, steps) = warnings(&r);
        assert_eq!(texts.len(), VALUES_SHOWN + 1, "{texts:#?}");
        assert!(texts[0].contains("did you mean `role-0`?"), "{}", texts[0]);
        assert!(
            texts[0].contains("l matches hosts through its other values only"),
            "{}",
            texts[0]
        );
        let last = &texts[VALUES_SHOWN];
        assert!(
            last.contains("no host carries 1990 more values of `role` that l lists"),
            "{last}"
        );
        // The values searched (`rolf-0` to `rolf-63`) have at most 7
        // characters, as the 50 carried values do: each search is at most
        // 50 * 7 * 7 steps. Searching all 2,000 would take over 4 million.
        assert!(steps <= (SEARCHED_MAX * 50 * 7 * 7) as u64, "{steps} steps");
    }

    #[test]
    fn a_typo_many_layers_share_is_searched_once() {
        let mut r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", hosts(50));
        let one = {
            let mut r = r.clone();
            r.add(
                "l0/layer.yaml",
                layer(10, "{role: rolf-1}", "  Package[x]: {}\n"),
            );
            warnings(&r).1
        };
        for i in 0..300 {
            r.add(
                &format!("l{i}/layer.yaml"),
                layer(10, "{role: rolf-1}", "  Package[x]: {}\n"),
            );
        }
        let (texts, steps) = warnings(&r);
        assert_eq!(texts.len(), 300);
        assert_eq!(steps, one, "300 layers naming one typo search for it once");
    }
}
