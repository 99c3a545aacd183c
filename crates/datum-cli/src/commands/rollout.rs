//! `datum rollout plan`: the waves a change reaches the fleet in, read from
//! `rollout:` in datum.yaml (the working tree, or a git revision);
//! `datum rollout status` and `gate`: where each wave's hosts stand with a
//! revision, from the run reports collected from them.

use datum_core::loader;
use datum_core::present;
use datum_core::rollout;
use datum_git::Repo;

use super::ReportFormat;
use super::rollout_status::{GateArgs, StatusArgs, gate, status};
use crate::command_error::Result;
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Show and check the waves a change reaches the fleet in.
///
/// The waves are declared by `rollout:` in datum.yaml; see
/// docs/rollouts.md.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    Plan(PlanArgs),
    Status(StatusArgs),
    Gate(GateArgs),
}

/// Every wave of the rollout: when it starts after publication, how many
/// hosts it takes and by what rule, and with --hosts their names.
///
/// Deterministic: the same fleet gives the same plan on every machine.
/// Exit status: 0, or 1 when the fleet or its rollout has errors (they
/// are printed, and the plan as far as it can be computed).
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Read the fleet as committed at this git revision instead of the
    /// working tree.
    #[arg(long, value_name = "REV")]
    rev: Option<String>,
    /// List the hosts of each wave by name.
    #[arg(long)]
    hosts: bool,
    /// The output format: aligned text, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

impl Args {
    /// The format the subcommand was asked for.
    pub fn format(&self) -> ReportFormat {
        match &self.command {
            Sub::Plan(a) => a.format,
            Sub::Status(a) => a.format,
            Sub::Gate(a) => a.format,
        }
    }
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    match args.command {
        Sub::Plan(a) => plan(ui, settings, a),
        Sub::Status(a) => status(ui, settings, a),
        Sub::Gate(a) => gate(ui, settings, a),
    }
}

fn plan(ui: &mut Ui, settings: &Settings, args: PlanArgs) -> Result<Status> {
    let (fleet, at) = match &args.rev {
        None => (root::open(ui, settings)?.0, None),
        Some(rev) => {
            let dir = root::locate(ui, settings)?;
            let repo = Repo::discover(&dir)?;
            let revision = repo.resolve(rev)?;
            let fleet = loader::load(&repo.reader(&revision)?)?;
            (fleet, Some(revision.describe()))
        }
    };
    let plan = rollout::plan(&fleet);
    // A document that failed to load may be datum.yaml itself, or hosts
    // the plan would leave out: the plan is shown, but it fails.
    let mut diagnostics: Vec<_> = fleet
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    diagnostics.extend(plan.problems.iter().cloned());
    match args.format {
        ReportFormat::Text => {
            ui.diagnostics(&fleet.files, &diagnostics);
            let mut out = ui.styled_stdout();
            let label = at.as_deref().unwrap_or("working tree");
            present::rollout::plan(&mut out, &fleet, &plan, label, args.hosts)?;
            out.flush()?;
        }
        ReportFormat::Json => {
            let tree = plan.tree(&fleet, at.as_deref(), args.hosts, &diagnostics);
            ui.write_tree(&tree, Format::Json)?
        }
    }
    ui.flush()?;
    Ok(if diagnostics.is_empty() {
        Status::OK
    } else {
        Status::FAILED
    })
}
