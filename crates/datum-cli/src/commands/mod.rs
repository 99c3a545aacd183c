//! One file per subcommand: its arguments (whose doc comments are the help
//! text) and a `run` that calls into `datum-core` for a report value and
//! prints it through the [`Ui`]. What several commands share is here.

mod agent;
mod apply;
mod bundle;
mod check;
pub mod completions;
mod diff;
mod explain;
mod facts;
mod hosts;
mod init;
mod layers;
mod man;
mod query;
mod render;
mod rollout;
mod rollout_status;
mod schema;
mod secret;

use clap::ValueEnum;
use datum_core::explain::Target;
use datum_core::fleet::Fleet;
use datum_core::host::{self, Resolved};
use datum_core::selector::Selector;

use crate::command_error::Result;
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Render(render::Args),
    Check(check::Args),
    Explain(explain::Args),
    Apply(apply::Args),
    Hosts(hosts::Args),
    Layers(layers::Args),
    Facts(facts::Args),
    Diff(diff::Args),
    Query(query::Args),
    Bundle(bundle::Args),
    Agent(agent::Args),
    Init(init::Args),
    Completions(completions::Args),
    Man(man::Args),
    Schema(schema::Args),
    Secret(secret::Args),
    Rollout(rollout::Args),
}

pub fn run(ui: &mut Ui, settings: &Settings, command: Command) -> Result<Status> {
    match command {
        Command::Render(args) => render::run(ui, settings, args),
        Command::Check(args) => check::run(ui, settings, args),
        Command::Explain(args) => explain::run(ui, settings, args),
        Command::Apply(args) => apply::run(ui, settings, args),
        Command::Hosts(args) => hosts::run(ui, settings, args),
        Command::Layers(args) => layers::run(ui, settings, args),
        Command::Facts(args) => facts::run(ui, settings, args),
        Command::Diff(args) => diff::run(ui, settings, args),
        Command::Query(args) => query::run(ui, settings, args),
        Command::Bundle(args) => bundle::run(ui, settings, args),
        Command::Agent(args) => agent::run(ui, settings, args),
        Command::Init(args) => init::run(ui, settings, args),
        Command::Completions(args) => completions::run(ui, settings, args),
        Command::Man(args) => man::run(ui, settings, args),
        Command::Schema(args) => schema::run(ui, settings, args),
        Command::Secret(args) => secret::run(ui, settings, args),
        Command::Rollout(args) => rollout::run(ui, settings, args),
    }
}

impl Command {
    /// Whether the command was asked for JSON on stdout (`--format json`):
    /// then even a failure prints one JSON object (see `docs/json.md`).
    pub fn reports_json(&self) -> bool {
        let report = |f: ReportFormat| f == ReportFormat::Json;
        match self {
            Command::Render(a) => a.format == DocFormat::Json,
            Command::Check(a) => a.format == LintFormat::Json,
            Command::Explain(a) => report(a.format),
            Command::Apply(a) => report(a.format),
            Command::Hosts(a) => report(a.format),
            Command::Layers(a) => report(a.format),
            Command::Facts(a) => report(a.format),
            Command::Diff(a) => a.format == LintFormat::Json,
            Command::Query(a) => report(a.format),
            Command::Rollout(a) => report(a.format()),
            Command::Bundle(_)
            | Command::Agent(_)
            | Command::Init(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Schema(_)
            | Command::Secret(_) => false,
        }
    }
}

/// Output formats for commands that print a document.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DocFormat {
    Yaml,
    Json,
}

impl From<DocFormat> for Format {
    fn from(f: DocFormat) -> Format {
        match f {
            DocFormat::Yaml => Format::Yaml,
            DocFormat::Json => Format::Json,
        }
    }
}

/// Output formats for commands that print a report.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

/// Output formats for commands whose report is diagnostics (`check`,
/// `diff`): also one line each, for editors (`short`) and for GitHub
/// Actions' annotations (`github`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    Text,
    Json,
    Short,
    Github,
}

/// The fleet's directory as paths in one-line diagnostics begin: as given
/// when relative (`deploy/fleet/`), else relative to the current
/// directory when inside it, else whole; empty for the current directory.
pub fn path_prefix(root: &std::path::Path) -> String {
    let cwd = std::env::current_dir().ok();
    let rel = match &cwd {
        Some(cwd) if root.is_absolute() => root.strip_prefix(cwd).unwrap_or(root),
        _ => root,
    };
    let text = rel.to_string_lossy();
    if text.is_empty() || text == "." {
        String::new()
    } else {
        format!("{}/", text.trim_end_matches('/'))
    }
}

/// A resource or field argument, `File[motd]` or `File[motd].mode`.
pub fn parse_target(text: &str) -> Result<Target> {
    Ok(Target::parse(text)?)
}

/// Finds and resolves the named host once, printing its problems, or the
/// broken documents that keep it from resolving, to stderr. A host with
/// problems is returned all the same: `explain` answers for it.
pub fn resolve_host(ui: &mut Ui, fleet: &Fleet, name: &str) -> Result<Resolved> {
    let resolved = host::resolve(fleet, name).inspect_err(|e| {
        ui.diagnostics(&fleet.files, e.diagnostics());
    })?;
    ui.diagnostics(&fleet.files, &resolved.problems);
    if let Some(warning) = resolved.elsewhere_warning() {
        ui.warning(&warning);
    }
    Ok(resolved)
}

/// [`resolve_host`] for a host broken documents hold back too: resolved
/// with the documents that loaded, those documents' errors shown first,
/// with a note that what follows leaves them out.
pub fn resolve_host_anyway(ui: &mut Ui, fleet: &Fleet, name: &str) -> Result<Resolved> {
    let resolved = host::resolve_anyway(fleet, name).inspect_err(|e| {
        ui.diagnostics(&fleet.files, e.diagnostics());
    })?;
    if !resolved.held_back.is_empty() {
        ui.diagnostics(&fleet.files, &fleet.diagnostics);
        ui.note(&format!(
            "explained without {}; {} has no manifest until the errors are fixed",
            resolved.left_out.join(", "),
            resolved.name
        ));
    }
    ui.diagnostics(&fleet.files, &resolved.problems);
    if let Some(warning) = resolved.elsewhere_warning() {
        ui.warning(&warning);
    }
    Ok(resolved)
}

/// Fails on a selector label that no host carries: it can only be a typo,
/// and an empty answer would hide it.
pub fn require_carried(fleet: &Fleet, selector: &Selector) -> Result<()> {
    Ok(selector.require_carried(fleet)?)
}

/// A warning that documents failed to load, so what is listed may be
/// incomplete.
pub fn warn_load_errors(ui: &mut Ui, fleet: &Fleet) {
    let errors = fleet.diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        ui.warning(&format!(
            "{} in the fleet: hosts and layers whose documents failed to load are left out; run `datum check` to see them",
            datum_core::report::count(errors, "error")
        ));
    }
}
