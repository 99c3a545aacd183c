//! A run: order the resources, take the lock, then for each resource in
//! order observe, compare, and change only what differs, skipping what
//! comes after a failure, restarting services whose configuration changed.

use std::collections::BTreeMap;

mod batch;

pub use crate::error::ApplyError;
use crate::graph;
use crate::provider::{Context, Examined, Failure, Pending, Providers, Restarted, health};
use crate::report::{Attribute, Change, Outcome, Reason, Reporter, RunInfo, Status, Summary};
use crate::root::Root;
use crate::secret::Secrets;
use crate::spec::{Desired, Ensure, ExecSpec, Item};
use crate::state::{Ledger, State, StateError};
use datum_core::schema::ResourceId;

/// How to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Examine and report; change nothing at all.
    pub noop: bool,
    /// The private key secrets are decrypted with, as a path on the host
    /// (under the root); `None` is the SSH host key
    /// ([`crate::secret::DEFAULT_IDENTITY`]).
    pub identity: Option<String>,
}

/// A reporter that keeps the first error and stops writing after it, so a
/// closed terminal or pipe does not stop the run.
struct Guarded<'a> {
    inner: &'a mut dyn Reporter,
    error: Option<std::io::Error>,
}

impl Guarded<'_> {
    fn with(&mut self, f: impl FnOnce(&mut dyn Reporter) -> std::io::Result<()>) {
        if self.error.is_none()
            && let Err(e) = f(self.inner)
        {
            self.error = Some(e);
        }
    }
}

/// Applies the items (sorted by id, as a manifest gives them) to the machine
/// at `root`, reporting each resource as it is done.
pub fn apply(
    host: &str,
    items: &[Item],
    providers: &Providers,
    root: &Root,
    options: &Options,
    reporter: &mut dyn Reporter,
) -> Result<Summary, ApplyError> {
    let plan = graph::plan(items).map_err(ApplyError::Cycles)?;
    let mut state = State::open(root, options.noop)?;
    let secrets = Secrets::open(root, options.identity.as_deref())?;
    let mut reporter = Guarded {
        inner: reporter,
        error: None,
    };
    let info = RunInfo {
        host: host.to_owned(),
        root: root.dir().map(|d| d.display().to_string()),
        noop: options.noop,
        resources: items.len(),
    };
    reporter.with(|r| r.start(&info));
    let by_id: BTreeMap<&ResourceId, usize> = items
        .iter()
        .enumerate()
        .map(|(i, it)| (&it.id, i))
        .collect();
    let services = services(items);
    let restarted_by = restarted_by(items, &services, &by_id);
    drop_stale_restarts(&mut state.restarts, &services, options.noop, &mut reporter)?;
    let refreshed_by = refreshed_by(items, &by_id);
    drop_stale_refreshes(&mut state.refreshes, items, options.noop, &mut reporter)?;

    let mut run = Run {
        deps: &plan.deps,
        by_id,
        items,
        providers,
        noop: options.noop,
        state,
        secrets,
        status: vec![None; items.len()],
        changed: vec![false; items.len()],
        pending: Pending::default(),
        restarted_by,
        refreshed_by,
        batched: BTreeMap::new(),
    };
    let mut summary = Summary::default();
    for &i in &plan.order {
        let blocked = plan.deps[i].iter().find_map(|&(d, _)| match run.status[d] {
            Some(s @ (Status::Failed | Status::Skipped)) => Some((d, s)),
            _ => None,
        });
        let outcome = match blocked {
            Some((d, s)) => skipped(&items[i], &items[d], s),
            None => match run.batched.remove(&i) {
                Some(outcome) => outcome,
                None => run.one(i),
            },
        };
        run.status[i] = Some(outcome.status);
        run.changed[i] = matches!(outcome.status, Status::Changed | Status::WouldChange);
        summary.count(outcome.status);
        reporter.with(|r| r.resource(&outcome));
    }
    let mut to = |c: &health::Checked| reporter.with(|r| r.health(c));
    health::ask(items, &providers.exec, options.noop, &mut summary, &mut to);
    reporter.with(|r| r.finish(&summary));
    match reporter.error {
        Some(source) => Err(ApplyError::Report { source, summary }),
        None => Ok(summary),
    }
}

/// The services the manifest manages, by name, with their item's index.
fn services(items: &[Item]) -> BTreeMap<&str, usize> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| match &it.desired {
            Desired::Service(s) => Some((s.name.as_str(), i)),
            _ => None,
        })
        .collect()
}

/// For each item, the services that restart when it changes.
fn restarted_by<'a>(
    items: &'a [Item],
    services: &BTreeMap<&'a str, usize>,
    by_id: &BTreeMap<&ResourceId, usize>,
) -> Vec<Vec<&'a str>> {
    let mut restarted_by: Vec<Vec<&str>> = vec![Vec::new(); items.len()];
    for (name, &s) in services {
        for id in &items[s].restart_on {
            if let Some(&i) = by_id.get(id) {
                restarted_by[i].push(name);
            }
        }
    }
    restarted_by
}

/// A restart owed (by an earlier, interrupted run) to a service the
/// manifest no longer manages is dropped, with a note; a no-op run only
/// says it would be.
fn drop_stale_restarts(
    restarts: &mut Ledger,
    services: &BTreeMap<&str, usize>,
    noop: bool,
    reporter: &mut Guarded<'_>,
) -> Result<(), StateError> {
    let stale: Vec<String> = restarts
        .owed()
        .iter()
        .filter(|name| !services.contains_key(name.as_str()))
        .cloned()
        .collect();
    for name in stale {
        if noop {
            let note = format!(
                "a restart of {name} is owed, but no Service in the manifest manages it: a real run drops it"
            );
            reporter.with(|r| r.note(&note));
        } else {
            let note = format!(
                "a restart of {name} was owed, but no Service in the manifest manages it: dropped"
            );
            reporter.with(|r| r.note(&note));
            restarts.settle(&name)?;
        }
    }
    Ok(())
}

/// For each item, the `refresh_only` Execs (by id, as the refreshes
/// ledger writes them) that run when it changes.
fn refreshed_by(items: &[Item], by_id: &BTreeMap<&ResourceId, usize>) -> Vec<Vec<String>> {
    let mut refreshed_by = vec![Vec::new(); items.len()];
    for it in items {
        if !matches!(&it.desired, Desired::Exec(e) if e.refresh_only) {
            continue;
        }
        for id in &it.run_on {
            if let Some(&i) = by_id.get(id) {
                refreshed_by[i].push(it.id.to_string());
            }
        }
    }
    refreshed_by
}

/// A refresh owed (by an earlier, interrupted run) to an Exec the manifest
/// no longer has as `refresh_only` is dropped, with a note; a no-op run
/// only says it would be.
fn drop_stale_refreshes(
    refreshes: &mut Ledger,
    items: &[Item],
    noop: bool,
    reporter: &mut Guarded<'_>,
) -> Result<(), StateError> {
    let stale: Vec<String> = refreshes
        .owed()
        .iter()
        .filter(|id| {
            !items.iter().any(|it| {
                matches!(&it.desired, Desired::Exec(e) if e.refresh_only)
                    && it.id.to_string() == **id
            })
        })
        .cloned()
        .collect();
    for id in stale {
        let note = if noop {
            format!(
                "a refresh of {id} is owed, but the manifest has no such refresh_only Exec: a real run drops it"
            )
        } else {
            format!(
                "a refresh of {id} was owed, but the manifest has no such refresh_only Exec: dropped"
            )
        };
        reporter.with(|r| r.note(&note));
        if !noop {
            refreshes.settle(&id)?;
        }
    }
    Ok(())
}

/// The outcome of `item`, skipped because `dep` failed or was skipped.
fn skipped(item: &Item, dep: &Item, dep_status: Status) -> Outcome {
    Outcome {
        id: item.id.to_string(),
        summary: item.summary.clone(),
        status: Status::Skipped,
        changes: vec![],
        notes: vec![],
        command: None,
        reason: Some(Reason::After {
            id: dep.id.clone(),
            failed: dep_status == Status::Failed,
        }),
    }
}

/// The state of a run in progress.
struct Run<'a> {
    /// What each item comes after ([`graph::Plan::deps`]).
    deps: &'a [Vec<(usize, graph::Why)>],
    by_id: BTreeMap<&'a ResourceId, usize>,
    items: &'a [Item],
    providers: &'a Providers,
    noop: bool,
    state: State,
    secrets: Secrets,
    status: Vec<Option<Status>>,
    /// Changed (or would change) in this run.
    changed: Vec<bool>,
    pending: Pending,
    restarted_by: Vec<Vec<&'a str>>,
    refreshed_by: Vec<Vec<String>>,
    /// Packages already changed along with an earlier one ([`batch`]),
    /// reported when the run reaches them.
    batched: BTreeMap<usize, Outcome>,
}

impl Run<'_> {
    fn one(&mut self, i: usize) -> Outcome {
        let item = &self.items[i];
        let mut outcome = Outcome {
            id: item.id.to_string(),
            summary: item.summary.clone(),
            status: Status::Unchanged,
            changes: vec![],
            notes: vec![],
            reason: None,
            command: None,
        };
        let result = match &item.problem {
            Some(p) => Err(Failure::new(p.clone())),
            None => self.converge(i, &mut outcome),
        };
        if let Err(f) = result {
            outcome.status = Status::Failed;
            outcome.reason = Some(Reason::Failed(f.0));
        }
        outcome
    }

    /// Which of `ids` changed earlier in this run, in their order.
    /// The resources item `i` comes after, directly or not, that changed
    /// (or would) in this run, in the order of the items (by id).
    fn changed_upstream(&self, i: usize) -> Vec<&ResourceId> {
        let before = graph::upstream(self.deps, i);
        (0..self.items.len())
            .filter(|&d| before[d] && self.changed[d])
            .map(|d| &self.items[d].id)
            .collect()
    }

    /// Which of `ids` changed earlier in this run, as `A, B changed`;
    /// `None` when none did.
    fn changed_among(&self, ids: &[ResourceId]) -> Option<String> {
        let changed: Vec<String> = ids
            .iter()
            .filter(|id| self.by_id.get(id).is_some_and(|&d| self.changed[d]))
            .map(ToString::to_string)
            .collect();
        (!changed.is_empty()).then(|| format!("{} changed", changed.join(", ")))
    }

    fn cx(&self) -> Context<'_> {
        Context {
            noop: self.noop,
            pending: &self.pending,
        }
    }

    fn converge(&mut self, i: usize, outcome: &mut Outcome) -> Result<(), Failure> {
        let item = &self.items[i];
        if let Desired::Exec(e) = &item.desired {
            return self.exec(i, e, outcome);
        }
        // A secret's plaintext exists only in a real run, only here, and
        // is zeroed when `unsealed` goes.
        let unsealed = match (&item.desired, self.noop) {
            (Desired::File(f), false) => self.secrets.unseal(f)?.map(Desired::File),
            _ => None,
        };
        let desired = unsealed.as_ref().unwrap_or(&item.desired);
        let ex = examine(self.providers, desired, &self.cx())?;
        let Examined { mut changes, notes } = ex;
        if let (Desired::File(f), true) = (&item.desired, self.noop)
            && let Some(change) = self.secrets.noop_change(f)
            && !changes.iter().any(|c| c.attribute == Attribute::Content)
        {
            changes.push(change);
        }
        outcome.notes = notes;
        outcome.changes = changes;
        if let Desired::Service(s) = &item.desired {
            return self.service(i, s, outcome);
        }
        if outcome.changes.is_empty() {
            return self.record_secret(desired);
        }
        if self.noop {
            self.note_pending(&item.desired);
            outcome.status = Status::WouldChange;
            return Ok(());
        }
        if let Desired::Package(_) = &item.desired {
            return self.package_batch(i, outcome);
        }
        // Owed before the change, so a run that dies in between still restarts.
        let owed = self.restarted_by[i].clone();
        self.state.restarts.owe(owed).map_err(|e| {
            Failure::new(format!(
                "cannot record the restarts this change makes owed: {e}"
            ))
        })?;
        self.owe_refreshes(i)?;
        converge(self.providers, desired, &outcome.changes, &self.cx())?;
        outcome.status = Status::Changed;
        self.record_secret(desired)
    }

    /// A secret now in place is recorded for later `--noop` runs.
    fn record_secret(&mut self, desired: &Desired) -> Result<(), Failure> {
        match desired {
            Desired::File(f) if !self.noop => self.secrets.record(f),
            _ => Ok(()),
        }
    }

    /// A Service: its own changes, then the restart it owes, if any.
    fn service(
        &mut self,
        i: usize,
        spec: &crate::spec::ServiceSpec,
        outcome: &mut Outcome,
    ) -> Result<(), Failure> {
        let item = &self.items[i];
        let cause = if let Some(changed) = self.changed_among(&item.restart_on) {
            Some(changed)
        } else if self.state.restarts.owed().contains(&spec.name) {
            Some("owed by an earlier run that did not finish".to_owned())
        } else {
            None
        };
        // Starting or stopping it now, or wanting it stopped, makes a restart moot.
        let moot = spec.running == Some(false)
            || crate::provider::has(&outcome.changes, Attribute::Ensure);
        if self.noop {
            if let (Some(cause), false) = (&cause, moot) {
                outcome
                    .changes
                    .push(Change::set(Attribute::Restart, cause.as_str()));
            }
            if !outcome.changes.is_empty() {
                outcome.status = Status::WouldChange;
            }
            return Ok(());
        }
        if !outcome.changes.is_empty() {
            self.owe_refreshes(i)?;
            converge(self.providers, &item.desired, &outcome.changes, &self.cx())?;
            outcome.status = Status::Changed;
        }
        if let Some(cause) = cause {
            if !moot {
                self.owe_refreshes(i)?;
                match self.providers.service.restart(spec)? {
                    Restarted::Yes => {
                        outcome.changes.push(Change::set(Attribute::Restart, cause));
                        outcome.status = Status::Changed;
                    }
                    Restarted::NotRunning(why) => {
                        outcome
                            .notes
                            .push(format!("no restart needed ({cause}): {why}"));
                    }
                }
            }
            self.state
                .restarts
                .settle(&spec.name)
                .map_err(|e| Failure::new(format!("restarted, but cannot record it: {e}")))?;
        }
        Ok(())
    }

    /// Records, before item `i` changes, the refreshes its change owes.
    fn owe_refreshes(&mut self, i: usize) -> Result<(), Failure> {
        let ids = self.refreshed_by[i].iter().map(String::as_str);
        self.state.refreshes.owe(ids).map_err(|e| {
            Failure::new(format!(
                "cannot record the refreshes this change makes owed: {e}"
            ))
        })
    }

    /// An Exec: whether it is due (a `refresh_only` one, when something in
    /// its `run_on` changed in this run or a refresh is owed), then its
    /// guards, then the command. A refresh stays owed until the command
    /// succeeds or a guard says it need not run.
    fn exec(&mut self, i: usize, spec: &ExecSpec, outcome: &mut Outcome) -> Result<(), Failure> {
        let item = &self.items[i];
        let id = item.id.to_string();
        let owed = self.state.refreshes.owed().contains(&id);
        if spec.refresh_only {
            let cause = if let Some(changed) = self.changed_among(&item.run_on) {
                changed
            } else if owed {
                "owed by an earlier run that did not finish".to_owned()
            } else {
                return Ok(());
            };
            outcome.changes.push(Change::set(Attribute::Refresh, cause));
        }
        // Under --noop, what would change before it, directly or through
        // what it comes after (a real run asks the guards after that, not
        // of the machine as it is).
        let first = if self.noop {
            self.changed_upstream(i)
        } else {
            Vec::new()
        };
        let ex = self.providers.exec.examine(spec, &self.cx(), &first)?;
        let Examined { changes, notes } = ex;
        outcome.notes = notes;
        if changes.is_empty() {
            // A guard says it need not run: a refresh owed is done with.
            outcome.changes.clear();
            return self.settle_refresh(&id);
        }
        outcome.changes.extend(changes);
        if self.noop {
            outcome.status = Status::WouldChange;
            return Ok(());
        }
        self.owe_refreshes(i)?;
        let ran = self.providers.exec.run(spec)?;
        outcome.command = Some(ran.report());
        if !ran.exit.success() {
            // The command line is the `run` change beside this.
            return Err(Failure::new(format!("the command failed: {}", ran.exit)));
        }
        outcome.status = Status::Changed;
        self.settle_refresh(&id)
    }

    fn settle_refresh(&mut self, id: &str) -> Result<(), Failure> {
        if self.noop {
            return Ok(());
        }
        self.state
            .refreshes
            .settle(id)
            .map_err(|e| Failure::new(format!("ran, but cannot record it: {e}")))
    }

    /// What a noop run counts on earlier resources to have created.
    fn note_pending(&mut self, desired: &Desired) {
        match desired {
            Desired::Directory(d) if d.ensure == Ensure::Present => {
                self.pending.paths.insert(d.path.clone());
            }
            Desired::User(u) if u.ensure == Ensure::Present => {
                self.pending.users.insert(u.name.clone());
            }
            Desired::Group(g) if g.ensure == Ensure::Present => {
                self.pending.groups.insert(g.name.clone());
            }
            _ => {}
        }
    }
}

fn examine(p: &Providers, d: &Desired, cx: &Context<'_>) -> Result<Examined, Failure> {
    match d {
        Desired::File(s) => p.file.examine(s, cx),
        Desired::Directory(s) => p.directory.examine(s, cx),
        Desired::Symlink(s) => p.symlink.examine(s, cx),
        Desired::Package(s) => p.package.examine(s, cx),
        Desired::Service(s) => p.service.examine(s, cx),
        Desired::User(s) => p.user.examine(s, cx),
        Desired::Group(s) => p.group.examine(s, cx),
        Desired::Exec(s) => p.exec.examine(s, cx, &[]),
        Desired::Cron(s) => p.cron.examine(s, cx),
        Desired::Mount(s) => p.mount.examine(s, cx),
        Desired::Sysctl(s) => p.sysctl.examine(s, cx),
        // Never examined: asked after the run (`apply`).
        Desired::Health(_) => Ok(Examined::default()),
        Desired::Repository(s) => p.repository.examine(s, cx),
    }
}

fn converge(
    p: &Providers,
    d: &Desired,
    changes: &[Change],
    cx: &Context<'_>,
) -> Result<(), Failure> {
    match d {
        Desired::File(s) => p.file.converge(s, changes, cx),
        Desired::Directory(s) => p.directory.converge(s, changes, cx),
        Desired::Symlink(s) => p.symlink.converge(s, changes, cx),
        Desired::Package(s) => p.package.converge(s, changes, cx),
        Desired::Service(s) => p.service.converge(s, changes, cx),
        Desired::User(s) => p.user.converge(s, changes, cx),
        Desired::Group(s) => p.group.converge(s, changes, cx),
        Desired::Exec(s) => p.exec.run(s).and_then(|ran| {
            if ran.exit.success() {
                Ok(())
            } else {
                Err(Failure::new(ran.exit.to_string()))
            }
        }),
        Desired::Cron(s) => p.cron.converge(s, changes, cx),
        Desired::Mount(s) => p.mount.converge(s, changes, cx),
        Desired::Sysctl(s) => p.sysctl.converge(s, changes, cx),
        Desired::Health(_) => Ok(()),
        Desired::Repository(s) => p.repository.converge(s, changes, cx),
    }
}
