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
    override_usage = "datum explain [OPTIONS] <HOST> [ID[.FIELD]]\n       datum explain [OPTIONS] [ID[.FIELD]] --host <HOST>"
)]
pub struct Args {
    /// The host, as `render` takes it (unless --host names it), and a
    /// resource, `File[nginx-config]`, or one field of it with its whole
    /// chain, `File[nginx-config].mode`, in either order. Without a
    /// resource: every layer the host matches, then every resource.
    #[arg(value_name = "HOST|ID[.FIELD]", num_args = 0..=2, add = clap_complete::ArgValueCompleter::new(super::completions::hosts_and_ids))]
    words: Vec<String>,
    /// The host to explain, as `apply` takes it.
    #[arg(long, value_name = "HOST", add = clap_complete::ArgValueCompleter::new(super::completions::host_names))]
    host: Option<String>,
    /// The output format: aligned text, or one JSON document that locates
    /// every contribution as path:line:column.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    // Read before the fleet loads: a mistyped id needs no fleet to be refused.
    let (host, target) = host_and_target(&args)?;
    let target = match target {
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

/// The host asked about, and the resource or field if one is. The host
/// is --host or a word; of two words, the one that reads as a resource id
/// (`File[x]`, `vars.x`) is the id, whichever comes first.
fn host_and_target(args: &Args) -> Result<(&str, Option<&str>)> {
    let is_id = |w: &str| parse_target(w).is_ok();
    let words: Vec<&str> = args.words.iter().map(String::as_str).collect();
    match (args.host.as_deref(), words.as_slice()) {
        (Some(host), []) => Ok((host, None)),
        (Some(host), [id]) => Ok((host, Some(id))),
        (None, [word]) if !is_id(word) => Ok((word, None)),
        (None, [a, b]) if is_id(b) && !is_id(a) => Ok((a, Some(b))),
        (None, [a, b]) if is_id(a) && !is_id(b) => Ok((b, Some(a))),
        (None, []) => Err(CommandError::usage("name the host to explain")
            .hint("datum explain HOST, or datum explain --host HOST")),
        (None, [id]) => Err(CommandError::usage(format!(
            "`{id}` is a resource or field: name the host it is explained for too"
        ))
        .hint(format!("datum explain HOST {}", shown(&[id.to_string()])))),
        (given, words) => {
            let ids: Vec<&str> = words.iter().copied().filter(|w| is_id(w)).collect();
            let message = match given {
                Some(host) => format!(
                    "explain takes one resource or field with --host {host}: {} given",
                    quoted(words)
                ),
                None => format!(
                    "explain takes a host and one resource or field: {} given",
                    quoted(words)
                ),
            };
            let error = CommandError::usage(message);
            Err(match (given, ids.as_slice()) {
                (Some(host), [id]) => error.hint(format!(
                    "datum explain {}",
                    shown(&[id.to_string(), "--host".into(), host.to_owned()])
                )),
                _ => error.hint("datum explain HOST ID, such as datum explain web-001 File[motd]"),
            })
        }
    }
}

/// `a`, `b` and `c`.
fn quoted(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
