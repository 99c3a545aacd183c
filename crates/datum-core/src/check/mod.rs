//! `check`: every host resolved, every problem reported once with the hosts
//! it hits, the warnings of [`rules`], and the report as a closing line and
//! as the `--format json` document.

mod rules;

use std::collections::BTreeMap;

use crate::diagnostic::{Diagnostic, Severity};
use crate::emit::{self, Tree};
use crate::fleet::{Fleet, HostId};
use crate::report::{count, host_list, problem_diagnostic};
use crate::resolve::{FleetResolution, Problem};
use crate::source::Files;

/// The outcome of checking a fleet.
#[derive(Debug)]
pub struct CheckReport {
    /// Load errors, then resolution errors, then warnings; each group sorted by place.
    pub diagnostics: Vec<Diagnostic>,
    pub hosts: usize,
    pub layers: usize,
    /// Hosts with no manifest because documents they depend on have errors
    /// (checked all the same when those are layers with resources set aside).
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

    /// Adds diagnostics found outside the core (the secrets' recipients,
    /// from `datum-secrets`): errors after the errors, warnings among the
    /// warnings, each group kept sorted by place.
    pub fn add(&mut self, files: &Files, more: Vec<Diagnostic>) {
        let (mut errors, mut warnings): (Vec<Diagnostic>, Vec<Diagnostic>) =
            std::mem::take(&mut self.diagnostics)
                .into_iter()
                .partition(Diagnostic::is_error);
        let (new_errors, new_warnings): (Vec<Diagnostic>, Vec<Diagnostic>) =
            more.into_iter().partition(Diagnostic::is_error);
        errors.extend(new_errors);
        warnings.extend(new_warnings);
        warnings.sort_by(|a, b| a.sort_key(files).cmp(&b.sort_key(files)));
        errors.extend(warnings);
        self.diagnostics = errors;
    }

    /// `--deny-warnings`: every warning counts as an error.
    pub fn deny_warnings(&mut self) {
        for d in &mut self.diagnostics {
            d.severity = Severity::Error;
        }
    }

    /// The note naming the hosts broken documents held back, if any.
    pub fn held_back_note(&self) -> Option<String> {
        if self.held_back.is_empty() {
            return None;
        }
        let names: Vec<&str> = self.held_back.iter().map(String::as_str).collect();
        Some(format!(
            "held back, no manifest until the errors in documents they depend on are fixed: {}",
            host_list(&names)
        ))
    }

    /// The report as one JSON document (`type: Check`): the counts, the
    /// held-back hosts, every diagnostic and the closing line.
    pub fn tree<'a>(&'a self, files: &'a Files) -> Tree<'a> {
        Tree::document("Check")
            .with(
                "summary",
                Tree::map()
                    .with("hosts", Tree::Int(self.hosts as i64))
                    .with("layers", Tree::Int(self.layers as i64))
                    .with("errors", Tree::Int(self.errors() as i64))
                    .with("warnings", Tree::Int(self.warnings() as i64))
                    .with("held_back", Tree::Int(self.held_back.len() as i64)),
            )
            .with("summary_line", Tree::str(self.summary()))
            .with(
                "held_back",
                Tree::strs(self.held_back.iter().map(String::as_str)),
            )
            .with("codes", self.code_counts())
            .with(
                "diagnostics",
                Tree::List(
                    self.diagnostics
                        .iter()
                        .map(|d| emit::diagnostic(files, d))
                        .collect(),
                ),
            )
    }

    /// How many diagnostics of each code, for JSON: a list of
    /// `{"code": "unknown-field", "count": 3}` sorted by code name (codes
    /// are values, never keys, so every key stays snake_case).
    fn code_counts(&self) -> Tree<'static> {
        let mut counts: BTreeMap<&'static str, i64> = BTreeMap::new();
        for d in &self.diagnostics {
            *counts.entry(d.code.as_str()).or_default() += 1;
        }
        Tree::List(
            counts
                .into_iter()
                .map(|(code, n)| {
                    Tree::map()
                        .with("code", Tree::str(code))
                        .with("count", Tree::Int(n))
                })
                .collect(),
        )
    }

    /// The closing line: `checked 6 hosts against 7 layers: 2 errors, 1 warning`.
    pub fn summary(&self) -> String {
        let (checked, [(_, errors), (_, warnings)]) = self.tally();
        format!("{checked}: {errors}, {warnings}")
    }

    /// The closing line in parts: what was checked (`checked 6 hosts
    /// against 7 layers`), then the errors and the warnings, each counted
    /// and worded (`2 errors`, `no warnings`).
    pub fn tally(&self) -> (String, [(usize, String); 2]) {
        let checked = format!(
            "checked {} against {}",
            count(self.hosts, "host"),
            count(self.layers, "layer")
        );
        let (errors, warnings) = (self.errors(), self.warnings());
        (
            checked,
            [
                (errors, count_or_no(errors, "error")),
                (warnings, count_or_no(warnings, "warning")),
            ],
        )
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

/// What loading and resolving found, without the warnings of [`rules`]:
/// the load diagnostics, then each distinct resolution problem once with
/// the hosts it hits, sorted by place. `check` and `render --all` report it.
pub fn errors(fleet: &Fleet, all: &FleetResolution) -> Vec<Diagnostic> {
    let mut diagnostics = fleet.diagnostics.clone();
    let mut problems: Vec<Diagnostic> = problems_by_host(fleet, all)
        .into_iter()
        .map(|(p, hosts)| problem_diagnostic(fleet, p, &hosts))
        .collect();
    problems.sort_by(|a, b| a.sort_key(&fleet.files).cmp(&b.sort_key(&fleet.files)));
    diagnostics.extend(problems);
    diagnostics
}

/// Checks a loaded fleet whose hosts have been resolved.
pub fn check(fleet: &Fleet, all: &FleetResolution) -> CheckReport {
    let mut diagnostics = errors(fleet, all);
    // The rollout declaration decides no manifest, so only `check` (and
    // `rollout plan`) report its errors, after the fleet's own.
    diagnostics.extend(crate::rollout::plan(fleet).problems);
    let mut warnings = rules::warnings(fleet, all);
    warnings.sort_by(|a, b| a.sort_key(&fleet.files).cmp(&b.sort_key(&fleet.files)));
    warnings.dedup();
    diagnostics.extend(warnings);
    let held_back = fleet
        .hosts
        .iter()
        .enumerate()
        .filter(|(h, _)| {
            let h = HostId(*h as u32);
            all.of(h).is_none() || !fleet.blockers(h).is_empty()
        })
        .map(|(_, host)| host.name.to_string())
        .collect();
    CheckReport {
        diagnostics,
        hosts: fleet.hosts.len(),
        layers: fleet.layers.len(),
        held_back,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::emit::write_json;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::testkit::{FLEET, host, layer};

    /// A conflict on web-001, db-001 held back by a layer with a resource
    /// in error (still one of the fleet's layers), and a layer no host
    /// matches (a warning).
    fn fleet() -> Fleet {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file(
                "hosts.yaml",
                host("web-001", "{role: web}") + &host("db-001", "{role: db}"),
            )
            .file(
                "a/layer.yaml",
                layer(10, "{role: web}", "  Package[px]:\n    version: '1'\n"),
            )
            .file(
                "b/layer.yaml",
                layer(10, "{role: web}", "  Package[px]:\n    version: '2'\n"),
            )
            .file(
                "c/layer.yaml",
                layer(10, "{role: db}", "  Package[py]:\n    ensure: instaled\n"),
            )
            .file("d/layer.yaml", layer(10, "{role: mail}", ""));
        load(&r).unwrap()
    }

    #[test]
    fn check_reports_the_errors_render_all_reports_then_the_warnings() {
        let fleet = fleet();
        let all = resolve_all(&fleet);
        let errors = errors(&fleet, &all);
        let codes: Vec<_> = errors.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::InvalidValue, Code::Conflict]);
        let report = check(&fleet, &all);
        assert_eq!(&report.diagnostics[..errors.len()], &errors[..]);
        let rest: Vec<_> = report.diagnostics[errors.len()..]
            .iter()
            .map(|d| (d.severity, d.code))
            .collect();
        assert_eq!(rest, [(Severity::Warning, Code::UncarriedLabel)]);
    }

    #[test]
    fn deny_warnings_counts_every_warning_as_an_error() {
        let fleet = fleet();
        let mut report = check(&fleet, &resolve_all(&fleet));
        assert_eq!((report.errors(), report.warnings()), (2, 1));
        report.deny_warnings();
        assert_eq!((report.errors(), report.warnings()), (3, 0));
        assert_eq!(
            report.summary(),
            "checked 2 hosts against 4 layers: 3 errors, no warnings"
        );
    }

    #[test]
    fn held_back_hosts_get_a_note_and_a_json_list() {
        let fleet = fleet();
        let report = check(&fleet, &resolve_all(&fleet));
        assert_eq!(report.held_back, ["db-001"]);
        assert_eq!(
            report.held_back_note().as_deref(),
            Some(
                "held back, no manifest until the errors in documents they depend on are fixed: db-001"
            )
        );
        let mut json = Vec::new();
        write_json(&mut json, &report.tree(&fleet.files)).unwrap();
        let json = String::from_utf8(json).unwrap();
        assert!(
            json.starts_with(
                "{\n  \"datum\": \"v1alpha1\",\n  \"type\": \"Check\",\n  \"summary\": {\n    \"hosts\": 2,\n    \"layers\": 4,\n    \"errors\": 2,\n    \"warnings\": 1,\n    \"held_back\": 1\n  },\n  \"summary_line\": \"checked 2 hosts against 4 layers: 2 errors, 1 warning\",\n  \"held_back\": [\n    \"db-001\"\n  ],\n  \"codes\": [\n    {\n      \"code\": \"conflict\",\n      \"count\": 1\n    },\n    {\n      \"code\": \"invalid-value\",\n      \"count\": 1\n    },\n    {\n      \"code\": \"uncarried-label\",\n      \"count\": 1\n    }\n  ],\n  \"diagnostics\": [\n"
            ),
            "{json}"
        );
        assert!(json.ends_with("  ]\n}\n"), "{json}");
    }
}
