//! `datum diff`: what a change does to every host, between two revisions
//! read straight from git's object database, or a revision and the working
//! tree.

use std::io::Write;
use std::path::Path;

use datum_core::diff::{Side, diff, json, text};
use datum_core::emit;
use datum_core::fleet::Fleet;
use datum_core::loader;
use datum_core::reader::{DirReader, Reader};
use datum_core::resolve::{FleetResolution, resolve_all};
use datum_git::{GitError, Repo};

use super::ReportFormat;
use crate::GlobalArgs;
use crate::exit::{Error, Result, Status};
use crate::{output, root};

/// Show every host whose manifest a change alters, field by field, with the
/// layer responsible on each side.
///
/// With no revision, compares HEAD with the working tree; with one, that
/// revision with the working tree; with two, the first with the second.
/// Revisions are read from git's object database: nothing is checked out.
/// Hosts that change the same way are shown together; errors the change
/// introduces or fixes are shown with the hosts they hit.
///
/// Exit status: 2 for bad usage (not a git repository, an unknown
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
    /// The output format: text for review, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

/// One side as loaded: `None` when the fleet does not exist there.
type Loaded = Option<(Fleet, FleetResolution)>;

pub fn run(global: &GlobalArgs, args: Args) -> Result<Status> {
    let root = root::find(global.fleet.as_deref())?;
    let repo = Repo::discover(&root).map_err(git_error)?;
    let old_rev = repo
        .resolve(args.old.as_deref().unwrap_or("HEAD"))
        .map_err(git_error)?;
    let new_rev = match &args.new {
        Some(spec) => Some(repo.resolve(spec).map_err(git_error)?),
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
            None => load_dir(&root).map(Some),
        },
    );
    let (old, new) = (old?, new?);
    let d = diff(side(&old), side(&new));

    let mut new_errors = 0;
    if let Some((fleet, _)) = &new {
        let errors: Vec<_> = fleet
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        output::diagnostics(&fleet.files, &errors);
        new_errors = errors.len();
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        ReportFormat::Text => out.write_all(text::render(&d, &old_name, &new_name).as_bytes())?,
        ReportFormat::Json => emit::write_json(&mut out, &json::tree(&d, &old_name, &new_name))?,
    }
    out.flush()?;
    let failing = d.failing().len();
    if new_errors > 0 || failing > 0 {
        let mut what = Vec::new();
        if failing > 0 {
            what.push(format!(
                "{} that {} not resolve",
                datum_core::check::count(failing, "host"),
                if failing == 1 { "does" } else { "do" }
            ));
        }
        if new_errors > 0 {
            what.push(datum_core::check::count(new_errors, "document error"));
        }
        return Err(Error::failed(format!(
            "the new side, {new_name}, has {}",
            what.join(" and ")
        ))
        .hint("`datum check` on that side lists every problem"));
    }
    Ok(if args.exit_code && d.has_changes() {
        Status::Changed
    } else {
        Status::Ok
    })
}

fn side(loaded: &Loaded) -> Option<Side<'_>> {
    loaded.as_ref().map(|(fleet, all)| Side { fleet, all })
}

fn load_rev(repo: &Repo, rev: &datum_git::Revision) -> Result<Loaded> {
    match repo.reader(rev) {
        Ok(reader) => load(&reader).map(Some),
        Err(e @ GitError::NoFleet { .. }) => {
            output::note_line(&format!("{e}: every host there counts as absent"));
            Ok(None)
        }
        Err(e) => Err(git_error(e)),
    }
}

fn load_dir(root: &Path) -> Result<(Fleet, FleetResolution)> {
    let reader = DirReader::new(root).map_err(|e| Error::failed(e.to_string()))?;
    load(&reader)
}

fn load(reader: &dyn Reader) -> Result<(Fleet, FleetResolution)> {
    let fleet = loader::load(reader).map_err(|e| Error::failed(e.to_string()))?;
    let all = resolve_all(&fleet);
    Ok((fleet, all))
}

/// Repository and revision problems: bad usage when the operator named
/// something that is not there, a failure when git could not be read.
fn git_error(e: GitError) -> Error {
    let message = e.to_string();
    match e {
        GitError::NotARepository { .. } | GitError::Bare { .. } | GitError::OutsideWorkTree { .. } => {
            Error::usage(message).hint("datum diff compares git revisions: run it on a fleet inside a git work tree")
        }
        GitError::UnknownRevision { .. } => Error::usage(message).hint(
            "name a commit: HEAD~1, a branch, a tag or an id; in CI, fetch enough history for the base revision (actions/checkout: fetch-depth: 0)",
        ),
        _ => Error::failed(message),
    }
}
