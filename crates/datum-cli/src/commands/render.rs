//! `datum render`: what a host receives, as a manifest.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use datum_core::check;
use datum_core::emit;
use datum_core::fleet::{Fleet, HostId};
use datum_core::manifest::Manifest;
use datum_core::report::count;
use datum_core::resolve::{FleetResolution, resolve_all};
use rayon::prelude::*;

use super::{DocFormat, resolve_host};
use crate::GlobalArgs;
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::ui::Ui;

/// Print the manifest a host receives: its labels, the layers it matches in
/// fold order, and every resource with its final fields.
///
/// Nothing is printed when the host does not resolve (a conflict or an
/// invalid document): the errors go to stderr and the status is 1.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to render.
    #[arg(
        required_unless_present = "all",
        conflicts_with = "all",
        add = clap_complete::ArgValueCompleter::new(super::completions::host_names)
    )]
    host: Option<String>,
    /// Render every host, in parallel, one file each into --out.
    #[arg(long, requires = "out")]
    all: bool,
    /// Where --all writes `<host>.yaml` or `<host>.json` (created if
    /// missing). Afterwards it holds exactly the resolved hosts' files:
    /// manifests it wrote earlier for other hosts or in the other format
    /// are removed; other files are left alone.
    #[arg(long, value_name = "DIR", requires = "all")]
    out: Option<PathBuf>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = DocFormat::Yaml)]
    pub format: DocFormat,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: Args) -> Result<Status> {
    // Checked before the fleet is read: an option the form does not use
    // would otherwise be silently ignored (clap's `requires` is not
    // enforced once the positional host is given).
    if args.host.is_some() && args.out.is_some() {
        return Err(CommandError::usage(
            "--out applies only to --all: `render HOST` prints to stdout",
        )
        .hint(
            "redirect stdout (datum render HOST > FILE), or use --all --out DIR for every host",
        ));
    }
    let (fleet, _) = root::open(ui, global)?;
    match (&args.host, &args.out) {
        (Some(name), None) => {
            let resolved = resolve_host(ui, &fleet, name)?;
            resolved.require_ok()?;
            let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
            ui.write_tree(&manifest.tree(), args.format.into())?;
            ui.flush()?;
            Ok(Status::OK)
        }
        (None, Some(dir)) => render_all(ui, &fleet, dir, args.format),
        _ => Err(CommandError::usage("name a host, or pass --all --out DIR")),
    }
}

fn render_all(ui: &mut Ui, fleet: &Fleet, dir: &Path, format: DocFormat) -> Result<Status> {
    fs::create_dir_all(dir).map_err(|e| {
        CommandError::failed(format!("cannot create {}: {e}", dir.display())).with_source(e)
    })?;
    let all = resolve_all(fleet);
    let written = write_all(fleet, &all, dir, format).map_err(|e| {
        CommandError::failed(format!("cannot write into {}: {e}", dir.display())).with_source(e)
    })?;
    let removed = remove_stale(fleet, &all, dir, format).map_err(|e| {
        CommandError::failed(format!(
            "cannot clear stale files from {}: {e}",
            dir.display()
        ))
        .with_source(e)
    })?;
    let diagnostics = check::errors(fleet, &all);
    ui.diagnostics(&fleet.files, &diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let removed = if removed > 0 {
        format!(", removed {}", count(removed, "stale file"))
    } else {
        String::new()
    };
    writeln!(
        ui.stdout(),
        "rendered {} of {} into {}{removed}",
        written,
        count(fleet.hosts.len(), "host"),
        dir.display()
    )?;
    let failed = fleet.hosts.len() - written;
    if failed > 0 {
        return Err(CommandError::failed(format!(
            "{} did not resolve and got no file",
            count(failed, "host")
        )));
    }
    // An error in a document no host uses still fails the run: a command
    // that prints an error never exits 0.
    if errors > 0 {
        return Err(CommandError::failed(format!(
            "every host was rendered, but the fleet has {}",
            count(errors, "error")
        ))
        .hint("`datum check` lists every problem"));
    }
    Ok(Status::OK)
}

/// The extension of a manifest file.
fn extension(format: DocFormat) -> &'static str {
    match format {
        DocFormat::Yaml => "yaml",
        DocFormat::Json => "json",
    }
}

/// How a manifest file of each format begins (`emit` writes them so).
fn manifest_start(ext: &str) -> Option<&'static [u8]> {
    match ext {
        "yaml" => Some(b"datum: v1alpha1\ntype: Manifest\n"),
        "json" => Some(b"{\n  \"datum\": \"v1alpha1\",\n  \"type\": \"Manifest\","),
        _ => None,
    }
}

/// Whether `name` could be a host's (SPEC §2: lowercase DNS style).
fn host_shaped(name: &str) -> bool {
    let b = name.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'.';
    let end = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 253
        && b.first().is_some_and(end)
        && b.last().is_some_and(end)
        && b.iter().all(inner)
}

/// Leaves DIR holding exactly the resolved hosts' files in `format`:
/// removes every other file of render's own naming and making, that is a
/// regular file `<host>.yaml` or `<host>.json` that begins as a manifest
/// does (a host gone from the fleet, a host that no longer resolves, the
/// other format), and `.<host>.<ext>.tmp` left by a killed run. Anything
/// else in DIR is left alone. Gives how many files were removed.
fn remove_stale(
    fleet: &Fleet,
    all: &FleetResolution,
    dir: &Path,
    format: DocFormat,
) -> io::Result<usize> {
    let keep: HashSet<String> = (0..fleet.hosts.len() as u32)
        .map(HostId)
        .filter(|&h| all.of(h).is_some_and(|r| r.is_ok()))
        .map(|h| format!("{}.{}", fleet.host(h).name, extension(format)))
        .collect();
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        // Links and directories are never render's own.
        if !entry.file_type()?.is_file() {
            continue;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if keep.contains(&name) {
            continue;
        }
        let stale = if let Some(tmp) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) {
            tmp.rsplit_once('.')
                .is_some_and(|(host, ext)| host_shaped(host) && manifest_start(ext).is_some())
        } else {
            match name.rsplit_once('.') {
                Some((host, ext)) if host_shaped(host) => match manifest_start(ext) {
                    Some(start) => begins_with(&entry.path(), start)?,
                    None => false,
                },
                _ => false,
            }
        };
        if stale {
            match fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(removed)
}

/// Whether the file begins with `start`.
fn begins_with(path: &Path, start: &[u8]) -> io::Result<bool> {
    let mut head = Vec::with_capacity(start.len());
    fs::File::open(path)?
        .take(start.len() as u64)
        .read_to_end(&mut head)?;
    Ok(head == start)
}

/// Writes `<host>.<ext>` for every host that resolves, in parallel, and
/// removes the file of every host that does not; gives how many were written.
fn write_all(
    fleet: &Fleet,
    all: &FleetResolution,
    dir: &Path,
    format: DocFormat,
) -> io::Result<usize> {
    let ext = extension(format);
    let results: Vec<io::Result<bool>> = (0..fleet.hosts.len() as u32)
        .into_par_iter()
        .map(|h| {
            let host = HostId(h);
            let name = &fleet.host(host).name;
            let path = dir.join(format!("{name}.{ext}"));
            match all.of(host).filter(|r| r.is_ok()) {
                Some(res) => {
                    let tree = Manifest::new(fleet, host, res).tree();
                    let mut buf = Vec::new();
                    match format {
                        DocFormat::Yaml => emit::write_yaml(&mut buf, &tree)?,
                        DocFormat::Json => emit::write_json(&mut buf, &tree)?,
                    }
                    // Written whole, then renamed: a reader never sees half a file.
                    let tmp = dir.join(format!(".{name}.{ext}.tmp"));
                    fs::write(&tmp, &buf)?;
                    fs::rename(&tmp, &path)?;
                    Ok(true)
                }
                None => {
                    // A host that fails gets no file, not last run's.
                    match fs::remove_file(&path) {
                        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                        _ => Ok(false),
                    }
                }
            }
        })
        .collect();
    let mut written = 0;
    for r in results {
        if r? {
            written += 1;
        }
    }
    Ok(written)
}
