//! Bundle mode's input: fetch the host's bundle (or fall back to the one
//! applied last), open it, check its signature and that it does not go
//! back, and read its resources.

use std::io::{self, Write};
use std::path::Path;

use datum_apply::root::Refused;
use datum_core::hint::Hinted;

use super::{Agent, CACHED_BUNDLE, FLEET, Input, Log, Refusal, hold, now_secs, refusal, refused};
use crate::bundle::{self, Opened};
use crate::ca::CaFile;
use crate::http::{self, FetchError, FetchOptions, Location};
use crate::repo::ObjectId;
use crate::rollback::{self, Applied, Progress};
use crate::sshsig::AllowedSigners;
use crate::sshsig::time::{format_utc, span};

/// The bundle a run applies, and where it came from.
struct Fetched {
    bytes: Vec<u8>,
    /// The URL it came from (a password hidden), or the cached bundle.
    origin: String,
    /// The bundle applied last, taken because fetching failed.
    cached: bool,
}

impl Agent {
    /// The bundle this run applies: the fetched one when it passes every
    /// check and its wave's time has come; else the last verified one
    /// (the refusal, or the wait, is reported); `None` when the first
    /// bundle a host gets waits for its wave.
    pub(super) fn bundle_input(
        &self,
        template: &str,
        ca: Option<&CaFile>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Option<Input>, Refusal> {
        let last = self.last_applied(log, out)?;
        log.expires = last.as_ref().and_then(|l| self.expiry_of(l));
        let signers = self.signers(self.config.public_keys.as_ref(), "public_keys")?;
        let url = http::expand(template, &self.host).map_err(|e| {
            refusal(
                e.to_string(),
                e.hint()
                    .unwrap_or("check `bundle.url` in the agent configuration".into()),
            )
        })?;
        let fetched = self.fetch_bundle(&url, ca, log, out)?;
        log.source = Some(fetched.origin.clone());
        let (last, signers) = (last.as_ref(), signers.as_ref());
        if fetched.cached {
            let name = CACHED_BUNDLE;
            return self
                .bundle_checked(fetched.bytes, name, true, last, signers, log, out)
                .map(Some);
        }
        let name = http::redact(&url);
        let input = match self
            .bundle_checked(fetched.bytes, &name, false, last, signers, log, out)
            .and_then(|input| {
                self.refused_again(&input, &name, None, log)?;
                Ok(input)
            }) {
            Ok(input) => input,
            Err(r) => return self.bundle_fallback(Some(r), last, signers, log, out),
        };
        let now = now_secs();
        let serial = input.applied.as_ref().and_then(Applied::serial);
        // The same release, re-signed: nothing new to wait for. (Bundles
        // made outside git, with neither, by their contents.)
        let placed = serial.is_some() || input.commit.is_some();
        let same = last
            .zip(input.applied.as_ref())
            .is_some_and(|(l, a)| super::back::same_input(l, a));
        match input.not_before {
            Some(due) if due > now && !same => {
                let seen = match hold::load::<hold::Waiting>(&self.root, hold::PENDING) {
                    Ok(Some(w)) if placed && w.is(input.commit.as_deref(), serial) => w.seen,
                    _ => now,
                };
                let waiting = hold::Waiting {
                    commit: input.commit.clone(),
                    serial,
                    seen,
                    due,
                };
                self.wait_for(&waiting, log, out);
                self.bundle_fallback(None, last, signers, log, out)
            }
            _ => Ok(Some(input)),
        }
    }

    /// The last verified bundle, checked again, applied instead of a new
    /// one that was `refused` (the run still exits 1) or waits for its
    /// wave (`None`). Without one, the refusal stands, or nothing is applied.
    fn bundle_fallback(
        &self,
        refused: Option<Refusal>,
        last: Option<&Applied>,
        signers: Option<&AllowedSigners>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Option<Input>, Refusal> {
        let Some(bytes) = self.cached_bundle() else {
            return refused.map_or(Ok(None), Err);
        };
        match self.bundle_checked(bytes, CACHED_BUNDLE, true, last, signers, log, out) {
            Ok(input) => {
                log.source = Some(CACHED_BUNDLE.to_owned());
                log.note(
                    out,
                    format!(
                        "applying the last verified input instead: {}",
                        self.root.path(CACHED_BUNDLE).display()
                    ),
                );
                log.refused = refused;
                Ok(Some(input))
            }
            Err(e) => match refused {
                Some(r) => {
                    log.note(
                        out,
                        format!(
                            "the last verified input cannot be applied either: {}",
                            e.message
                        ),
                    );
                    Err(r)
                }
                None => Err(e),
            },
        }
    }

    /// The last verified bundle, checked again (a rollback puts it back).
    pub(super) fn bundle_previous(
        &self,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Option<Input>, Refusal> {
        let last = self.last_applied(log, out)?;
        let signers = self.signers(self.config.public_keys.as_ref(), "public_keys")?;
        let Some(bytes) = self.cached_bundle() else {
            return Ok(None);
        };
        let (last, signers) = (last.as_ref(), signers.as_ref());
        self.bundle_checked(bytes, CACHED_BUNDLE, true, last, signers, log, out)
            .map(Some)
    }

    /// The bundle kept when it was applied: only a regular file, never
    /// through a link at its name, no larger than a fetched bundle may be.
    fn cached_bundle(&self) -> Option<Vec<u8>> {
        self.root
            .read_small(CACHED_BUNDLE, FetchOptions::default().max_bytes)
            .ok()
            .flatten()
    }

    /// Opens and checks a bundle (`name` in messages): signature, fleet,
    /// expiry, place after the last one (unless `cached`, the one applied
    /// last), labels; its resources.
    #[allow(clippy::too_many_arguments)]
    fn bundle_checked(
        &self,
        bytes: Vec<u8>,
        name: &str,
        cached: bool,
        last: Option<&Applied>,
        signers: Option<&AllowedSigners>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Input, Refusal> {
        let identity = self
            .config
            .identity
            .as_ref()
            .map(|p| p.display().to_string());
        let keys = || bundle::read_host_key(&self.root, identity.as_deref());
        let mut clear = None;
        let opened = bundle::open(
            &bytes,
            signers,
            Some(&self.host),
            now_secs(),
            &keys,
            &mut clear,
        )
        .map_err(|e| {
            let reason = e.reason();
            refusal(
                format!("refusing {name}: {e}"),
                e.hint().unwrap_or_default(),
            )
            .because(reason)
        })?;
        if let Some(signer) = &opened.signer {
            self.progress(
                out,
                format_args!(
                    "the bundle is signed by {} ({})",
                    signer.principals.join(", "),
                    signer.fingerprint
                ),
            );
        }
        let fleet = self.check_fleet(&opened, name)?;
        self.check_expiry(&opened, name, last, cached, log, out)?;
        let applied = self.bundle_place(&opened, name, last, cached, log, out)?;
        self.check_labels(&opened.tied(), None, log)?;
        let items = opened.items(name).map_err(|e| {
            refusal(
                e.to_string(),
                "make the bundle again with `datum bundle`, by the same Datum release as the agent",
            )
        })?;
        let not_before = opened.header().not_before;
        drop(opened);
        Ok(Input {
            items,
            commit: applied.commit().map(|id| id.to_string()),
            not_before,
            applied: Some(applied),
            cached,
            bundle: (!cached).then_some(bytes),
            fleet,
        })
    }

    /// Refuses a fresh bundle that has expired: a store that keeps serving
    /// an old bundle (frozen, or no longer re-signed) is noticed. The
    /// bundle applied last, taken because fetching failed, is applied even
    /// expired, and the run says how stale the host is and exits 1.
    fn check_expiry(
        &self,
        opened: &Opened<'_>,
        name: &str,
        last: Option<&Applied>,
        cached: bool,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<(), Refusal> {
        let now = now_secs();
        let Some(expires) = opened.header().expires.filter(|&e| e <= now) else {
            return Ok(());
        };
        let hint = "the bundles are not being refreshed: the job that makes them must run `datum bundle` again at least every half of its --valid-for (docs/bundles.md), and the server or mirror must publish them";
        let host = match last.and_then(Applied::expires) {
            Some(e) if e <= now => format!(
                "; this host runs input that expired at {} ({} ago)",
                format_utc(e),
                span(now - e)
            ),
            Some(e) => format!(
                "; this host stays on its last verified input, which expires at {}",
                format_utc(e)
            ),
            None => String::new(),
        };
        let message = format!("{}{host}", bundle::expired(name, expires, now));
        if !cached {
            return Err(refusal(message, hint).because("expired"));
        }
        log.stale = true;
        log.note(
            out,
            format!(
                "the last verified input expired at {} ({} ago): this host is stale; {hint}",
                format_utc(expires),
                span(now - expires)
            ),
        );
        Ok(())
    }

    /// Refuses a bundle of another fleet than this host's: the one
    /// `fleet_name` names, else the one it applied first. Gives the name
    /// to record when none is recorded yet.
    fn check_fleet(&self, opened: &Opened<'_>, name: &str) -> Result<Option<String>, Refusal> {
        let recorded = match self.root.read_small(FLEET, 4096) {
            Ok(Some(bytes)) => Some(String::from_utf8_lossy(&bytes).trim().to_owned()),
            Ok(None) => None,
            Err(e) => {
                return Err(refusal(
                    format!("cannot read {}: {e}", self.root.path(FLEET).display()),
                    "the file records the fleet this host belongs to: put it right or remove it",
                ));
            }
        };
        let fleet = opened.header().fleet;
        let (expected, from) = match (&self.config.fleet_name, &recorded) {
            (Some(f), _) => (Some(f.as_str()), "`fleet_name` in the agent configuration"),
            (None, Some(f)) => (Some(f.as_str()), FLEET),
            (None, None) => (None, ""),
        };
        if let Some(expected) = expected
            && expected != fleet
        {
            return Err(refusal(
                format!(
                    "refusing {name}: it is a bundle of fleet {fleet:?}, and this host belongs to fleet {expected:?} ({from})"
                ),
                "a key that signs for several fleets can be replayed across them: serve this host its own fleet's bundle; if the host moved to another fleet, set `fleet_name` in the agent configuration",
            )
            .because("fleet"));
        }
        Ok((recorded.as_deref() != Some(fleet)).then(|| fleet.to_owned()))
    }

    /// A bundle named by a path or `file://` URL: opened inside the root as
    /// apply opens its paths (a link or `..` on the way, or at its name,
    /// leads somewhere inside, never out), only as a regular file, and no
    /// larger than a fetched bundle may be.
    fn read_local(&self, path: &Path) -> Result<Vec<u8>, FetchError> {
        let abs = path.to_string_lossy();
        let shown = self.path(path);
        let limit = FetchOptions::default().max_bytes;
        let fail = |source| FetchError::File {
            path: shown.clone(),
            source,
        };
        match self.root.read_regular(&abs, limit) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(fail(datum_apply::root::not_found())),
            Err(Refused::TooLarge(limit)) => Err(FetchError::TooLarge {
                url: shown.display().to_string(),
                limit,
            }),
            Err(Refused::Io(e)) => Err(fail(e)),
            Err(other) => Err(fail(io::Error::other(other.to_string()))),
        }
    }

    /// The bundle at `url`, or the one applied last when it cannot be had.
    fn fetch_bundle(
        &self,
        url: &str,
        ca: Option<&CaFile>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Fetched, Refusal> {
        let fetched = match http::locate(url) {
            Ok(Location::File(path)) => self.read_local(&path),
            Ok(Location::Http(u)) => http::fetch(
                &u,
                &FetchOptions {
                    ca: ca.cloned(),
                    ..FetchOptions::default()
                },
            ),
            Err(e) => Err(e),
        };
        let e = match fetched {
            Ok(bytes) => {
                self.progress(
                    out,
                    format_args!("fetched {} ({} bytes)", http::redact(url), bytes.len()),
                );
                return Ok(Fetched {
                    bytes,
                    origin: url.to_owned(),
                    cached: false,
                });
            }
            Err(e) => e,
        };
        log.fetch_failed = true;
        let hint = e
            .hint()
            .unwrap_or("check the bundle URL and the server".into());
        log.note(out, format!("fetching the bundle failed: {e}"));
        let cache = self.root.path(CACHED_BUNDLE);
        let Some(bytes) = self.cached_bundle() else {
            return Err(refusal(
                "fetching failed, and no verified input is cached to fall back to",
                hint,
            ));
        };
        log.note(
            out,
            format!(
                "applying the last verified input instead: {}",
                cache.display()
            ),
        );
        Ok(Fetched {
            bytes,
            origin: CACHED_BUNDLE.to_owned(),
            cached: true,
        })
    }

    /// What a bundle records of its place (serial, commit), refused when a
    /// fresh bundle goes back or cannot be placed after the last one.
    fn bundle_place(
        &self,
        opened: &Opened<'_>,
        name: &str,
        last: Option<&Applied>,
        cached: bool,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Applied, Refusal> {
        let header = opened.header();
        let commit = header
            .commit
            .map(|c| {
                ObjectId::from_hex(c.id.as_bytes())
                    .map(|id| (id, c.time))
                    .map_err(|e| refusal(format!("refusing {name}: bad commit id: {e}"), ""))
            })
            .transpose()?;
        let place = rollback::Placement {
            serial: header.serial,
            commit: commit.map(|(id, _)| id),
            commit_time: commit.map_or(0, |(_, time)| time),
            contents: Some(opened.contents_sha256),
        };
        if place.serial.is_none() && place.commit.is_none() {
            log.note(
                out,
                "the bundle records neither a serial nor a commit (it was made outside git), so going back cannot be detected".to_owned(),
            );
        }
        // The bundle kept as the last verified one is checked too: kept
        // apart from the record, it may be older than what it records.
        match rollback::check_bundle(last, place, &self.policy()) {
            Ok(Progress::Allowed(why)) => {
                log.note(out, format!("--allow-rollback: applying it anyway: {why}"))
            }
            Ok(_) => {}
            Err(e) if cached => {
                let mut r = refused(&e).because("rollback");
                r.message = format!(
                    "{name}, kept as the last verified bundle, is not the input recorded as applied: {}",
                    r.message
                );
                r.hint = "the kept bundle is older than the record (a write that failed, or a copy put back): the next bundle fetched replaces it".to_owned();
                return Err(r);
            }
            Err(e) => return Err(refused(&e).because("rollback")),
        }
        Ok(Applied::Bundle {
            expires: header.expires,
            serial: place.serial,
            commit: place.commit,
            commit_time: place.commit_time,
            contents: place.contents,
        })
    }
}
