//! A layer that matches no host: its resources reach nobody, and nothing
//! else would say so.

use rustc_hash::FxHashSet;

use super::Context;
use crate::diagnostic::{Code, Diagnostic};
use crate::fleet::LayerId;

pub(super) fn run(cx: &Context<'_>, explained: &FxHashSet<LayerId>, out: &mut Vec<Diagnostic>) {
    let fleet = cx.fleet;
    for (i, layer) in fleet.layers.iter().enumerate() {
        let id = LayerId(i as u32);
        if cx.matched[i] || explained.contains(&id) {
            continue;
        }
        if layer.matcher.iter().any(|l| cx.names_broken_host(l)) {
            continue;
        }
        let uncarried: Vec<String> = layer
            .matcher
            .iter()
            .filter(|l| {
                cx.carried
                    .explain(fleet.sym(l.key), fleet.sym(l.value))
                    .is_some()
            })
            .map(|l| format!("`{}={}`", fleet.sym(l.key), fleet.sym(l.value)))
            .collect();
        let why = if fleet.hosts.is_empty() {
            "the fleet has no hosts".to_owned()
        } else if !uncarried.is_empty() {
            format!("no host carries {}", uncarried.join(" or "))
        } else {
            format!("no host carries all of {}", cx.labels_text(&layer.matcher))
        };
        out.push(
            Diagnostic::warning(Code::UnmatchedLayer, format!("{} matches no host", layer.display))
                .at(layer.match_span, "matcher")
                .note(why)
                .hint("`datum hosts KEY=VALUE ...` lists the hosts a matcher selects; remove the layer if no host should get it"),
        );
    }
}
