//! Git mode's input: fetch the branch (or fall back to the commit applied
//! last), check its signature and that it does not go back, and resolve the
//! host in the fleet at that commit.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use datum_apply::root::Root;
use datum_apply::spec::{Item, items};
use datum_core::diagnostic::Diagnostic;
use datum_core::manifest::Manifest;
use datum_core::source::Files;
use datum_core::{host, loader};

use datum_core::hint::Hinted;

use super::{Agent, Input, Log, REPO, Refusal, hold, now_secs, refusal, refused};
use crate::fetch::{self, GitSource};
use crate::gitsig;
use crate::http;
use crate::repo::{LocalRepo, ObjectId};
use crate::rollback::{self, Applied, Progress};
use crate::sshsig::AllowedSigners;
use crate::sshsig::time::{format_utc, span};

/// Refuses a freshly fetched commit older than `max_age` by its commit
/// time: the newest verified tip of every remote is that old, so the
/// remotes may be frozen (a mirror that stopped syncing, a server held
/// back). The commit applied last, taken because fetching failed, is
/// applied however old, and the run says how stale the host is and exits 1.
fn check_age(
    chosen: &Chosen,
    max_age: Duration,
    now: i64,
    log: &mut Log,
    out: &mut dyn Write,
) -> Result<(), Refusal> {
    let limit = i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX);
    let age = now.saturating_sub(chosen.time);
    if age <= limit {
        return Ok(());
    }
    let hint = "the branch has not moved for longer than `max_age`, or every remote serves an old tip: check that the remotes are in sync with the repository, and commit (an empty commit will do) at least every `max_age` if the fleet may stay unchanged that long";
    let stale = format!(
        "committed at {} ({} ago), longer ago than `max_age` ({})",
        format_utc(chosen.time),
        span(age),
        span(limit)
    );
    if chosen.cached {
        log.stale = true;
        log.note(
            out,
            format!(
                "the last verified input, commit {}, was {stale}: this host is stale; {hint}",
                chosen.commit
            ),
        );
        return Ok(());
    }
    Err(refusal(
        format!(
            "refusing commit {} from {}: the newest verified commit of every remote was {stale}; this host stays on its last verified input",
            chosen.commit, chosen.origin
        ),
        hint,
    )
    .because("stale"))
}

/// The commit a run applies, and where it came from.
struct Chosen {
    commit: ObjectId,
    time: i64,
    /// The remote that gave it (as configured), or the agent's repository.
    origin: String,
    /// The commit applied last, taken because fetching failed.
    cached: bool,
}

impl Agent {
    /// The commit this run applies: the newest fetched tip when it passes
    /// every check and its wave's delay has passed since this host first
    /// saw it; else the commit applied last (the refusal, or the wait, is
    /// reported); `None` when the first tip a host gets waits.
    pub(super) fn git_input(
        &self,
        source: &GitSource,
        fleet: &str,
        max_age: Option<Duration>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Option<Input>, Refusal> {
        let last = self.last_applied(log, out)?;
        log.expires = last.as_ref().and_then(|l| self.expiry_of(l));
        let signers = self.signers(self.config.allowed_signers.as_ref(), "allowed_signers")?;
        let repo_dir = self.root.path(REPO);
        let repo = LocalRepo::open_or_init(&repo_dir).map_err(|e| refused(&e))?;
        let (last, signers) = (last.as_ref(), signers.as_ref());
        let candidates = self.choose_commit(&repo, source, last, log, out)?;
        let fresh = self
            .pick(&repo, candidates, signers, last, log, out)
            .and_then(|chosen| {
                log.source = Some(chosen.origin.clone());
                if let Some(max_age) = max_age {
                    check_age(&chosen, max_age, now_secs(), log, out)?;
                }
                let (items, delay) = self.git_items(&repo_dir, fleet, chosen.commit, log)?;
                let input = git_input(chosen.commit, chosen.time, items, chosen.cached);
                if !chosen.cached {
                    self.refused_again(
                        &input,
                        &format!("commit {}", chosen.commit),
                        Some(&repo),
                        log,
                    )?;
                }
                Ok((input, delay))
            });
        let (input, delay) = match fresh {
            Ok(fresh) => fresh,
            Err(r) => return self.git_fallback(Some(r), &repo, fleet, signers, last, log, out),
        };
        let commit = input.commit.clone();
        let tip = input.applied.and_then(|a| a.commit());
        let new = !input.cached && last.and_then(Applied::commit) != tip;
        let Some(tip) = tip.filter(|_| new && delay > 0) else {
            return Ok(Some(input));
        };
        if immediate(&repo, tip) {
            self.progress(
                out,
                format_args!("commit {tip} says `Datum-Rollout: immediate`: no wave to wait for"),
            );
            return Ok(Some(input));
        }
        let now = now_secs();
        let seen = match hold::load::<hold::Waiting>(&self.root, hold::PENDING) {
            Ok(Some(w)) if w.is(commit.as_deref(), None) => w.seen,
            Ok(_) => now,
            Err(e) => {
                log.note(out, e);
                now
            }
        };
        let due = seen.saturating_add(i64::try_from(delay).unwrap_or(i64::MAX));
        if due <= now {
            return Ok(Some(input));
        }
        let waiting = hold::Waiting {
            commit,
            serial: None,
            seen,
            due,
        };
        self.wait_for(&waiting, log, out);
        self.git_fallback(None, &repo, fleet, signers, last, log, out)
    }

    /// The commit applied last, checked again, applied instead of a new
    /// tip that was `refused` (the run still exits 1) or waits for its
    /// wave (`None`). Without one, the refusal stands, or nothing is
    /// applied.
    #[allow(clippy::too_many_arguments)]
    fn git_fallback(
        &self,
        refused: Option<Refusal>,
        repo: &LocalRepo,
        fleet: &str,
        signers: Option<&AllowedSigners>,
        last: Option<&Applied>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Option<Input>, Refusal> {
        let Some(&Applied::Git {
            commit,
            commit_time,
        }) = last
        else {
            return refused.map_or(Ok(None), Err);
        };
        let chosen = Chosen {
            commit,
            time: commit_time,
            origin: REPO.to_owned(),
            cached: true,
        };
        let checked = self
            .verify_commit(repo, &chosen, signers, last, log, out)
            .and_then(|()| self.git_items(repo.path(), fleet, commit, log));
        match checked {
            Ok((items, _)) => {
                log.source = Some(REPO.to_owned());
                log.note(
                    out,
                    format!("applying the last verified input instead: commit {commit}"),
                );
                log.refused = refused;
                Ok(Some(git_input(commit, commit_time, items, true)))
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

    /// The commit applied last, checked again (a rollback puts it back).
    pub(super) fn git_previous(
        &self,
        fleet: &str,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Option<Input>, Refusal> {
        let last = self.last_applied(log, out)?;
        let signers = self.signers(self.config.allowed_signers.as_ref(), "allowed_signers")?;
        let Some(&Applied::Git {
            commit,
            commit_time,
        }) = last.as_ref()
        else {
            return Ok(None);
        };
        let repo = LocalRepo::open_or_init(&self.root.path(REPO)).map_err(|e| refused(&e))?;
        let chosen = Chosen {
            commit,
            time: commit_time,
            origin: REPO.to_owned(),
            cached: true,
        };
        self.verify_commit(&repo, &chosen, signers.as_ref(), last.as_ref(), log, out)?;
        let (items, _) = self.git_items(repo.path(), fleet, commit, log)?;
        Ok(Some(git_input(commit, commit_time, items, true)))
    }

    /// The branch's tip on every remote that answers (in the order of the
    /// remotes), or the commit applied last when none does.
    fn choose_commit(
        &self,
        repo: &LocalRepo,
        source: &GitSource,
        last: Option<&Applied>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Vec<Chosen>, Refusal> {
        let remotes = source
            .remotes()
            .iter()
            .map(|r| remote_under_root(r, &self.root))
            .collect();
        let local = GitSource::new(remotes, source.branch().to_owned())
            .map_err(|e| refused(&e))?
            .with_timeout(source.timeout());
        match fetch::fetch(repo, &local) {
            Ok(fetched) => {
                for failure in &fetched.failures {
                    log.note(
                        out,
                        format!(
                            "remote {} failed ({}); the others were asked",
                            shown_remote(&failure.remote, source, &local),
                            failure.error
                        ),
                    );
                }
                let mut tips = Vec::new();
                for tip in fetched.tips {
                    let remote = shown_remote(&tip.remote, source, &local);
                    self.progress(out, format_args!("fetched {} from {remote}", tip.commit));
                    tips.push(Chosen {
                        commit: tip.commit,
                        time: tip.commit_time,
                        origin: remote,
                        cached: false,
                    });
                }
                Ok(tips)
            }
            Err(e) => {
                log.fetch_failed = true;
                log.note(out, e.to_string());
                let Some(&Applied::Git {
                    commit,
                    commit_time,
                }) = last
                else {
                    return Err(refusal(
                        "fetching failed, and no verified input is cached to fall back to",
                        e.hint().unwrap_or_default(),
                    ));
                };
                log.note(
                    out,
                    format!("applying the last verified input instead: commit {commit}"),
                );
                Ok(vec![Chosen {
                    commit,
                    time: commit_time,
                    origin: REPO.to_owned(),
                    cached: true,
                }])
            }
        }
    }

    /// The newest of `candidates` that passes [`Agent::verify_commit`]: one
    /// that descends from every other that passes (the first in the order
    /// of the remotes when two have parted). A mirror that serves an old
    /// tip, or one that fails the checks, is noted and passed over; only
    /// when none passes is the run refused, with the first one's reason.
    fn pick(
        &self,
        repo: &LocalRepo,
        candidates: Vec<Chosen>,
        signers: Option<&AllowedSigners>,
        last: Option<&Applied>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Chosen, Refusal> {
        let several = candidates.len() > 1;
        let mut passed: Vec<Chosen> = Vec::new();
        let mut refusals = Vec::new();
        for c in candidates {
            if passed.iter().any(|p| p.commit == c.commit) {
                continue;
            }
            match self.verify_commit(repo, &c, signers, last, log, out) {
                Ok(()) => passed.push(c),
                Err(r) => refusals.push((c.origin.clone(), r)),
            }
        }
        let limit = self.policy().walk_limit;
        let mut best: Option<Chosen> = None;
        for c in passed {
            best = match best {
                Some(b) if !rollback::descends(repo, b.commit, c.commit, limit) => Some(b),
                _ => Some(c),
            };
        }
        let Some(best) = best else {
            let (_, first) = refusals
                .into_iter()
                .next()
                .ok_or_else(|| refusal("no remote gave a commit", "check the remotes"))?;
            return Err(first);
        };
        for (origin, r) in refusals {
            log.note(
                out,
                format!("remote {origin} was passed over: {}", r.message),
            );
        }
        if several {
            self.progress(
                out,
                format_args!("taking {} from {}", best.commit, best.origin),
            );
        }
        Ok(best)
    }

    /// Refuses a commit without a trusted signature (when signers are
    /// configured) or, when freshly fetched, one that goes back.
    fn verify_commit(
        &self,
        repo: &LocalRepo,
        chosen: &Chosen,
        signers: Option<&AllowedSigners>,
        last: Option<&Applied>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<(), Refusal> {
        let commit = chosen.commit;
        if let Some(signers) = signers {
            let signer = gitsig::verify_commit(repo, commit, signers, now_secs())
                .map_err(|e| refused(&e).because("signature"))?;
            self.progress(
                out,
                format_args!(
                    "commit {commit} is signed by {} ({})",
                    signer.principals.join(", "),
                    signer.fingerprint
                ),
            );
        }
        if !chosen.cached {
            match rollback::check_git(repo, last, commit, &self.policy()) {
                Ok(Progress::Allowed(why)) => {
                    log.note(out, format!("--allow-rollback: applying it anyway: {why}"))
                }
                Ok(_) => {}
                Err(e) => return Err(refused(&e).because("rollback")),
            }
        }
        Ok(())
    }

    /// The host's resources in the fleet at `commit` of the agent's
    /// repository, and how long after this host first sees it its rollout
    /// wave starts (seconds; the waves declared at that commit).
    fn git_items(
        &self,
        repo: &Path,
        fleet: &str,
        commit: ObjectId,
        log: &mut Log,
    ) -> Result<(Vec<Item>, u64), Refusal> {
        let git = |e: datum_git::GitError| {
            refusal(
                e.to_string(),
                "check `fleet` in the agent configuration: the fleet's directory inside the repository",
            )
        };
        let repo = datum_git::Repo::open_bare(repo, fleet).map_err(git)?;
        let rev = repo.resolve(&commit.to_string()).map_err(git)?;
        let reader = repo.reader(&rev).map_err(git)?;
        let fleet = loader::load(&reader).map_err(|e| {
            refusal(
                e.to_string(),
                "check the repository: the fleet cannot be read",
            )
        })?;
        let resolved = match host::resolve(&fleet, &self.host) {
            Ok(r) => r,
            Err(e) => {
                let message = with_diagnostics(e.to_string(), &fleet.files, e.diagnostics());
                return Err(refusal(message, e.hint().unwrap_or_default()));
            }
        };
        if let Err(e) = resolved.require_ok() {
            let message = with_diagnostics(e.to_string(), &fleet.files, &resolved.problems);
            return Err(refusal(
                message,
                "fix the fleet and push: `datum check` shows the same errors",
            ));
        }
        self.check_labels(&fleet.tied(resolved.host), Some(&fleet.files), log)?;
        let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
        let plan = datum_core::rollout::plan(&fleet);
        let delay = plan
            .wave_of(resolved.host)
            .map_or(0, |i| plan.waves[i].start);
        Ok((items(&manifest, &reader), delay))
    }
}

/// A git-mode input: `commit`, recorded as applied once applied.
fn git_input(commit: ObjectId, time: i64, items: Vec<Item>, cached: bool) -> Input {
    Input {
        items,
        commit: Some(commit.to_string()),
        not_before: None,
        applied: Some(Applied::Git {
            commit,
            commit_time: time,
        }),
        cached,
        bundle: None,
        fleet: None,
    }
}

/// Whether `commit`'s message ends with the trailer `Datum-Rollout:
/// immediate`: an urgent change (a revert) that skips the waves. The
/// commit is signed, so the trailer is too.
fn immediate(repo: &LocalRepo, commit: ObjectId) -> bool {
    let Ok(found) = repo.gix().find_commit(commit) else {
        return false;
    };
    let Ok(message) = found.message_raw() else {
        return false;
    };
    has_immediate_trailer(&String::from_utf8_lossy(message))
}

/// Whether the last paragraph of `message` (its trailers) holds
/// `Datum-Rollout: immediate` (the key's case does not matter, as git's
/// does not).
fn has_immediate_trailer(message: &str) -> bool {
    let trimmed = message.trim_end();
    let last = trimmed.rsplit("\n\n").next().unwrap_or("");
    // A one-paragraph message has no trailers: its subject is not one.
    if last.len() == trimmed.len() {
        return false;
    }
    last.lines().any(|line| {
        line.split_once(':').is_some_and(|(key, value)| {
            key.trim().eq_ignore_ascii_case("Datum-Rollout") && value.trim() == "immediate"
        })
    })
}

/// A local remote (a path or `file://` URL) moved under the root, so that
/// `--root` holds every path the agent touches; other remotes as written.
fn remote_under_root(remote: &str, root: &Root) -> String {
    if root.dir().is_none() {
        return remote.to_owned();
    }
    if remote.starts_with('/') {
        return root.path(remote).display().to_string();
    }
    if let Some(path) = remote.strip_prefix("file://")
        && path.starts_with('/')
    {
        return format!("file://{}", root.path(path).display());
    }
    remote.to_owned()
}

/// A remote as configured, for messages and the report (not its place
/// under the root).
fn shown_remote(remote: &str, configured: &GitSource, local: &GitSource) -> String {
    let index = local.remotes().iter().position(|r| r == remote);
    index
        .and_then(|i| configured.remotes().get(i))
        .map_or_else(|| remote.to_owned(), |r| http::redact(r))
}

fn with_diagnostics(message: String, files: &Files, diags: &[Diagnostic]) -> String {
    let mut text = Vec::new();
    for d in diags.iter().filter(|d| d.is_error()) {
        let _ = datum_core::present::diagnostic::write(d, files, &mut text);
    }
    let text = String::from_utf8_lossy(&text);
    if text.trim().is_empty() {
        message
    } else {
        format!("{message}\n{}", text.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_immediate_trailer_is_read_from_the_last_paragraph_only() {
        for yes in [
            "Revert the resolver change\n\nDatum-Rollout: immediate\n",
            "Fix\n\nBody text.\n\nSigned-off-by: A <a@x>\ndatum-rollout:  immediate\n",
        ] {
            assert!(has_immediate_trailer(yes), "{yes:?}");
        }
        for no in [
            "Datum-Rollout: immediate\n",
            "Fix\n\nDatum-Rollout: immediate\n\nThe body goes on.\n",
            "Fix\n\nDatum-Rollout: later\n",
            "Fix\n\nNot-Datum-Rollout: immediate\n",
        ] {
            assert!(!has_immediate_trailer(no), "{no:?}");
        }
    }

    #[test]
    fn local_remotes_move_under_the_root_and_others_do_not() {
        let root = Root::at("/tmp/r");
        assert_eq!(remote_under_root("/srv/f.git", &root), "/tmp/r/srv/f.git");
        assert_eq!(
            remote_under_root("file:///srv/f.git", &root),
            "file:///tmp/r/srv/f.git"
        );
        for other in ["https://h/f.git", "ssh://git@h/f.git", "git@h:f.git"] {
            assert_eq!(remote_under_root(other, &root), other);
        }
        assert_eq!(
            remote_under_root("/srv/f.git", &Root::system()),
            "/srv/f.git"
        );
    }
}
