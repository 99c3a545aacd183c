//! Where a command's text goes: results to stdout, diagnostics and messages
//! to stderr, colour only when `--color` and the terminal allow it (anstream
//! decides, honouring NO_COLOR; reports are painted by [`crate::paint`]),
//! and how much is said besides (`-q`, `-v`). Every command is handed one
//! [`Ui`].

use std::io::{self, Write};

use anstream::{AutoStream, ColorChoice};
use anstyle::{AnsiColor, Style};
use datum_core::diagnostic::Diagnostic;
use datum_core::emit::{self, Tree};
use datum_core::present::diagnostic as drawing;
use datum_core::present::{Plain, Styled};
use datum_core::printable::escape;
use datum_core::source::Files;

use crate::command_error::{CommandError, ErrorKind};
use crate::exit::Status;
use crate::paint::Painter;

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const NOTE: Style = Style::new().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// How much a run says on stderr besides results and errors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`: no notes, warnings or progress messages.
    Quiet,
    Normal,
    /// `-v`: also what was found and done along the way.
    Verbose,
}

/// The formats a document or report tree can be written in (text reports
/// come from the core already drawn).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

/// Stdout, remembering whether anything was written to it.
struct Out {
    inner: Box<dyn Write>,
    wrote: bool,
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.wrote |= !buf.is_empty();
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// What a run asked for JSON has to say when it fails: the diagnostics it
/// drew and the error it ended with.
#[derive(Default)]
struct JsonFailure {
    diagnostics: Vec<Tree<'static>>,
    error: Option<(String, Vec<String>)>,
}

/// The output streams of one run.
pub struct Ui {
    out: Out,
    /// Set under `--format json`: a run that fails without printing its
    /// report prints this instead, as one JSON object.
    json: Option<JsonFailure>,
    err: AutoStream<Box<dyn Write>>,
    /// Whether what reaches `err` keeps its colours: diagnostics are drawn
    /// plain rather than drawn in colour and stripped.
    styled: bool,
    /// Whether reports on stdout are painted.
    out_styled: bool,
    verbosity: Verbosity,
}

impl Ui {
    /// The process's stdout and stderr, with `--color`'s choice.
    pub fn new(color: ColorChoice) -> Ui {
        // Resolved against the real stderr, which knows whether it is a
        // terminal; the stream itself is boxed so tests can pass their own.
        let styled = AutoStream::new(io::stderr(), color).current_choice() != ColorChoice::Never;
        let choice = if styled {
            ColorChoice::Always
        } else {
            ColorChoice::Never
        };
        // Stdout is judged apart: `datum diff | less` keeps colour on the
        // terminal's stderr and none in the pipe.
        let out_styled =
            AutoStream::new(io::stdout(), color).current_choice() != ColorChoice::Never;
        let mut ui = Ui::with_streams(
            Box::new(io::stdout().lock()),
            Box::new(io::stderr()),
            choice,
        );
        ui.out_styled = out_styled;
        ui
    }

    /// With `-q` or `-v`'s verbosity.
    pub fn with_verbosity(mut self, verbosity: Verbosity) -> Ui {
        self.verbosity = verbosity;
        self
    }

    /// Writes to the given streams; `color` is Always or Never.
    pub fn with_streams(out: Box<dyn Write>, err: Box<dyn Write>, color: ColorChoice) -> Ui {
        let err = match color {
            ColorChoice::Never => AutoStream::never(err),
            _ => AutoStream::always_ansi(err),
        };
        Ui {
            out: Out {
                inner: out,
                wrote: false,
            },
            json: None,
            err,
            styled: color != ColorChoice::Never,
            out_styled: color != ColorChoice::Never,
            verbosity: Verbosity::Normal,
        }
    }

    /// Where results go.
    pub fn stdout(&mut self) -> &mut dyn Write {
        &mut self.out
    }

    /// Stdout for a report drawn as text: its tags painted when stdout
    /// takes colour, dropped when not. Buffered: the caller flushes it.
    pub fn styled_stdout(&mut self) -> Box<dyn Styled + '_> {
        let out = io::BufWriter::new(&mut self.out);
        if self.out_styled {
            Box::new(Painter::new(out))
        } else {
            Box::new(Plain(out))
        }
    }

    /// [`Ui::styled_stdout`] unbuffered, for a report written as it
    /// happens (`apply` prints each resource as it is done).
    pub fn styled_stream(&mut self) -> Box<dyn Styled + '_> {
        if self.out_styled {
            Box::new(Painter::new(&mut self.out))
        } else {
            Box::new(Plain(&mut self.out))
        }
    }

    /// A document or report, as YAML or JSON.
    pub fn write_tree(&mut self, tree: &Tree<'_>, format: Format) -> io::Result<()> {
        match format {
            Format::Yaml => emit::write_yaml(&mut self.out, tree),
            Format::Json => emit::write_json(&mut self.out, tree),
        }
    }

    /// Pushes results out, so a closed pipe is found while the command can
    /// still end on it.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Under `--format json`: keep what a failure has to say, so that a run
    /// that ends without its report still prints one JSON object.
    pub fn reports_json(&mut self) {
        self.json = Some(JsonFailure::default());
    }

    /// Ends a run asked for JSON: when it failed and printed nothing on
    /// stdout, prints `{"datum": ..., "type": "Error", ...}` with the exit
    /// status, the error and every diagnostic drawn. The status is kept.
    pub fn finish(&mut self, status: Status) -> Status {
        if let Some(failure) = self.json.take()
            && !self.out.wrote
            && (status != Status::OK || failure.error.is_some())
        {
            let _ = emit::write_json(&mut self.out, &failure_tree(status, failure));
            let _ = self.out.flush();
        }
        status
    }

    /// A command line that did not parse, when it asked for JSON: the
    /// message (already on stderr) as the failure's JSON object.
    pub fn usage_failure(&mut self, message: String) -> Status {
        self.json = Some(JsonFailure {
            diagnostics: Vec::new(),
            error: Some((message, Vec::new())),
        });
        self.finish(Status::USAGE)
    }

    /// Diagnostics on stderr, each followed by a blank line. A failure to
    /// write to stderr has nowhere to be reported, so it is ignored here as
    /// for every message below.
    /// At most [`drawing::SHOWN_PER_CODE`] of each code are drawn; a note counts
    /// the rest.
    pub fn diagnostics(&mut self, files: &Files, diags: &[Diagnostic]) {
        if let Some(json) = &mut self.json {
            json.diagnostics.extend(
                diags
                    .iter()
                    .map(|d| emit::diagnostic(files, d).into_owned()),
            );
        }
        let capped = drawing::cap(diags);
        let mut err = io::BufWriter::new(&mut self.err);
        for d in capped.shown {
            let _ = if self.styled {
                drawing::draw(d, files, &mut Painter::new(&mut err))
            } else {
                drawing::write(d, files, &mut err)
            };
            let _ = writeln!(err);
        }
        for (severity, code, n) in capped.left_out {
            let line = drawing::left_out_line(severity, code, n);
            let _ = writeln!(err, "{NOTE}note{NOTE:#}: {line}\n");
        }
        let _ = err.flush();
    }

    /// Whether `-q` was given: progress lines are left out.
    pub fn is_quiet(&self) -> bool {
        self.verbosity == Verbosity::Quiet
    }

    /// `warning: message` on stderr (not under `-q`). Messages, notes and
    /// errors name what a fleet or the command line wrote: they are
    /// escaped, so a control character in a name is shown, never obeyed.
    pub fn warning(&mut self, message: &str) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        let message = escape(message);
        let _ = writeln!(self.err, "{WARNING}warning{WARNING:#}: {message}");
        let _ = self.err.flush();
    }

    /// A message on stderr saying what a command did, for the person
    /// watching (not a result: results go to stdout). Not under `-q`.
    pub fn status(&mut self, message: &str) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        let message = escape(message);
        let _ = writeln!(self.err, "{message}");
        let _ = self.err.flush();
    }

    /// What a run found or did along the way, on stderr, under `-v` only.
    pub fn detail(&mut self, message: &str) {
        if self.verbosity == Verbosity::Verbose {
            let message = escape(message);
            let _ = writeln!(self.err, "{NOTE}info{NOTE:#}: {message}");
            let _ = self.err.flush();
        }
    }

    /// `note: message` on stderr (not under `-q`).
    pub fn note(&mut self, message: &str) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        let message = escape(message);
        let _ = writeln!(self.err, "{NOTE}note{NOTE:#}: {message}");
        let _ = self.err.flush();
    }

    /// Prints the error that ended a command, unless stdout merely closed,
    /// and gives the status to exit with.
    pub fn error(&mut self, e: &CommandError) -> Status {
        if e.kind == ErrorKind::BrokenPipe {
            // Nothing more goes to a stdout that was closed.
            self.json = None;
        } else if let Some(json) = &mut self.json {
            json.error = Some((e.message.clone(), e.hints.clone()));
        }
        if e.kind != ErrorKind::BrokenPipe {
            // A message may run over several lines (apply's cycles): each
            // is escaped on its own.
            let message: Vec<_> = e.message.split('\n').map(escape).collect();
            let mut text = format!("{ERROR}error{ERROR:#}: {}\n", message.join("\n"));
            for hint in &e.hints {
                text.push_str(&format!("  = {HINT}hint{HINT:#}: {}\n", escape(hint)));
            }
            let _ = self.err.write_all(text.as_bytes());
            let _ = self.err.flush();
        }
        e.status()
    }
}

/// The JSON object a failed run prints when it was asked for JSON.
fn failure_tree(status: Status, failure: JsonFailure) -> Tree<'static> {
    let error = match failure.error {
        Some((message, hints)) => Tree::map().with("message", Tree::Str(message.into())).with(
            "hints",
            Tree::List(hints.into_iter().map(|h| Tree::Str(h.into())).collect()),
        ),
        None => Tree::Null,
    };
    Tree::document("Error")
        .with("exit_status", Tree::Int(status.code().into()))
        .with("error", error)
        .with("diagnostics", Tree::List(failure.diagnostics))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use datum_core::present::Tag;

    use super::*;

    /// A stream the test can read after the Ui is done with it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn ui(color: ColorChoice) -> (Ui, Shared, Shared) {
        let (out, err) = (Shared::default(), Shared::default());
        let ui = Ui::with_streams(Box::new(out.clone()), Box::new(err.clone()), color);
        (ui, out, err)
    }

    #[test]
    fn an_error_and_its_hints_go_to_stderr_plain_when_colour_is_off() {
        let (mut ui, out, err) = ui(ColorChoice::Never);
        let e = CommandError::usage("bad").hint("do this").hint("or that");
        assert_eq!(ui.error(&e), Status::USAGE);
        assert_eq!(
            err.text(),
            "error: bad\n  = hint: do this\n  = hint: or that\n"
        );
        assert_eq!(out.text(), "");
    }

    #[test]
    fn colour_is_kept_when_asked_for() {
        let (mut ui, _, err) = ui(ColorChoice::Always);
        ui.warning("careful");
        assert_eq!(err.text(), "\x1b[1m\x1b[33mwarning\x1b[0m: careful\n");
    }

    #[test]
    fn quiet_silences_messages_but_not_errors_and_verbose_adds_detail() {
        let (ui_, _, err) = ui(ColorChoice::Never);
        let mut quiet = ui_.with_verbosity(Verbosity::Quiet);
        quiet.warning("w");
        quiet.note("n");
        quiet.status("s");
        quiet.detail("d");
        quiet.error(&CommandError::failed("bad"));
        assert_eq!(err.text(), "error: bad\n");

        let (normal, _, err) = ui(ColorChoice::Never);
        let mut normal = normal;
        normal.status("s");
        normal.detail("d");
        assert_eq!(err.text(), "s\n");

        let (verbose, _, err) = ui(ColorChoice::Never);
        let mut verbose = verbose.with_verbosity(Verbosity::Verbose);
        verbose.status("s");
        verbose.detail("d");
        // Paths in these messages are shown, never obeyed.
        verbose.status("wrote a\x1b[2J");
        verbose.detail("wrote b\x1b[2J");
        assert_eq!(
            err.text(),
            "s\ninfo: d\nwrote a\\u{1b}[2J\ninfo: wrote b\\u{1b}[2J\n"
        );
    }

    #[test]
    fn reports_are_painted_only_when_colour_is_on() {
        let text = "changed: web-003\n    + environments/production\n";
        let draw = |out: &mut dyn Styled| -> io::Result<()> {
            out.tagged(Tag::Changed, "changed")?;
            write!(out, ": ")?;
            out.tagged(Tag::Hosts, "web-003")?;
            write!(out, "\n    ")?;
            out.tagged(Tag::Added, "+ environments/production")?;
            writeln!(out)
        };
        let (mut plain, out, _) = ui(ColorChoice::Never);
        draw(&mut *plain.styled_stdout()).unwrap();
        plain.flush().unwrap();
        assert_eq!(out.text(), text);
        let (mut coloured, out, _) = ui(ColorChoice::Always);
        draw(&mut *coloured.styled_stdout()).unwrap();
        coloured.flush().unwrap();
        assert_ne!(out.text(), text);
        assert_eq!(anstream::adapter::strip_str(&out.text()).to_string(), text);
    }

    #[test]
    fn messages_are_escaped_and_only_datum_colours_them() {
        let (mut ui, _, err) = ui(ColorChoice::Always);
        ui.note("a\x1b[2Jb\nc");
        ui.error(&CommandError::failed("no host named `\x1b[2J`\n  two\r").hint("x\ry"));
        assert_eq!(
            err.text(),
            "\x1b[1mnote\x1b[0m: a\\u{1b}[2Jb\\nc\n\
             \x1b[1m\x1b[31merror\x1b[0m: no host named `\\u{1b}[2J`\n  two\\r\n  = \x1b[1m\x1b[36mhint\x1b[0m: x\\ry\n"
        );
    }

    #[test]
    fn a_closed_pipe_prints_nothing_and_succeeds() {
        let (mut ui, _, err) = ui(ColorChoice::Never);
        let e = CommandError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(ui.error(&e), Status::OK);
        assert_eq!(err.text(), "");
    }

    #[test]
    fn results_go_to_stdout() {
        let (mut ui, out, err) = ui(ColorChoice::Never);
        ui.stdout().write_all(b"a\n").unwrap();
        ui.write_tree(&Tree::map().with("k", Tree::Int(1)), Format::Json)
            .unwrap();
        ui.flush().unwrap();
        assert_eq!(out.text(), "a\n{\n  \"k\": 1\n}\n");
        assert_eq!(err.text(), "");
    }
}
