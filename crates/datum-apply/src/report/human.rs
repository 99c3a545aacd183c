//! The terminal's report: what changed as it happens, then a summary line,
//! tagged for a terminal to colour.

use std::io::{self, Write};

use datum_core::present::{Plain, Styled, Tag, unified};
use datum_core::printable::escape;

use super::{Change, Checked, Outcome, Reason, Reporter, RunInfo, Status, Summary};

/// The terminal: every resource that is not unchanged, with its changes and
/// diffs, then a summary line. Statuses, old and new values and the lines
/// of a content diff are tagged with what they are, for a terminal to
/// colour ([`Styled`]).
pub struct HumanReporter<S> {
    pub(super) out: S,
    /// Only errors: failed resources and health checks, nothing else.
    quiet: bool,
}

impl<W: Write> HumanReporter<Plain<W>> {
    /// Plain text into `out`.
    pub fn new(out: W) -> HumanReporter<Plain<W>> {
        HumanReporter {
            out: Plain(out),
            quiet: false,
        }
    }

    pub fn into_inner(self) -> W {
        self.out.0
    }
}

impl<S: Styled> HumanReporter<S> {
    /// Text into a writer that may show its tags (a terminal).
    pub fn styled(out: S) -> HumanReporter<S> {
        HumanReporter { out, quiet: false }
    }

    /// Print only errors (`apply -q`): each failed resource with its
    /// error, each failed health check; no start line, no changes, notes,
    /// skipped resources or summary (the exit status carries the outcome).
    pub fn quiet(mut self, quiet: bool) -> HumanReporter<S> {
        self.quiet = quiet;
        self
    }

    /// A failed resource's line and error, as `resource` prints them; for
    /// any other outcome, nothing.
    fn failure(&mut self, o: &Outcome) -> io::Result<()> {
        let Some(Reason::Failed(why)) = &o.reason else {
            return Ok(());
        };
        self.out.part(status_tag(o.status), "failed:")?;
        if o.summary.is_empty() {
            writeln!(self.out, " {}", o.id)?;
        } else {
            writeln!(self.out, " {} {}", o.id, o.summary)?;
        }
        write!(self.out, "  ")?;
        self.out.tagged(Tag::Failure, "error:")?;
        writeln!(self.out, " {why}")
    }

    /// `  mode 0644 -> 0600`: what was found tagged removed, what is wanted added.
    fn change(&mut self, c: &Change) -> io::Result<()> {
        let out = &mut self.out;
        write!(out, "  {}", c.attribute)?;
        match (&c.from, &c.to) {
            (Some(f), to) => {
                write!(out, " ")?;
                out.tagged(Tag::Removed, &escape(f))?;
                write!(out, " -> ")?;
                out.tagged(Tag::Added, &escape(to.as_deref().unwrap_or("(none)")))?;
            }
            (None, Some(t)) => write!(out, " {}", escape(t))?,
            (None, None) => {}
        }
        writeln!(out)?;
        // The content on both sides is whatever the manifest and the disk
        // hold: shown, never obeyed by the terminal. Lines end at `\n`
        // only, so a `\r` in one is seen as `\r`.
        if let Some(diff) = &c.diff {
            unified::draw(out, "    ", diff)?;
        }
        Ok(())
    }
}

/// How a status reads at the start of a resource's line.
fn status_tag(status: Status) -> Option<Tag> {
    match status {
        Status::Changed | Status::WouldChange => Some(Tag::Changed),
        Status::Failed => Some(Tag::Failure),
        Status::Skipped => Some(Tag::Quiet),
        Status::Unchanged => None,
    }
}

impl<S: Styled> Reporter for HumanReporter<S> {
    fn start(&mut self, run: &RunInfo) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        let what = if run.noop { "noop for" } else { "applying" };
        let resources = match run.resources {
            1 => "1 resource".to_owned(),
            n => format!("{n} resources"),
        };
        let place = match &run.root {
            Some(root) => format!(", under {root}"),
            None => String::new(),
        };
        let promise = if run.noop {
            "; nothing will be changed"
        } else {
            ""
        };
        writeln!(self.out, "{what} {}: {resources}{place}{promise}", run.host)
    }

    fn note(&mut self, text: &str) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        self.out.tagged(Tag::Note, "note:")?;
        writeln!(self.out, " {text}")
    }

    fn resource(&mut self, o: &Outcome) -> io::Result<()> {
        if o.status == Status::Unchanged && o.notes.is_empty() {
            return Ok(());
        }
        if self.quiet {
            return self.failure(o);
        }
        let head = if o.summary.is_empty() {
            o.id.clone()
        } else {
            format!("{} {}", o.id, o.summary)
        };
        let status = format!("{}:", o.status.name());
        self.out.part(status_tag(o.status), &status)?;
        match &o.reason {
            Some(r @ Reason::After { .. }) => writeln!(self.out, " {head}: {r}")?,
            _ => writeln!(self.out, " {head}")?,
        }
        for c in &o.changes {
            self.change(c)?;
        }
        if let Some(c) = &o.command {
            writeln!(self.out, "  {}", c.exit)?;
            for l in c.output.lines() {
                writeln!(self.out, "  | {}", escape(l))?;
            }
        }
        if let Some(Reason::Failed(why)) = &o.reason {
            write!(self.out, "  ")?;
            self.out.tagged(Tag::Failure, "error:")?;
            writeln!(self.out, " {why}")?;
        }
        for n in &o.notes {
            write!(self.out, "  ")?;
            self.out.tagged(Tag::Note, "note:")?;
            writeln!(self.out, " {n}")?;
        }
        Ok(())
    }

    fn health(&mut self, c: &Checked) -> io::Result<()> {
        if self.quiet && c.passed {
            return Ok(());
        }
        let (tag, word) = if c.passed {
            (None, "health passed:")
        } else {
            (Some(Tag::Failure), "health failed:")
        };
        self.out.part(tag, word)?;
        writeln!(
            self.out,
            " {} {}: {}",
            c.id,
            escape(&c.what),
            escape(&c.detail)
        )?;
        if !c.passed {
            for l in c.output.lines() {
                writeln!(self.out, "  | {}", escape(l))?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        if self.quiet {
            return self.out.flush();
        }
        self.out.tagged(Tag::Heading, "summary:")?;
        writeln!(self.out, " {}", summary.line())?;
        self.out.flush()
    }
}
