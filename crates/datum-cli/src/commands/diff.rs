//! `datum diff`: what a change does to every host, between two revisions
//! read straight from git's object database, or a revision and the working
//! tree.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use datum_core::diff::{FleetDiff, Shown, Side, diff, json};
use datum_core::fleet::Fleet;
use datum_core::loader;
use datum_core::present::diff::{self as text, Payloads};
use datum_core::present::{oneline, unified};
use datum_core::reader::{DirReader, Reader};
use datum_core::report::count;
use datum_core::resolve::{FleetResolution, resolve_all};
use datum_git::{GitError, Repo, Revision};

use super::{LintFormat, path_prefix};
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Show every host whose manifest a change alters, field by field, with the
/// layer responsible on each side.
///
/// With no revision, compares HEAD with the working tree; with one, that
/// revision with the working tree; with two, the first with the second.
/// Revisions are read from git's object database: nothing is checked out.
/// Hosts that change the same way are shown together; a File's content
/// change (inline, templated or a payload) is a unified diff; errors the
/// change introduces or fixes are shown with the hosts they hit.
///
/// Exit status: 64 for bad usage (not a git repository, an unknown
/// revision); otherwise 1 when the new side has errors (a host that does
/// not resolve, a document that does not load); otherwise, with
/// --exit-code, 3 when anything changed; otherwise 0.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The revision to compare from (default: HEAD).
    #[arg(value_name = "OLD")]
    old: Option<String>,
    /// The revision to compare to (default: the working tree).
    #[arg(value_name = "NEW", requires = "old")]
    new: Option<String>,
    /// Exit with status 3 when any host is added, removed or changed.
    #[arg(long)]
    exit_code: bool,
    /// The output format: text for review; one JSON document; or the new
    /// side's errors one a line, `path:line:column: error[code]: message`
    /// (short) or as GitHub Actions workflow commands, then a notice with
    /// the summary (github).
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,
    /// Sum the change up: each layer's part in each resource's change, on
    /// how many hosts, then the summary line.
    #[arg(long, conflicts_with_all = ["name_only", "format"])]
    stat: bool,
    /// Print only the names of the hosts the change touches (added,
    /// removed, changed, broken or fixed), one a line.
    #[arg(long, conflicts_with = "format")]
    name_only: bool,
}

/// One side as read, with its reader for the payloads a diff shows.
enum Loaded {
    Present(Box<(Fleet, FleetResolution, Box<dyn Reader + Send>)>),
    /// The fleet does not exist at that revision: every host there counts
    /// as absent.
    Absent(GitError),
}

pub fn run(ui: &mut Ui, settings: &Settings, args: Args) -> Result<Status> {
    let root = root::locate(ui, settings)?;
    let repo = Repo::discover(&root)?;
    let old_rev = repo.resolve(args.old.as_deref().unwrap_or("HEAD"))?;
    let new_rev = match &args.new {
        Some(spec) => Some(repo.resolve(spec)?),
        None => None,
    };
    let old_name = old_rev.describe();
    let new_name = new_rev
        .as_ref()
        .map_or_else(|| "working tree".to_owned(), |r| r.describe());
    let (old, new) = rayon::join(
        || load_rev(&repo, &old_rev),
        || match &new_rev {
            Some(rev) => load_rev(&repo, rev),
            None => load_dir(&root),
        },
    );
    for side in [&old, &new] {
        if let Ok(Loaded::Absent(e)) = side {
            ui.note(&format!("{e}: every host there counts as absent"));
        }
    }
    let (old, new) = (old?, new?);
    let d = diff(side(&old), side(&new));

    let mut new_errors = 0;
    if let Loaded::Present(loaded) = &new {
        let fleet = &loaded.0;
        let errors: Vec<_> = fleet
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        new_errors = errors.len();
        match args.format {
            LintFormat::Short | LintFormat::Github => {
                let prefix = path_prefix(&root);
                let out = ui.stdout();
                for line in one_line(args.format, &d, &errors, &prefix) {
                    writeln!(out, "{line}")?;
                }
            }
            _ => ui.diagnostics(&fleet.files, &errors),
        }
    }
    write(ui, &args, &d, [&old, &new], [&old_name, &new_name])?;
    let failing = d.failing().len();
    if new_errors > 0 || failing > 0 {
        let mut what = Vec::new();
        if failing > 0 {
            what.push(format!(
                "{} that {} not resolve",
                count(failing, "host"),
                if failing == 1 { "does" } else { "do" }
            ));
        }
        if new_errors > 0 {
            what.push(count(new_errors, "document error"));
        }
        return Err(CommandError::failed(format!(
            "the new side, {new_name}, has {}",
            what.join(" and ")
        ))
        .hint("`datum check` on that side lists every problem"));
    }
    Ok(if args.exit_code && d.has_changes() {
        Status::CHANGED
    } else {
        Status::OK
    })
}

/// The report on stdout, in the form asked for.
fn write(
    ui: &mut Ui,
    args: &Args,
    d: &FleetDiff<'_>,
    sides: [&Loaded; 2],
    [old_name, new_name]: [&str; 2],
) -> Result<()> {
    match args.format {
        LintFormat::Text => {
            // Stdout flushes at each newline; the text goes line by line.
            let mut out = ui.styled_stdout();
            if args.stat {
                text::write_stat(&mut out, d)?;
            } else if args.name_only {
                text::write_names(&mut out, d)?;
            } else {
                let payloads = payloads(d, sides);
                text::write_with(&mut out, d, old_name, new_name, &payloads)?;
            }
            out.flush()?;
        }
        LintFormat::Json => ui.write_tree(&json::tree(d, old_name, new_name), Format::Json)?,
        LintFormat::Short => ui.status(&d.summary()),
        LintFormat::Github => {
            let notice = oneline::github_notice("datum diff", &d.summary());
            writeln!(ui.stdout(), "{notice}")?;
        }
    }
    Ok(ui.flush()?)
}

/// The new side's errors one a line: its documents' errors (`docs`), then
/// each error the change brings to hosts, with the hosts it hits.
fn one_line(
    format: LintFormat,
    d: &FleetDiff<'_>,
    docs: &[datum_core::diagnostic::Diagnostic],
    prefix: &str,
) -> Vec<String> {
    let Some(new) = d.new else {
        return Vec::new();
    };
    let mut diags: Vec<_> = docs.to_vec();
    for g in &d.groups {
        for f in &d.outcomes[g.outcome].introduced {
            diags.push(f.diagnostic(new.fleet, &g.hosts));
        }
    }
    for &h in &d.added {
        let name = [&*new.fleet.host(h).name];
        for f in datum_core::diff::failures(new, h) {
            diags.push(f.diagnostic(new.fleet, &name));
        }
    }
    diags
        .iter()
        .map(|x| match format {
            LintFormat::Github => oneline::github(&new.fleet.files, x, prefix),
            _ => oneline::short(&new.fleet.files, x, prefix),
        })
        .collect()
}

/// The bytes of every `source` payload whose digest a change shows, read
/// from the side that has it: what lets the change be drawn as a diff. A
/// payload too large to show, or that cannot be read, stays a digest.
fn payloads(d: &FleetDiff<'_>, sides: [&Loaded; 2]) -> Payloads {
    let mut wanted = BTreeSet::new();
    for o in &d.outcomes {
        for r in &o.manifest.resources {
            for f in r.fields.iter().filter(|f| f.field == "source_sha256") {
                for s in [&f.old.value, &f.new.value] {
                    if let Shown::Digest(sha) = s {
                        wanted.insert(sha.as_str());
                    }
                }
            }
        }
    }
    let mut out = Payloads::new();
    for loaded in sides {
        let Loaded::Present(loaded) = loaded else {
            continue;
        };
        let (fleet, _, reader) = &**loaded;
        for (path, info) in &fleet.sources {
            if wanted.contains(info.sha256.as_str())
                && !out.contains_key(&info.sha256)
                && info.size <= unified::LIMIT as u64
                && let Ok(bytes) = reader.read_source(path, unified::LIMIT as u64)
            {
                out.insert(info.sha256.clone(), bytes);
            }
        }
    }
    out
}

fn side(loaded: &Loaded) -> Option<Side<'_>> {
    match loaded {
        Loaded::Present(loaded) => Some(Side {
            fleet: &loaded.0,
            all: &loaded.1,
        }),
        Loaded::Absent(_) => None,
    }
}

fn load_rev(repo: &Repo, rev: &Revision) -> Result<Loaded> {
    match repo.reader(rev) {
        Ok(reader) => load(Box::new(reader)),
        Err(e @ GitError::NoFleet { .. }) => Ok(Loaded::Absent(e)),
        Err(e) => Err(e.into()),
    }
}

fn load_dir(root: &Path) -> Result<Loaded> {
    load(Box::new(DirReader::new(root)?))
}

fn load(reader: Box<dyn Reader + Send>) -> Result<Loaded> {
    let fleet = loader::load(&*reader)?;
    let all = resolve_all(&fleet);
    Ok(Loaded::Present(Box::new((fleet, all, reader))))
}
