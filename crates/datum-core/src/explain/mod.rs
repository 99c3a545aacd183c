//! `explain`: for one host, where every value came from, what it displaced,
//! who agreed with it, and why each layer matched or did not.
//!
//! Everything here reads the host's [`Resolution`], the same one `render`
//! serialises, and the verdict the fold stored on each field (roles,
//! state, conflict sides, dropped entries): nothing is re-derived after the
//! fact. Only the host asked about is resolved, so explaining one host
//! costs about what rendering it does; showing a File's content adds one
//! pass over the layers' resource ids, since whether content is sensitive
//! depends on every layer ([`crate::sensitive`]). A resolution with
//! problems still carries every field, so a host that fails to resolve is
//! explained too, its conflicting fields with every side.
//!
//! [`Explanation::answer`] turns a [`Target`] into an [`Answer`];
//! [`json::tree`] gives it as data, and `present` draws it as text.

pub mod json;

use std::borrow::Cow;
use std::cell::OnceCell;

pub use crate::resolve::{Role, State};

use crate::diagnostic::Diagnostic;
use crate::fleet::{Contrib, Fleet, HostId, LayerId, ResId, Setting};
use crate::hint::{Fault, Hinted};
use crate::matcher::{Label, LabelCheck, groups};
use crate::report::problem_diagnostic;
use crate::resolve::{Resolution, ResolvedField, ResolvedResource, ResolvedVar};
use crate::schema::{Field, IdError, Kind, ResourceId, suggest};
use crate::sensitive::Sensitive;
use crate::template::Rendered;
use crate::vars::valid_var_name;

/// What was asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The whole host: its layers, then every resource.
    Host,
    Resource(ResourceId),
    Field(ResourceId, Field),
    /// `vars.NAME`: one var with its chain.
    Var(Box<str>),
}

/// Why the text on the command line names no resource or field.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not a resource id; the error quotes the whole target as written.
    #[error("{0}")]
    Id(#[source] IdError),
    /// `Type[title].` with nothing after the dot.
    #[error("`{text}` names no field after the dot")]
    NoFieldName { text: String, kind: Kind },
    /// The resource's type has no such field.
    #[error("{kind} has no field `{name}`")]
    NoField { kind: Kind, name: String },
    /// `vars.` followed by no var name.
    #[error("`{text}` names no var")]
    VarName { text: String },
}

impl Target {
    /// Reads `Type[title]`, `Type[title].field` or `vars.NAME`.
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        // A type name starts with a capital: `vars.` is never an id.
        if let Some(name) = text.strip_prefix("vars.") {
            return if valid_var_name(name) {
                Ok(Target::Var(name.into()))
            } else {
                Err(TargetError::VarName {
                    text: text.to_owned(),
                })
            };
        }
        let id_error = |e: IdError| TargetError::Id(e.within(text));
        // A title holds no brackets, so the id ends at the first `]` and only
        // `.field` may follow. Titles may hold dots (`File[app.conf]`): the
        // text is never split at a dot inside the brackets.
        let Some(close) = text.find(']') else {
            return Err(id_error(ResourceId::parse(text).err().unwrap_or(
                IdError::Shape {
                    text: String::new(),
                },
            )));
        };
        let (id_text, rest) = text.split_at(close + 1);
        if rest.is_empty() {
            return Ok(Target::Resource(
                ResourceId::parse(id_text).map_err(id_error)?,
            ));
        }
        let Some(name) = rest.strip_prefix('.') else {
            // `File[a]b]`: let the id parser say what is wrong with it.
            return Err(id_error(ResourceId::parse(text).err().unwrap_or(
                IdError::Shape {
                    text: String::new(),
                },
            )));
        };
        let id = ResourceId::parse(id_text).map_err(id_error)?;
        match Field::parse(name).filter(|&f| id.kind.has(f)) {
            Some(field) => Ok(Target::Field(id, field)),
            None if name.is_empty() => Err(TargetError::NoFieldName {
                text: text.to_owned(),
                kind: id.kind,
            }),
            None => Err(TargetError::NoField {
                kind: id.kind,
                name: name.to_owned(),
            }),
        }
    }
}

/// What to write instead: the shape of a target, or the fields its type
/// takes. Bad usage when the text is not even shaped like a resource id,
/// a failure when it names a type or field the schema does not have.
impl Hinted for TargetError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(match self {
            TargetError::Id(e @ IdError::Shape { .. }) => format!(
                "{}, and a field follows a dot: File[motd].mode",
                e.hint().unwrap_or_default()
            )
            .into(),
            TargetError::Id(e) => return e.hint(),
            TargetError::NoFieldName { kind, .. } => takes(*kind).into(),
            TargetError::VarName { .. } => {
                "a var is named `vars.NAME`, the name letters, digits and `_`: vars.ntp_server"
                    .into()
            }
            TargetError::NoField { kind, name } => {
                let fields = kind.fields().iter().map(|f| f.name());
                match suggest(name, fields) {
                    Some(near) => format!("did you mean `{near}`? {}", takes(*kind)).into(),
                    None => takes(*kind).into(),
                }
            }
        })
    }

    fn fault(&self) -> Fault {
        if self.is_malformed() {
            Fault::Usage
        } else {
            Fault::Failed
        }
    }
}

impl TargetError {
    /// Whether the text is not even shaped like a resource id (bad usage),
    /// as opposed to naming a type or field the schema does not have.
    pub fn is_malformed(&self) -> bool {
        matches!(
            self,
            TargetError::Id(IdError::Shape { .. } | IdError::Title { .. })
                | TargetError::VarName { .. }
        )
    }
}

/// `File takes path, ensure, ...`.
fn takes(kind: Kind) -> String {
    let fields: Vec<&str> = kind.fields().iter().map(|f| f.name()).collect();
    format!("{kind} takes {}", fields.join(", "))
}

/// One host's resolution, ready to be asked about.
#[derive(Clone)]
pub struct Explanation<'f> {
    pub fleet: &'f Fleet,
    pub host: HostId,
    /// The host's resolution, problems and all.
    pub resolution: &'f Resolution,
    /// Which of the host's resources are sensitive, worked out the first
    /// time a content value is about to be shown.
    sensitive: OnceCell<Sensitive>,
}

/// The answer to one question.
#[derive(Clone, Debug)]
pub enum Answer<'f> {
    Host,
    Resource(&'f ResolvedResource),
    Field(&'f ResolvedResource, &'f ResolvedField),
    /// A File's `content` rendered from its template for the host.
    Rendered(&'f ResolvedResource, &'f Rendered),
    /// A var the host's layers set (or unset, or disagree on).
    Var(&'f ResolvedVar),
    /// The host lacks what was asked about.
    Absent(Absence),
    /// No layer of the host sets the var asked about.
    VarAbsent(VarAbsence),
}

impl Answer<'_> {
    /// Whether the host has what was asked about.
    pub fn found(&self) -> bool {
        !matches!(self, Answer::Absent(_) | Answer::VarAbsent(_))
    }
}

/// A var none of the host's layers sets, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarAbsence {
    pub name: Box<str>,
    /// The layers that set it and do not match the host; empty when no
    /// layer anywhere sets it.
    pub misses: Vec<Miss>,
    /// When no layer sets it: the nearest var name some layer sets.
    pub nearest: Option<String>,
}

/// What the host lacks, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Absence {
    pub resource: ResourceId,
    /// Set when a field was asked about.
    pub field: Option<Field>,
    /// Whether the host has the resource (and lacks only the field).
    pub has_resource: bool,
    pub why: WhyNot,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WhyNot {
    /// Layers declare the resource (or, when the host has the resource, set
    /// the field), and none of them matches the host.
    Unmatched(Vec<Miss>),
    /// No layer anywhere declares the resource; the nearest id some layer declares.
    Undeclared { nearest: Option<ResId> },
    /// The host has the resource, and no layer anywhere sets the field.
    FieldUnset,
}

/// A layer that does not match the host, with the labels of its matcher
/// that the host fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Miss {
    pub layer: LayerId,
    pub failed: Vec<LabelCheck>,
}

impl<'f> Explanation<'f> {
    pub fn new(fleet: &'f Fleet, host: HostId, resolution: &'f Resolution) -> Explanation<'f> {
        Explanation {
            fleet,
            host,
            resolution,
            sensitive: OnceCell::new(),
        }
    }

    pub fn host_name(&self) -> &'f str {
        &self.fleet.host(self.host).name
    }

    pub fn answer(&self, target: &Target) -> Answer<'f> {
        match target {
            Target::Host => Answer::Host,
            Target::Var(name) => match self.resolution.vars.get(name) {
                Some(v) => Answer::Var(v),
                None => Answer::VarAbsent(self.var_absence(name)),
            },
            Target::Resource(id) => match self.find(id) {
                Some(r) => Answer::Resource(r),
                None => Answer::Absent(self.absence(id, None)),
            },
            Target::Field(id, field) => match self.find(id) {
                Some(r) if *field == Field::Content && self.resolution.rendered(r.id).is_some() => {
                    match self.resolution.rendered(r.id) {
                        Some(x) => Answer::Rendered(r, x),
                        None => Answer::Absent(self.absence(id, Some(*field))),
                    }
                }
                Some(r) => match r.field(*field) {
                    Some(f) => Answer::Field(r, f),
                    None => Answer::Absent(self.absence(id, Some(*field))),
                },
                None => Answer::Absent(self.absence(id, Some(*field))),
            },
        }
    }

    fn find(&self, id: &ResourceId) -> Option<&'f ResolvedResource> {
        let rid = self.fleet.resources.lookup(id)?;
        self.resolution.resource(self.fleet, rid)
    }

    /// Why the host lacks a resource, or a field of a resource.
    fn absence(&self, id: &ResourceId, field: Option<Field>) -> Absence {
        let fleet = self.fleet;
        let has_resource = self.find(id).is_some();
        // The table also holds ids only ever named in `requires`, so being
        // interned does not mean being declared.
        let misses: Vec<Miss> = match fleet.resources.lookup(id) {
            None => Vec::new(),
            Some(rid) => (0..fleet.layers.len() as u32)
                .map(LayerId)
                .filter(|l| !self.resolution.layers.contains(l))
                .filter(|&l| {
                    fleet.layer(l).resources.iter().any(|r| {
                        r.id == rid
                            && match field {
                                // The host has the resource: only layers setting the field tell.
                                Some(f) if has_resource => r.fields.iter().any(|x| x.field == f),
                                _ => true,
                            }
                    })
                })
                .map(|l| self.miss(l))
                .collect(),
        };
        let why = if !misses.is_empty() {
            WhyNot::Unmatched(misses)
        } else if has_resource {
            WhyNot::FieldUnset
        } else {
            WhyNot::Undeclared {
                nearest: self.fleet.nearest_declared(id),
            }
        };
        Absence {
            resource: id.clone(),
            field,
            has_resource,
            why,
        }
    }

    /// Why none of the host's layers sets a var: the layers that set it
    /// and do not match, or the nearest name some layer sets.
    fn var_absence(&self, name: &str) -> VarAbsence {
        let fleet = self.fleet;
        let misses: Vec<Miss> = (0..fleet.layers.len() as u32)
            .map(LayerId)
            .filter(|l| !self.resolution.layers.contains(l))
            .filter(|&l| fleet.layer(l).vars.iter().any(|v| *v.name == *name))
            .map(|l| self.miss(l))
            .collect();
        let nearest = if misses.is_empty() {
            let mut names: Vec<&str> = fleet
                .layers
                .iter()
                .flat_map(|l| l.vars.iter().map(|v| &*v.name))
                .collect();
            names.sort_unstable();
            names.dedup();
            suggest(name, names).map(str::to_owned)
        } else {
            None
        };
        VarAbsence {
            name: name.into(),
            misses,
            nearest,
        }
    }

    /// A layer that does not match the host, with the labels it fails.
    pub(crate) fn miss(&self, l: LayerId) -> Miss {
        let fleet = self.fleet;
        let mut failed: Vec<LabelCheck> = fleet
            .check_match(l, self.host)
            .into_iter()
            .filter(|c| !c.holds())
            .collect();
        failed.sort_by(|a, b| fleet.sym(a.key).cmp(fleet.sym(b.key)));
        Miss { layer: l, failed }
    }

    /// Where a field ended up, as the fold decided.
    pub fn state(&self, r: &ResolvedResource, f: &ResolvedField) -> State {
        debug_assert!(r.fields.iter().any(|x| std::ptr::eq(x, f)));
        f.state
    }

    /// Every contribution to a field, in fold order, with what became of
    /// it, as the fold decided.
    pub fn roles(&self, r: &ResolvedResource, f: &ResolvedField) -> Vec<(Contrib, Role)> {
        r.played(f).collect()
    }

    /// The host's resolution problems as diagnostics (none when it resolves).
    pub fn problems(&self) -> Vec<Diagnostic> {
        let host = [self.host_name()];
        self.resolution
            .problems
            .iter()
            .map(|p| problem_diagnostic(self.fleet, p, &host))
            .collect()
    }

    /// Whether a resource's content must not be shown, by the one rule of
    /// [`crate::sensitive`]: some layer of the fleet marks it sensitive.
    pub fn sensitive(&self, r: &ResolvedResource) -> bool {
        let fleet = self.fleet;
        let sensitive = self.sensitive.get_or_init(|| {
            // Only the host's resources of a type that can be sensitive.
            let mut ids: Vec<ResId> = self
                .resolution
                .resources
                .iter()
                .map(|r| r.id)
                .filter(|&id| fleet.resources.get(id).kind.has(Field::Sensitive))
                .collect();
            if ids.is_empty() {
                return Sensitive::default();
            }
            ids.sort_unstable();
            Sensitive::among(fleet, |id| ids.binary_search(&id).is_ok())
        });
        sensitive.marks(r.id)
    }

    /// Whether a contribution's value is hidden: `content` of a sensitive resource.
    pub fn redacted(&self, r: &ResolvedResource, c: Contrib) -> bool {
        let setting = self.fleet.setting(c);
        setting.field == Field::Content
            && matches!(setting.setting, Setting::Value(_))
            && self.sensitive(r)
    }

    /// The labels of a layer's matcher, sorted by key text (a matcher keeps
    /// them in interning order, which is not meant for reading). Of a key
    /// listed with alternatives, only the value the host carries, which is
    /// the one that made the layer match.
    pub fn matcher(&self, layer: LayerId) -> Vec<&'f Label> {
        let fleet = self.fleet;
        let host = fleet.host(self.host);
        let mut labels: Vec<&Label> = groups(&fleet.layer(layer).matcher)
            .flat_map(|group| {
                let carried = host.label(group[0].key);
                let matched = group.iter().filter(|m| Some(m.value) == carried);
                if group.len() > 1 && matched.clone().next().is_some() {
                    matched.collect::<Vec<_>>()
                } else {
                    group.iter().collect()
                }
            })
            .collect();
        labels.sort_by(|a, b| fleet.sym(a.key).cmp(fleet.sym(b.key)));
        labels
    }
}

#[cfg(test)]
mod tests;
