//! One file per subcommand: its arguments (whose doc comments are the help
//! text) and a `run` that calls into `datum-core`.

mod apply;
mod check;
mod diff;
mod explain;
mod hosts;
mod query;
mod render;

use clap::ValueEnum;
use datum_core::fleet::{Fleet, HostId};
use datum_core::report::problem_diagnostic;
use datum_core::resolve::Resolution;
use datum_core::schema::nearest;
use datum_core::selector::{Carried, Selector, SelectorError};

use crate::GlobalArgs;
use crate::exit::{Error, Result, Status};
use crate::output;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Render(render::Args),
    Check(check::Args),
    Explain(explain::Args),
    Apply(apply::Args),
    Hosts(hosts::Args),
    Diff(diff::Args),
    Query(query::Args),
}

pub fn run(global: &GlobalArgs, command: Command) -> Result<Status> {
    match command {
        Command::Render(args) => render::run(global, args),
        Command::Check(args) => check::run(global, args),
        Command::Explain(args) => explain::run(global, args),
        Command::Apply(args) => apply::run(global, args),
        Command::Hosts(args) => hosts::run(global, args),
        Command::Diff(args) => diff::run(global, args),
        Command::Query(args) => query::run(global, args),
    }
}

/// Output formats for commands that print a document.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DocFormat {
    Yaml,
    Json,
}

/// Output formats for commands that print a report.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

/// The host named on the command line, or an error saying why there is none.
pub fn find_host(fleet: &Fleet, name: &str) -> Result<HostId> {
    if let Some(id) = fleet.host_id(name) {
        return Ok(id);
    }
    if let Some(docs) = fleet.broken_host(name) {
        output::diagnostics(&fleet.files, &fleet.diagnostics);
        let places: Vec<String> = docs.iter().map(|d| d.path.clone()).collect();
        return Err(Error::failed(format!(
            "host `{name}` did not load: its document in {} has errors",
            places.join(", ")
        ))
        .hint("fix the errors above; `datum check` lists every problem in the fleet"));
    }
    let mut err = Error::failed(format!("no host named `{name}` in this fleet"));
    if let Some(near) = nearest(name, fleet.hosts.iter().map(|h| &*h.name)) {
        err = err.hint(format!(
            "the nearest host name is `{near}`; `datum hosts` lists them all"
        ));
    } else {
        err = err.hint("the fleet has no hosts yet: a Host document declares one");
    }
    Err(err)
}

/// Resolves one host, or prints why it cannot be resolved.
pub fn resolve_host(fleet: &Fleet, host: HostId) -> Result<Resolution> {
    let name = &*fleet.host(host).name;
    let blockers = fleet.blockers(host);
    if !blockers.is_empty() {
        output::diagnostics(&fleet.files, &fleet.diagnostics);
        let docs: Vec<String> = blockers
            .iter()
            .map(|b| format!("{} ({})", b.path, b.what))
            .collect();
        return Err(Error::failed(format!(
            "{name} cannot be resolved: documents it depends on failed to load: {}",
            docs.join(", ")
        ))
        .hint("fix the errors above; `datum check` lists every problem in the fleet"));
    }
    let resolution = fleet.resolve_host(host);
    if !resolution.is_ok() {
        let diags: Vec<_> = resolution
            .problems
            .iter()
            .map(|p| problem_diagnostic(fleet, p, &[name]))
            .collect();
        output::diagnostics(&fleet.files, &diags);
        return Err(Error::failed(format!(
            "{name} does not resolve: {}",
            datum_core::check::count(diags.len(), "error")
        )));
    }
    let elsewhere = fleet.diagnostics.iter().filter(|d| d.is_error()).count();
    if elsewhere > 0 {
        output::warning_line(&format!(
            "{} elsewhere in the fleet, none touching {name}; run `datum check` to see them",
            datum_core::check::count(elsewhere, "error")
        ));
    }
    Ok(resolution)
}

/// A `KEY=VALUE` argument that is not one: bad usage.
pub fn selector_error(e: SelectorError) -> Error {
    let (message, hint) = e.describe();
    Error::usage(message).hint(hint)
}

/// Fails on a selector label that no host carries: it can only be a typo,
/// and an empty answer would hide it.
pub fn require_carried(fleet: &Fleet, selector: &Selector) -> Result<()> {
    let carried = Carried::of(fleet);
    match selector.uncarried(&carried).first() {
        Some(u) => Err(Error::failed(u.message()).hint(u.hint(&carried))),
        None => Ok(()),
    }
}

/// A warning that documents failed to load, so what is listed may be
/// incomplete.
pub fn warn_load_errors(fleet: &Fleet) {
    let errors = fleet.diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        output::warning_line(&format!(
            "{} in the fleet: hosts and layers whose documents failed to load are left out; run `datum check` to see them",
            datum_core::check::count(errors, "error")
        ));
    }
}
