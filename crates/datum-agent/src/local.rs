//! `datum apply`'s run, beside the agent's: a bundle file opened with every
//! check the agent makes, the items applied through the caller's reporter,
//! and, when asked, the run recorded as the agent records its own (its
//! report and the metrics file).

use std::borrow::Cow;
use std::path::Path;
use std::time::SystemTime;

use datum_apply::engine::{ApplyError, Options};
use datum_apply::facts::Facts;
use datum_apply::root::{Identity, Root};
use datum_apply::spec::Item;
use datum_apply::{JsonReporter, Providers, Reporter, RunStatus, Summary};
use datum_core::facts::Tied;
use datum_core::hint::Hinted;

use crate::bundle::{self, ManifestError, OpenError};
use crate::cycle::{self, Run, Tee, publish};
use crate::http::{self, FetchError, FetchOptions};
use crate::report::{Mode, Timestamp};
use crate::sshsig::{AllowedSigners, AllowedSignersError};

/// Where the input of a run came from, for its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub mode: Mode,
    /// The fleet directory, or the bundle file.
    pub source: String,
    /// The commit a bundle records.
    pub commit: Option<String>,
}

/// Why a bundle file is not applied.
#[derive(Debug, thiserror::Error)]
pub enum BundleFileError {
    /// The public keys file cannot be used.
    #[error("{0}")]
    Signers(#[source] AllowedSignersError),
    /// The bundle file cannot be read.
    #[error("{0}")]
    Read(#[source] FetchError),
    /// The bundle fails a check: its format, its signature, its host.
    #[error("refusing {name}: {source}")]
    Refused {
        name: String,
        /// Boxed: the signature's error is large.
        #[source]
        source: Box<OpenError>,
        /// The host it was opened as.
        identity: Identity,
    },
    /// Its manifest does not read back into resources.
    #[error("{0}")]
    Items(#[source] ManifestError),
    /// It expired: the agent would not move to it either.
    #[error("{0}")]
    Expired(String),
}

impl Hinted for BundleFileError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            BundleFileError::Signers(e) => e.hint(),
            BundleFileError::Read(_) | BundleFileError::Items(_) => None,
            BundleFileError::Expired(_) => Some(Cow::Borrowed(
                "make the bundle again with `datum bundle` (its --valid-for counts from then): an expired bundle may be one a store kept serving after newer ones were made",
            )),
            BundleFileError::Refused { source, .. } => source.hint(),
        }
    }

    /// A bundle for another host also says where this host's name came
    /// from, unless `--host` gave it.
    fn more_hints(&self) -> Vec<Cow<'static, str>> {
        match self {
            BundleFileError::Refused {
                source, identity, ..
            } if matches!(**source, OpenError::WrongHost { .. }) && !identity.from.is_flag() => {
                vec![
                    format!(
                        "this host's name `{}` came from {}; --host NAME names another",
                        identity.name, identity.from
                    )
                    .into(),
                ]
            }
            _ => Vec::new(),
        }
    }
}

/// How to open a bundle file: who may have signed it, whose it must be,
/// and how to read the host's key should it be sealed.
pub struct BundleFile<'a> {
    pub file: &'a Path,
    /// An allowed signers file.
    pub keys: Option<&'a Path>,
    /// The host it must be for.
    pub identity: &'a Identity,
    /// The root the host key is read inside.
    pub root: &'a Root,
    /// The host key (`--identity`), by default the SSH host key.
    pub host_key: Option<&'a str>,
}

/// The resources of the bundle file, where they came from and the labels
/// its manifest ties to a fact (to check before applying), after every
/// check of the format, the signature when `keys` (an allowed signers
/// file) is given, that it is `identity`'s and that it has not expired;
/// a sealed one is opened with the host key. `now` (seconds since the
/// epoch) judges the keys' validity and the expiry.
pub fn open_bundle_file(
    at: &BundleFile<'_>,
    now: i64,
) -> Result<(Vec<Item>, Origin, Vec<Tied>), BundleFileError> {
    let BundleFile {
        file,
        keys,
        identity,
        root,
        host_key,
    } = *at;
    let signers = match keys {
        Some(path) => Some(AllowedSigners::read(path).map_err(BundleFileError::Signers)?),
        None => None,
    };
    let bytes =
        http::read_file(file, FetchOptions::default().max_bytes).map_err(BundleFileError::Read)?;
    let name = file.display().to_string();
    let keys = || bundle::read_host_key(root, host_key);
    let mut clear = None;
    let opened = bundle::open(
        &bytes,
        signers.as_ref(),
        Some(&identity.name),
        now,
        &keys,
        &mut clear,
    )
    .map_err(|source| BundleFileError::Refused {
        name: name.clone(),
        source: Box::new(source),
        identity: identity.clone(),
    })?;
    if let Some(expires) = opened.header().expires
        && expires <= now
    {
        return Err(BundleFileError::Expired(bundle::expired(
            &name, expires, now,
        )));
    }
    let items = opened.items(&name).map_err(BundleFileError::Items)?;
    let origin = Origin {
        mode: Mode::Bundle,
        source: name,
        commit: opened.commit().map(|c| c.id.to_owned()),
    };
    Ok((items, origin, opened.tied()))
}

/// A run's outcome, and what went wrong beside it.
#[derive(Debug)]
pub struct Applied {
    /// Apply's summary; an error when nothing was applied.
    pub outcome: Result<Summary, ApplyError>,
    /// What the caller should warn about: a report cut short, a record
    /// that could not be written. Neither changes the outcome.
    pub warnings: Vec<String>,
}

/// Applies `items` as `host` on `machine` through `reporter`. With
/// `record`, the run is also recorded as the agent records its own: a
/// report under `/var/lib/datum/reports` and the metrics file (both under
/// the root), with the host's `facts`.
#[allow(clippy::too_many_arguments)]
pub fn apply<R: Reporter>(
    host: &str,
    items: &[Item],
    machine: &Root,
    providers: &Providers,
    options: &Options,
    record: Option<Origin>,
    facts: &Facts,
    reporter: R,
) -> Applied {
    let started = Timestamp::from(SystemTime::now());
    let mut json = Vec::new();
    let run =
        |r: &mut dyn Reporter| datum_apply::apply(host, items, providers, machine, options, r);
    let result = match record {
        None => run(&mut { reporter }),
        Some(_) => run(&mut Tee {
            human: reporter,
            json: JsonReporter::new(&mut json).with_facts(facts.tree()),
        }),
    };
    let mut warnings = Vec::new();
    let outcome = match result {
        // The run went on to the end; its status still tells what happened.
        Err(ApplyError::Report { source, summary }) => {
            if source.kind() != std::io::ErrorKind::BrokenPipe {
                warnings.push(format!("the report was cut short: {source}"));
            }
            Ok(summary)
        }
        other => other,
    };
    if let Some(origin) = record {
        let (summary, notes, status) = match &outcome {
            Ok(summary) => (Some(summary.clone()), Vec::new(), summary.status()),
            Err(e) => (None, vec![e.to_string()], RunStatus::NotApplied),
        };
        let resources = cycle::apply_report(if summary.is_some() { &json } else { &[] });
        let run = Run {
            host: host.to_owned(),
            started,
            mode: origin.mode,
            source: Some(origin.source),
            commit: origin.commit,
            cached_input: false,
            fetch_failed: false,
            notes,
            summary,
            resources,
            status,
            facts: crate::facts::json(facts),
            label_mismatches: Vec::new(),
            insecure_allow_unsigned: false,
            input_expires: None,
            refused: None,
            pending: None,
            rolled_back: None,
        };
        let metrics = Path::new(crate::metrics::DEFAULT_PATH);
        let (_, _, more) = publish(machine, run, metrics, None, None);
        warnings.extend(more);
    }
    Applied { outcome, warnings }
}
