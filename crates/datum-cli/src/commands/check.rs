//! `datum check`: resolve every host and report every problem once.

use std::io::Write;

use datum_core::check::check;
use datum_core::diagnostic::Severity;
use datum_core::emit::{self, Tree};
use datum_core::resolve::resolve_all;

use super::ReportFormat;
use crate::GlobalArgs;
use crate::exit::{Result, Status};
use crate::{output, root};

/// Resolve every host and report every error and warning in the fleet.
///
/// Each distinct problem is reported once, naming the hosts it hits. Hosts
/// that no broken document touches are still resolved, so one run shows
/// every independent problem. Exits 1 when there are errors.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat warnings as errors.
    #[arg(long)]
    deny_warnings: bool,
    /// The output format: diagnostics on stderr and a summary line on
    /// stdout, or one JSON document on stdout.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

pub fn run(global: &GlobalArgs, args: Args) -> Result<Status> {
    let (fleet, _) = root::load(global.fleet.as_deref())?;
    let all = resolve_all(&fleet);
    let mut report = check(&fleet, &all);
    if args.deny_warnings {
        for d in &mut report.diagnostics {
            d.severity = Severity::Error;
        }
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        ReportFormat::Text => {
            output::diagnostics(&fleet.files, &report.diagnostics);
            if !report.held_back.is_empty() {
                output::note_line(&format!(
                    "not resolved, because documents they depend on failed to load: {}",
                    datum_core::report::host_list(
                        &report
                            .held_back
                            .iter()
                            .map(String::as_str)
                            .collect::<Vec<_>>()
                    )
                ));
            }
            writeln!(out, "{}", report.summary())?;
        }
        ReportFormat::Json => {
            let tree = Tree::map()
                .with("hosts", Tree::Int(report.hosts as i64))
                .with("layers", Tree::Int(report.layers as i64))
                .with("errors", Tree::Int(report.errors() as i64))
                .with("warnings", Tree::Int(report.warnings() as i64))
                .with(
                    "held_back",
                    Tree::strs(report.held_back.iter().map(String::as_str)),
                )
                .with(
                    "diagnostics",
                    Tree::List(
                        report
                            .diagnostics
                            .iter()
                            .map(|d| d.tree(&fleet.files))
                            .collect(),
                    ),
                )
                .with("summary", Tree::str(report.summary()));
            emit::write_json(&mut out, &tree)?;
        }
    }
    out.flush()?;
    let status = if report.errors() > 0 {
        Status::Failed
    } else {
        Status::Ok
    };
    // The process ends next: freeing a large fleet piece by piece would
    // only add to the run time.
    std::mem::forget((fleet, all, report));
    Ok(status)
}
