//! `render --all`: every host's manifest written into one directory, in
//! parallel, after which the directory holds exactly the resolved hosts'
//! files in the format asked for.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use datum_core::document::valid_host_name;
use datum_core::emit;
use datum_core::fleet::{Fleet, HostId};
use datum_core::hint::Hinted;
use datum_core::manifest::Manifest;
use datum_core::resolve::FleetResolution;
use rayon::prelude::*;

use crate::outdir::{EntryKind, OutDir};

/// How manifests are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    const ALL: [Format; 2] = [Format::Yaml, Format::Json];

    /// The extension of a manifest file.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Yaml => "yaml",
            Format::Json => "json",
        }
    }

    /// How a manifest file of this format begins (`emit` writes them so).
    fn start(self) -> &'static [u8] {
        match self {
            Format::Yaml => b"datum: v1alpha1\ntype: Manifest\n",
            Format::Json => b"{\n  \"datum\": \"v1alpha1\",\n  \"type\": \"Manifest\",",
        }
    }

    fn of_extension(ext: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.extension() == ext)
    }
}

/// What [`render_all`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// Hosts that got their file.
    pub written: usize,
    /// Stale files removed.
    pub removed: usize,
}

/// Why the directory could not be filled. Each names the directory.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot create {}: {source}", dir.display())]
    Create { dir: PathBuf, source: io::Error },
    #[error("cannot write into {}: {source}", dir.display())]
    Write { dir: PathBuf, source: io::Error },
    #[error("cannot clear stale files from {}: {source}", dir.display())]
    Clear { dir: PathBuf, source: io::Error },
}

impl Hinted for RenderError {}

/// Writes `<host>.<ext>` into `dir` (created if missing) for every host
/// that resolves, in parallel; removes the file of every host that does
/// not, then every other stale file of render's own naming and making
/// ([`remove_stale`]).
pub fn render_all(
    fleet: &Fleet,
    all: &FleetResolution,
    dir: &Path,
    format: Format,
) -> Result<Rendered, RenderError> {
    let error = |make: fn(PathBuf, io::Error) -> RenderError| {
        move |source: io::Error| make(dir.to_owned(), source)
    };
    let out =
        OutDir::create(dir).map_err(error(|dir, source| RenderError::Create { dir, source }))?;
    let write = error(|dir, source| RenderError::Write { dir, source });
    let written = write_all(fleet, all, &out, format).map_err(write)?;
    out.commit().map_err(write)?;
    let removed = remove_stale(fleet, all, &out, format)
        .map_err(error(|dir, source| RenderError::Clear { dir, source }))?;
    out.sync().map_err(write)?;
    Ok(Rendered { written, removed })
}

/// Writes `<host>.<ext>` for every host that resolves, in parallel, and
/// removes the file of every host that does not; gives how many were written.
fn write_all(
    fleet: &Fleet,
    all: &FleetResolution,
    out: &OutDir,
    format: Format,
) -> io::Result<usize> {
    let ext = format.extension();
    let results: Vec<io::Result<bool>> = (0..fleet.hosts.len() as u32)
        .into_par_iter()
        .map(|h| {
            let host = HostId(h);
            let name = format!("{}.{ext}", fleet.host(host).name);
            let Some(res) = all.of(host).filter(|r| r.is_ok()) else {
                // A host that fails gets no file, not last run's.
                return out.remove(name.as_ref()).map(|_| false);
            };
            let tree = Manifest::new(fleet, host, res).tree();
            let mut buf = Vec::new();
            match format {
                Format::Yaml => emit::write_yaml(&mut buf, &tree)?,
                Format::Json => emit::write_json(&mut buf, &tree)?,
            }
            out.write(&name, &buf).map(|()| true)
        })
        .collect();
    let mut written = 0;
    for r in results {
        written += usize::from(r?);
    }
    Ok(written)
}

/// Leaves the directory holding exactly the resolved hosts' files in
/// `format`: removes every other file of render's own naming and making,
/// that is a regular file `<host>.yaml` or `<host>.json` that begins as a
/// manifest does (a host gone from the fleet, a host that no longer
/// resolves, the other format), and the temporary file of such a name a
/// killed run left (`.<host>.<ext>.datum-XXXXXX`, or `.<host>.<ext>.tmp`,
/// the name earlier releases wrote through). Anything else is left alone.
/// Gives how many files were removed.
fn remove_stale(
    fleet: &Fleet,
    all: &FleetResolution,
    out: &OutDir,
    format: Format,
) -> io::Result<usize> {
    let keep: HashSet<String> = (0..fleet.hosts.len() as u32)
        .map(HostId)
        .filter(|&h| all.of(h).is_some_and(|r| r.is_ok()))
        .map(|h| format!("{}.{}", fleet.host(h).name, format.extension()))
        .collect();
    let mut removed = 0;
    for entry in out.entries()? {
        // Links and directories are never render's own.
        if entry.kind != EntryKind::File {
            continue;
        }
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        if keep.contains(name) {
            continue;
        }
        let temp = entry.temp_of().or_else(|| {
            let old = name.strip_prefix('.')?.strip_suffix(".tmp")?;
            Some(OsStr::new(old))
        });
        let stale = match temp {
            Some(of) => of.to_str().and_then(manifest_name).is_some(),
            None => match manifest_name(name) {
                Some(format) => out.begins_with(&entry.name, format.start())?,
                None => false,
            },
        };
        if stale && out.remove(&entry.name)? {
            removed += 1;
        }
    }
    Ok(removed)
}

/// The format of `name` when it is named as render names a manifest:
/// `<host>.<ext>` with a host-shaped name.
fn manifest_name(name: &str) -> Option<Format> {
    let (host, ext) = name.rsplit_once('.')?;
    valid_host_name(host)
        .then(|| Format::of_extension(ext))
        .flatten()
}
