//! `datum rollout plan` as text: a heading, one aligned line per wave (its
//! name, when it starts, how many hosts, what takes them), and with
//! `--hosts` the names under each wave.

use std::io;

use super::{Styled, line};
use crate::fleet::Fleet;
use crate::report::{align, count};
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
