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

use super::{Agent, Input, Log, REPO, Refusal, now_secs, refusal, refused};
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
    pub(super) fn git_input(
        &self,
        source: &GitSource,
        fleet: &str,
        max_age: Option<Duration>,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Input, Refusal> {
        let last = self.last_applied(log, out)?;
        let signers = self.signers(self.config.allowed_signers.as_ref(), "allowed_signers")?;
        let repo_dir = self.root.path(REPO);
        let repo = LocalRepo::open_or_init(&repo_dir).map_err(|e| refused(&e))?;
        let candidates = self.choose_commit(&repo, source, last.as_ref(), log, out)?;
        let chosen = self.pick(&repo, candidates, signers.as_ref(), last.as_ref(), log, out)?;
        log.source = Some(chosen.origin.clone());
        if let Some(max_age) = max_age {
            check_age(&chosen, max_age, now_secs(), log, out)?;
        }
        let items = self.git_items(&repo_dir, fleet, chosen.commit, log)?;
        Ok(Input {
            items,
            commit: Some(chosen.commit.to_string()),
            applied: Some(Applied::Git {
                commit: chosen.commit,
                commit_time: chosen.time,
            }),
            cached: chosen.cached,
            bundle: None,
            fleet: None,
        })
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

    /// The host's resources in the fleet at `commit` of the agent's repository.
    fn git_items(
        &self,
        repo: &Path,
        fleet: &str,
        commit: ObjectId,
        log: &mut Log,
    ) -> Result<Vec<Item>, Refusal> {
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
        Ok(items(&manifest, &reader))
    }
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
