//! One host, named by the operator, for the commands that work on one
//! (`render HOST`, `explain`, `apply`): its resolution with its problems as
//! diagnostics, or why it has none, as a value; the caller prints it.

use std::borrow::Cow;

use crate::diagnostic::Diagnostic;
use crate::fleet::{Fleet, HostId};
use crate::hint::Hinted;
use crate::report::count;
use crate::report::problem_diagnostic;
use crate::resolve::Resolution;
use crate::schema::suggest;

/// A host found and resolved, whether or not it resolves cleanly: explain
/// answers all the same, render and apply refuse it ([`Resolved::require_ok`]).
#[derive(Debug)]
pub struct Resolved {
    pub host: HostId,
    pub name: String,
    /// Problems and all.
    pub resolution: Resolution,
    /// The resolution's problems, drawn as diagnostics naming this host;
    /// empty when it resolves.
    pub problems: Vec<Diagnostic>,
    /// Errors in documents that do not touch this host.
    pub errors_elsewhere: usize,
    /// The broken documents that hold this host back (`path (what)`): it
    /// was resolved without them, for explain, and has no manifest.
    pub held_back: Vec<String>,
    /// What of them the resolution leaves out, for a note: whole documents
    /// that failed to load, or the fields in error of a layer loaded with
    /// resources set aside.
    pub left_out: Vec<String>,
}

impl Resolved {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.held_back.is_empty()
    }

    /// The error a host held back by broken documents ends with: it has
    /// no manifest, whatever it was explained as.
    pub fn held_back_error(&self) -> Option<HostError> {
        (!self.held_back.is_empty()).then(|| HostError::Blocked {
            name: self.name.clone(),
            documents: self.held_back.clone(),
            diagnostics: Vec::new(),
        })
    }

    /// Fails when the host does not resolve: it has no manifest.
    pub fn require_ok(&self) -> Result<(), DoesNotResolve> {
        if self.is_ok() {
            return Ok(());
        }
        Err(DoesNotResolve {
            host: self.name.clone(),
            errors: self.problems.len(),
        })
    }

    /// The warning that the fleet has errors elsewhere, when it does.
    pub fn elsewhere_warning(&self) -> Option<String> {
        (self.is_ok() && self.errors_elsewhere > 0).then(|| {
            format!(
                "{} elsewhere in the fleet, none touching {}; run `datum check` to see them",
                count(self.errors_elsewhere, "error"),
                self.name
            )
        })
    }
}

/// A host that resolves with problems (a conflict, a cycle), shown in
/// [`Resolved::problems`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{host} does not resolve: {}", count(*.errors, "error"))]
pub struct DoesNotResolve {
    pub host: String,
    /// How many problems it has.
    pub errors: usize,
}

impl Hinted for DoesNotResolve {}

/// Why a named host cannot be resolved at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// No document declares it.
    #[error("no host named `{name}` in this fleet")]
    Unknown {
        name: String,
        /// The nearest host name, when one is close enough to be a typo
        /// (the bound of [`crate::schema::suggest`]).
        nearest: Option<String>,
        /// Whether the fleet has any host at all.
        any: bool,
        /// Files that failed to load and may declare it.
        failed: Vec<String>,
    },
    /// The documents declaring it failed to load.
    #[error("host `{name}` did not load: its document in {} has errors", .paths.join(", "))]
    DidNotLoad {
        name: String,
        paths: Vec<String>,
        /// The fleet's load diagnostics, which say why.
        diagnostics: Vec<Diagnostic>,
    },
    /// Documents it depends on (a layer that may match it, datum.yaml)
    /// failed to load, so what it would receive is unknown.
    #[error(
        "{name} cannot be resolved: documents it depends on failed to load: {}",
        .documents.join(", ")
    )]
    Blocked {
        name: String,
        /// `path (what is wrong)`, for each.
        documents: Vec<String>,
        /// The fleet's load diagnostics, which say why.
        diagnostics: Vec<Diagnostic>,
    },
}

impl Hinted for HostError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(match self {
            HostError::Unknown { failed, .. } if !failed.is_empty() => format!(
                "{} failed to load and may declare it: fix {} first; `datum check` lists every problem",
                failed.join(", "),
                if failed.len() == 1 { "it" } else { "them" }
            )
            .into(),
            HostError::Unknown {
                nearest: Some(near),
                ..
            } => format!("the nearest host name is `{near}`; `datum hosts` lists them all").into(),
            HostError::Unknown {
                nearest: None,
                any: true,
                ..
            } => "no host name is close to it; `datum hosts` lists them all".into(),
            HostError::Unknown {
                nearest: None,
                any: false,
                ..
            } => "the fleet has no hosts yet: a Host document declares one".into(),
            HostError::DidNotLoad { .. } | HostError::Blocked { .. } => {
                "fix the errors above; `datum check` lists every problem in the fleet".into()
            }
        })
    }
}

impl HostError {
    /// The diagnostics to show before the error: the broken documents.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            HostError::Unknown { .. } => &[],
            HostError::DidNotLoad { diagnostics, .. } | HostError::Blocked { diagnostics, .. } => {
                diagnostics
            }
        }
    }

    /// Whether the name itself found no loaded host (as opposed to a host
    /// that broken documents hold back).
    pub fn is_not_found(&self) -> bool {
        !matches!(self, HostError::Blocked { .. })
    }
}

/// The host named `name`, or why no loaded host has that name.
pub fn find(fleet: &Fleet, name: &str) -> Result<HostId, HostError> {
    if let Some(id) = fleet.host_id(name) {
        return Ok(id);
    }
    if let Some(docs) = fleet.broken_host(name) {
        return Err(HostError::DidNotLoad {
            name: name.to_owned(),
            paths: docs.iter().map(|d| d.path.clone()).collect(),
            diagnostics: fleet.diagnostics.clone(),
        });
    }
    Err(HostError::Unknown {
        name: name.to_owned(),
        nearest: suggest(name, fleet.hosts.iter().map(|h| &*h.name)).map(str::to_owned),
        any: !fleet.hosts.is_empty(),
        failed: fleet.files_that_may_hide_hosts(),
    })
}

/// Finds and resolves the host named `name`, once; refused when broken
/// documents hold it back (what it would receive is unknown).
pub fn resolve(fleet: &Fleet, name: &str) -> Result<Resolved, HostError> {
    let resolved = resolve_anyway(fleet, name)?;
    match resolved.held_back_error() {
        Some(HostError::Blocked {
            name, documents, ..
        }) => Err(HostError::Blocked {
            name,
            documents,
            diagnostics: fleet.diagnostics.clone(),
        }),
        _ => Ok(resolved),
    }
}

/// Finds and resolves the host named `name` with the documents that
/// loaded, even when broken ones hold it back ([`Resolved::held_back`]):
/// what `explain` shows while the fleet is being fixed. Nothing resolved
/// this way is a manifest.
pub fn resolve_anyway(fleet: &Fleet, name: &str) -> Result<Resolved, HostError> {
    let host = find(fleet, name)?;
    let name = fleet.host(host).name.to_string();
    let blockers = fleet.blockers(host);
    let held_back = blockers
        .iter()
        .map(|b| format!("{} ({})", b.path, b.what))
        .collect();
    let left_out = blockers
        .iter()
        .map(|b| {
            if b.partial {
                format!("the fields in error of {}", b.path)
            } else {
                format!("{} ({}), which failed to load", b.path, b.what)
            }
        })
        .collect();
    let resolution = crate::resolve::resolve_host(fleet, host);
    let problems = resolution
        .problems
        .iter()
        .map(|p| problem_diagnostic(fleet, p, &[&name]))
        .collect();
    Ok(Resolved {
        host,
        name,
        resolution,
        problems,
        errors_elsewhere: fleet.diagnostics.iter().filter(|d| d.is_error()).count(),
        held_back,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::testkit::{FLEET, host, layer};

    fn fleet(files: &[(&str, String)]) -> Fleet {
        let mut r = MemReader::new().file("datum.yaml", FLEET);
        for (path, text) in files {
            r.add(path, text.clone());
        }
        load(&r).unwrap()
    }

    #[test]
    fn a_clean_host_resolves_with_no_problems() {
        let f = fleet(&[
            ("hosts.yaml", host("web-001", "{role: web}")),
            (
                "a/layer.yaml",
                layer(10, "{role: web}", "  Package[px]: {}\n"),
            ),
        ]);
        let r = resolve(&f, "web-001").unwrap();
        assert!(r.is_ok());
        assert_eq!(r.require_ok(), Ok(()));
        assert_eq!(r.resolution.resources.len(), 1);
        assert_eq!(r.elsewhere_warning(), None);
    }

    #[test]
    fn a_conflict_is_returned_as_diagnostics_with_the_resolution() {
        let f = fleet(&[
            ("hosts.yaml", host("web-001", "{role: web}")),
            (
                "a/layer.yaml",
                layer(10, "{role: web}", "  Package[px]:\n    version: '1'\n"),
            ),
            (
                "b/layer.yaml",
                layer(10, "{}", "  Package[px]:\n    version: '2'\n"),
            ),
        ]);
        let r = resolve(&f, "web-001").unwrap();
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].code, Code::Conflict);
        assert!(
            r.problems[0]
                .body
                .iter()
                .any(|l| l.text.ends_with("match host web-001 at equal precedence")),
            "{:?}",
            r.problems[0]
        );
        assert_eq!(r.resolution.problems.len(), 1);
        let e = r.require_ok().unwrap_err();
        assert_eq!(e.to_string(), "web-001 does not resolve: 1 error");
    }

    #[test]
    fn an_unknown_name_suggests_the_nearest() {
        let f = fleet(&[("hosts.yaml", host("web-001", "{role: web}"))]);
        let e = resolve(&f, "web-01").unwrap_err();
        assert_eq!(e.to_string(), "no host named `web-01` in this fleet");
        assert_eq!(
            e.hint().as_deref(),
            Some("the nearest host name is `web-001`; `datum hosts` lists them all")
        );
        assert!(e.diagnostics().is_empty() && e.is_not_found());
        // Nothing close: no name is offered as if it were a typo.
        let e = resolve(&f, "nosuch").unwrap_err();
        assert_eq!(
            e.hint().as_deref(),
            Some("no host name is close to it; `datum hosts` lists them all")
        );
    }

    #[test]
    fn a_broken_layer_blocks_the_host_and_brings_its_diagnostics() {
        let f = fleet(&[
            ("hosts.yaml", host("web-001", "{role: web}")),
            (
                "a/layer.yaml",
                layer(10, "{role: web}", "  Package[px]:\n    ensure: instaled\n"),
            ),
        ]);
        let e = resolve(&f, "web-001").unwrap_err();
        assert!(matches!(e, HostError::Blocked { .. }), "{e:?}");
        assert!(!e.is_not_found());
        assert!(e.to_string().starts_with(
            "web-001 cannot be resolved: documents it depends on failed to load: a/layer.yaml ("
        ));
        assert_eq!(e.diagnostics(), &f.diagnostics[..]);
        assert!(!e.diagnostics().is_empty());
    }

    #[test]
    fn errors_elsewhere_are_counted_not_blocking() {
        let f = fleet(&[
            (
                "hosts.yaml",
                host("web-001", "{role: web}") + &host("db-001", "{role: db}"),
            ),
            (
                "a/layer.yaml",
                layer(
                    10,
                    "{datum/host: db-001}",
                    "  Package[px]:\n    ensure: instaled\n",
                ),
            ),
        ]);
        let r = resolve(&f, "web-001").unwrap();
        assert_eq!(r.errors_elsewhere, 1);
        assert_eq!(
            r.elsewhere_warning().as_deref(),
            Some(
                "1 error elsewhere in the fleet, none touching web-001; run `datum check` to see them"
            )
        );
    }

    #[test]
    fn a_host_whose_document_is_broken_did_not_load() {
        let f = fleet(&[("hosts.yaml", host("Web_001", "{role: web}"))]);
        let e = resolve(&f, "Web_001").unwrap_err();
        assert_eq!(
            e.to_string(),
            "host `Web_001` did not load: its document in hosts.yaml has errors"
        );
        assert!(e.is_not_found() && !e.diagnostics().is_empty());
    }
}
