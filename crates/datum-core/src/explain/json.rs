//! Explain as data, for `--format json`: the same answer as the text, with
//! every contribution, matcher label and set entry located as
//! `{path, line, column}`, so an editor can jump to it.
//! The schema is documented in `docs/explain.md`; values are never cut
//! short here, but sensitive `content` is never included.

use std::borrow::Cow;

use super::{Absence, Answer, Explanation, Miss, Role, State, VarAbsence, WhyNot};
use crate::diagnostic::Diagnostic;
use crate::emit::{self, Tree};
use crate::fleet::{Contrib, LayerId, ResId, Setting, VarContrib};
use crate::manifest::value_tree;
use crate::matcher::Label;
use crate::resolve::{ResolvedField, ResolvedResource, ResolvedVar};
use crate::schema::Field;
use crate::source::Span;
use crate::template::Rendered;
use crate::vars::{VarSetting, VarValue};

/// The answer as a tree. `problems` are the host's resolution problems as
/// diagnostics (empty when it resolves).
pub fn tree<'f>(ex: &Explanation<'f>, answer: &Answer<'f>, problems: &'f [Diagnostic]) -> Tree<'f> {
    let fleet = ex.fleet;
    let query = match answer {
        Answer::Host => "host",
        Answer::Resource(_) => "resource",
        Answer::Field(..) | Answer::Rendered(..) => "field",
        Answer::Absent(a) if a.field.is_some() => "field",
        Answer::Absent(_) => "resource",
        Answer::Var(_) | Answer::VarAbsent(_) => "var",
    };
    let mut t = Tree::document("Explain")
        .with("host", Tree::str(ex.host_name()))
        .with("query", Tree::str(query))
        .with("found", Tree::Bool(answer.found()))
        .with("resolves", Tree::Bool(ex.resolution.is_ok()))
        .with(
            "problems",
            Tree::List(
                problems
                    .iter()
                    .map(|d| emit::diagnostic(&fleet.files, d))
                    .collect(),
            ),
        );
    match answer {
        Answer::Host => host(ex, &mut t),
        Answer::Var(v) => t.push("var", var(ex, v)),
        Answer::Rendered(r, x) => {
            t.push("resource", Tree::str(fleet.resources.text(r.id)));
            t.push("field", rendered(ex, r, x));
        }
        Answer::VarAbsent(a) => {
            t.push("var", Tree::str(format!("vars.{}", a.name)));
            t.push("why_not", var_why_not(ex, a));
        }
        Answer::Resource(r) => t.push("resource", resource(ex, r)),
        Answer::Field(r, f) => {
            t.push("resource", Tree::str(fleet.resources.text(r.id)));
            t.push("field", field(ex, r, f));
        }
        Answer::Absent(a) => {
            t.push("resource", Tree::str(a.resource.to_string()));
            t.push("field", a.field.map_or(Tree::Null, |f| Tree::str(f.name())));
            t.push("why_not", why_not(ex, a));
        }
    }
    t
}

/// The host's labels, layers, resources and (where layers set any) vars.
fn host<'f>(ex: &Explanation<'f>, t: &mut Tree<'f>) {
    let labels = ex
        .fleet
        .labels_of(ex.host)
        .into_iter()
        .map(|(k, v)| (Cow::Borrowed(k), Tree::str(v)))
        .collect();
    t.push("labels", Tree::Map(labels));
    t.push(
        "layers",
        Tree::List(ex.resolution.layers.iter().map(|&l| layer(ex, l)).collect()),
    );
    t.push(
        "resources",
        Tree::List(
            ex.resolution
                .resources
                .iter()
                .map(|r| resource(ex, r))
                .collect(),
        ),
    );
    // Only where layers set vars: a fleet without them reads as before.
    if !ex.resolution.vars.vars.is_empty() {
        t.push(
            "vars",
            Tree::List(ex.resolution.vars.vars.iter().map(|v| var(ex, v)).collect()),
        );
    }
}

/// Why a var is not set on the host: undeclared, or the layers that missed.
fn var_why_not<'f>(ex: &Explanation<'f>, a: &VarAbsence) -> Tree<'f> {
    Tree::map()
        .with(
            "reason",
            Tree::str(if a.misses.is_empty() {
                "undeclared"
            } else {
                "unmatched"
            }),
        )
        .with(
            "layers",
            Tree::List(a.misses.iter().map(|m| miss(ex, m)).collect()),
        )
        .with(
            "nearest",
            a.nearest
                .as_ref()
                .map_or(Tree::Null, |n| Tree::str(format!("vars.{n}"))),
        )
}

/// A File's rendered content: the template and the layer that chose it,
/// and each var and label the rendering read.
fn rendered<'f>(ex: &Explanation<'f>, r: &'f ResolvedResource, x: &'f Rendered) -> Tree<'f> {
    let fleet = ex.fleet;
    let hidden = ex.sensitive(r);
    let template = r.field(Field::Template);
    let mut t = Tree::map()
        .with("field", Tree::str("content"))
        .with("state", Tree::str("set"))
        .with(
            "value",
            if hidden {
                Tree::Null
            } else {
                Tree::str(x.text())
            },
        );
    if hidden {
        t.push("redacted", Tree::Bool(true));
    }
    t.push(
        "layer",
        template.map_or(Tree::Null, |f| {
            Tree::str(fleet.layer(f.winner().layer).display.as_str())
        }),
    );
    t.push("template", Tree::str(&*x.template));
    t.push("sha256", Tree::str(x.sha256.as_str()));
    t.push(
        "template_contributions",
        Tree::List(template.map_or_else(Vec::new, |f| {
            r.played(f)
                .map(|(c, role)| contribution(ex, r, c, role))
                .collect()
        })),
    );
    t.push(
        "vars_read",
        Tree::List(
            x.vars_read
                .iter()
                .map(|name| match ex.resolution.vars.get(name) {
                    None => Tree::map()
                        .with("name", Tree::str(&**name))
                        .with("state", Tree::str("absent"))
                        .with("value", Tree::Null)
                        .with("layer", Tree::Null),
                    Some(v) => {
                        let c = v.winner();
                        let head = Tree::map()
                            .with("name", Tree::str(&**name))
                            .with("state", Tree::str(v.state.word()))
                            .with("value", v.value(fleet).map_or(Tree::Null, VarValue::tree))
                            .with("layer", Tree::str(fleet.layer(c.layer).display.as_str()));
                        located(head, ex, fleet.var(c).span)
                    }
                })
                .collect(),
        ),
    );
    let labels = fleet.labels_of(ex.host);
    t.push(
        "labels_read",
        Tree::List(
            x.labels_read
                .iter()
                .map(|key| {
                    let value = labels.iter().find(|(k, _)| *k == &**key).map(|(_, v)| *v);
                    Tree::map()
                        .with("key", Tree::str(&**key))
                        .with("value", value.map_or(Tree::Null, Tree::str))
                })
                .collect(),
        ),
    );
    t
}

/// A var with its value, the layer that set it and every contribution.
fn var<'f>(ex: &Explanation<'f>, v: &'f ResolvedVar) -> Tree<'f> {
    let fleet = ex.fleet;
    let winner = v.winner();
    let decided = v.state != State::Conflict;
    let setting = |c: VarContrib| match &fleet.var(c).setting {
        VarSetting::Value(x) => x.tree(),
        VarSetting::Unset => Tree::Null,
    };
    Tree::map()
        .with("name", Tree::str(&*v.name))
        .with("state", Tree::str(v.state.word()))
        .with("value", v.value(fleet).map_or(Tree::Null, VarValue::tree))
        .with(
            "layer",
            if decided {
                Tree::str(fleet.layer(winner.layer).display.as_str())
            } else {
                Tree::Null
            },
        )
        .with(
            "contributions",
            Tree::List(
                v.played
                    .iter()
                    .map(|&(c, role)| {
                        let t = layer_head(ex, c.layer)
                            .with("role", Tree::str(role.word()))
                            .with("value", setting(c));
                        located(t, ex, fleet.var(c).span).with(
                            "matched",
                            Tree::List(
                                ex.matcher(c.layer)
                                    .into_iter()
                                    .map(|m| label(ex, m))
                                    .collect(),
                            ),
                        )
                    })
                    .collect(),
            ),
        )
}

/// Adds where a span starts: `location`, as `{path, line, column}`.
fn located<'f>(t: Tree<'f>, ex: &Explanation<'f>, span: Span) -> Tree<'f> {
    t.with("location", emit::location(&ex.fleet.files, span))
}

fn label<'f>(ex: &Explanation<'f>, l: &Label) -> Tree<'f> {
    let t = Tree::map()
        .with("key", Tree::str(ex.fleet.sym(l.key)))
        .with("value", Tree::str(ex.fleet.sym(l.value)));
    located(t, ex, l.key_span)
}

/// A layer with its precedence, where its `match` is, and the labels that
/// matched (none: `match: {}`, every host).
fn layer<'f>(ex: &Explanation<'f>, l: LayerId) -> Tree<'f> {
    let t = layer_head(ex, l);
    let t = located(t, ex, ex.fleet.layer(l).match_span);
    t.with(
        "matched",
        Tree::List(ex.matcher(l).into_iter().map(|m| label(ex, m)).collect()),
    )
}

fn layer_head<'f>(ex: &Explanation<'f>, l: LayerId) -> Tree<'f> {
    let layer = ex.fleet.layer(l);
    Tree::map()
        .with("layer", Tree::str(layer.display.as_str()))
        .with("name", Tree::str(&*layer.name))
        .with("precedence", Tree::Int(layer.precedence.into()))
}

fn resource<'f>(ex: &Explanation<'f>, r: &'f ResolvedResource) -> Tree<'f> {
    let fleet = ex.fleet;
    let mut t = Tree::map()
        .with("id", Tree::str(fleet.resources.text(r.id)))
        .with("summary", r.summary(fleet).map_or(Tree::Null, Tree::str))
        .with("sensitive", Tree::Bool(ex.sensitive(r)))
        .with(
            "contributed_by",
            Tree::List(r.declared_by.iter().map(|&(l, _)| layer(ex, l)).collect()),
        )
        .with(
            "fields",
            Tree::List(r.fields.iter().map(|f| field(ex, r, f)).collect()),
        );
    if let Some(recipients) = secret_recipients(ex, r) {
        t.push("secret_recipients", recipients);
    }
    t
}

/// For a File with a secret, who its `.recipients` file names (`null`
/// when there is none); absent otherwise.
fn secret_recipients<'f>(ex: &Explanation<'f>, r: &ResolvedResource) -> Option<Tree<'f>> {
    let path = crate::secret::secret_of(ex.fleet, r)?;
    Some(match crate::secret::recorded_recipients(ex.fleet, path) {
        None => Tree::Null,
        Some(rows) => Tree::List(
            rows.into_iter()
                .map(|(holder, fingerprint)| {
                    Tree::map()
                        .with("holder", Tree::str(holder))
                        .with("fingerprint", Tree::str(fingerprint))
                })
                .collect(),
        ),
    })
}

/// A contribution's value: `null` for an unset, ids for a set; nothing of
/// sensitive content.
fn value<'f>(ex: &Explanation<'f>, r: &ResolvedResource, c: Contrib) -> Tree<'f> {
    if ex.redacted(r, c) {
        return Tree::Null;
    }
    match &ex.fleet.setting(c).setting {
        Setting::Value(v) => value_tree(v),
        Setting::Unset => Tree::Null,
        Setting::Refs(refs) => Tree::strs(refs.iter().map(|(id, _)| ex.fleet.resources.text(*id))),
    }
}

fn field<'f>(ex: &Explanation<'f>, r: &'f ResolvedResource, f: &'f ResolvedField) -> Tree<'f> {
    let fleet = ex.fleet;
    let state = f.state;
    let mut t = Tree::map()
        .with("field", Tree::str(f.field.name()))
        .with("state", Tree::str(state.word()));
    if f.field.is_set() {
        t.push(
            "value",
            Tree::strs(f.entries().iter().map(|e| fleet.resources.text(e.id))),
        );
        t.push(
            "entries",
            Tree::List(
                f.entries()
                    .iter()
                    .map(|e| entry(ex, e.id, &e.by, None))
                    .collect(),
            ),
        );
        let unset_by = r.unset_by(f);
        t.push(
            "dropped",
            Tree::List(
                f.dropped()
                    .iter()
                    .map(|d| entry(ex, d.id, &d.by, unset_by))
                    .collect(),
            ),
        );
        t.push(
            "unset_by",
            unset_by.map_or(Tree::Null, |c| contribution(ex, r, c, Role::Unset)),
        );
    } else {
        let winner = f.winner();
        let decided = state != State::Conflict;
        t.push(
            "value",
            if decided {
                value(ex, r, winner)
            } else {
                Tree::Null
            },
        );
        if ex.redacted(r, winner) {
            t.push("redacted", Tree::Bool(true));
        }
        t.push(
            "layer",
            if decided {
                Tree::str(fleet.layer(winner.layer).display.as_str())
            } else {
                Tree::Null
            },
        );
    }
    t.push(
        "contributions",
        Tree::List(
            r.played(f)
                .map(|(c, role)| contribution(ex, r, c, role))
                .collect(),
        ),
    );
    t
}

fn contribution<'f>(
    ex: &Explanation<'f>,
    r: &ResolvedResource,
    c: Contrib,
    role: Role,
) -> Tree<'f> {
    let mut t = layer_head(ex, c.layer)
        .with("role", Tree::str(role.word()))
        .with("value", value(ex, r, c));
    if ex.redacted(r, c) {
        t.push("redacted", Tree::Bool(true));
    }
    let t = located(t, ex, ex.fleet.setting(c).span);
    t.with(
        "matched",
        Tree::List(
            ex.matcher(c.layer)
                .into_iter()
                .map(|m| label(ex, m))
                .collect(),
        ),
    )
}

/// An entry of a set with where each layer listed it; for a dropped one,
/// the `null` that dropped it.
fn entry<'f>(
    ex: &Explanation<'f>,
    id: ResId,
    by: &[Contrib],
    dropped_by: Option<Contrib>,
) -> Tree<'f> {
    let fleet = ex.fleet;
    let mut t = Tree::map()
        .with("id", Tree::str(fleet.resources.text(id)))
        .with(
            "on_host",
            Tree::Bool(ex.resolution.resource(fleet, id).is_some()),
        )
        .with(
            "listed_by",
            Tree::List(
                by.iter()
                    .map(|&c| located(layer_head(ex, c.layer), ex, fleet.entry_span(c, id)))
                    .collect(),
            ),
        );
    if let Some(c) = dropped_by {
        t.push(
            "dropped_by",
            located(layer_head(ex, c.layer), ex, fleet.setting(c).span),
        );
    }
    t
}

fn why_not<'f>(ex: &Explanation<'f>, a: &Absence) -> Tree<'f> {
    let (reason, misses, nearest) = match &a.why {
        WhyNot::Unmatched(misses) => ("unmatched", &misses[..], None),
        WhyNot::Undeclared { nearest } => ("undeclared", &[][..], *nearest),
        WhyNot::FieldUnset => ("field_unset", &[][..], None),
    };
    Tree::map()
        .with("reason", Tree::str(reason))
        .with(
            "layers",
            Tree::List(misses.iter().map(|m| miss(ex, m)).collect()),
        )
        .with(
            "nearest",
            nearest.map_or(Tree::Null, |r| Tree::str(ex.fleet.resources.text(r))),
        )
}

/// A layer that does not match, with each label of its matcher the host
/// fails, located where the matcher writes it.
fn miss<'f>(ex: &Explanation<'f>, m: &Miss) -> Tree<'f> {
    let fleet = ex.fleet;
    let layer = fleet.layer(m.layer);
    let failed = m
        .failed
        .iter()
        .map(|c| {
            let span = layer
                .matcher
                .iter()
                .find(|l| l.key == c.key)
                .map_or(layer.match_span, |l| l.key_span);
            let t = Tree::map()
                .with("key", Tree::str(fleet.sym(c.key)))
                .with(
                    "wanted",
                    match &c.wanted[..] {
                        [one] => Tree::str(fleet.sym(*one)),
                        any => Tree::strs(any.iter().map(|&v| fleet.sym(v))),
                    },
                )
                .with(
                    "found",
                    c.found.map_or(Tree::Null, |v| Tree::str(fleet.sym(v))),
                );
            located(t, ex, span)
        })
        .collect();
    located(layer_head(ex, m.layer), ex, layer.match_span).with("failed", Tree::List(failed))
}
