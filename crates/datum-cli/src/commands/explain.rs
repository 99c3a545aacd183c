//! `datum explain`: where a host's values come from, and why it lacks what it lacks.

use std::io::Write;

use datum_core::emit;
use datum_core::explain::{Explanation, Target, json, text};

use super::{ReportFormat, find_host, resolve_host};
use crate::GlobalArgs;
use crate::exit::{Error, Result, Status};
use crate::root;

/// Show where every value of a host comes from: the layer that set it, the
/// values it overrode, the layers that agreed, and the labels that made each
/// layer match.
///
/// Asked about a resource or field the host lacks, it names the layers that
/// declare it and the label each of them needs, and exits 1. A host that
/// does not resolve is explained all the same, its conflicts with every
/// side; the errors go to stderr and the status is 1.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A resource, `File[nginx-config]`, or one field of it with its whole
    /// chain, `File[nginx-config].mode`. Without it: every layer the host
    /// matches, then every resource.
    #[arg(value_name = "ID[.FIELD]")]
    target: Option<String>,
    /// The host to explain.
    #[arg(long, value_name = "HOST")]
    host: String,
    /// The output format: aligned text, or one JSON document that locates
    /// every contribution as path:line:column.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

pub fn run(global: &GlobalArgs, args: Args) -> Result<Status> {
    // Read before the fleet loads: a mistyped id needs no fleet to be refused.
    let target = match &args.target {
        None => Target::Host,
        Some(text) => Target::parse(text).map_err(|e| {
            let (message, hint) = e.describe(text);
            let err = if e.is_malformed() {
                Error::usage(message)
            } else {
                Error::failed(message)
            };
            err.hint(hint)
        })?,
    };
    let (fleet, _) = root::load(global.fleet.as_deref())?;
    let host = find_host(&fleet, &args.host)?;
    let (resolution, failure) = match resolve_host(&fleet, host) {
        Ok(resolution) => (resolution, None),
        // The host resolves with problems, reported on stderr: debugging
        // them is when explain is needed most, so answer all the same.
        Err(e) if fleet.blockers(host).is_empty() => (fleet.resolve_host(host), Some(e)),
        // Broken documents hold the host back: nothing to explain.
        Err(e) => return Err(e),
    };
    let ex = Explanation::new(&fleet, host, &resolution);
    let answer = ex.answer(&target);
    let mut out = std::io::stdout().lock();
    match args.format {
        ReportFormat::Text => out.write_all(text::render(&ex, &answer).as_bytes())?,
        ReportFormat::Json => {
            let problems = ex.problems();
            emit::write_json(&mut out, &json::tree(&ex, &answer, &problems))?;
        }
    }
    out.flush()?;
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(if answer.found() {
        Status::Ok
    } else {
        Status::Failed
    })
}
