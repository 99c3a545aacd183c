//! Labels: a host's, a layer matcher's, and the keys and values
//! `Fleet.labels` declares.

use crate::diagnostic::{Code, Diagnostic};
use crate::distinct::Distinct;
use crate::schema::suggest;
use crate::source::Span;
use crate::yaml::{Plain, Style, classify_plain};

use super::cx::{Cx, Scalar};
use super::{DeclaredLabel, HOST_LABEL, LabelDecl, valid_label_key};

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    pub(super) fn declared_labels(&mut self, v: u32) -> Option<Vec<DeclaredLabel>> {
        if self.is_null(v) {
            return None;
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`labels`",
                "a mapping of keys to lists of values",
                "write `role: [web, db]`, for example",
            );
            return None;
        }
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            self.label_key(key, k, false);
            let (list, fact) = if self.is_map(val) {
                self.tied_label(key, val)
            } else {
                (Some(val), None)
            };
            let mut values = Vec::new();
            match list.map(|l| (l, self.scalar(l))) {
                Some((list, Scalar::Seq)) => {
                    for item in self.doc.children(list) {
                        if let Some(t) = self.label_value(item) {
                            values.push((t.into(), self.span(item)));
                        }
                    }
                }
                Some((list, _)) => self.type_error(
                    list,
                    &format!("the values of `{key}`"),
                    "a list",
                    format!("write `{key}: [a, b]`, or `{key}: {{values: [a, b], fact: os}}` to tie it to a fact"),
                ),
                None => {}
            }
            out.push(DeclaredLabel {
                key: key.into(),
                key_span: self.span(k),
                values,
                fact,
            });
        }
        Some(out)
    }

    /// `key: {values: [...], fact: NAME}`: the values (their node), and
    /// the fact the label is tied to when it is one Datum observes.
    fn tied_label(&mut self, key: &str, map: u32) -> (Option<u32>, Option<(Box<str>, Span)>) {
        let (mut values, mut fact) = (None, None);
        for (name, n, val) in self.entries(map) {
            match name {
                "values" => values = Some(val),
                "fact" => {
                    let Some(t) = self.text(val, &format!("the fact of `{key}`")) else {
                        continue;
                    };
                    if crate::facts::is_tieable(t) {
                        fact = Some((t.into(), self.span(val)));
                        continue;
                    }
                    let names = crate::facts::tieable_names();
                    let hint = match suggest(t, names.clone()) {
                        Some(n) => format!("did you mean `{n}`? "),
                        None => String::new(),
                    } + &format!(
                        "a label can be tied to {}",
                        super::list(&names.collect::<Vec<_>>())
                    );
                    self.err(
                        Diagnostic::error(
                            Code::UnknownFact,
                            format!("`{t}` is not a fact Datum observes"),
                        )
                        .at(self.span(val), "unknown fact")
                        .hint(hint),
                    );
                }
                other => {
                    let hint = match suggest(other, ["values", "fact"]) {
                        Some(n) => format!("did you mean `{n}`? A declared label takes `values` and `fact`"),
                        None => "a declared label takes `values` (its list of values) and `fact` (the fact it describes)".to_owned(),
                    };
                    self.err(
                        Diagnostic::error(
                            Code::UnknownKey,
                            format!("unknown key `{other}` in the declaration of `{key}`"),
                        )
                        .at(self.span(n), "unknown key")
                        .hint(hint),
                    );
                }
            }
        }
        if values.is_none() {
            self.err(
                Diagnostic::error(
                    Code::MissingKey,
                    format!("the declaration of `{key}` has no `values`"),
                )
                .at(self.span(map), "no values")
                .hint(format!(
                    "list the values hosts may carry: `{key}: {{values: [a, b], fact: os}}`"
                )),
            );
        }
        (values, fact)
    }

    /// A mapping of labels, for a host (`matcher == false`) or a matcher.
    pub(super) fn labels(&mut self, v: u32, matcher: bool) -> Vec<LabelDecl> {
        if self.is_null(v) && !matcher {
            return Vec::new();
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`labels`",
                "a mapping of label keys to values",
                "write `role: web`, for example",
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            let key_ok = self.label_key(key, k, matcher);
            // In a matcher, a list is alternatives: any of them holds. Each
            // becomes a label of its own (the same key again), in the order
            // written; a value listed twice counts once.
            let values: Vec<u32> = if matcher && matches!(self.scalar(val), Scalar::Seq) {
                let items: Vec<u32> = self.doc.children(val).collect();
                if items.is_empty() {
                    self.err(
                        Diagnostic::error(
                            Code::EmptyAlternatives,
                            format!("`{key}: []` lists no value, so the layer would match no host"),
                        )
                        .at(self.span(val), "empty list")
                        .hint(format!(
                            "list the values any of which a host may carry, such as `{key}: [web, cache]`, or remove `{key}` to match whatever value hosts carry"
                        )),
                    );
                }
                items
            } else {
                vec![val]
            };
            let mut seen = Distinct::new();
            for item in values {
                if let Some(value) = self.label_value(item)
                    && key_ok
                    && seen.first(value)
                {
                    out.push(LabelDecl {
                        key: self.shared(key),
                        value: self.shared(value),
                        key_span: self.span(k),
                        value_span: self.span(item),
                    });
                }
            }
        }
        out
    }

    fn label_key(&mut self, key: &str, k: u32, matcher: bool) -> bool {
        if !valid_label_key(key) {
            self.err(
                Diagnostic::error(Code::InvalidLabel, format!("`{key}` is not a valid label key"))
                    .at(self.span(k), "invalid label key")
                    .hint("a label key is `name` or `prefix/name`, made of letters, digits, `-`, `_` and `.`"),
            );
            return false;
        }
        if let Some(rest) = key.strip_prefix("datum/") {
            if matcher && key == HOST_LABEL {
                return true;
            }
            let (msg, hint) = if matcher {
                (
                    format!("`{key}` is not a label Datum sets"),
                    format!(
                        "the only `datum/` label is `{HOST_LABEL}`; `datum/{rest}` would match no host"
                    ),
                )
            } else {
                (
                    format!("the label `{key}` is reserved"),
                    format!(
                        "the `datum/` prefix belongs to Datum, which sets `{HOST_LABEL}` itself; choose another key"
                    ),
                )
            };
            self.err(
                Diagnostic::error(Code::ReservedLabel, msg)
                    .at(self.span(k), "reserved prefix")
                    .hint(hint),
            );
            return false;
        }
        true
    }

    fn label_value(&mut self, v: u32) -> Option<&'d str> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) if classify_plain(t) == Plain::Null => {
                self.type_error(
                    v,
                    "a label value",
                    "text",
                    "write a value; labels cannot be empty",
                );
                None
            }
            Scalar::Text(t, _) => {
                if t.is_empty() || t.chars().any(char::is_control) {
                    self.err(
                        Diagnostic::error(
                            Code::InvalidLabel,
                            format!("{:?} is not a valid label value", t),
                        )
                        .at(self.span(v), "invalid label value")
                        .hint("a label value is non-empty text on one line"),
                    );
                    return None;
                }
                Some(t)
            }
            _ => {
                self.type_error(
                    v,
                    "a label value",
                    "text",
                    "write one value, such as `role: web`",
                );
                None
            }
        }
    }

    /// A matcher; `None` when it cannot be read whole (it then touches every host).
    pub(super) fn matcher(&mut self, v: u32) -> Option<Vec<LabelDecl>> {
        if !self.is_map(v) {
            self.type_error(
                v,
                "`match`",
                "a mapping",
                "write `match: {labels: {role: web}}`, or `match: {}` to match every host",
            );
            return None;
        }
        let before = self.diags.len();
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            if key == "labels" {
                if self.is_null(val) {
                    self.type_error(
                        val,
                        "`match.labels`",
                        "a mapping of labels",
                        "write `labels: {role: web}`, or `match: {}` to match every host",
                    );
                    continue;
                }
                out = self.labels(val, true);
            } else {
                let hint = match suggest(key, ["labels"]) {
                    Some(_) => "did you mean `labels`? A matcher takes only `labels` in v1alpha1"
                        .to_owned(),
                    None => "a matcher takes only `labels` in v1alpha1".to_owned(),
                };
                self.err(
                    Diagnostic::error(Code::UnknownKey, format!("unknown key `{key}` in `match`"))
                        .at(self.span(k), "unknown key")
                        .hint(hint),
                );
            }
        }
        (self.diags.len() == before).then_some(out)
    }
}
