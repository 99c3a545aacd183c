//! `datum query`: one field across the fleet, host by host or grouped by value.

use std::io::Write;

use datum_core::emit;
use datum_core::explain::Target;
use datum_core::query::{Answer, query};
use datum_core::resolve::resolve_all;
use datum_core::selector::Selector;

use super::{ReportFormat, require_carried, selector_error, warn_load_errors};
use crate::GlobalArgs;
use crate::exit::{Error, Result, Status};
use crate::{output, root};

/// Show each host's value of one field, and the layer that set it.
///
/// Hosts without the resource, or with the resource and not the field, say
/// so; hosts that do not resolve are listed as such and make the status 1
/// (`datum check` says why). With --summary, hosts are grouped by value,
/// most common first, with every layer that set it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The field to ask about: `File[nginx-config].mode`.
    #[arg(value_name = "ID.FIELD")]
    target: String,
    /// Only hosts carrying this label; repeat for several (all must hold).
    #[arg(long = "where", value_name = "KEY=VALUE")]
    selector: Vec<String>,
    /// Group hosts by value: `0640  19 hosts  roles/web`.
    #[arg(long)]
    summary: bool,
    /// The output format: aligned text, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

pub fn run(global: &GlobalArgs, args: Args) -> Result<Status> {
    let malformed = |message: String, hint: String| Error::usage(message).hint(hint);
    let (resource, field) = match Target::parse(&args.target) {
        Ok(Target::Field(id, field)) => (id, field),
        Ok(_) => {
            return Err(malformed(
                format!("`{}` names no field", args.target),
                "query asks about one field: File[nginx-config].mode".to_owned(),
            ));
        }
        Err(e) => {
            let (message, hint) = e.describe(&args.target);
            return Err(if e.is_malformed() {
                malformed(message, hint)
            } else {
                Error::failed(message).hint(hint)
            });
        }
    };
    let selector = Selector::parse(&args.selector).map_err(selector_error)?;
    let (fleet, _) = root::load(global.fleet.as_deref())?;
    warn_load_errors(&fleet);
    require_carried(&fleet, &selector)?;
    let all = resolve_all(&fleet);
    let result = query(&fleet, &all, &resource, field, &selector.hosts(&fleet)).map_err(|e| {
        let (message, hint) = e.describe();
        Error::failed(message).hint(hint)
    })?;
    let mut out = std::io::stdout().lock();
    match (args.format, args.summary) {
        (ReportFormat::Text, false) => out.write_all(result.text().as_bytes())?,
        (ReportFormat::Text, true) => out.write_all(result.summary_text().as_bytes())?,
        (ReportFormat::Json, false) => emit::write_json(&mut out, &result.tree())?,
        (ReportFormat::Json, true) => emit::write_json(&mut out, &result.summary_tree())?,
    }
    out.flush()?;
    let failing = result
        .rows
        .iter()
        .filter(|(_, a)| matches!(a, Answer::Fails | Answer::HeldBack))
        .count();
    if failing > 0 {
        output::note_line(&format!(
            "{} not resolve; `datum check` says why",
            match failing {
                1 => "1 host does".to_owned(),
                n => format!("{n} hosts do"),
            }
        ));
        return Ok(Status::Failed);
    }
    Ok(Status::Ok)
}
