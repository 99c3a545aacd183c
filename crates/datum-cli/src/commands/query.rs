//! `datum query`: one field across the fleet, host by host or grouped by value.

use std::io::Write;

use datum_core::explain::Target;
use datum_core::present::query as text;
use datum_core::query::{Answer, query, query_var, require_knowable};
use datum_core::resolve::resolve_all;
use datum_core::selector::Selector;

use super::{ReportFormat, parse_target, require_carried, warn_load_errors};
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Show each host's value of one field, and the layer that set it.
///
/// Hosts without the resource, or with the resource and not the field, say
/// so; hosts that do not resolve are listed as such and make the status 1
/// (`datum check` says why). With --summary, hosts are grouped by value,
/// most common first, with every layer that set it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The field to ask about, `File[nginx-config].mode`, or a var,
    /// `vars.ntp_server`.
    #[arg(value_name = "ID.FIELD", add = clap_complete::ArgValueCompleter::new(super::completions::resource_ids))]
    target: String,
    /// Only hosts this selector picks, as `datum hosts` reads it
    /// (`role=web,site!=paris`); repeat for several (all must hold).
    #[arg(long = "where", value_name = "SELECTOR", add = clap_complete::ArgValueCompleter::new(super::completions::selector_terms))]
    selector: Vec<String>,
    /// Group hosts by value: `0640  19 hosts  roles/web`.
    #[arg(long)]
    summary: bool,
    /// The output format: aligned text, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let target = parse_target(&args.target)?;
    let names_no_field = || {
        CommandError::usage(format!("`{}` names no field", args.target))
            .hint("query asks about one field: File[nginx-config].mode")
    };
    if !matches!(target, Target::Field(..) | Target::Var(_)) {
        return Err(names_no_field());
    }
    let selector = Selector::parse(&args.selector)?;
    let (fleet, _) = root::open(ui, settings)?;
    if let Err(e) = require_knowable(&fleet) {
        ui.diagnostics(&fleet.files, &fleet.diagnostics);
        return Err(e.into());
    }
    warn_load_errors(ui, &fleet);
    require_carried(&fleet, &selector)?;
    let all = resolve_all(&fleet);
    let hosts = selector.hosts(&fleet);
    let result = match &target {
        Target::Var(name) => query_var(&fleet, &all, name, &hosts)?,
        Target::Field(resource, field) => query(&fleet, &all, resource, *field, &hosts)?,
        _ => return Err(names_no_field()),
    };
    match (args.format, args.summary) {
        (ReportFormat::Text, summary) => {
            // Stdout flushes at each newline; the text goes line by line.
            let mut out = ui.styled_stdout();
            if summary {
                text::write_summary(&mut out, &result)?;
            } else {
                text::write(&mut out, &result)?;
            }
            out.flush()?;
        }
        (ReportFormat::Json, false) => ui.write_tree(&result.tree(), Format::Json)?,
        (ReportFormat::Json, true) => ui.write_tree(&result.summary_tree(), Format::Json)?,
    }
    ui.flush()?;
    let failing = result
        .rows
        .iter()
        .filter(|(_, a)| matches!(a, Answer::Fails | Answer::HeldBack))
        .count();
    if failing > 0 {
        ui.note(&format!(
            "{} not resolve; `datum check` says why",
            match failing {
                1 => "1 host does".to_owned(),
                n => format!("{n} hosts do"),
            }
        ));
        return Ok(Status::FAILED);
    }
    Ok(Status::OK)
}
