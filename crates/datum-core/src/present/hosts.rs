//! `datum hosts` as text: one line per host, its name, then its labels as
//! `key=value` (without `datum/host`, which repeats the name), aligned.

use std::io;

use super::{Styled, line};
use crate::fleet::{Fleet, HostId};
use crate::report::align;

/// One line per host, aligned.
pub fn write(out: &mut dyn Styled, fleet: &Fleet, hosts: &[HostId]) -> io::Result<()> {
    for text in lines(fleet, hosts) {
        line(out, "", text)?;
    }
    Ok(())
}

/// The lines of [`write`], without line ends (aligned together, so made
/// together).
pub(crate) fn lines(fleet: &Fleet, hosts: &[HostId]) -> Vec<String> {
    let host_key = fleet.sym(fleet.host_key());
    let rows: Vec<Vec<String>> = hosts
        .iter()
        .map(|&h| {
            let mut row = vec![fleet.host(h).name.to_string()];
            row.extend(
                fleet
                    .labels_of(h)
                    .into_iter()
                    .filter(|(k, _)| *k != host_key)
                    .map(|(k, v)| format!("{k}={v}")),
            );
            row
        })
        .collect();
    align(&rows)
}
