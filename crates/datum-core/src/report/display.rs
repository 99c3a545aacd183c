//! Values, hosts and tables on one line each, as every report shows them,
//! and the cap on how many diagnostics of one kind text output draws.

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::fleet::{Fleet, Setting};
use crate::printable::{escape, is_unprintable, push_escaped};
use crate::resolve::{Contrib, VarContrib};
use crate::schema::Value;
use crate::vars::{VarSetting, VarValue};
use unicode_width::UnicodeWidthStr as _;

/// How many diagnostics of one code and severity text output draws; the
/// rest are counted in one line (JSON output carries every one).
pub const SHOWN_PER_CODE: usize = 20;

/// The diagnostics text output draws, in their order, and how many of each
/// code and severity it leaves out: 100,000 bad label values are twenty
/// errors and one line, not 20 MB of text.
pub struct Capped<'d> {
    pub shown: Vec<&'d Diagnostic>,
    /// Sorted by severity (errors first), then code.
    pub left_out: Vec<(Severity, Code, usize)>,
}

pub fn cap(diags: &[Diagnostic]) -> Capped<'_> {
    let mut seen: std::collections::BTreeMap<(Severity, Code), usize> = Default::default();
    let mut shown = Vec::with_capacity(diags.len().min(64));
    for d in diags {
        let n = seen.entry((d.severity, d.code)).or_default();
        *n += 1;
        if *n <= SHOWN_PER_CODE {
            shown.push(d);
        }
    }
    let left_out = seen
        .into_iter()
        .filter(|&(_, n)| n > SHOWN_PER_CODE)
        .map(|((s, c), n)| (s, c, n - SHOWN_PER_CODE))
        .collect();
    Capped { shown, left_out }
}

/// `and 99980 more errors of this kind (unknown-field) not shown`.
pub fn left_out_line(severity: Severity, code: Code, n: usize) -> String {
    format!(
        "and {n} more {}{} of this kind ({code}) not shown; `--format json` lists every one",
        severity.as_str(),
        if n == 1 { "" } else { "s" }
    )
}

/// How many host names a report lists before `and N more`.
pub const HOSTS_SHOWN: usize = 5;

/// `web-001`, or `web-001, web-002 and 3 more`.
pub fn host_list(hosts: &[&str]) -> String {
    let shown = &hosts[..hosts.len().min(HOSTS_SHOWN)];
    let mut s = shown.join(", ");
    if hosts.len() > shown.len() {
        s.push_str(&format!(" and {} more", hosts.len() - shown.len()));
    }
    s
}

/// A value on one line: text as written when it is plain, quoted otherwise,
/// long text cut short.
pub fn display_value(value: &Value) -> String {
    match value {
        Value::Str(s) => display_text(s),
        other => other.to_string(),
    }
}

pub fn display_text(s: &str) -> String {
    const MAX: usize = 48;
    let plain = !s.is_empty()
        && s.trim() == s
        && !s.chars().any(is_unprintable)
        && s.chars().count() <= MAX;
    if plain {
        return s.to_owned();
    }
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push_str("…\"");
            return format!("{out} ({} bytes)", s.len());
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => push_escaped(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// A contribution's value on one line (`null` for an unset).
pub fn display_setting(fleet: &Fleet, c: Contrib) -> String {
    match &fleet.setting(c).setting {
        Setting::Value(v) => display_value(v),
        Setting::Unset => "null".to_owned(),
        Setting::Refs(refs) => {
            let ids: Vec<&str> = refs
                .iter()
                .map(|(id, _)| fleet.resources.text(*id))
                .collect();
            format!("[{}]", ids.join(", "))
        }
    }
}

/// Rows padded so each column lines up on a terminal, measured in display
/// columns (a CJK character or an emoji takes two); the last column is not
/// padded. Cells are escaped ([`crate::printable`]) before they are measured: a
/// layer file named with a newline stays one cell of one row.
pub fn align(rows: &[Vec<String>]) -> Vec<String> {
    let rows: Vec<Vec<std::borrow::Cow<'_, str>>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| escape(cell)).collect())
        .collect();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut width = vec![0; cols];
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            width[i] = width[i].max(cell.width());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    let pad = width[i] - cell.width() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

/// A var's value as one layer sets it, on one line (`null` for an unset).
pub fn display_var(fleet: &Fleet, c: VarContrib) -> String {
    match &fleet.var(c).setting {
        VarSetting::Unset => "null".to_owned(),
        VarSetting::Value(VarValue::Str(s)) => display_text(s),
        VarSetting::Value(v) => display_text(&v.to_string()),
    }
}

/// `` `text` `` when it reads as written, else quoted and escaped.
pub fn quoted(s: &str) -> String {
    let shown = display_text(s);
    if shown == s { format!("`{s}`") } else { shown }
}
