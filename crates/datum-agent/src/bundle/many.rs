//! `bundle --all`: every resolved host's bundle written into one
//! directory, in parallel, after which the directory holds exactly those
//! bundles.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use datum_core::fleet::{Fleet, HostId};
use datum_core::hint::{Fault, Hinted};
use datum_core::manifest::Manifest;
use datum_core::resolve::FleetResolution;
use datum_fs::OutDir;
use rayon::prelude::*;

use super::{MakeError, Payloads, Stamp, Waits, make};
use crate::sshsig::SigningKey;

/// What every host's bundle of one run shares.
pub struct Batch<'a> {
    pub fleet: &'a Fleet,
    pub payloads: &'a Payloads,
    pub stamp: Stamp<'a>,
    /// Each host's wait for its rollout wave; `None`: none waits
    /// (`--immediate`, or no waves).
    pub waits: Option<Waits<'a>>,
    pub key: Option<&'a SigningKey>,
    /// Seal each bundle to its host's `keys` (`--seal`).
    pub seal: bool,
}

/// Why a run of bundles stopped.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("cannot bundle {host}: {source}")]
    Make {
        host: String,
        #[source]
        source: MakeError,
    },
    #[error("cannot write into {}: {source}", dir.display())]
    Write { dir: PathBuf, source: io::Error },
}

/// A bundle that cannot be made because of a bug is one.
impl Hinted for BatchError {
    fn fault(&self) -> Fault {
        match self {
            BatchError::Make { source, .. } => source.fault(),
            BatchError::Write { .. } => Fault::Failed,
        }
    }
}

impl Batch<'_> {
    /// The bundle of the host of `manifest` ([`make`]), stamped with its
    /// wave's wait.
    pub fn make(&self, manifest: &Manifest<'_>) -> Result<Vec<u8>, BatchError> {
        let stamp = Stamp {
            not_before: self.waits.and_then(|w| w.not_before(manifest.host)),
            ..self.stamp
        };
        make(manifest, self.payloads, &stamp, self.key, self.seal).map_err(|source| {
            BatchError::Make {
                host: manifest.host_name().to_owned(),
                source,
            }
        })
    }

    /// Writes `<host>.bundle` into `dir` (created if missing) for every
    /// host that resolves and is not `withheld` (a host that would fail on
    /// arrival), in parallel, then removes every other `.bundle`
    /// file of `dir` (a host gone, or no longer resolving, keeps no old
    /// bundle) and the temporary files of bundles a killed run left. Gives
    /// how many were written.
    pub fn write_all(
        &self,
        all: &FleetResolution,
        dir: &Path,
        withheld: &BTreeSet<HostId>,
    ) -> Result<usize, BatchError> {
        let cannot = |source| BatchError::Write {
            dir: dir.to_owned(),
            source,
        };
        let out = OutDir::create(dir).map_err(cannot)?;
        let fleet = self.fleet;
        let results: Vec<Result<Option<String>, BatchError>> = (0..fleet.hosts.len() as u32)
            .into_par_iter()
            .map(|h| {
                let host = HostId(h);
                let Some(res) = all.of(host).filter(|r| r.is_ok()) else {
                    return Ok(None);
                };
                if withheld.contains(&host) {
                    return Ok(None);
                }
                let bytes = self.make(&Manifest::new(fleet, host, res))?;
                let name = format!("{}.bundle", fleet.host(host).name);
                out.write(&name, &bytes).map_err(cannot)?;
                Ok(Some(name))
            })
            .collect();
        let mut written = BTreeSet::new();
        for r in results {
            written.extend(r?);
        }
        out.commit().map_err(cannot)?;
        for entry in out.entries().map_err(cannot)? {
            let name = entry.name.to_string_lossy();
            let stale = match entry.temp_of() {
                Some(of) => of.to_string_lossy().ends_with(".bundle"),
                None => name.ends_with(".bundle") && !written.contains(name.as_ref()),
            };
            if stale {
                out.remove(&entry.name).map_err(cannot)?;
            }
        }
        out.sync().map_err(cannot)?;
        Ok(written.len())
    }
}
