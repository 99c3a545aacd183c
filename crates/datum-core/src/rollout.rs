//! Rollout waves: which hosts each wave of `rollout:` in `datum.yaml`
//! takes, when it starts, and what is wrong with the declaration.
//!
//! Waves are taken in the order written, each from the hosts no earlier
//! wave took: the first wave that takes a host keeps it. A wave takes the
//! remaining hosts its `hosts` selector selects (every remaining host
//! without one); with `percent`, only that share of them, rounded up,
//! chosen by the order of the SHA-256 digest of each host's name, so a
//! host's wave depends on the fleet and the declaration only. Hosts no wave
//! takes join the last wave. A wave starts `after` its predecessor starts
//! (the first one `after` the change is published). Pure: start times are
//! offsets; the clock belongs to whoever publishes.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{HOST_LABEL, WaveDecl};
use crate::emit::Tree;
use crate::fleet::{Fleet, HostId};
use crate::hint::Hinted;
use crate::report::count;
use crate::selector::{Carried, Op, Selector};

pub mod status;

/// One wave of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wave {
    pub name: String,
    /// `hosts` as written, when given.
    pub selector: Option<String>,
    /// `percent` in hundredths, when given.
    pub percent: Option<u32>,
    /// Seconds after the previous wave starts.
    pub after: u64,
    /// Seconds after publication.
    pub start: u64,
    /// In name order.
    pub hosts: Vec<HostId>,
    /// Of `hosts`, how many no wave took, so they joined this, the last.
    pub leftover: usize,
}

/// Every wave of a fleet's rollout, and what is wrong with the declaration.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Whether `datum.yaml` declares `rollout:`; without it, one wave
    /// named `all` takes every host at once.
    pub declared: bool,
    pub waves: Vec<Wave>,
    /// Errors in the declaration (`check` reports them), sorted by place.
    pub problems: Vec<Diagnostic>,
}

impl Plan {
    /// The index of the wave holding `host`.
    pub fn wave_of(&self, host: HostId) -> Option<usize> {
        self.waves
            .iter()
            .position(|w| w.hosts.binary_search(&host).is_ok())
    }

    /// The plan as one JSON document (`type: RolloutPlan`), read at
    /// `revision` (`None`: the working tree); host names only with
    /// `names`; `diagnostics` are the errors shown with it (the fleet's
    /// load errors, then the plan's problems).
    pub fn tree<'a>(
        &'a self,
        fleet: &'a Fleet,
        revision: Option<&'a str>,
        names: bool,
        diagnostics: &'a [Diagnostic],
    ) -> Tree<'a> {
        let waves = self.waves.iter().map(|w| {
            let mut t = Tree::map()
                .with("name", Tree::str(w.name.as_str()))
                .with(
                    "selector",
                    w.selector.as_deref().map_or(Tree::Null, Tree::str),
                )
                .with(
                    "percent",
                    w.percent.map_or(Tree::Null, |p| Tree::str(percent_text(p))),
                )
                .with("after_seconds", Tree::Int(w.after as i64))
                .with("start_seconds", Tree::Int(w.start as i64))
                .with("start", Tree::str(duration_text(w.start)))
                .with("count", Tree::Int(w.hosts.len() as i64))
                .with("leftover", Tree::Int(w.leftover as i64));
            if names {
                t.push(
                    "hosts",
                    Tree::strs(w.hosts.iter().map(|&h| &*fleet.host(h).name)),
                );
            }
            t
        });
        Tree::document("RolloutPlan")
            .with("revision", revision.map_or(Tree::Null, Tree::str))
            .with("declared", Tree::Bool(self.declared))
            .with(
                "summary",
                Tree::map()
                    .with("waves", Tree::Int(self.waves.len() as i64))
                    .with("hosts", Tree::Int(fleet.hosts.len() as i64))
                    .with("errors", Tree::Int(diagnostics.len() as i64)),
            )
            .with(
                "summary_line",
                Tree::str(format!(
                    "{} in {}: {}",
                    count(fleet.hosts.len(), "host"),
                    count(self.waves.len(), "wave"),
                    match diagnostics.len() {
                        0 => "no errors".to_owned(),
                        n => count(n, "error"),
                    }
                )),
            )
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

/// `10`, `0.5`, `12.25`: hundredths of a percent as written.
pub fn percent_text(hundredths: u32) -> String {
    match hundredths % 100 {
        0 => format!("{}", hundredths / 100),
        f if f % 10 == 0 => format!("{}.{}", hundredths / 100, f / 10),
        f => format!("{}.{f:02}", hundredths / 100),
    }
}

/// `0s`, `30m`, `1d 2h`: seconds as jiff writes a friendly duration.
pub fn duration_text(seconds: u64) -> String {
    let d = jiff::SignedDuration::from_secs(i64::try_from(seconds).unwrap_or(i64::MAX));
    format!("{d:#}")
}

/// The rollout of `fleet`: every wave with its hosts and start, and the
/// errors of the declaration.
pub fn plan(fleet: &Fleet) -> Plan {
    let Some(decl) = &fleet.rollout else {
        return Plan {
            declared: false,
            waves: vec![Wave {
                name: "all".into(),
                selector: None,
                percent: None,
                after: 0,
                start: 0,
                hosts: (0..fleet.hosts.len() as u32).map(HostId).collect(),
                leftover: 0,
            }],
            problems: Vec::new(),
        };
    };
    let mut taker = Taker {
        fleet,
        taken: vec![None; fleet.hosts.len()],
        problems: Vec::new(),
        carried: None,
    };
    let mut waves = Vec::with_capacity(decl.waves.len());
    let mut start = 0u64;
    let mut takes_rest: Option<&WaveDecl> = None;
    for (i, w) in decl.waves.iter().enumerate() {
        let after = w.after.map_or(0, |(s, _)| s);
        start = start.saturating_add(after);
        let hosts = match takes_rest {
            Some(all) => {
                taker.unreachable(w, all);
                Vec::new()
            }
            None => taker.take(i, w),
        };
        if w.hosts.is_none() && w.percent.is_none_or(|(p, _)| p == 10_000) {
            takes_rest = takes_rest.or(Some(w));
        }
        waves.push(Wave {
            name: w.name.to_string(),
            selector: w.hosts.as_ref().map(|(s, _)| s.to_string()),
            percent: w.percent.map(|(p, _)| p),
            after,
            start,
            hosts,
            leftover: 0,
        });
    }
    // Hosts no wave took join the last wave.
    let rest: Vec<HostId> = (0..fleet.hosts.len() as u32)
        .map(HostId)
        .filter(|h| taker.taken[h.0 as usize].is_none())
        .collect();
    if let Some(last) = waves.last_mut() {
        last.leftover = rest.len();
        last.hosts.extend(rest);
        last.hosts.sort();
    }
    taker.two_waves_naming_one_host(&decl.waves);
    for (w, decl) in waves.iter().zip(&decl.waves) {
        if w.hosts.is_empty() && !fleet.hosts.is_empty() {
            taker.empty(decl, takes_rest);
        }
    }
    let mut problems = taker.problems;
    problems.sort_by(|a, b| a.sort_key(&fleet.files).cmp(&b.sort_key(&fleet.files)));
    problems.dedup();
    Plan {
        declared: true,
        waves,
        problems,
    }
}

/// Hands hosts to waves in order, and words what goes wrong.
struct Taker<'f> {
    fleet: &'f Fleet,
    /// For each host, the wave that took it.
    taken: Vec<Option<usize>>,
    problems: Vec<Diagnostic>,
    carried: Option<Carried<'f>>,
}

impl<'f> Taker<'f> {
    /// The selector of a wave's `hosts`, or why it is none (reported once).
    fn selector(&mut self, w: &WaveDecl, report: bool) -> Option<Result<Selector, ()>> {
        let (text, span) = w.hosts.as_ref()?;
        Some(match Selector::parse(&[text]) {
            Ok(s) => Ok(s),
            Err(e) => {
                if report {
                    let mut d =
                        Diagnostic::error(Code::InvalidSelector, format!("wave `{}`: {e}", w.name))
                            .at(*span, "not a label selector");
                    if let Some(hint) = e.hint() {
                        d = d.hint(hint.into_owned());
                    }
                    self.problems.push(d);
                }
                Err(())
            }
        })
    }

    /// Wave `i` takes its share of the hosts no earlier wave took.
    fn take(&mut self, i: usize, w: &WaveDecl) -> Vec<HostId> {
        let mut candidates: Vec<HostId> = match self.selector(w, true) {
            None => (0..self.fleet.hosts.len() as u32).map(HostId).collect(),
            Some(Ok(s)) => s.hosts(self.fleet),
            Some(Err(())) => return Vec::new(),
        };
        candidates.retain(|h| self.taken[h.0 as usize].is_none());
        if let Some((p, _)) = w.percent {
            let n = candidates.len() as u64;
            let k = (u64::from(p) * n).div_ceil(10_000) as usize;
            let mut ranked: Vec<([u8; 32], HostId)> = candidates
                .iter()
                .map(|&h| (rank(&self.fleet.host(h).name), h))
                .collect();
            ranked.sort();
            candidates = ranked.into_iter().take(k).map(|(_, h)| h).collect();
            candidates.sort();
        }
        for &h in &candidates {
            self.taken[h.0 as usize] = Some(i);
        }
        candidates
    }

    fn unreachable(&mut self, w: &WaveDecl, all: &WaveDecl) {
        self.problems.push(
            Diagnostic::error(
                Code::UnreachableWave,
                format!("wave `{}` can take no host", w.name),
            )
            .at(w.name_span, "never reached")
            .also(all.name_span, "this wave takes every remaining host")
            .hint(format!(
                "give wave `{}` a `hosts` selector or a `percent` below 100, or move it last",
                all.name
            )),
        );
    }

    /// A wave that took no host, and why.
    fn empty(&mut self, w: &WaveDecl, takes_rest: Option<&WaveDecl>) {
        if takes_rest.is_some_and(|all| !std::ptr::eq(all, w) && all.span.start < w.span.start) {
            return; // reported as unreachable
        }
        let selector = match self.selector(w, false) {
            Some(Err(())) => return, // reported as not a selector
            Some(Ok(s)) => Some(s),
            None => None,
        };
        let at = w.hosts.as_ref().map_or(w.name_span, |(_, s)| *s);
        let mut d = Diagnostic::error(Code::EmptyWave, format!("wave `{}` takes no host", w.name))
            .at(at, "takes no host");
        let fleet = self.fleet;
        let Some(selector) = selector else {
            d = d
                .note("earlier waves take every host")
                .hint("remove this wave, or narrow an earlier one");
            self.problems.push(d);
            return;
        };
        let carried = self.carried.get_or_insert_with(|| Carried::of(fleet));
        let uncarried = selector.uncarried(carried);
        if let Some((u, _)) = uncarried.first() {
            d = d.note(u.message()).hint(u.hint(carried));
        } else {
            let selected = selector.hosts(fleet);
            if selected.is_empty() {
                d = d
                    .note(format!("no host carries all of {}", selector.text()))
                    .hint("`datum hosts KEY=VALUE ...` lists the hosts a selector selects");
            } else {
                let mut by_wave: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
                for h in &selected {
                    if let Some(wave) = self.taken[h.0 as usize] {
                        by_wave.entry(wave).or_default().push(&fleet.host(*h).name);
                    }
                }
                let decl = fleet.rollout.as_ref().map_or(&[][..], |r| &r.waves[..]);
                let earlier: Vec<String> = by_wave
                    .into_iter()
                    .map(|(wave, hosts)| {
                        format!("{} ({})", crate::report::host_list(&hosts), decl[wave].name)
                    })
                    .collect();
                d = d
                    .note(format!(
                        "every host it selects is in an earlier wave: {}",
                        earlier.join(", ")
                    ))
                    .hint("the first wave that takes a host keeps it: narrow the earlier wave, or remove this one");
            }
        }
        self.problems.push(d);
    }

    /// A host named (`datum/host=`) by two waves: whichever keeps it, one
    /// of the two says something untrue.
    fn two_waves_naming_one_host(&mut self, waves: &[WaveDecl]) {
        let mut named: BTreeMap<String, &WaveDecl> = BTreeMap::new();
        for w in waves {
            let Some(Ok(selector)) = self.selector(w, false) else {
                continue;
            };
            let Some((_, span)) = &w.hosts else { continue };
            for r in &selector.requirements {
                let Op::In(values) = &r.op else { continue };
                if r.key != HOST_LABEL {
                    continue;
                }
                // A glob names no one host.
                for host in values.iter().filter(|v| !v.contains(['*', '?'])) {
                    match named.get(host.as_str()) {
                        Some(first) if first.name != w.name => self.problems.push(
                            Diagnostic::error(
                                Code::HostInTwoWaves,
                                format!(
                                    "host `{host}` is named by waves `{}` and `{}`",
                                    first.name, w.name
                                ),
                            )
                            .at(*span, "names it again")
                            .also(
                                first.hosts.as_ref().map_or(first.name_span, |h| h.1),
                                "names it first",
                            )
                            .note(format!(
                                "it is in wave `{}`, the first to take it",
                                first.name
                            ))
                            .hint("name each host in one wave only"),
                        ),
                        Some(_) => {}
                        None => {
                            named.insert(host.clone(), w);
                        }
                    }
                }
            }
        }
    }
}

/// Where a host stands among the candidates of a `percent` wave: the
/// SHA-256 digest of its name, the same on every machine and every run.
fn rank(name: &str) -> [u8; 32] {
    Sha256::digest(name.as_bytes()).into()
}

#[cfg(test)]
mod tests;
