//! Diagnostics one a line, for machines: `--format short`, the form
//! cargo's `--message-format short` and compilers print, which editors
//! read as a quickfix list, and `--format github`, GitHub Actions'
//! workflow commands, which a pull request shows as annotations on the
//! lines they name.
//!
//! Paths are the fleet's, each after `prefix` (the fleet's directory as
//! the caller reaches it, so that a fleet in a subdirectory of the
//! repository is annotated where it is).

use crate::diagnostic::{Diagnostic, Severity};
use crate::printable::escape;
use crate::report::host_list;
use crate::source::Files;

/// Where a diagnostic is: its path (after `prefix`), line and column.
fn place(files: &Files, d: &Diagnostic, prefix: &str) -> Option<(String, u32, u32)> {
    let span = d.primary.as_ref()?.span;
    Some((
        format!("{prefix}{}", files.path(span.file)),
        span.start.line,
        span.start.col,
    ))
}

/// The message, with the hosts a resolution problem hits.
fn message(d: &Diagnostic) -> String {
    if d.hosts.is_empty() {
        return d.message.clone();
    }
    let hosts: Vec<&str> = d.hosts.iter().map(String::as_str).collect();
    format!("{} (hosts {})", d.message, host_list(&hosts))
}

/// `path:line:column: error[code]: message`, escaped: one line.
pub fn short(files: &Files, d: &Diagnostic, prefix: &str) -> String {
    let head = format!(
        "{}[{}]: {}",
        d.severity.as_str(),
        d.code.as_str(),
        message(d)
    );
    let line = match place(files, d, prefix) {
        Some((path, l, c)) => format!("{path}:{l}:{c}: {head}"),
        None => head,
    };
    escape(&line).into_owned()
}

/// `::error file=PATH,line=L,col=C,title=datum CODE::MESSAGE`: one
/// workflow command, its message followed by the notes and the hint on
/// lines of their own (escaped as the syntax wants, so it stays one line).
pub fn github(files: &Files, d: &Diagnostic, prefix: &str) -> String {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut props = Vec::new();
    if let Some((path, l, c)) = place(files, d, prefix) {
        props.push(format!("file={}", property(&path)));
        props.push(format!("line={l}"));
        props.push(format!("col={c}"));
    }
    props.push(format!(
        "title={}",
        property(&format!("datum {}", d.code.as_str()))
    ));
    let mut text = message(d);
    for n in &d.notes {
        text.push('\n');
        text.push_str(n);
    }
    if let Some(h) = &d.hint {
        text.push_str("\nhint: ");
        text.push_str(h);
    }
    format!("::{command} {}::{}", props.join(","), data(&text))
}

/// A workflow command of its own: `::notice title=TITLE::TEXT`.
pub fn github_notice(title: &str, text: &str) -> String {
    format!("::notice title={}::{}", property(title), data(text))
}

/// A command's message, escaped as the runner unescapes it; every other
/// control character is shown escaped, never obeyed.
fn data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => crate::printable::push_escaped(&mut out, c),
        }
    }
    out
}

/// A property's value: as [`data`], and `:` and `,`, which end it.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_properties_escape_what_ends_them() {
        assert_eq!(data("50% done\nnext\r"), "50%25 done%0Anext%0D");
        assert_eq!(data("a\x1b[2J"), "a\\u{1b}[2J");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
        assert_eq!(
            github_notice("datum diff", "2 hosts change, 0 added"),
            "::notice title=datum diff::2 hosts change, 0 added"
        );
    }
}
