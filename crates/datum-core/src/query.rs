//! `query`: one field of one resource across the fleet, each host's value
//! with the layer that set it, or grouped by value.
//!
//! A host's answer depends only on its resolution, so each distinct
//! resolution is asked once, whatever the number of hosts sharing it. Hosts
//! that do not resolve are answered as failing, never left out.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::emit::Tree;
use crate::fleet::{Fleet, HostId, LayerId, ResId};
use crate::hint::Hinted;
use crate::manifest::value_tree;
use crate::resolve::{FleetResolution, Resolution};
use crate::schema::{Field, ResourceId, Value, suggest};
use crate::vars::VarValue;

/// What a host has for the field asked about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Answer<'f> {
    /// The final value, and the layers that set it: the winning layer, or
    /// for `requires` and `restart_on`, every layer listing a kept entry.
    Value {
        value: Shown<'f>,
        layers: Vec<LayerId>,
    },
    /// The host has the resource without the field: never set (no layers),
    /// or unset by the `null` of the layers given.
    Unset { layers: Vec<LayerId> },
    /// The host does not have the resource.
    NoResource,
    /// The host's layers do not resolve (a conflict or another error).
    Fails,
    /// Documents the host depends on failed to load.
    HeldBack,
}

/// A value as it may be shown.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown<'f> {
    Value(&'f Value),
    /// The entries of `requires` or `restart_on`, sorted.
    Refs(Vec<&'f str>),
    /// `content` of a resource marked `sensitive`: never printed.
    Sensitive,
    /// The value of a var.
    Var(&'f VarValue),
}

/// What a query asks about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// One field of one resource.
    Field(ResId, Field),
    /// `vars.NAME`.
    Var(Box<str>),
}

/// Every selected host's answer.
#[derive(Debug)]
pub struct QueryResult<'f> {
    pub fleet: &'f Fleet,
    pub subject: Subject,
    /// In host name order.
    pub rows: Vec<(HostId, Answer<'f>)>,
}

/// Why a query names a var no layer sets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no layer sets vars.{name}")]
pub struct UnsetVar {
    pub name: String,
    /// The var name nearest to it that some layer sets.
    pub nearest: Option<String>,
}

/// The var name nearest to the one asked about.
impl Hinted for UnsetVar {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(match &self.nearest {
            Some(n) => format!("did you mean vars.{n}?").into(),
            None => "a layer sets vars under `vars:`".into(),
        })
    }
}

/// Asks every host in `hosts` for one var.
pub fn query_var<'f>(
    fleet: &'f Fleet,
    all: &FleetResolution,
    name: &str,
    hosts: &[HostId],
) -> Result<QueryResult<'f>, UnsetVar> {
    let mut names: Vec<&str> = fleet
        .layers
        .iter()
        .flat_map(|l| l.vars.iter().map(|v| &*v.name))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.binary_search(&name).is_err() {
        return Err(UnsetVar {
            name: name.to_owned(),
            nearest: suggest(name, names).map(str::to_owned),
        });
    }
    let mut by_resolution: Vec<Option<Answer<'f>>> = vec![None; all.resolutions.len()];
    let rows = hosts
        .iter()
        .map(|&h| {
            let answer = match all.by_host[h.0 as usize] {
                None => Answer::HeldBack,
                Some(i) => by_resolution[i as usize]
                    .get_or_insert_with(|| var_answer(fleet, &all.resolutions[i as usize], name))
                    .clone(),
            };
            (h, answer)
        })
        .collect();
    Ok(QueryResult {
        fleet,
        subject: Subject::Var(name.into()),
        rows,
    })
}

fn var_answer<'f>(fleet: &'f Fleet, res: &Resolution, name: &str) -> Answer<'f> {
    if !res.is_ok() {
        return Answer::Fails;
    }
    match res.vars.get(name) {
        None => Answer::Unset { layers: Vec::new() },
        Some(v) => match v.value(fleet) {
            Some(value) => Answer::Value {
                value: Shown::Var(value),
                layers: vec![v.winner().layer],
            },
            None => Answer::Unset {
                layers: vec![v.winner().layer],
            },
        },
    }
}

/// Hosts that share one answer.
#[derive(Debug, PartialEq, Eq)]
pub struct Group<'f> {
    /// The answer, its layers merged over every host of the group.
    pub answer: Answer<'f>,
    /// In host name order.
    pub hosts: Vec<HostId>,
}

/// Why no host's value can be known: a broken document that could match
/// any host (a layer whose matcher cannot be read as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no host's value can be known: {} failed to load and could match any host",
    .documents.join(", ")
)]
pub struct Unknowable {
    /// `path (what)`, for each.
    pub documents: Vec<String>,
}

impl Hinted for Unknowable {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some("fix the errors above; `datum check` lists every problem in the fleet".into())
    }
}

/// Refuses a fleet-wide question while a broken document could match any
/// host: every answer would be a guess.
pub fn require_knowable(fleet: &Fleet) -> Result<(), Unknowable> {
    let documents: Vec<String> = fleet
        .blocking_every_host()
        .iter()
        .map(|b| format!("{} ({})", b.path, b.what))
        .collect();
    if documents.is_empty() {
        Ok(())
    } else {
        Err(Unknowable { documents })
    }
}

/// Why a query names nothing some layer declares.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no layer declares {resource}")]
pub struct Undeclared {
    pub resource: ResourceId,
    /// The declared id nearest to it.
    pub nearest: Option<String>,
}

/// The declared id nearest to the one asked about.
impl Hinted for Undeclared {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(match &self.nearest {
            Some(n) => format!("did you mean {n}?").into(),
            None => "no layer declares any resource yet".into(),
        })
    }
}

/// Asks every host in `hosts` for one field of one resource.
pub fn query<'f>(
    fleet: &'f Fleet,
    all: &'f FleetResolution,
    resource: &ResourceId,
    field: Field,
    hosts: &[HostId],
) -> Result<QueryResult<'f>, Undeclared> {
    let undeclared = || Undeclared {
        resource: resource.clone(),
        nearest: fleet
            .nearest_declared(resource)
            .map(|r| fleet.resources.text(r).to_owned()),
    };
    let id = fleet.resources.lookup(resource).ok_or_else(undeclared)?;
    let declared = fleet
        .layers
        .iter()
        .any(|l| l.resources.iter().any(|r| r.id == id));
    if !declared {
        return Err(undeclared());
    }
    // One answer for every host whose layers mark the content sensitive
    // or not: see `crate::sensitive`.
    let hidden = all.sensitive.hides(id, field);
    let mut by_resolution: Vec<Option<Answer<'f>>> = vec![None; all.resolutions.len()];
    let rows = hosts
        .iter()
        .map(|&h| {
            let answer = match all.by_host[h.0 as usize] {
                None => Answer::HeldBack,
                Some(i) => by_resolution[i as usize]
                    .get_or_insert_with(|| {
                        answer(fleet, &all.resolutions[i as usize], id, field, hidden)
                    })
                    .clone(),
            };
            (h, answer)
        })
        .collect();
    Ok(QueryResult {
        fleet,
        subject: Subject::Field(id, field),
        rows,
    })
}

fn answer<'f>(
    fleet: &'f Fleet,
    res: &'f Resolution,
    id: ResId,
    field: Field,
    hidden: bool,
) -> Answer<'f> {
    if !res.is_ok() {
        return Answer::Fails;
    }
    let Some(r) = res.resource(fleet, id) else {
        return Answer::NoResource;
    };
    // A File's rendered template is its content, chosen by the layer
    // that set `template`.
    if field == Field::Content
        && let Some(x) = res.rendered(id)
    {
        let layers = r.field(Field::Template).map(|t| t.winner().layer);
        return Answer::Value {
            value: if hidden {
                Shown::Sensitive
            } else {
                Shown::Value(&x.content)
            },
            layers: layers.into_iter().collect(),
        };
    }
    let Some(f) = r.field(field) else {
        return Answer::Unset { layers: Vec::new() };
    };
    if field.is_set() {
        if f.entries().is_empty() {
            return Answer::Unset {
                layers: r.unset_by(f).map(|c| c.layer).into_iter().collect(),
            };
        }
        let mut layers: Vec<LayerId> = f
            .entries()
            .iter()
            .flat_map(|e| e.by.iter().map(|c| c.layer))
            .collect();
        layers.sort_unstable();
        layers.dedup();
        let ids = f
            .entries()
            .iter()
            .map(|e| fleet.resources.text(e.id))
            .collect();
        return Answer::Value {
            value: Shown::Refs(ids),
            layers,
        };
    }
    let winner = f.winner();
    match f.value(fleet) {
        None => Answer::Unset {
            layers: vec![winner.layer],
        },
        Some(_) if hidden => Answer::Value {
            value: Shown::Sensitive,
            layers: vec![winner.layer],
        },
        Some(v) => Answer::Value {
            value: Shown::Value(v),
            layers: vec![winner.layer],
        },
    }
}

impl<'f> Answer<'f> {
    /// What groups hosts in a summary: the answer without its layers.
    fn kind(&self) -> Answer<'f> {
        match self {
            Answer::Value { value, .. } => Answer::Value {
                value: value.clone(),
                layers: Vec::new(),
            },
            Answer::Unset { .. } => Answer::Unset { layers: Vec::new() },
            other => other.clone(),
        }
    }

    pub(crate) fn layers(&self) -> Vec<LayerId> {
        match self {
            Answer::Value { layers, .. } | Answer::Unset { layers } => layers.clone(),
            _ => Vec::new(),
        }
    }

    /// The machine-readable state.
    pub fn state(&self) -> &'static str {
        match self {
            Answer::Value { .. } => "set",
            Answer::Unset { .. } => "unset",
            Answer::NoResource => "no_resource",
            Answer::Fails => "fails",
            Answer::HeldBack => "held_back",
        }
    }
}

impl<'f> QueryResult<'f> {
    /// Hosts grouped by answer: values first, most hosts first (ties by
    /// value), then unset, lacking the resource, failing, held back.
    pub fn summary(&self) -> Vec<Group<'f>> {
        let mut groups: BTreeMap<Answer<'f>, (Vec<LayerId>, Vec<HostId>)> = BTreeMap::new();
        for (h, a) in &self.rows {
            let g = groups.entry(a.kind()).or_default();
            g.0.extend(a.layers());
            g.1.push(*h);
        }
        let mut out: Vec<Group<'f>> = groups
            .into_iter()
            .map(|(kind, (mut layers, hosts))| {
                layers.sort_unstable();
                layers.dedup();
                let answer = match kind {
                    Answer::Value { value, .. } => Answer::Value { value, layers },
                    Answer::Unset { .. } => Answer::Unset { layers },
                    other => other,
                };
                Group { answer, hosts }
            })
            .collect();
        // The BTreeMap already orders by kind, then value; among values, more hosts first.
        out.sort_by(|a, b| {
            let rank = |g: &Group<'_>| matches!(g.answer, Answer::Value { .. });
            rank(b).cmp(&rank(a)).then_with(|| {
                if rank(a) {
                    b.hosts.len().cmp(&a.hosts.len())
                } else {
                    std::cmp::Ordering::Equal
                }
            })
        });
        out
    }

    pub(crate) fn resource_text(&self) -> &'f str {
        match &self.subject {
            Subject::Field(id, _) => self.fleet.resources.text(*id),
            Subject::Var(_) => "vars",
        }
    }

    fn answer_tree(&self, answer: &Answer<'f>) -> Tree<'f> {
        let fleet = self.fleet;
        let mut t = Tree::map().with("state", Tree::str(answer.state()));
        if let Answer::Value { value, .. } = answer {
            let (v, redacted) = match value {
                Shown::Value(v) => (value_tree(v), false),
                Shown::Refs(ids) => (Tree::strs(ids.iter().copied()), false),
                Shown::Sensitive => (Tree::Null, true),
                Shown::Var(v) => (v.tree(), false),
            };
            t.push("value", v);
            t.push("redacted", Tree::Bool(redacted));
        }
        t.push(
            "layers",
            Tree::strs(
                answer
                    .layers()
                    .into_iter()
                    .map(|l| fleet.layer(l).display.as_str()),
            ),
        );
        t
    }

    /// `form` is `hosts` (one answer per host) or `summary` (one per group).
    fn head(&self, form: &'static str) -> Tree<'f> {
        let t = Tree::document("Query").with("form", Tree::str(form));
        match &self.subject {
            Subject::Field(_, field) => t
                .with("resource", Tree::str(self.resource_text()))
                .with("field", Tree::str(field.name())),
            Subject::Var(name) => t.with("var", Tree::str(format!("vars.{name}"))),
        }
    }

    /// Every host's answer as data.
    pub fn tree(&self) -> Tree<'f> {
        let hosts = self
            .rows
            .iter()
            .map(|(h, a)| {
                let mut t = Tree::map().with("host", Tree::str(&*self.fleet.host(*h).name));
                if let Tree::Map(entries) = self.answer_tree(a) {
                    for (k, v) in entries {
                        t.push(k, v);
                    }
                }
                t
            })
            .collect();
        self.head("hosts").with("hosts", Tree::List(hosts))
    }

    /// The groups as data, each with every host's name.
    pub fn summary_tree(&self) -> Tree<'f> {
        let groups = self
            .summary()
            .into_iter()
            .map(|g| {
                let mut t = self.answer_tree(&g.answer);
                t.push("count", Tree::Int(g.hosts.len() as i64));
                t.push(
                    "hosts",
                    Tree::strs(
                        g.hosts
                            .iter()
                            .map(|&h| Cow::Borrowed(&*self.fleet.host(h).name)),
                    ),
                );
                t
            })
            .collect();
        self.head("summary").with("groups", Tree::List(groups))
    }
}
