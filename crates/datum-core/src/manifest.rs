//! A host's manifest: a view over a resolution that only shows final values,
//! and its canonical serialisation (YAML or JSON, byte-identical for the same
//! revision).

use std::borrow::Cow;

use crate::emit::Tree;
use crate::fleet::{Fleet, HostId};
use crate::resolve::{Resolution, ResolvedField, ResolvedResource};
use crate::schema::{Field, Kind, ResourceId, Value};
use crate::template::Rendered;

/// What a host receives.
#[derive(Clone, Copy)]
pub struct Manifest<'f> {
    pub fleet: &'f Fleet,
    pub host: HostId,
    pub resolution: &'f Resolution,
}

/// A field's final value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldOut<'f> {
    Value(&'f Value),
    /// `requires` or `restart_on`: resource ids, sorted.
    Refs(Vec<&'f str>),
}

/// One resource of a manifest.
#[derive(Clone, Copy)]
pub struct Resource<'f> {
    fleet: &'f Fleet,
    pub resolved: &'f ResolvedResource,
    /// A File's content rendered from its `template` for this host.
    pub rendered: Option<&'f Rendered>,
}

impl<'f> Manifest<'f> {
    /// A view over a resolution that has no problems.
    pub fn new(fleet: &'f Fleet, host: HostId, resolution: &'f Resolution) -> Manifest<'f> {
        debug_assert!(resolution.is_ok());
        Manifest {
            fleet,
            host,
            resolution,
        }
    }

    pub fn host_name(&self) -> &'f str {
        &self.fleet.host(self.host).name
    }

    pub fn resources(&self) -> impl Iterator<Item = Resource<'f>> + 'f {
        let fleet = self.fleet;
        let resolution = self.resolution;
        resolution.resources.iter().map(move |resolved| Resource {
            fleet,
            resolved,
            rendered: resolution.rendered(resolved.id),
        })
    }

    /// The manifest as a tree, ready to write as YAML or JSON.
    pub fn tree(&self) -> Tree<'f> {
        let fleet = self.fleet;
        let labels = fleet
            .labels_of(self.host)
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), Tree::str(v)))
            .collect();
        let layers = self
            .resolution
            .layers
            .iter()
            .map(|&l| Tree::str(fleet.layer(l).display.as_str()))
            .collect();
        let resources = self
            .resources()
            .map(|r| (Cow::Borrowed(r.id_text()), r.tree()))
            .collect();
        let mut tree = Tree::document("Manifest")
            .with("host", Tree::str(self.host_name()))
            .with("labels", Tree::Map(labels));
        // The labels tied to a fact, so a host applying this manifest
        // without the fleet (a bundle) checks them as apply does.
        let tied = fleet.tied(self.host);
        if !tied.is_empty() {
            let facts = tied
                .into_iter()
                .map(|t| (Cow::Owned(t.key), Tree::Str(Cow::Owned(t.fact))))
                .collect();
            tree.push("label_facts", Tree::Map(facts));
        }
        tree.with("layers", Tree::List(layers))
            .with("resources", Tree::Map(resources))
    }
}

impl<'f> Resource<'f> {
    pub fn id(&self) -> &'f ResourceId {
        self.fleet.resources.get(self.resolved.id)
    }

    pub fn id_text(&self) -> &'f str {
        self.fleet.resources.text(self.resolved.id)
    }

    pub fn kind(&self) -> Kind {
        self.id().kind
    }

    /// The fields that are set, in schema order; a File's rendered
    /// template is its `content`, right after `template`.
    pub fn fields(&self) -> impl Iterator<Item = (Field, FieldOut<'f>)> + 'f {
        let fleet = self.fleet;
        let rendered = self.rendered;
        self.resolved.fields.iter().flat_map(move |f| {
            let own = Self::field_out(fleet, f);
            let content = (f.field == Field::Template)
                .then(|| rendered.map(|r| (Field::Content, FieldOut::Value(&r.content))))
                .flatten();
            own.into_iter().chain(content)
        })
    }

    fn field_out(fleet: &'f Fleet, f: &'f ResolvedField) -> Option<(Field, FieldOut<'f>)> {
        {
            if f.field.is_set() {
                if f.entries().is_empty() {
                    return None;
                }
                let ids = f
                    .entries()
                    .iter()
                    .map(|e| fleet.resources.text(e.id))
                    .collect();
                Some((f.field, FieldOut::Refs(ids)))
            } else {
                f.value(fleet).map(|v| (f.field, FieldOut::Value(v)))
            }
        }
    }

    pub fn value(&self, field: Field) -> Option<&'f Value> {
        match self.rendered {
            Some(r) if field == Field::Content => Some(&r.content),
            _ => self.resolved.value(self.fleet, field),
        }
    }

    pub fn str(&self, field: Field) -> Option<&'f str> {
        self.value(field).and_then(Value::as_str)
    }

    /// Ids listed in `requires` or `restart_on`.
    pub fn refs(&self, field: Field) -> Vec<&'f ResourceId> {
        self.resolved
            .entries(field)
            .iter()
            .map(|e| self.fleet.resources.get(e.id))
            .collect()
    }

    /// The name a Package, Service, User or Group manages: `name`, else the title.
    pub fn name(&self) -> &'f str {
        self.str(Field::Name).unwrap_or(&self.id().title)
    }

    /// The SHA-256 of a File's `source` payload.
    pub fn source_sha256(&self) -> Option<&'f str> {
        let source = self.str(Field::Source)?;
        self.fleet.sources.get(source).map(|s| s.sha256.as_str())
    }

    /// The SHA-256 of a File's `secret` ciphertext (never of its plaintext,
    /// which nothing before apply sees).
    pub fn secret_sha256(&self) -> Option<&'f str> {
        let secret = self.str(Field::Secret)?;
        self.fleet.sources.get(secret).map(|s| s.sha256.as_str())
    }

    pub fn tree(&self) -> Tree<'f> {
        let mut t = Tree::map();
        for (field, value) in self.fields() {
            let v = match value {
                FieldOut::Value(v) => value_tree(v),
                FieldOut::Refs(ids) => Tree::strs(ids),
            };
            t.push(field.name(), v);
            if field == Field::Source
                && let Some(sha) = self.source_sha256()
            {
                t.push("source_sha256", Tree::str(sha));
            }
            if field == Field::Content
                && let Some(r) = self.rendered
            {
                t.push("content_sha256", Tree::str(r.sha256.as_str()));
            }
            if field == Field::Secret
                && let Some(sha) = self.secret_sha256()
            {
                t.push("secret_sha256", Tree::str(sha));
            }
        }
        t
    }
}

pub fn value_tree(v: &Value) -> Tree<'_> {
    match v {
        Value::Str(s) => Tree::str(&**s),
        Value::Int(i) => Tree::Int(*i),
        Value::Bool(b) => Tree::Bool(*b),
        Value::List(items) => Tree::strs(items.iter().map(|s| &**s)),
    }
}
