//! A layer's resources: ids, and which fields each type takes.

use crate::diagnostic::{Code, Diagnostic};
use crate::hint::Hinted;
use crate::names::Rule;
use crate::schema::{Field, Kind, ResourceId, suggest};

use super::cx::{Cx, Scalar};
use super::{FieldDecl, ResourceDecl, list};

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    pub(super) fn resources(&mut self, v: u32) -> Vec<ResourceDecl> {
        if self.is_null(v) {
            return Vec::new();
        }
        if matches!(self.scalar(v), Scalar::Seq) {
            // The usual slip: `- Package[nginx]:` under `resources:`.
            self.err(
                Diagnostic::error(
                    Code::WrongType,
                    "`resources` is a mapping of Type[title] to fields; this line starts a list item",
                )
                .at(self.span(v), "a list item")
                .hint(
                    "remove the `- `: each `Type[title]:` sits directly under `resources:`, \
                     with its fields indented below it",
                ),
            );
            return Vec::new();
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`resources`",
                "a mapping of resource ids to fields",
                "write `Package[nginx]: {ensure: installed}`, for example",
            );
            return Vec::new();
        }
        let mut out: Vec<ResourceDecl> = Vec::new();
        for (key, k, val) in self.entries(v) {
            let id = match ResourceId::parse(key) {
                Ok(id) => id,
                // A field indented as if it were a resource id.
                Err(_) if Field::parse(key).is_some() => {
                    self.field_as_id(key, k, out.last().map(|r| &r.id));
                    continue;
                }
                Err(e) => {
                    let (msg, hint) = (e.to_string(), e.hint().unwrap_or_default());
                    self.err(
                        Diagnostic::error(Code::InvalidResource, msg)
                            .at(self.span(k), "here")
                            .hint(hint),
                    );
                    continue;
                }
            };
            // A problem inside one resource sets that resource aside, not
            // the document: the other resources are still read and checked.
            let ok_before = std::mem::replace(&mut self.ok, true);
            self.cron_title(&id, k);
            let fields = if self.is_null(val) {
                Vec::new()
            } else if self.is_map(val) {
                self.fields(&id, val)
            } else {
                self.type_error(
                    val,
                    &format!("`{id}`"),
                    "a mapping of fields",
                    "write its fields below it, or leave it empty to declare it with none",
                );
                Vec::new()
            };
            let set_aside = !self.ok;
            self.ok = ok_before;
            out.push(ResourceDecl {
                id,
                span: self.span(k),
                fields,
                set_aside,
            });
        }
        out
    }

    /// A Cron's title names its file: one cron would skip is refused.
    fn cron_title(&mut self, id: &ResourceId, k: u32) {
        if id.kind != Kind::Cron {
            return;
        }
        if let Some(why) = Rule::CronName.check(&id.title) {
            self.err(
                Diagnostic::error(
                    Code::InvalidName,
                    format!(
                        "`{id}` would be the file /etc/cron.d/datum-{}, which cron does not read: {why}",
                        id.title
                    ),
                )
                .at(self.span(k), "the title names the file")
                .hint(Rule::CronName.hint()),
            );
        }
    }

    /// `key`, a field name, written where a resource id belongs, after the
    /// resource `before` (if any), which it most likely belongs to.
    fn field_as_id(&mut self, key: &str, k: u32, before: Option<&ResourceId>) {
        let hint = match before {
            Some(id) => format!(
                "indent `{key}:` under `{id}:`, deeper than the resource id, \
                 so that it is one of its fields"
            ),
            None => format!(
                "fields go under their resource: write `Type[title]:` here \
                 and indent `{key}:` below it"
            ),
        };
        self.err(
            Diagnostic::error(
                Code::InvalidResource,
                format!("`{key}` is a field, written at the level of resource ids"),
            )
            .at(self.span(k), "a field, not a resource id")
            .hint(hint),
        );
    }

    fn fields(&mut self, id: &ResourceId, map: u32) -> Vec<FieldDecl> {
        let kind = id.kind;
        let mut out = Vec::new();
        for (key, k, v) in self.entries(map) {
            let field = match Field::parse(key).filter(|f| kind.has(*f)) {
                Some(f) => f,
                None => {
                    let names = kind.fields().iter().map(|f| f.name());
                    let mut hint = match suggest(key, names) {
                        Some(n) => format!("did you mean `{n}`? "),
                        None => String::new(),
                    };
                    let elsewhere: Vec<&str> = Field::parse(key)
                        .map(|f| {
                            Kind::ALL
                                .iter()
                                .filter(|k| k.has(f))
                                .map(|k| k.name())
                                .collect()
                        })
                        .unwrap_or_default();
                    if !elsewhere.is_empty() {
                        hint.push_str(&format!("`{key}` is a field of {}. ", elsewhere.join(", ")));
                    }
                    hint.push_str(&format!(
                        "{kind} takes {}",
                        list(&kind.fields().iter().map(|f| f.name()).collect::<Vec<_>>())
                    ));
                    self.err(
                        Diagnostic::error(
                            Code::UnknownField,
                            format!("unknown field `{key}` for {kind}"),
                        )
                        .at(self.span(k), "unknown field")
                        .hint(hint),
                    );
                    continue;
                }
            };
            if let Some(value) = self.field_value(kind, field, v) {
                out.push(FieldDecl {
                    field,
                    span: self.span(v),
                    value,
                });
            }
        }
        out
    }
}
