//! Values, host lists, counts and tables on one line each, as every
//! report shows them.

use crate::fleet::{Contrib, Fleet, Setting, VarContrib};
use crate::printable::{display_text, escape};
use crate::schema::Value;
use crate::vars::{VarSetting, VarValue};
use unicode_width::UnicodeWidthStr as _;

/// `1 host`, `3 hosts`.
pub fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
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
    let width = column_widths(rows.iter().map(|row| row.iter().map(|c| c.width())));
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i + 1 < row.len() {
                    let pad = width[i] - cell.width() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

/// The width of each column: the widest of its cells, given each row's
/// cell widths in display columns.
pub fn column_widths<R: Iterator<Item = usize>>(rows: impl Iterator<Item = R>) -> Vec<usize> {
    let mut width: Vec<usize> = Vec::new();
    for row in rows {
        for (i, w) in row.enumerate() {
            if i == width.len() {
                width.push(0);
            }
            width[i] = width[i].max(w);
        }
    }
    width
}

/// A var's value as one layer sets it, on one line (`null` for an unset).
pub fn display_var(fleet: &Fleet, c: VarContrib) -> String {
    match &fleet.var(c).setting {
        VarSetting::Unset => "null".to_owned(),
        VarSetting::Value(VarValue::Str(s)) => display_text(s),
        VarSetting::Value(v) => display_text(&v.to_string()),
    }
}
