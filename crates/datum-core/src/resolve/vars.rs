//! Folding `vars:` for one set of matching layers, exactly as a resource
//! field folds: the highest precedence wins, layers of one precedence that
//! disagree are a conflict whatever any other layer does, `null` unsets,
//! and every contribution keeps what became of it.

use crate::fleet::{Fleet, LayerId, VarContrib};
use crate::template::Var;
use crate::vars::{VarSetting, VarValue};

use super::{Problem, Role, State};

/// One var after the fold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedVar {
    pub name: Box<str>,
    pub state: State,
    /// Every contribution in fold order, with what became of it.
    pub played: Box<[(VarContrib, Role)]>,
    /// Where the winning precedence group starts in `played`.
    top: u32,
    /// Precedence groups that disagree, as ranges of `played`, lowest first.
    conflicts: Box<[(u32, u32)]>,
}

/// Every var of a set of layers, sorted by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedVars {
    pub vars: Box<[ResolvedVar]>,
}

impl ResolvedVars {
    pub fn get(&self, name: &str) -> Option<&ResolvedVar> {
        self.vars
            .binary_search_by(|v| (*v.name).cmp(name))
            .ok()
            .map(|i| &self.vars[i])
    }

    /// Every var as a template sees it, sorted by name: its value, or
    /// that its layers conflict (a var no layer leaves set is left out).
    pub fn for_templates<'f>(&'f self, fleet: &'f Fleet) -> Vec<(&'f str, Var<'f>)> {
        self.vars
            .iter()
            .filter_map(|v| match v.value(fleet) {
                Some(x) => Some((&*v.name, Var::Value(x))),
                None if v.state == State::Conflict => Some((&*v.name, Var::Conflict)),
                None => None,
            })
            .collect()
    }

    /// The vars that stand, with their values, sorted by name.
    pub fn values<'f>(&self, fleet: &'f Fleet) -> impl Iterator<Item = (&str, &'f VarValue)> {
        self.vars
            .iter()
            .filter_map(move |v| Some((&*v.name, v.value(fleet)?)))
    }
}

impl ResolvedVar {
    /// The contribution whose value (or `null`) stands: the last in fold order.
    pub fn winner(&self) -> VarContrib {
        self.played[self.played.len() - 1].0
    }

    /// The final value; `None` when unset or in conflict.
    pub fn value<'f>(&self, fleet: &'f Fleet) -> Option<&'f VarValue> {
        if self.state != State::Set {
            return None;
        }
        match &fleet.var(self.winner()).setting {
            VarSetting::Value(v) => Some(v),
            VarSetting::Unset => None,
        }
    }

    /// Layers at the winning precedence that set the same value earlier in fold order.
    pub fn agreeing(&self) -> impl Iterator<Item = VarContrib> + '_ {
        self.played[self.top as usize..self.played.len() - 1]
            .iter()
            .map(|&(c, _)| c)
    }

    /// Contributions below the winning precedence, highest first.
    pub fn displaced(&self) -> impl Iterator<Item = VarContrib> + '_ {
        self.played[..self.top as usize]
            .iter()
            .rev()
            .map(|&(c, _)| c)
    }

    /// The sides of each precedence group that disagrees, lowest first.
    pub fn conflicts(&self) -> impl Iterator<Item = Vec<VarContrib>> + '_ {
        self.conflicts.iter().map(|&(s, e)| {
            self.played[s as usize..e as usize]
                .iter()
                .map(|&(c, _)| c)
                .collect()
        })
    }

    pub fn has_conflict(&self) -> bool {
        !self.conflicts.is_empty()
    }
}

/// Folds the vars of `layers` (in fold order); each conflict is also
/// pushed to `problems`.
pub(super) fn fold_vars(
    fleet: &Fleet,
    layers: &[LayerId],
    problems: &mut Vec<Problem>,
) -> ResolvedVars {
    let mut all: Vec<(&str, VarContrib)> = Vec::new();
    for &l in layers {
        for (i, v) in fleet.layer(l).vars.iter().enumerate() {
            all.push((
                &v.name,
                VarContrib {
                    layer: l,
                    var: i as u32,
                },
            ));
        }
    }
    if all.is_empty() {
        return ResolvedVars::default();
    }
    // Stable: each name's contributions stay in fold order.
    all.sort_by(|a, b| a.0.cmp(b.0));
    let vars = all
        .chunk_by(|a, b| a.0 == b.0)
        .map(|run| {
            let contribs: Vec<VarContrib> = run.iter().map(|&(_, c)| c).collect();
            fold_var(fleet, run[0].0, &contribs, problems)
        })
        .collect();
    ResolvedVars { vars }
}

fn fold_var(
    fleet: &Fleet,
    name: &str,
    contribs: &[VarContrib],
    problems: &mut Vec<Problem>,
) -> ResolvedVar {
    let prec = |c: VarContrib| fleet.layer(c.layer).precedence;
    let mut conflicts = Vec::new();
    let mut top = 0;
    let mut start = 0;
    while start < contribs.len() {
        let p = prec(contribs[start]);
        let end = start
            + contribs[start..]
                .iter()
                .take_while(|&&c| prec(c) == p)
                .count();
        let group = &contribs[start..end];
        let first = &fleet.var(group[0]).setting;
        if group[1..].iter().any(|&c| fleet.var(c).setting != *first) {
            conflicts.push((start as u32, end as u32));
            problems.push(Problem::VarConflict {
                name: name.into(),
                sides: group.into(),
            });
        }
        top = start;
        start = end;
    }
    let last = contribs.len() - 1;
    let stands = match fleet.var(contribs[last]).setting {
        VarSetting::Unset => Role::Unset,
        VarSetting::Value(_) => Role::Set,
    };
    let mut roles: Vec<Role> = (0..contribs.len())
        .map(|i| {
            if i == last {
                stands
            } else if i >= top {
                Role::Agreed
            } else {
                Role::Overridden
            }
        })
        .collect();
    for &(s, e) in &conflicts {
        roles[s as usize..e as usize].fill(Role::Conflict);
    }
    let state = if roles[last] == Role::Conflict {
        State::Conflict
    } else if stands == Role::Unset {
        State::Unset
    } else {
        State::Set
    };
    ResolvedVar {
        name: name.into(),
        state,
        played: contribs.iter().copied().zip(roles).collect(),
        top: top as u32,
        conflicts: conflicts.into_boxed_slice(),
    }
}
