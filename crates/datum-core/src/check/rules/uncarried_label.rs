//! A matcher label key or value that no host carries: the layer silently
//! matches nothing, which is how a typo (`role: wbe`) looks. The warning
//! names the nearest key, or the nearest value of that key, that hosts do
//! carry, by edit distance with an adjacent swap as one edit.

use rustc_hash::FxHashSet;

use super::Context;
use crate::diagnostic::{Code, Diagnostic};
use crate::fleet::LayerId;
use crate::matcher::Label;
use crate::selector::Uncarried;

pub(super) fn run(cx: &Context<'_>, explained: &mut FxHashSet<LayerId>, out: &mut Vec<Diagnostic>) {
    for (i, layer) in cx.fleet.layers.iter().enumerate() {
        for label in &layer.matcher {
            if cx.names_broken_host(label) || declared(cx, label) {
                continue;
            }
            let (key, value) = (cx.fleet.sym(label.key), cx.fleet.sym(label.value));
            let Some(uncarried) = cx.carried.explain(key, value) else {
                continue;
            };
            let span = match uncarried {
                Uncarried::Key { .. } => label.key_span,
                Uncarried::Value { .. } => label.value_span,
            };
            out.push(
                Diagnostic::warning(Code::UncarriedLabel, uncarried.message())
                    .at(span, format!("matcher of {}", layer.display))
                    .note(format!("so {} matches no host", layer.display))
                    .hint(uncarried.hint(&cx.carried)),
            );
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
