//! `datum explain`: where a host's values come from, and why it lacks what it lacks.

use std::io::Write;

use datum_apply::provider::exec::shown;
use datum_core::explain::{Explanation, Target, json};
use datum_core::present::explain as text;

use super::{ReportFormat, parse_target, resolve_host_anyway};
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Show where every value of a host comes from: the layer that set it, the
/// values it overrode, the layers that agreed, and the labels that made each
/// layer match.
///
/// Asked about a resource or field the host lacks, it names the layers that
/// declare it and the label each of them needs, and exits 1. A host that
/// does not resolve is explained all the same, its conflicts with every
/// side; the errors go to stderr and the status is 1.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  # Every layer and resource web-001 gets\n  $ datum explain --host web-001\n  # Where one resource comes from\n  $ datum explain File[nginx-config] --host web-001\n  # Which layer set one field, and what it overrode\n  $ datum explain File[nginx-config].mode --host web-001"
)]
#[command(override_usage = "datum explain [OPTIONS] --host <HOST> [ID[.FIELD]]")]
pub struct Args {
    /// A resource, `File[nginx-config]`, or one field of it with its whole
    /// chain, `File[nginx-config].mode`. Without it: every layer the host
    /// matches, then every resource.
    #[arg(value_name = "ID[.FIELD]")]
    target: Option<String>,
    /// The host to explain.
    #[arg(long, value_name = "HOST", required_unless_present = "stray", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host: Option<String>,
    /// A second word, as in `datum explain web-001 File[x]`: refused with
    /// the command as it is written (the host goes in --host).
    #[arg(hide = true, value_name = "STRAY")]
    stray: Option<String>,
    /// The output format: aligned text, or one JSON document that locates
    /// every contribution as path:line:column.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let host = host(&args)?;
    // Read before the fleet loads: a mistyped id needs no fleet to be refused.
    let target = match &args.target {
        None => Target::Host,
        Some(text) => parse_target(text)?,
    };
    let (fleet, _) = root::open(ui, settings)?;
    // A host with problems (shown on stderr) is explained all the same:
    // debugging them is when explain is needed most. So is a host broken
    // documents hold back, with the documents that loaded; it still has no
    // manifest, and the status says so.
    let resolved = resolve_host_anyway(ui, &fleet, host)?;
    let ex = Explanation::new(&fleet, resolved.host, &resolved.resolution);
    let answer = ex.answer(&target);
    match args.format {
        ReportFormat::Text => {
            // Stdout flushes at each newline; the text goes line by line.
            let mut out = ui.styled_stdout();
            text::write(&mut out, &ex, &answer)?;
            out.flush()?;
        }
        ReportFormat::Json => {
            let problems = ex.problems();
            ui.write_tree(&json::tree(&ex, &answer, &problems), Format::Json)?;
        }
    }
    ui.flush()?;
    if let Some(held_back) = resolved.held_back_error() {
        return Err(held_back.into());
    }
    resolved.require_ok()?;
    Ok(if answer.found() {
        Status::OK
    } else {
        Status::FAILED
    })
}

/// The host asked about. `datum explain HOST ID` (the order `render`
/// takes) is refused with the command that means it.
fn host(args: &Args) -> Result<&str> {
    match (&args.host, &args.target, &args.stray) {
        (Some(host), _, None) => Ok(host),
        (given, first, Some(second)) => {
            let first = first.as_deref().unwrap_or_default();
            let second = second.as_str();
            // The word that reads as an id is the id, whatever the order.
            let (id, other) = if parse_target(first).is_err() && parse_target(second).is_ok() {
                (second, first)
            } else {
                (first, second)
            };
            let host = given.as_deref().unwrap_or(other);
            Err(CommandError::usage(format!(
                "explain takes one resource or field, and the host as --host: `{first}` and `{second}` given"
            ))
            .hint(format!(
                "datum explain {}",
                shown(&[id.to_owned(), "--host".to_owned(), host.to_owned()])
            )))
        }
        (None, _, None) => Err(CommandError::usage("name the host to explain with --host")),
    }
}
