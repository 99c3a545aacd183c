//! Explain's answer when the host lacks what was asked about: the layers
//! that have it and do not match the host, each with the labels it fails,
//! or the nearest name some layer has.

use std::io;

use super::Out;
use crate::explain::{Absence, Explanation, Miss, VarAbsence, WhyNot};

pub(super) fn var_absent(
    ex: &Explanation<'_>,
    a: &VarAbsence,
    out: &mut Out<'_>,
) -> io::Result<()> {
    let host = ex.host_name();
    out.heading(&format!("{host} has no vars.{}", a.name))?;
    if a.misses.is_empty() {
        let mut line = format!("  no layer sets vars.{}", a.name);
        if let Some(near) = &a.nearest {
            line.push_str(&format!("; the nearest var is vars.{near}"));
        }
        return out.line(&line);
    }
    out.line(&format!("  set by layers that do not match {host}"))?;
    for m in &a.misses {
        out.line(&format!("    {}", miss(ex, m)))?;
    }
    Ok(())
}

pub(super) fn absent(ex: &Explanation<'_>, a: &Absence, out: &mut Out<'_>) -> io::Result<()> {
    let host = ex.host_name();
    let what = match a.field {
        Some(f) => format!("{}.{f}", a.resource),
        None => a.resource.to_string(),
    };
    out.heading(&format!("{host} has no {what}"))?;
    match &a.why {
        WhyNot::Unmatched(misses) => {
            let title = if a.field.is_some() && a.has_resource {
                format!("set by layers that do not match {host}")
            } else {
                format!("declared by layers that do not match {host}")
            };
            out.line(&format!("  {title}"))?;
            for m in misses {
                out.line(&format!("    {}", miss(ex, m)))?;
            }
            Ok(())
        }
        WhyNot::Undeclared { nearest } => {
            let mut line = format!("  no layer declares {}", a.resource);
            if let Some(near) = nearest {
                line.push_str(&format!(
                    "; the nearest resource id is {}",
                    ex.fleet.resources.text(*near)
                ));
            }
            out.line(&line)
        }
        WhyNot::FieldUnset => out.line(&format!("  no layer sets {what}, for any host")),
    }
}

/// `roles/db needs role=db; web-001 has role=web`; alternatives read
/// `roles/edge needs role in {web, cache}; web-001 has role=db`.
fn miss(ex: &Explanation<'_>, m: &Miss) -> String {
    let fleet = ex.fleet;
    let needs: Vec<String> = m
        .failed
        .iter()
        .map(|c| match &c.wanted[..] {
            [one] => format!("{}={}", fleet.sym(c.key), fleet.sym(*one)),
            any => {
                let values: Vec<&str> = any.iter().map(|&v| fleet.sym(v)).collect();
                format!("{} in {{{}}}", fleet.sym(c.key), values.join(", "))
            }
        })
        .collect();
    let has: Vec<String> = m
        .failed
        .iter()
        .map(|c| match c.found {
            Some(v) => format!("{}={}", fleet.sym(c.key), fleet.sym(v)),
            None => format!("no label {}", fleet.sym(c.key)),
        })
        .collect();
    format!(
        "{} needs {}; {} has {}",
        fleet.layer(m.layer).display,
        and_list(&needs),
        ex.host_name(),
        and_list(&has)
    )
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
