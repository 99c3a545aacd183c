//! The checks that need every document at once: host names unique, one
//! file per layer, layer names unique, and labels against the `Fleet.labels` declaration.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{HOST_LABEL, LabelDecl};
use crate::fleet::{BrokenKind, cmp_paths, display_name};
use crate::reader::Reader;
use crate::schema::suggest;
use crate::source::{Pos, Span};

use super::assemble::{Assembler, Touch};

impl Assembler {
    /// Host names are unique and host labels declared; a host failing either
    /// is set aside.
    pub(super) fn check_hosts(&mut self) {
        self.hosts.sort_by(|a, b| a.name.cmp(&b.name));
        let mut i = 0;
        while i < self.hosts.len() {
            let mut j = i + 1;
            while j < self.hosts.len() && self.hosts[j].name == self.hosts[i].name {
                j += 1;
            }
            if j - i > 1 {
                // Order the duplicates by place so the report is stable.
                let mut group: Vec<usize> = (i..j).collect();
                group.sort_by(|&a, &b| {
                    cmp_paths(&self.hosts[a].path, &self.hosts[b].path).then(
                        self.hosts[a]
                            .name_span
                            .start
                            .cmp(&self.hosts[b].name_span.start),
                    )
                });
                let first = self.hosts[group[0]].name_span;
                for &k in &group[1..] {
                    let h = &self.hosts[k];
                    self.diags.push(
                        Diagnostic::error(
                            Code::DuplicateHost,
                            format!("host `{}` is declared more than once", h.name),
                        )
                        .at(h.name_span, "declared again here")
                        .also(first, "first declared here")
                        .hint("host names are unique in a fleet: remove one, or rename it"),
                    );
                }
                for k in i..j {
                    self.hosts[k].ok = false;
                }
            }
            i = j;
        }
        for k in 0..self.hosts.len() {
            let labels = std::mem::take(&mut self.hosts[k].labels);
            let ok = labels.iter().all(|l| self.check_declared(l, false));
            self.hosts[k].labels = labels;
            if !ok {
                self.hosts[k].ok = false;
            }
        }
        for k in 0..self.hosts.len() {
            if !self.hosts[k].ok {
                let (path, name) = (self.hosts[k].path.clone(), self.hosts[k].name.clone());
                self.set_aside(&path, BrokenKind::Host, Touch::Host(name));
            }
        }
    }

    /// Against `Fleet.labels`, when declared. Returns whether the label is allowed.
    fn check_declared(&mut self, label: &LabelDecl, matcher: bool) -> bool {
        let Some(declared) = &self.declared else {
            return true;
        };
        if matcher && &*label.key == HOST_LABEL {
            return true;
        }
        let Some(values) = declared.get(&*label.key) else {
            let hint = match suggest(&label.key, declared.keys().map(String::as_str)) {
                Some(n) => format!(
                    "did you mean `{n}`? datum.yaml declares {}",
                    key_list(declared)
                ),
                None => format!(
                    "datum.yaml declares {}; declare the key there if it is new",
                    key_list(declared)
                ),
            };
            self.diags.push(
                Diagnostic::error(
                    Code::UndeclaredLabel,
                    format!("label key `{}` is not declared in datum.yaml", label.key),
                )
                .at(label.key_span, "undeclared key")
                .hint(hint),
            );
            return false;
        };
        if !values.contains(&*label.value) {
            let hint = match suggest(&label.value, values.iter().map(String::as_str)) {
                Some(n) => format!(
                    "did you mean `{n}`? `{}` takes {}",
                    label.key,
                    value_list(values)
                ),
                None => format!(
                    "`{}` takes {}; declare the value in datum.yaml if it is new",
                    label.key,
                    value_list(values)
                ),
            };
            self.diags.push(
                Diagnostic::error(
                    Code::UndeclaredLabel,
                    format!(
                        "`{}` is not a declared value of label `{}`",
                        label.value, label.key
                    ),
                )
                .at(label.value_span, "undeclared value")
                .hint(hint),
            );
            return false;
        }
        true
    }

    /// Each layer comes from one file, its matcher uses declared labels, and
    /// the payloads it names exist.
    pub(super) fn check_layers(&mut self, reader: &dyn Reader) {
        // Two files shown as the same layer.
        self.layers.sort_by(|a, b| cmp_paths(&a.path, &b.path));
        let mut by_display: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, l) in self.layers.iter().enumerate() {
            by_display
                .entry(display_name(&l.path).to_owned())
                .or_default()
                .push(i);
        }
        for (display, group) in &by_display {
            // Two layers of one file are reported as such.
            let paths: BTreeSet<&str> = group
                .iter()
                .map(|&k| self.layers[k].path.as_str())
                .collect();
            if paths.len() > 1 {
                let first = self.layers[group[0]].doc.match_span;
                let first_path = self.layers[group[0]].path.clone();
                for &k in group.iter().filter(|&&k| self.layers[k].path != first_path) {
                    let span = Span::point(self.layers[k].file, Pos { line: 1, col: 1 });
                    self.diags.push(
                        Diagnostic::error(
                            Code::DuplicateLayer,
                            format!(
                                "{} and {} are both the layer `{display}`",
                                first_path, self.layers[k].path
                            ),
                        )
                        .at(span, "second file")
                        .also(first, "first file")
                        .hint("keep one of layer.yaml and layer.yml"),
                    );
                }
                for &k in group {
                    self.layers[k].ok = false;
                }
            }
        }
        self.check_layer_names();
        // Declared labels in matchers.
        for k in 0..self.layers.len() {
            let matcher = std::mem::take(&mut self.layers[k].doc.matcher);
            let ok = matcher.iter().all(|l| self.check_declared(l, true));
            self.layers[k].doc.matcher = matcher;
            if !ok {
                self.layers[k].ok = false;
                self.layers[k].matcher_sound = false;
            }
        }
        self.check_sources(reader);
        self.check_templates(reader);
    }
}

impl Assembler {
    /// Layer names are unique: a second layer with a name is an error
    /// pointing at both, and is set aside. Layers in path order.
    fn check_layer_names(&mut self) {
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        let mut again = Vec::new();
        for (k, l) in self.layers.iter().enumerate() {
            match first.get(&*l.doc.name) {
                // Two files shown as one layer are reported as that already.
                Some(&f) if display_name(&self.layers[f].path) == display_name(&l.path) => {}
                Some(&f) => again.push((f, k)),
                None => {
                    first.insert(&l.doc.name, k);
                }
            }
        }
        for (f, k) in again {
            let (a, b) = (&self.layers[f], &self.layers[k]);
            self.diags.push(
                Diagnostic::error(
                    Code::DuplicateLayerName,
                    format!(
                        "layers {} and {} are both named `{}`",
                        display_name(&a.path),
                        display_name(&b.path),
                        b.doc.name
                    ),
                )
                .at(b.doc.name_span, "named again here")
                .also(a.doc.name_span, "first named here")
                .hint("layer names are unique in a fleet: rename one of them"),
            );
            self.layers[k].ok = false;
        }
    }
}

fn key_list(declared: &BTreeMap<String, BTreeSet<String>>) -> String {
    declared
        .keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn value_list(values: &BTreeSet<String>) -> String {
    values
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
