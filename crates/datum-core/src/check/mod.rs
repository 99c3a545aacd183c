//! `check`: every host resolved, every problem reported once with the hosts
//! it hits, the warnings of [`rules`], and a count for the closing line.

mod rules;

use std::collections::BTreeMap;

use crate::diagnostic::{Diagnostic, Severity};
use crate::fleet::{Fleet, HostId};
use crate::report::problem_diagnostic;
use crate::resolve::{FleetResolution, Problem};

/// The outcome of checking a fleet.
#[derive(Debug)]
pub struct CheckReport {
    /// Load errors, then resolution errors, then warnings; each group sorted by place.
    pub diagnostics: Vec<Diagnostic>,
    pub hosts: usize,
    pub layers: usize,
    /// Hosts not resolved because documents they depend on failed to load.
    pub held_back: Vec<String>,
}

impl CheckReport {
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn warnings(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }

    /// The closing line: `checked 6 hosts against 7 layers: 2 errors, 1 warning`.
    pub fn summary(&self) -> String {
        format!(
            "checked {} against {}: {}, {}",
            count(self.hosts, "host"),
            count(self.layers, "layer"),
            count_or_no(self.errors(), "error"),
            count_or_no(self.warnings(), "warning"),
        )
    }
}

pub fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn count_or_no(n: usize, what: &str) -> String {
    if n == 0 {
        format!("no {what}s")
    } else {
        count(n, what)
    }
}

/// Groups every host's problems so each distinct one is reported once,
/// naming the hosts it hits (in name order).
pub fn problems_by_host<'f>(
    fleet: &'f Fleet,
    all: &'f FleetResolution,
) -> BTreeMap<&'f Problem, Vec<&'f str>> {
    let mut grouped: BTreeMap<&Problem, Vec<&str>> = BTreeMap::new();
    for (h, host) in fleet.hosts.iter().enumerate() {
        if let Some(res) = all.of(HostId(h as u32)) {
            for p in res.problems.iter() {
                grouped.entry(p).or_default().push(&host.name);
            }
        }
    }
    grouped
}

/// Checks a loaded fleet whose hosts have been resolved.
pub fn check(fleet: &Fleet, all: &FleetResolution) -> CheckReport {
    let mut diagnostics = fleet.diagnostics.clone();
    let mut problems: Vec<Diagnostic> = problems_by_host(fleet, all)
        .into_iter()
        .map(|(p, hosts)| problem_diagnostic(fleet, p, &hosts))
        .collect();
    problems.sort_by(|a, b| a.sort_key(&fleet.files).cmp(&b.sort_key(&fleet.files)));
    diagnostics.extend(problems);
    let mut warnings = rules::warnings(fleet, all);
    warnings.sort_by(|a, b| a.sort_key(&fleet.files).cmp(&b.sort_key(&fleet.files)));
    warnings.dedup();
    diagnostics.extend(warnings);
    let held_back = fleet
        .hosts
        .iter()
        .enumerate()
        .filter(|(h, _)| all.of(HostId(*h as u32)).is_none())
        .map(|(_, host)| host.name.to_string())
        .collect();
    CheckReport {
        diagnostics,
        hosts: fleet.hosts.len(),
        layers: fleet.layers.len(),
        held_back,
    }
}
