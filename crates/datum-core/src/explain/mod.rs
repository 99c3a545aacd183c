//! `explain`: for one host, where every value came from, what it displaced,
//! who agreed with it, and why each layer matched or did not.
//!
//! Everything here reads the host's [`Resolution`], the same one `render`
//! serialises: nothing is re-derived after the fact. Only the host asked
//! about is resolved, so explaining one host costs about what rendering it
//! does, whatever the size of the fleet. A resolution with problems still
//! carries every field, so a host that fails to resolve is explained too,
//! its conflicting fields with every side.
//!
//! [`Explanation::answer`] turns a [`Target`] into an [`Answer`];
//! [`text::render`] and [`json::tree`] draw it.

pub mod json;
pub mod text;

use crate::diagnostic::Diagnostic;
use crate::fleet::{Fleet, HostId, Label, LayerId, ResId, Setting};
use crate::matcher::LabelCheck;
use crate::report::problem_diagnostic;
use crate::resolve::{Contrib, Problem, Resolution, ResolvedField, ResolvedResource};
use crate::schema::{Field, IdError, Kind, ResourceId, Value, nearest, suggest};

/// What was asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The whole host: its layers, then every resource.
    Host,
    Resource(ResourceId),
    Field(ResourceId, Field),
}

/// Why the text on the command line names no resource or field.
#[derive(Debug, PartialEq, Eq)]
pub enum TargetError {
    /// Not a resource id.
    Id(IdError),
    /// The resource's type has no such field.
    NoField { kind: Kind, name: String },
}

impl From<IdError> for TargetError {
    fn from(e: IdError) -> TargetError {
        TargetError::Id(e)
    }
}

impl Target {
    /// Reads `Type[title]` or `Type[title].field`.
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        // A title holds no brackets, so the id ends at the first `]` and only
        // `.field` may follow. Titles may hold dots (`File[app.conf]`): the
        // text is never split at a dot inside the brackets.
        let Some(close) = text.find(']') else {
            return Err(ResourceId::parse(text)
                .err()
                .unwrap_or(IdError::Shape)
                .into());
        };
        let (id_text, rest) = text.split_at(close + 1);
        if rest.is_empty() {
            return Ok(Target::Resource(ResourceId::parse(id_text)?));
        }
        let Some(name) = rest.strip_prefix('.') else {
            // `File[a]b]`: let the id parser say what is wrong with it.
            return Err(ResourceId::parse(text)
                .err()
                .unwrap_or(IdError::Shape)
                .into());
        };
        let id = ResourceId::parse(id_text)?;
        match Field::parse(name).filter(|&f| id.kind.has(f)) {
            Some(field) => Ok(Target::Field(id, field)),
            None => Err(TargetError::NoField {
                kind: id.kind,
                name: name.to_owned(),
            }),
        }
    }
}

impl TargetError {
    /// Whether the text is not even shaped like a resource id (bad usage),
    /// as opposed to naming a type or field the schema does not have.
    pub fn is_malformed(&self) -> bool {
        matches!(self, TargetError::Id(IdError::Shape | IdError::Title))
    }

    /// The message and hint for a target written as `text`.
    pub fn describe(&self, text: &str) -> (String, String) {
        match self {
            TargetError::Id(IdError::Shape) => {
                let (message, hint) = IdError::Shape.describe(text);
                (
                    message,
                    format!("{hint}, and a field follows a dot: File[motd].mode"),
                )
            }
            TargetError::Id(e) => e.describe(text),
            TargetError::NoField { kind, name } => {
                let fields: Vec<&str> = kind.fields().iter().map(|f| f.name()).collect();
                let takes = format!("{kind} takes {}", fields.join(", "));
                let message = if name.is_empty() {
                    format!("`{text}` names no field after the dot")
                } else {
                    format!("{kind} has no field `{name}`")
                };
                let hint = match suggest(name, fields.iter().copied()) {
                    Some(near) if !name.is_empty() => format!("did you mean `{near}`? {takes}"),
                    _ => takes,
                };
                (message, hint)
            }
        }
    }
}

/// One host's resolution, ready to be asked about.
#[derive(Clone, Copy)]
pub struct Explanation<'f> {
    pub fleet: &'f Fleet,
    pub host: HostId,
    /// The host's resolution, problems and all.
    pub resolution: &'f Resolution,
}

/// The answer to one question.
#[derive(Clone, Debug)]
pub enum Answer<'f> {
    Host,
    Resource(&'f ResolvedResource),
    Field(&'f ResolvedResource, &'f ResolvedField),
    /// The host lacks what was asked about.
    Absent(Absence),
}

impl Answer<'_> {
    /// Whether the host has what was asked about.
    pub fn found(&self) -> bool {
        !matches!(self, Answer::Absent(_))
    }
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

/// What became of one contribution to a field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Its value stands.
    Set,
    /// Its `null` stands: the field is unset.
    Unset,
    /// Same value, same precedence, earlier in fold order than the one that stands.
    Agreed,
    /// A higher precedence replaced it.
    Overridden,
    /// Layers of its precedence disagree with it.
    Conflict,
    /// Its entries of `requires` or `restart_on` are kept.
    Listed,
    /// Its entries were dropped by a `null` of higher precedence.
    Dropped,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::Set => "set",
            Role::Unset => "unset",
            Role::Agreed => "agreed",
            Role::Overridden => "overridden",
            Role::Conflict => "conflict",
            Role::Listed => "listed",
            Role::Dropped => "dropped",
        }
    }
}

/// Where a field ended up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// A value (for a set: at least one entry).
    Set,
    /// `null` stands, or dropped every entry of a set.
    Unset,
    /// Layers of the winning precedence disagree: there is no value.
    Conflict,
    /// A set listed as empty.
    Empty,
}

impl State {
    pub fn word(self) -> &'static str {
        match self {
            State::Set => "set",
            State::Unset => "unset",
            State::Conflict => "conflict",
            State::Empty => "empty",
        }
    }
}

/// An entry of `requires` or `restart_on` that no longer stands, with the
/// layers that listed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedEntry {
    pub id: ResId,
    pub by: Vec<Contrib>,
}

impl<'f> Explanation<'f> {
    pub fn new(fleet: &'f Fleet, host: HostId, resolution: &'f Resolution) -> Explanation<'f> {
        Explanation {
            fleet,
            host,
            resolution,
        }
    }

    pub fn host_name(&self) -> &'f str {
        &self.fleet.host(self.host).name
    }

    pub fn answer(&self, target: &Target) -> Answer<'f> {
        match target {
            Target::Host => Answer::Host,
            Target::Resource(id) => match self.find(id) {
                Some(r) => Answer::Resource(r),
                None => Answer::Absent(self.absence(id, None)),
            },
            Target::Field(id, field) => match self.find(id) {
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
                .map(|l| {
                    let mut failed: Vec<LabelCheck> = fleet
                        .check_match(l, self.host)
                        .into_iter()
                        .filter(|c| !c.holds())
                        .collect();
                    failed.sort_by(|a, b| fleet.sym(a.key).cmp(fleet.sym(b.key)));
                    Miss { layer: l, failed }
                })
                .collect(),
        };
        let why = if !misses.is_empty() {
            WhyNot::Unmatched(misses)
        } else if has_resource {
            WhyNot::FieldUnset
        } else {
            WhyNot::Undeclared {
                nearest: nearest_declared(self.fleet, id),
            }
        };
        Absence {
            resource: id.clone(),
            field,
            has_resource,
            why,
        }
    }

    /// The conflicts on one field: the sides of each disagreeing
    /// precedence group, lowest precedence first.
    pub fn conflicts(&self, r: &ResolvedResource, f: &ResolvedField) -> Vec<&'f [Contrib]> {
        if !f.conflict {
            return Vec::new();
        }
        let mut groups: Vec<&'f [Contrib]> = self
            .resolution
            .problems
            .iter()
            .filter_map(|p| match p {
                Problem::Conflict {
                    resource,
                    field,
                    sides,
                } if *resource == r.id && *field == f.field => Some(&**sides),
                _ => None,
            })
            .collect();
        groups.sort_by_key(|sides| sides.first().map(|&c| self.fleet.precedence(c)));
        groups
    }

    /// Every contribution to a field, in fold order, with what became of it.
    pub fn roles(&self, r: &ResolvedResource, f: &ResolvedField) -> Vec<(Contrib, Role)> {
        let fleet = self.fleet;
        if f.field.is_set() {
            let floor = f.unset_floor(fleet);
            return f
                .contribs
                .iter()
                .map(|&c| {
                    let role = if floor.is_some_and(|floor| fleet.precedence(c) < floor) {
                        Role::Dropped
                    } else if fleet.setting(c).setting == Setting::Unset {
                        Role::Unset
                    } else {
                        Role::Listed
                    };
                    (c, role)
                })
                .collect();
        }
        let conflicting: Vec<Contrib> = self.conflicts(r, f).concat();
        let last = f.contribs.len() - 1;
        f.contribs
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let role = if conflicting.contains(&c) {
                    Role::Conflict
                } else if i == last {
                    if fleet.setting(c).setting == Setting::Unset {
                        Role::Unset
                    } else {
                        Role::Set
                    }
                } else if i >= f.top as usize {
                    Role::Agreed
                } else {
                    Role::Overridden
                };
                (c, role)
            })
            .collect()
    }

    /// Where a field ended up.
    pub fn state(&self, r: &ResolvedResource, f: &ResolvedField) -> State {
        let fleet = self.fleet;
        if f.field.is_set() {
            return if !f.entries.is_empty() {
                State::Set
            } else if f.unset_floor(fleet).is_some() {
                State::Unset
            } else {
                State::Empty
            };
        }
        let winner = f.winner();
        if self
            .conflicts(r, f)
            .iter()
            .any(|sides| sides.contains(&winner))
        {
            State::Conflict
        } else if fleet.setting(winner).setting == Setting::Unset {
            State::Unset
        } else {
            State::Set
        }
    }

    /// Entries listed below a `null` of higher precedence and not kept by
    /// any other layer, sorted by id.
    pub fn dropped(&self, f: &ResolvedField) -> Vec<DroppedEntry> {
        let fleet = self.fleet;
        let Some(floor) = f.unset_floor(fleet) else {
            return Vec::new();
        };
        let mut out: Vec<DroppedEntry> = Vec::new();
        for &c in f.contribs.iter().filter(|&&c| fleet.precedence(c) < floor) {
            let Setting::Refs(refs) = &fleet.setting(c).setting else {
                continue;
            };
            for &(id, _) in refs.iter() {
                if f.entries.iter().any(|e| e.id == id) {
                    continue;
                }
                match out.iter_mut().find(|d| d.id == id) {
                    Some(d) => d.by.push(c),
                    None => out.push(DroppedEntry { id, by: vec![c] }),
                }
            }
        }
        out.sort_by_key(|d| fleet.resources.rank(d.id));
        out
    }

    /// The `null` that stands on a set field, or dropped its lower entries:
    /// the last one at the highest precedence that wrote one.
    pub fn unset_by(&self, f: &ResolvedField) -> Option<Contrib> {
        let floor = f.unset_floor(self.fleet)?;
        f.contribs.iter().rev().copied().find(|&c| {
            self.fleet.precedence(c) == floor && self.fleet.setting(c).setting == Setting::Unset
        })
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

    /// Whether a resource's content must not be shown: some layer matching
    /// the host marks it `sensitive: true`. Any one layer is enough, so a
    /// higher layer turning the flag off never reveals what a lower one hid.
    pub fn sensitive(&self, r: &ResolvedResource) -> bool {
        is_sensitive(self.fleet, r)
    }

    /// Whether a contribution's value is hidden: `content` of a sensitive resource.
    pub fn redacted(&self, r: &ResolvedResource, c: Contrib) -> bool {
        self.fleet.setting(c).field == Field::Content
            && matches!(self.fleet.setting(c).setting, Setting::Value(_))
            && self.sensitive(r)
    }

    /// The labels of a layer's matcher, sorted by key text (a matcher keeps
    /// them in interning order, which is not meant for reading).
    pub fn matcher(&self, layer: LayerId) -> Vec<&'f Label> {
        let fleet = self.fleet;
        let mut labels: Vec<&Label> = fleet.layer(layer).matcher.iter().collect();
        labels.sort_by(|a, b| fleet.sym(a.key).cmp(fleet.sym(b.key)));
        labels
    }
}

/// Whether a resource's content must not be shown: some layer of its
/// resolution marks it `sensitive: true`, whatever a higher one says.
pub fn is_sensitive(fleet: &Fleet, r: &ResolvedResource) -> bool {
    r.field(Field::Sensitive).is_some_and(|f| {
        f.contribs
            .iter()
            .any(|&c| fleet.setting(c).setting == Setting::Value(Value::Bool(true)))
    })
}

/// The resource id some layer declares that is nearest to `id`, for a typo.
pub fn nearest_declared(fleet: &Fleet, id: &ResourceId) -> Option<ResId> {
    let mut declared: Vec<ResId> = fleet
        .layers
        .iter()
        .flat_map(|l| l.resources.iter().map(|r| r.id))
        .collect();
    declared.sort_unstable();
    declared.dedup();
    let text = id.to_string();
    let near = nearest(&text, declared.iter().map(|&r| fleet.resources.text(r)))?;
    declared
        .into_iter()
        .find(|&r| fleet.resources.text(r) == near)
}

#[cfg(test)]
mod tests;
