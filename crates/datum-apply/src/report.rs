//! What a run tells: each resource's outcome as it happens, then a summary,
//! through a [`Reporter`] (the terminal is one reporter, the JSON report
//! another, as ripgrep's `Sink` separates searching from printing).

use std::io::{self, Write};

use datum_core::emit::{self, Tree};
use datum_core::present::{Plain, Styled, Tag};
use datum_core::printable::escape;

/// One attribute that differs: `mode 0644 -> 0600`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub attribute: &'static str,
    /// The value found; `None` when there is nothing to show (a new file's mode).
    pub from: Option<String>,
    /// The value wanted; `None` when there is nothing to show.
    pub to: Option<String>,
    /// A unified diff, for text content that is not sensitive.
    pub diff: Option<String>,
}

impl Change {
    pub fn new(attribute: &'static str, from: impl Into<String>, to: impl Into<String>) -> Change {
        Change {
            attribute,
            from: Some(from.into()),
            to: Some(to.into()),
            diff: None,
        }
    }

    /// An attribute set on something being created: `mode 0644`.
    pub fn set(attribute: &'static str, to: impl Into<String>) -> Change {
        Change {
            attribute,
            from: None,
            to: Some(to.into()),
            diff: None,
        }
    }
}

/// How a resource ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Unchanged,
    Changed,
    /// Under `--noop`: it differs, and a real run would change it.
    WouldChange,
    Failed,
    /// A resource it comes after failed or was skipped.
    Skipped,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Changed => "changed",
            Status::WouldChange => "would change",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
        }
    }

    /// The status as JSON reports spell it (snake_case: `would_change`).
    pub fn key(self) -> &'static str {
        match self {
            Status::WouldChange => "would_change",
            other => other.name(),
        }
    }
}

/// One resource's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub id: String,
    pub summary: String,
    pub status: Status,
    pub changes: Vec<Change>,
    /// What was not done and why (`running` under `--root`, say).
    pub notes: Vec<String>,
    /// Why it failed, or which resource's failure skipped it.
    pub reason: Option<String>,
    /// The command an Exec ran: how it ended, and what it printed.
    pub command: Option<CommandOutput>,
}

/// How a command ended and what it printed, cut short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOutput {
    /// `exit 0`, `exit 3`, `killed by signal 9`, `timed out after 300 s`.
    pub exit: String,
    /// The exit status, when it exited.
    pub code: Option<i32>,
    /// Standard output and error as they came, interleaved: the first and
    /// the last few KiB, with a line saying how much is left out between.
    pub output: String,
    /// How many bytes of output are not in `output`.
    pub omitted: u64,
}

/// What a run is about, given before the first resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    pub host: String,
    /// `--root`, when given.
    pub root: Option<String>,
    pub noop: bool,
    pub resources: usize,
}

/// How many resources ended each way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub unchanged: usize,
    pub changed: usize,
    pub would_change: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Summary {
    pub fn count(&mut self, status: Status) {
        match status {
            Status::Unchanged => self.unchanged += 1,
            Status::Changed => self.changed += 1,
            Status::WouldChange => self.would_change += 1,
            Status::Failed => self.failed += 1,
            Status::Skipped => self.skipped += 1,
        }
    }

    /// Changes made, or pending under `--noop`.
    pub fn changes(&self) -> bool {
        self.changed + self.would_change > 0
    }

    pub fn failures(&self) -> bool {
        self.failed + self.skipped > 0
    }

    /// `3 changed, 10 unchanged`, leaving out the statuses nobody had.
    pub fn line(&self) -> String {
        let parts: Vec<String> = [
            (self.changed, Status::Changed),
            (self.would_change, Status::WouldChange),
            (self.failed, Status::Failed),
            (self.skipped, Status::Skipped),
            (self.unchanged, Status::Unchanged),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, s)| format!("{n} {}", s.name()))
        .collect();
        if parts.is_empty() {
            "no resources".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Receives a run as it happens.
pub trait Reporter {
    fn start(&mut self, run: &RunInfo) -> io::Result<()>;
    /// A remark about the run as a whole (a restart owed by a Service that
    /// is no longer in the manifest).
    fn note(&mut self, text: &str) -> io::Result<()>;
    /// One resource, in apply order, as soon as it is done.
    fn resource(&mut self, outcome: &Outcome) -> io::Result<()>;
    fn finish(&mut self, summary: &Summary) -> io::Result<()>;
}

/// The terminal: every resource that is not unchanged, with its changes and
/// diffs, then a summary line. Statuses, old and new values and the lines
/// of a content diff are tagged with what they are, for a terminal to
/// colour ([`Styled`]).
pub struct HumanReporter<S> {
    out: S,
}

impl<W: Write> HumanReporter<Plain<W>> {
    /// Plain text into `out`.
    pub fn new(out: W) -> HumanReporter<Plain<W>> {
        HumanReporter { out: Plain(out) }
    }

    pub fn into_inner(self) -> W {
        self.out.0
    }
}

impl<S: Styled> HumanReporter<S> {
    /// Text into a writer that may show its tags (a terminal).
    pub fn styled(out: S) -> HumanReporter<S> {
        HumanReporter { out }
    }
}

impl<S: Styled> HumanReporter<S> {
    /// `  mode 0644 -> 0600`: what was found tagged removed, what is wanted added.
    fn change(&mut self, c: &Change) -> io::Result<()> {
        let out = &mut self.out;
        write!(out, "  {}", c.attribute)?;
        match (&c.from, &c.to) {
            (Some(f), to) => {
                write!(out, " ")?;
                out.tagged(Tag::Removed, f)?;
                write!(out, " -> ")?;
                out.tagged(Tag::Added, to.as_deref().unwrap_or("(none)"))?;
            }
            (None, Some(t)) => write!(out, " {t}")?,
            (None, None) => {}
        }
        writeln!(out)?;
        if let Some(diff) = &c.diff {
            for l in diff.lines() {
                write!(out, "    ")?;
                let tag = if l.starts_with("--- ") || l.starts_with("+++ ") {
                    Some(Tag::Heading)
                } else if l.starts_with("@@") {
                    Some(Tag::Place)
                } else if l.starts_with('+') {
                    Some(Tag::Added)
                } else if l.starts_with('-') {
                    Some(Tag::Removed)
                } else {
                    None
                };
                match tag {
                    Some(tag) => out.tagged(tag, l)?,
                    None => write!(out, "{l}")?,
                }
                writeln!(out)?;
            }
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
        self.out.tagged(Tag::Note, "note:")?;
        writeln!(self.out, " {text}")
    }

    fn resource(&mut self, o: &Outcome) -> io::Result<()> {
        if o.status == Status::Unchanged && o.notes.is_empty() {
            return Ok(());
        }
        let head = if o.summary.is_empty() {
            o.id.clone()
        } else {
            format!("{} {}", o.id, o.summary)
        };
        let status = format!("{}:", o.status.name());
        match status_tag(o.status) {
            Some(tag) => self.out.tagged(tag, &status)?,
            None => write!(self.out, "{status}")?,
        }
        match (&o.reason, o.status) {
            (Some(r), Status::Skipped) => writeln!(self.out, " {head}: {r}")?,
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
        if let (Some(r), Status::Failed) = (&o.reason, o.status) {
            write!(self.out, "  ")?;
            self.out.tagged(Tag::Failure, "error:")?;
            writeln!(self.out, " {r}")?;
        }
        for n in &o.notes {
            write!(self.out, "  ")?;
            self.out.tagged(Tag::Note, "note:")?;
            writeln!(self.out, " {n}")?;
        }
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        self.out.tagged(Tag::Heading, "summary:")?;
        writeln!(self.out, " {}", summary.line())?;
        self.out.flush()
    }
}

/// One JSON document at the end: the run, every resource with its status
/// and changes, and the counts.
pub struct JsonReporter<W> {
    out: W,
    run: Option<RunInfo>,
    notes: Vec<String>,
    outcomes: Vec<Outcome>,
}

impl<W: Write> JsonReporter<W> {
    pub fn new(out: W) -> JsonReporter<W> {
        JsonReporter {
            out,
            run: None,
            notes: Vec::new(),
            outcomes: Vec::new(),
        }
    }
}

impl<W: Write> Reporter for JsonReporter<W> {
    fn start(&mut self, run: &RunInfo) -> io::Result<()> {
        self.run = Some(run.clone());
        Ok(())
    }

    fn note(&mut self, text: &str) -> io::Result<()> {
        self.notes.push(text.to_owned());
        Ok(())
    }

    fn resource(&mut self, outcome: &Outcome) -> io::Result<()> {
        self.outcomes.push(outcome.clone());
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let mut t = Tree::document("ApplyReport");
        if let Some(run) = &self.run {
            t.push("host", Tree::str(run.host.as_str()));
            if let Some(root) = &run.root {
                t.push("root", Tree::str(root.as_str()));
            }
            t.push("noop", Tree::Bool(run.noop));
        }
        t.push("notes", Tree::strs(self.notes.iter().map(String::as_str)));
        let resources = self.outcomes.iter().map(outcome_tree).collect();
        t.push("resources", Tree::List(resources));
        t.push(
            "summary",
            Tree::map()
                .with("changed", int(summary.changed))
                .with("would_change", int(summary.would_change))
                .with("failed", int(summary.failed))
                .with("skipped", int(summary.skipped))
                .with("unchanged", int(summary.unchanged)),
        );
        emit::write_json(&mut self.out, &t)?;
        self.out.flush()
    }
}

fn int(n: usize) -> Tree<'static> {
    Tree::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn outcome_tree(o: &Outcome) -> Tree<'_> {
    let mut t = Tree::map()
        .with("id", Tree::str(o.id.as_str()))
        .with("summary", Tree::str(o.summary.as_str()))
        .with("status", Tree::str(o.status.key()));
    let changes = o
        .changes
        .iter()
        .map(|c| {
            let mut ct = Tree::map().with("attribute", Tree::str(c.attribute));
            if let Some(f) = &c.from {
                ct.push("from", Tree::str(f.as_str()));
            }
            if let Some(to) = &c.to {
                ct.push("to", Tree::str(to.as_str()));
            }
            if let Some(d) = &c.diff {
                ct.push("diff", Tree::str(d.as_str()));
            }
            ct
        })
        .collect();
    t.push("changes", Tree::List(changes));
    if !o.notes.is_empty() {
        t.push("notes", Tree::strs(o.notes.iter().map(String::as_str)));
    }
    if let Some(r) = &o.reason {
        t.push("reason", Tree::str(r.as_str()));
    }
    if let Some(c) = &o.command {
        let mut ct = Tree::map().with("exit", Tree::str(c.exit.as_str()));
        if let Some(code) = c.code {
            ct.push("code", Tree::Int(code.into()));
        }
        ct.push("output", Tree::str(c.output.as_str()));
        ct.push(
            "omitted_bytes",
            Tree::Int(i64::try_from(c.omitted).unwrap_or(i64::MAX)),
        );
        t.push("command", ct);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: Status, changes: Vec<Change>, reason: Option<&str>) -> Outcome {
        Outcome {
            id: "File[motd]".into(),
            summary: "/etc/motd".into(),
            status,
            changes,
            notes: vec![],
            reason: reason.map(Into::into),
            command: None,
        }
    }

    /// A run of four resources, one of each status but would-change.
    fn report<S: Styled>(r: &mut HumanReporter<S>) {
        r.start(&RunInfo {
            host: "web-001".into(),
            root: None,
            noop: false,
            resources: 3,
        })
        .unwrap();
        let mut content = Change::new("content", "12 bytes", "14 bytes");
        content.diff = Some("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n".into());
        r.resource(&outcome(
            Status::Changed,
            vec![Change::new("mode", "0644", "0600"), content],
            None,
        ))
        .unwrap();
        r.resource(&outcome(Status::Unchanged, vec![], None))
            .unwrap();
        r.resource(&outcome(Status::Failed, vec![], Some("boom")))
            .unwrap();
        r.resource(&outcome(Status::Skipped, vec![], Some("File[a] failed")))
            .unwrap();
        let mut s = Summary::default();
        for st in [
            Status::Changed,
            Status::Unchanged,
            Status::Failed,
            Status::Skipped,
        ] {
            s.count(st);
        }
        r.finish(&s).unwrap();
    }

    #[test]
    fn the_terminal_shows_changes_diffs_and_failures_but_not_unchanged_resources() {
        let mut r = HumanReporter::new(Vec::new());
        report(&mut r);
        let text = String::from_utf8(r.into_inner()).unwrap();
        assert_eq!(
            text,
            "applying web-001: 3 resources
changed: File[motd] /etc/motd
  mode 0644 -> 0600
  content 12 bytes -> 14 bytes
    --- a
    +++ b
    @@ -1 +1 @@
    -old
    +new
failed: File[motd] /etc/motd
  error: boom
skipped: File[motd] /etc/motd: File[a] failed
summary: 1 changed, 1 failed, 1 skipped, 1 unchanged
"
        );
    }

    #[test]
    fn statuses_old_and_new_values_and_diff_lines_are_tagged_for_a_terminal() {
        let mut r = HumanReporter::styled(datum_core::present::Marked(Vec::new()));
        report(&mut r);
        assert_eq!(
            String::from_utf8(r.out.0).unwrap(),
            "applying web-001: 3 resources
<Changed|changed:> File[motd] /etc/motd
  mode <Removed|0644> -> <Added|0600>
  content <Removed|12 bytes> -> <Added|14 bytes>
    <Heading|--- a>
    <Heading|+++ b>
    <Place|@@ -1 +1 @@>
    <Removed|-old>
    <Added|+new>
<Failure|failed:> File[motd] /etc/motd
  <Failure|error:> boom
<Quiet|skipped:> File[motd] /etc/motd: File[a] failed
<Heading|summary:> 1 changed, 1 failed, 1 skipped, 1 unchanged
"
        );
    }
}
