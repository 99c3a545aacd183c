//! The fold's verdict on each field, stored once: every contribution with
//! what became of it, where the field ended up, the sides of any conflict,
//! the entries of a set kept and dropped, and the `null` that unset it.
//! Explain, query, diff, the report and the checks read these; none of them
//! works any of it out again.
//!
//! A resource keeps the contributions to all its fields in one buffer (and
//! their roles in a second, parallel one), each field a range of it, so the
//! fold allocates per resource rather than per field.

use crate::fleet::{Fleet, LayerId, ResId, Setting};
use crate::schema::{Field, Value};

use super::{Contrib, Problem};

/// What became of one contribution to a field.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
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
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
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

/// An entry of `requires` or `restart_on`, kept or dropped by the fold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetEntry {
    pub id: ResId,
    /// The layers that listed it, in fold order.
    pub by: Box<[Contrib]>,
}

/// Marks "no contribution" in a `u32` index.
pub(super) const NONE: u32 = u32::MAX;

/// One field of one resource after the fold. Its contributions live in the
/// resource: [`ResolvedResource::played`] and the methods beside it.
#[derive(Clone, Debug)]
pub struct ResolvedField {
    pub field: Field,
    /// Where the field ended up.
    pub state: State,
    /// Whether some precedence group disagrees (at the top or below it).
    pub(super) conflicted: bool,
    /// The last contribution in fold order: the one whose value or `null` stands.
    pub(super) winner: Contrib,
    /// Its contributions are the resource's `start..start + len`.
    pub(super) start: u32,
    pub(super) len: u32,
    /// Where the winning precedence group starts among them.
    pub(super) top: u32,
    /// For a set, among them: the `null` that stands or drops the entries
    /// below it (the last at the highest precedence that wrote one); [`NONE`].
    pub(super) unset_by: u32,
    /// For a set: the entries kept (`..kept`), then those dropped, each
    /// part sorted by id.
    pub(super) entries: Box<[SetEntry]>,
    pub(super) kept: u32,
}

impl ResolvedField {
    /// The contribution whose value (or `null`) stands: the last of the winning group.
    pub fn winner(&self) -> Contrib {
        self.winner
    }

    /// The final value of a scalar field; `None` when unset (or a set).
    pub fn value<'f>(&self, fleet: &'f Fleet) -> Option<&'f Value> {
        match &fleet.setting(self.winner).setting {
            Setting::Value(v) => Some(v),
            _ => None,
        }
    }

    /// Whether layers of one precedence disagree on the field, at the
    /// winning precedence or below it; either fails the host.
    pub fn has_conflict(&self) -> bool {
        self.conflicted
    }

    /// For `requires` and `restart_on`: the entries kept, sorted by id.
    pub fn entries(&self) -> &[SetEntry] {
        &self.entries[..self.kept as usize]
    }

    /// For `requires` and `restart_on`: entries listed below a `null` of
    /// higher precedence and kept by no other layer, sorted by id.
    pub fn dropped(&self) -> &[SetEntry] {
        &self.entries[self.kept as usize..]
    }

    fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

#[derive(Clone, Debug)]
pub struct ResolvedResource {
    pub id: ResId,
    /// The layers declaring it, in fold order, with the resource's index in each.
    pub declared_by: Box<[(LayerId, u32)]>,
    /// Fields some layer mentions, in schema order.
    pub fields: Box<[ResolvedField]>,
    /// Conflicts among its fields (also in the resolution's problems).
    pub problems: Box<[Problem]>,
    /// Every field's contributions, field after field, each in fold order.
    pub(super) contribs: Box<[Contrib]>,
    /// The role of each of `contribs`.
    pub(super) roles: Box<[Role]>,
    /// Precedence groups that disagree, as ranges of `contribs`, in order.
    pub(super) conflicts: Box<[(u32, u32)]>,
}

impl ResolvedResource {
    pub fn field(&self, field: Field) -> Option<&ResolvedField> {
        self.fields.iter().find(|f| f.field == field)
    }

    /// The final value of a scalar field.
    pub fn value<'f>(&self, fleet: &'f Fleet, field: Field) -> Option<&'f Value> {
        self.field(field)?.value(fleet)
    }

    /// The entries of `requires` or `restart_on`.
    pub fn entries(&self, field: Field) -> &[SetEntry] {
        self.field(field).map_or(&[], |f| f.entries())
    }

    /// What the resource manages: its `path`, or its `name` (the title by default).
    pub fn summary<'f>(&self, fleet: &'f Fleet) -> Option<&'f str> {
        let kind = fleet.resources.get(self.id).kind;
        match self.value(fleet, kind.summary_field()) {
            Some(Value::Str(s)) => Some(s),
            // An Exec manages no named thing: its title is all there is.
            _ if kind.is_path() || !kind.has(Field::Name) => None,
            _ => Some(&fleet.resources.get(self.id).title),
        }
    }

    /// Every layer that set one of its fields, in fold order.
    pub fn contribs(&self, f: &ResolvedField) -> &[Contrib] {
        &self.contribs[f.range()]
    }

    /// Every contribution to one of its fields, in fold order, with what became of it.
    pub fn played<'r>(
        &'r self,
        f: &ResolvedField,
    ) -> impl DoubleEndedIterator<Item = (Contrib, Role)> + 'r {
        let range = f.range();
        self.contribs[range.clone()]
            .iter()
            .copied()
            .zip(self.roles[range].iter().copied())
    }

    /// Layers at the winning precedence that set the same value earlier in fold order.
    pub fn agreeing(&self, f: &ResolvedField) -> &[Contrib] {
        let all = self.contribs(f);
        &all[f.top as usize..all.len() - 1]
    }

    /// Contributions below the winning precedence, highest first.
    pub fn displaced(&self, f: &ResolvedField) -> impl Iterator<Item = Contrib> + '_ {
        self.contribs(f)[..f.top as usize].iter().rev().copied()
    }

    /// The sides of each precedence group that disagrees on a field,
    /// lowest precedence first.
    pub fn conflicts<'r>(&'r self, f: &ResolvedField) -> impl Iterator<Item = &'r [Contrib]> + 'r {
        let (lo, hi) = (f.start, f.start + f.len);
        let groups: &[(u32, u32)] = if f.conflicted { &self.conflicts } else { &[] };
        groups
            .iter()
            .filter(move |&&(s, _)| lo <= s && s < hi)
            .map(|&(s, e)| &self.contribs[s as usize..e as usize])
    }

    /// For `requires` and `restart_on`: the `null` that stands, or that
    /// dropped the entries below it.
    pub fn unset_by(&self, f: &ResolvedField) -> Option<Contrib> {
        (f.unset_by != NONE).then(|| self.contribs(f)[f.unset_by as usize])
    }

    /// For `requires` and `restart_on`: the precedence of that `null`;
    /// entries listed below it were dropped.
    pub fn unset_floor(&self, fleet: &Fleet, f: &ResolvedField) -> Option<i32> {
        self.unset_by(f).map(|c| fleet.precedence(c))
    }
}
