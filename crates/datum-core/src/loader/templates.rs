//! Templates: when some layer names a `template`, every file under
//! `templates/` is read once (what a template may include), and each
//! template a layer names must be among them.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::diagnostic::{Code, Diagnostic};
use crate::document::FieldValue;
use crate::document::TEMPLATE_DIR as DIR;
use crate::reader::Reader;
use crate::schema::{Field, Value};
use crate::source::{FileId, Span};

use super::assemble::Assembler;

impl Assembler {
    /// Reads `templates/` when a layer needs it; refuses a `template`
    /// naming no readable file there.
    pub(super) fn check_templates(&mut self, reader: &dyn Reader) {
        let named: Vec<(usize, String, Span)> = self
            .layers
            .iter()
            .enumerate()
            .flat_map(|(k, l)| {
                l.doc
                    .resources
                    .iter()
                    .flat_map(|r| &r.fields)
                    .filter_map(move |f| match &f.value {
                        FieldValue::Value(Value::Str(p)) if f.field == Field::Template => {
                            Some((k, p.to_string(), f.span))
                        }
                        _ => None,
                    })
            })
            .collect();
        if named.is_empty() {
            return;
        }
        let listed = match reader.list_payloads(DIR) {
            Ok(mut paths) => {
                paths.sort();
                paths
            }
            Err(e) => {
                self.diags.push(
                    Diagnostic::error(Code::Unreadable, e.to_string()).note(format!(
                        "the layers naming a template are set aside: `{DIR}/` could not be listed"
                    )),
                );
                for (k, path, _) in &named {
                    self.set_template_aside(*k, path);
                }
                return;
            }
        };
        let limit = self.source_limit;
        let read: Vec<(String, Result<String, String>)> = listed
            .into_par_iter()
            .map(|p| {
                let text = match reader.read_source(&p, limit) {
                    Ok(bytes) => {
                        String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())
                    }
                    Err(e) => Err(e.to_string()),
                };
                (p, text)
            })
            .collect();
        let mut templates: BTreeMap<String, Result<FileId, String>> = BTreeMap::new();
        for (p, text) in read {
            let entry = text.map(|t| self.files.add(p.clone(), t));
            templates.insert(p, entry);
        }
        for (k, path, span) in named {
            let (why, hint) = match templates.get(&path) {
                Some(Ok(_)) => continue,
                Some(Err(why)) => (why.clone(), None),
                None if reader.is_ignored(&path) => (
                    "is ignored by a `.gitignore` file".to_owned(),
                    Some(format!(
                        "Datum reads no file `.gitignore` ignores, so that the working tree and a commit give the same fleet: change the rule that matches `{path}`, and commit the template"
                    )),
                ),
                None => ("does not exist".to_owned(), None),
            };
            let hint = hint.unwrap_or_else(|| format!(
                "a template is a UTF-8 file under `{DIR}/` in the fleet repository; check the name, and that the file is committed"
            ));
            self.diags.push(
                Diagnostic::error(Code::InvalidTemplate, format!("template `{path}` {why}"))
                    .at(span, "template")
                    .hint(hint),
            );
            self.set_template_aside(k, &path);
        }
        self.templates = templates;
    }

    /// Sets aside every `template: path` of layer `k`, and its resource:
    /// the rest of the layer is still checked.
    fn set_template_aside(&mut self, k: usize, path: &str) {
        for r in &mut self.layers[k].doc.resources {
            let before = r.fields.len();
            r.fields.retain(|f| {
                !(f.field == Field::Template
                    && matches!(&f.value, FieldValue::Value(Value::Str(p)) if &**p == path))
            });
            if r.fields.len() != before {
                r.set_aside = true;
            }
        }
    }
}
