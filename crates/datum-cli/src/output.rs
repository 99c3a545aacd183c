//! Where text goes: results to stdout, diagnostics to stderr, colour only
//! when the terminal and `--color`/`NO_COLOR` allow it (anstream strips it
//! otherwise).

use std::io::Write;

use datum_core::diagnostic::Diagnostic;
use datum_core::source::Files;

/// Prints diagnostics to stderr, each followed by a blank line.
pub fn diagnostics(files: &Files, diags: &[Diagnostic]) {
    let mut err = anstream::stderr().lock();
    for d in diags {
        let _ = d.render(files, true, &mut err);
        let _ = writeln!(err);
    }
    let _ = err.flush();
}

/// `error: message` and an optional `hint:` line on stderr.
pub fn error_line(message: &str, hint: Option<&str>) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "\x1b[1;31merror\x1b[0m: {message}");
    if let Some(hint) = hint {
        let _ = writeln!(err, "  = \x1b[1;36mhint\x1b[0m: {hint}");
    }
    let _ = err.flush();
}

/// `warning: message` on stderr.
pub fn warning_line(message: &str) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "\x1b[1;33mwarning\x1b[0m: {message}");
    let _ = err.flush();
}

/// `note: message` on stderr.
pub fn note_line(message: &str) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "\x1b[1mnote\x1b[0m: {message}");
    let _ = err.flush();
}
