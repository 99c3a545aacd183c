//! `datum rollout plan` as text: a heading, one aligned line per wave (its
//! name, when it starts, how many hosts, what takes them), and with
//! `--hosts` the names under each wave.

use std::io;

use super::{Styled, line};
use crate::fleet::Fleet;
use crate::report::{align, count, host_list};
use crate::rollout::status::{Gate, STATES, State, Status};
use crate::rollout::{Plan, duration_text, percent_text};

/// The plan of `fleet`, read at `at` (`working tree`, a revision).
pub fn plan(
    out: &mut dyn Styled,
    fleet: &Fleet,
    plan: &Plan,
    at: &str,
    names: bool,
) -> io::Result<()> {
    let declared = if plan.declared {
        ""
    } else {
        ": no `rollout:` in datum.yaml, every host at once"
    };
    line(
        out,
        "",
        format!(
            "rollout of {} in {} ({at}){declared}",
            count(fleet.hosts.len(), "host"),
            count(plan.waves.len(), "wave"),
        ),
    )?;
    let mut rows = vec![
        ["wave", "starts", "hosts", "takes"]
            .map(String::from)
            .to_vec(),
    ];
    for w in &plan.waves {
        let mut takes = match (&w.selector, w.percent) {
            (Some(s), Some(p)) => format!("{}% of {s}", percent_text(p)),
            (Some(s), None) => s.clone(),
            (None, Some(p)) => format!("{}% of the rest", percent_text(p)),
            (None, None) => "the rest".to_owned(),
        };
        if w.leftover > 0 && (w.selector.is_some() || w.percent.is_some()) {
            takes += &format!(", and {} no wave takes", count(w.leftover, "host"));
        }
        rows.push(vec![
            w.name.clone(),
            format!("+{}", duration_text(w.start)),
            w.hosts.len().to_string(),
            takes,
        ]);
    }
    let lines = align(&rows);
    for (i, text) in lines.into_iter().enumerate() {
        line(out, "  ", text)?;
        if names && i > 0 {
            for &h in &plan.waves[i - 1].hosts {
                line(out, "      ", fleet.host(h).name.to_string())?;
            }
        }
    }
    Ok(())
}

/// `datum rollout status` as text: a heading with every state's count, one
/// aligned line per wave, then one line for each host that failed, rolled
/// back or went silent (the hosts someone should look at), by wave.
pub fn status(
    out: &mut dyn Styled,
    fleet: &Fleet,
    status: &Status,
    revision: &str,
    as_of: &str,
) -> io::Result<()> {
    let hosts: usize = status.waves.iter().map(|w| w.hosts.len()).sum();
    line(
        out,
        "",
        format!(
            "rollout of {revision} to {} in {}, as of {as_of}: {}",
            count(hosts, "host"),
            count(status.waves.len(), "wave"),
            Status::counts_line(status.counts()),
        ),
    )?;
    let mut rows = vec![
        ["wave", "hosts"]
            .iter()
            .chain(STATES.iter())
            .map(|s| s.replace('_', " "))
            .collect::<Vec<_>>(),
    ];
    for w in &status.waves {
        let mut row = vec![w.name.clone(), w.hosts.len().to_string()];
        row.extend(w.counts().iter().map(usize::to_string));
        rows.push(row);
    }
    for text in align(&rows) {
        line(out, "  ", text)?;
    }
    let rows = to_look_at(fleet, status);
    for text in align(&rows) {
        line(out, "  ", text)?;
    }
    if !status.strangers.is_empty() {
        line(
            out,
            "",
            format!(
                "note: reports of {} the fleet does not declare at this revision: {}",
                count(status.strangers.len(), "host"),
                host_list(
                    &status
                        .strangers
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                )
            ),
        )?;
    }
    Ok(())
}

/// One row for each host that failed, rolled back or went silent: its
/// wave, its name, and what happened.
fn to_look_at(fleet: &Fleet, status: &Status) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for w in &status.waves {
        for h in &w.hosts {
            let run = || {
                h.report
                    .as_ref()
                    .map_or(String::new(), |r| format!(" (run {})", r.run_id))
            };
            let what = match &h.state {
                State::Failed {
                    exit_status,
                    failed: 0,
                } => format!("failed: exit status {exit_status}{}", run()),
                State::Failed {
                    exit_status,
                    failed,
                } => format!(
                    "failed: exit status {exit_status}, {} failed{}",
                    count(*failed as usize, "resource"),
                    run()
                ),
                State::RolledBack { checks } if checks.is_empty() => {
                    format!("rolled back{}", run())
                }
                State::RolledBack { checks } => {
                    format!("rolled back: {} failed{}", checks.join(", "), run())
                }
                State::Silent => match &h.last_seen {
                    Some(t) => format!("silent: last report {t}"),
                    None => "silent: no report".to_owned(),
                },
                _ => continue,
            };
            rows.push(vec![
                w.name.clone(),
                fleet.host(h.host).name.to_string(),
                what,
            ]);
        }
    }
    rows
}

/// `datum rollout gate` as text: each wave that went wrong, why, and its
/// hosts to look at; or that the rollout passes; a note of the silent
/// hosts when they are not counted.
pub fn gate(
    out: &mut dyn Styled,
    fleet: &Fleet,
    gate: &Gate<'_>,
    revision: &str,
) -> io::Result<()> {
    for w in &gate.tripped {
        let reasons = gate.reasons(w).join("; ");
        line(out, "", format!("wave {} went wrong: {reasons}", w.name))?;
        let rows: Vec<Vec<String>> = gate
            .named(w)
            .map(|(h, state)| vec![fleet.host(h.host).name.to_string(), state.to_owned()])
            .collect();
        for text in align(&rows) {
            line(out, "  ", text)?;
        }
    }
    if gate.tripped.is_empty() {
        line(
            out,
            "",
            format!("rollout of {revision} passes: {}", gate.pass_text()),
        )?;
    }
    let silent = gate.silent();
    if silent > 0 && gate.max_silent.is_none() {
        line(
            out,
            "",
            format!(
                "note: {} silent, not counted (`datum rollout status` lists them; --max-silent counts them)",
                count(silent, "host")
            ),
        )?;
    }
    Ok(())
}
