//! `datum render`: what a host receives, as a manifest.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use datum_core::check::problems_by_host;
use datum_core::emit::{self, Tree};
use datum_core::fleet::{Fleet, HostId};
use datum_core::manifest::Manifest;
use datum_core::report::problem_diagnostic;
use datum_core::resolve::resolve_all;
use rayon::prelude::*;

use super::{DocFormat, find_host, resolve_host};
use crate::GlobalArgs;
use crate::exit::{Error, Result, Status};
use crate::{output, root};

/// Print the manifest a host receives: its labels, the layers it matches in
/// fold order, and every resource with its final fields.
///
/// Nothing is printed when the host does not resolve (a conflict or an
/// invalid document): the errors go to stderr and the status is 1.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The host to render.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    host: Option<String>,
    /// Render every host, in parallel, one file each into --out.
    #[arg(long, requires = "out")]
    all: bool,
    /// Where --all writes `<host>.yaml` or `<host>.json` (created if missing).
    #[arg(long, value_name = "DIR", requires = "all")]
    out: Option<PathBuf>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = DocFormat::Yaml)]
    format: DocFormat,
}

pub fn run(global: &GlobalArgs, args: Args) -> Result<Status> {
    let (fleet, _) = root::load(global.fleet.as_deref())?;
    match (&args.host, &args.out) {
        (Some(name), _) => {
            let host = find_host(&fleet, name)?;
            let resolution = resolve_host(&fleet, host)?;
            let tree = Manifest::new(&fleet, host, &resolution).tree();
            let mut out = std::io::stdout().lock();
            write(&mut out, &tree, args.format)?;
            out.flush()?;
            Ok(Status::Ok)
        }
        (None, Some(dir)) => render_all(&fleet, dir, args.format),
        (None, None) => Err(Error::usage("name a host, or pass --all --out DIR")),
    }
}

fn write(w: &mut dyn Write, tree: &Tree<'_>, format: DocFormat) -> std::io::Result<()> {
    match format {
        DocFormat::Yaml => emit::write_yaml(w, tree),
        DocFormat::Json => emit::write_json(w, tree),
    }
}

fn render_all(fleet: &Fleet, dir: &Path, format: DocFormat) -> Result<Status> {
    fs::create_dir_all(dir)
        .map_err(|e| Error::failed(format!("cannot create {}: {e}", dir.display())))?;
    let all = resolve_all(fleet);
    let ext = match format {
        DocFormat::Yaml => "yaml",
        DocFormat::Json => "json",
    };
    let results: Vec<std::io::Result<bool>> = (0..fleet.hosts.len() as u32)
        .into_par_iter()
        .map(|h| {
            let host = HostId(h);
            let name = &fleet.host(host).name;
            let path = dir.join(format!("{name}.{ext}"));
            match all.of(host).filter(|r| r.is_ok()) {
                Some(res) => {
                    let mut buf = Vec::new();
                    write(&mut buf, &Manifest::new(fleet, host, res).tree(), format)?;
                    // Written whole, then renamed: a reader never sees half a file.
                    let tmp = dir.join(format!(".{name}.{ext}.tmp"));
                    fs::write(&tmp, &buf)?;
                    fs::rename(&tmp, &path)?;
                    Ok(true)
                }
                None => {
                    // A host that fails gets no file, not last run's.
                    match fs::remove_file(&path) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                        _ => Ok(false),
                    }
                }
            }
        })
        .collect();
    let mut written = 0;
    for r in results {
        if r.map_err(|e| Error::failed(format!("cannot write into {}: {e}", dir.display())))? {
            written += 1;
        }
    }
    let mut diags = fleet.diagnostics.clone();
    let mut problems: Vec<_> = problems_by_host(fleet, &all)
        .into_iter()
        .map(|(p, hosts)| problem_diagnostic(fleet, p, &hosts))
        .collect();
    problems.sort_by(|a, b| a.sort_key(&fleet.files).cmp(&b.sort_key(&fleet.files)));
    diags.extend(problems);
    output::diagnostics(&fleet.files, &diags);
    let failed = fleet.hosts.len() - written;
    let line = format!(
        "rendered {} of {} into {}",
        written,
        datum_core::check::count(fleet.hosts.len(), "host"),
        dir.display()
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    if failed > 0 {
        return Err(Error::failed(format!(
            "{} did not resolve and got no file",
            datum_core::check::count(failed, "host")
        )));
    }
    Ok(Status::Ok)
}
