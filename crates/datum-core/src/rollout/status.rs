//! `datum rollout status` and `datum rollout gate`: where each host of each
//! wave stands with one revision, told by the run reports hosts left.
//!
//! Pure: the reports come in already read ([`Reported`], the few fields of
//! a run report this needs), and so does the time the status is taken at.
//! Each host is in exactly one [`State`], decided so (the first that holds):
//!
//! 1. Its newest report that speaks of the revision (applied it, refused
//!    it, or rolled it back) rolled it back: **rolled back**.
//! 2. That report refused it, or applied it and failed (exit status other
//!    than 0 or 2, or a resource failed, unless the run only refused
//!    another input): **failed**. A failure stays a failure after the
//!    host went quiet or moved on to another revision (a revert).
//! 3. No report, or the newest older than the silence bound: **silent**.
//! 4. The newest report applied the revision: **updated**.
//! 5. The newest report holds it back for its wave (`pending`): **pending**.
//! 6. Otherwise the host runs another revision: **behind**.

use std::collections::BTreeMap;

use crate::emit::Tree;
use crate::fleet::{Fleet, HostId};
use crate::report::count;
use crate::rollout::{Plan, duration_text, percent_text};

mod reported;
pub use reported::Reported;

/// Where a host stands with the revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    Updated,
    Pending { due: i64 },
    Failed { exit_status: i32, failed: u64 },
    RolledBack { checks: Vec<String> },
    Silent,
    Behind { commit: Option<String> },
}

/// The states in the order they are counted and shown.
pub const STATES: [&str; 6] = [
    "updated",
    "pending",
    "failed",
    "rolled_back",
    "silent",
    "behind",
];

impl State {
    /// Its index in [`STATES`].
    pub fn index(&self) -> usize {
        match self {
            State::Updated => 0,
            State::Pending { .. } => 1,
            State::Failed { .. } => 2,
            State::RolledBack { .. } => 3,
            State::Silent => 4,
            State::Behind { .. } => 5,
        }
    }

    /// Failed or rolled back: what `gate` counts against a wave.
    pub fn went_wrong(&self) -> bool {
        matches!(self, State::Failed { .. } | State::RolledBack { .. })
    }
}

/// One host: its state, and the report that decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostStatus {
    pub host: HostId,
    pub state: State,
    pub report: Option<Reported>,
    /// Its newest report, whatever it says (`None`: it never reported).
    pub last_seen: Option<String>,
}

/// One wave of the plan and its hosts, in name order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveStatus {
    pub name: String,
    /// Seconds after publication.
    pub start: u64,
    pub hosts: Vec<HostStatus>,
}

impl WaveStatus {
    /// How many hosts are in each of [`STATES`].
    pub fn counts(&self) -> [usize; 6] {
        let mut n = [0; 6];
        for h in &self.hosts {
            n[h.state.index()] += 1;
        }
        n
    }

    /// Its failed and rolled-back hosts.
    pub fn wrong(&self) -> impl Iterator<Item = &HostStatus> {
        self.hosts.iter().filter(|h| h.state.went_wrong())
    }
}

/// The newest report of each host, and its newest that speaks of the
/// revision, collected one report at a time (a fleet's reports need not
/// fit in memory together).
#[derive(Debug)]
pub struct Collector {
    revision: String,
    /// When the status is taken, milliseconds since the epoch.
    as_of: u64,
    /// Reports that finished after `as_of` are left out.
    replay: bool,
    hosts: BTreeMap<String, Seen>,
    /// Reports read, after the ones past `as_of` were left out.
    pub reports: usize,
}

#[derive(Debug, Default)]
struct Seen {
    newest: Option<Reported>,
    mention: Option<Reported>,
}

impl Collector {
    /// For the rollout of `revision` (a full commit id), as of `as_of`
    /// (milliseconds since the epoch). With `replay`, reports that
    /// finished after `as_of` are left out (the status of a past moment);
    /// without, they count: a host whose clock runs ahead is not silent.
    pub fn new(revision: &str, as_of: u64, replay: bool) -> Collector {
        Collector {
            revision: revision.to_owned(),
            as_of,
            replay,
            hosts: BTreeMap::new(),
            reports: 0,
        }
    }

    pub fn add(&mut self, r: Reported) {
        if self.replay && r.finished > self.as_of {
            return;
        }
        self.reports += 1;
        let rev = Some(self.revision.as_str());
        let mentions = r.commit.as_deref() == rev
            || r.refused(rev)
            || r.rolled_back
                .as_ref()
                .is_some_and(|(c, _)| c.as_deref() == rev);
        let seen = self.hosts.entry(r.host.clone()).or_default();
        if mentions && seen.mention.as_ref().is_none_or(|m| r.key() > m.key()) {
            seen.mention = Some(r.clone());
        }
        if seen.newest.as_ref().is_none_or(|n| r.key() > n.key()) {
            seen.newest = Some(r);
        }
    }

    /// The status of every wave of `plan`, hosts silent when their newest
    /// report is more than `silent_after` seconds old. Also the names of
    /// hosts that reported but are not in the fleet, sorted.
    pub fn status(mut self, fleet: &Fleet, plan: &Plan, silent_after: u64) -> Status {
        let bound = self.as_of.saturating_sub(silent_after.saturating_mul(1000));
        let waves = plan
            .waves
            .iter()
            .map(|w| WaveStatus {
                name: w.name.clone(),
                start: w.start,
                hosts: w
                    .hosts
                    .iter()
                    .map(|&h| {
                        let seen = self.hosts.remove(&*fleet.host(h).name).unwrap_or_default();
                        self.judge(h, seen, bound)
                    })
                    .collect(),
            })
            .collect();
        Status {
            revision: self.revision,
            as_of: self.as_of,
            silent_after,
            waves,
            strangers: self.hosts.into_keys().collect(),
            reports: self.reports,
        }
    }

    fn judge(&self, host: HostId, seen: Seen, bound: u64) -> HostStatus {
        let rev = Some(self.revision.as_str());
        let last_seen = seen.newest.as_ref().map(|n| n.finished_text.clone());
        let done = |state, report| HostStatus {
            host,
            state,
            report,
            last_seen: last_seen.clone(),
        };
        if let Some(m) = seen.mention {
            if let Some((_, checks)) = m.rolled_back.as_ref().filter(|(c, _)| c.as_deref() == rev) {
                let checks = checks.clone();
                return done(State::RolledBack { checks }, Some(m));
            }
            if m.refused(rev) || !m.succeeded(rev) {
                let state = State::Failed {
                    exit_status: m.exit_status,
                    failed: m.failed,
                };
                return done(state, Some(m));
            }
        }
        let Some(newest) = seen.newest.filter(|n| n.finished >= bound) else {
            return done(State::Silent, None);
        };
        let state = if newest.commit.as_deref() == rev {
            State::Updated
        } else if let Some((_, due)) = newest.pending.as_ref().filter(|(c, _)| c.as_deref() == rev)
        {
            State::Pending { due: *due }
        } else {
            State::Behind {
                commit: newest.commit.clone(),
            }
        };
        done(state, Some(newest))
    }
}

/// Every wave's hosts, by where they stand with one revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The full commit id.
    pub revision: String,
    /// Milliseconds since the epoch.
    pub as_of: u64,
    /// Seconds.
    pub silent_after: u64,
    pub waves: Vec<WaveStatus>,
    /// Hosts that reported and that the fleet does not declare.
    pub strangers: Vec<String>,
    /// Reports counted.
    pub reports: usize,
}

impl Status {
    /// The hosts in each of [`STATES`], every wave together.
    pub fn counts(&self) -> [usize; 6] {
        let mut n = [0; 6];
        for w in &self.waves {
            for (t, c) in n.iter_mut().zip(w.counts()) {
                *t += c;
            }
        }
        n
    }

    /// `3 updated, 1 pending, 1 failed, ...`: every state, zero or not.
    pub fn counts_line(counts: [usize; 6]) -> String {
        STATES
            .iter()
            .zip(counts)
            .map(|(s, n)| format!("{n} {}", s.replace('_', " ")))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The verdict of `rollout gate`: the waves whose failed and
    /// rolled-back hosts are more than `max` hundredths of a percent of
    /// their hosts, or with `max_silent` whose silent hosts are more than
    /// that (only `wave`, when given).
    pub fn gate(&self, max: u32, max_silent: Option<u32>, wave: Option<&str>) -> Gate<'_> {
        let judged: Vec<&WaveStatus> = self
            .waves
            .iter()
            .filter(|w| wave.is_none_or(|n| n == w.name))
            .collect();
        let mut gate = Gate {
            status: self,
            max,
            max_silent,
            wave: wave.map(str::to_owned),
            judged,
            tripped: Vec::new(),
        };
        gate.tripped = gate
            .judged
            .iter()
            .copied()
            .filter(|w| gate.too_many_wrong(w) || gate.too_many_silent(w))
            .collect();
        gate
    }

    /// As one JSON document (`type: RolloutStatus`); `revision_text` is
    /// the revision as asked for (`main (1a2b3c4)`), `as_of` and `due`
    /// times already written as RFC 3339.
    pub fn tree<'a>(
        &'a self,
        fleet: &'a Fleet,
        revision_text: &'a str,
        as_of: &'a str,
        diagnostics: &'a [crate::diagnostic::Diagnostic],
    ) -> Tree<'a> {
        let counts = |n: [usize; 6]| {
            STATES
                .iter()
                .zip(n)
                .fold(Tree::map(), |t, (s, c)| t.with(*s, Tree::Int(c as i64)))
        };
        let hosts = self.waves.iter().map(|w| w.hosts.len()).sum::<usize>();
        let waves = self.waves.iter().map(|w| {
            Tree::map()
                .with("name", Tree::str(w.name.as_str()))
                .with("start_seconds", Tree::Int(w.start as i64))
                .with("start", Tree::str(duration_text(w.start)))
                .with(
                    "summary",
                    counts(w.counts()).with("hosts", Tree::Int(w.hosts.len() as i64)),
                )
                .with(
                    "hosts",
                    Tree::List(w.hosts.iter().map(|h| host_tree(fleet, h)).collect()),
                )
        });
        Tree::document("RolloutStatus")
            .with("revision", Tree::str(self.revision.as_str()))
            .with("revision_text", Tree::str(revision_text))
            .with("as_of", Tree::str(as_of))
            .with("silent_after_seconds", Tree::Int(self.silent_after as i64))
            .with(
                "summary",
                counts(self.counts())
                    .with("hosts", Tree::Int(hosts as i64))
                    .with("waves", Tree::Int(self.waves.len() as i64))
                    .with("reports", Tree::Int(self.reports as i64)),
            )
            .with(
                "summary_line",
                Tree::str(format!(
                    "{} in {}: {}",
                    count(hosts, "host"),
                    count(self.waves.len(), "wave"),
                    Status::counts_line(self.counts())
                )),
            )
            .with("waves", Tree::List(waves.collect()))
            .with("unknown_hosts", Tree::strs(self.strangers.iter()))
            .with(
                "diagnostics",
                Tree::List(
                    diagnostics
                        .iter()
                        .map(|d| crate::emit::diagnostic(&fleet.files, d))
                        .collect(),
                ),
            )
    }
}

/// What `rollout gate` decided.
#[derive(Debug)]
pub struct Gate<'s> {
    pub status: &'s Status,
    /// Hundredths of a percent.
    pub max: u32,
    /// Hundredths of a percent, when silent hosts count.
    pub max_silent: Option<u32>,
    pub wave: Option<String>,
    /// The waves judged: every wave, or the one asked for.
    pub judged: Vec<&'s WaveStatus>,
    /// Of those, the ones that went wrong.
    pub tripped: Vec<&'s WaveStatus>,
}

/// `n` of `of` in hundredths of a percent, rounded down (0 of none).
fn share(n: usize, of: usize) -> u32 {
    ((n as u64 * 10_000).checked_div(of as u64).unwrap_or(0)) as u32
}

impl Gate<'_> {
    /// More of the wave's hosts failed or rolled back than `max` allows.
    pub fn too_many_wrong(&self, w: &WaveStatus) -> bool {
        w.wrong().count() as u64 * 10_000 > u64::from(self.max) * w.hosts.len() as u64
    }

    /// Silent hosts count, and more of the wave's are than allowed.
    pub fn too_many_silent(&self, w: &WaveStatus) -> bool {
        let silent = w.counts()[State::Silent.index()] as u64;
        self.max_silent
            .is_some_and(|m| silent * 10_000 > u64::from(m) * w.hosts.len() as u64)
    }

    /// Why a wave went wrong, one sentence a reason: `1 of 2 hosts failed
    /// or rolled back (50%), more than 0%`.
    pub fn reasons(&self, w: &WaveStatus) -> Vec<String> {
        let n = w.hosts.len();
        let mut out = Vec::new();
        if self.too_many_wrong(w) {
            let wrong = w.wrong().count();
            out.push(format!(
                "{wrong} of {} failed or rolled back ({}%), more than {}%",
                count(n, "host"),
                percent_text(share(wrong, n)),
                percent_text(self.max)
            ));
        }
        if let Some(m) = self.max_silent.filter(|_| self.too_many_silent(w)) {
            let silent = w.counts()[State::Silent.index()];
            out.push(format!(
                "{silent} of {} silent ({}%), more than {}%",
                count(n, "host"),
                percent_text(share(silent, n)),
                percent_text(m)
            ));
        }
        out
    }

    /// The hosts to name under a wave that went wrong: failed, rolled
    /// back, and silent when silent hosts count; with their state's words.
    pub fn named<'w>(
        &self,
        w: &'w WaveStatus,
    ) -> impl Iterator<Item = (&'w HostStatus, &'static str)> {
        let silent = self.max_silent.is_some();
        w.hosts.iter().filter_map(move |h| match h.state {
            State::Failed { .. } => Some((h, "failed")),
            State::RolledBack { .. } => Some((h, "rolled back")),
            State::Silent if silent => Some((h, "silent")),
            _ => None,
        })
    }

    /// What passing means: `no wave has more than 10% of its hosts failed
    /// or rolled back[, nor more than 20% silent]`.
    pub fn pass_text(&self) -> String {
        let mut t = format!(
            "no wave has more than {}% of its hosts failed or rolled back",
            percent_text(self.max)
        );
        if let Some(m) = self.max_silent {
            t += &format!(", nor more than {}% silent", percent_text(m));
        }
        t
    }

    /// Silent hosts of the waves judged (not counted, but worth a note).
    pub fn silent(&self) -> usize {
        self.judged
            .iter()
            .map(|w| w.counts()[State::Silent.index()])
            .sum()
    }

    /// As one JSON document (`type: RolloutGate`).
    pub fn tree<'a>(
        &'a self,
        fleet: &'a Fleet,
        revision_text: &'a str,
        as_of: &'a str,
        diagnostics: &'a [crate::diagnostic::Diagnostic],
    ) -> Tree<'a> {
        let waves = self.judged.iter().map(|w| {
            let names = |rolled: bool| {
                Tree::strs(
                    w.wrong()
                        .filter(move |h| matches!(h.state, State::RolledBack { .. }) == rolled)
                        .map(|h| &*fleet.host(h.host).name),
                )
            };
            let n = w.hosts.len();
            let silent = w.hosts.iter().filter(|h| h.state == State::Silent);
            Tree::map()
                .with("name", Tree::str(w.name.as_str()))
                .with("count", Tree::Int(n as i64))
                .with("failed", names(false))
                .with("rolled_back", names(true))
                .with(
                    "share",
                    Tree::str(percent_text(share(w.wrong().count(), n))),
                )
                .with(
                    "silent",
                    Tree::strs(silent.clone().map(|h| &*fleet.host(h.host).name)),
                )
                .with(
                    "silent_share",
                    Tree::str(percent_text(share(silent.count(), n))),
                )
                .with(
                    "went_wrong",
                    Tree::Bool(self.tripped.iter().any(|t| std::ptr::eq(*t, *w))),
                )
        });
        let line = match self.tripped.len() {
            0 => format!("passes: {}", self.pass_text()),
            n => format!(
                "fails: {} of {} went wrong",
                n,
                count(self.judged.len(), "wave")
            ),
        };
        Tree::document("RolloutGate")
            .with("revision", Tree::str(self.status.revision.as_str()))
            .with("revision_text", Tree::str(revision_text))
            .with("as_of", Tree::str(as_of))
            .with("max_failed", Tree::str(percent_text(self.max)))
            .with(
                "max_silent",
                self.max_silent
                    .map_or(Tree::Null, |m| Tree::str(percent_text(m))),
            )
            .with("wave", self.wave.as_deref().map_or(Tree::Null, Tree::str))
            .with("passed", Tree::Bool(self.tripped.is_empty()))
            .with(
                "summary",
                Tree::map()
                    .with("waves", Tree::Int(self.judged.len() as i64))
                    .with("went_wrong", Tree::Int(self.tripped.len() as i64))
                    .with("silent", Tree::Int(self.silent() as i64)),
            )
            .with("summary_line", Tree::str(line))
            .with("waves", Tree::List(waves.collect()))
            .with(
                "diagnostics",
                Tree::List(
                    diagnostics
                        .iter()
                        .map(|d| crate::emit::diagnostic(&fleet.files, d))
                        .collect(),
                ),
            )
    }
}

/// One host in JSON: its name, state, what the state says, and its report.
fn host_tree<'a>(fleet: &'a Fleet, h: &'a HostStatus) -> Tree<'a> {
    let (commit, due, exit_status, checks) = match &h.state {
        State::Pending { due } => (None, Some(*due), None, None),
        State::Failed { exit_status, .. } => (None, None, Some(*exit_status), None),
        State::RolledBack { checks } => (None, None, None, Some(checks)),
        State::Behind { commit } => (commit.as_deref(), None, None, None),
        State::Updated | State::Silent => (None, None, None, None),
    };
    let opt_int = |v: Option<i64>| v.map_or(Tree::Null, Tree::Int);
    Tree::map()
        .with("host", Tree::str(&*fleet.host(h.host).name))
        .with("state", Tree::str(STATES[h.state.index()]))
        .with("commit", commit.map_or(Tree::Null, Tree::str))
        .with("due", opt_int(due))
        .with("exit_status", opt_int(exit_status.map(i64::from)))
        .with(
            "failed_checks",
            checks.map_or(Tree::Null, |c| Tree::strs(c.iter())),
        )
        .with(
            "run_id",
            h.report
                .as_ref()
                .map_or(Tree::Null, |r| Tree::str(r.run_id.as_str())),
        )
        .with(
            "last_report",
            h.last_seen.as_deref().map_or(Tree::Null, Tree::str),
        )
}

#[cfg(test)]
mod tests;
