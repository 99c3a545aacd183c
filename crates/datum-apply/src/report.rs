//! What a run tells: each resource's outcome as it happens, then a summary,
//! through a [`Reporter`] (the terminal is one reporter, the JSON report
//! another, as ripgrep's `Sink` separates searching from printing).

use std::fmt;
use std::io;
use std::time::Duration;

mod human;
mod json;
pub use human::HumanReporter;
pub use json::JsonReporter;

use datum_core::schema::ResourceId;

/// What a [`Change`] changes: an attribute of a resource, or what a run
/// does to it. Examine lists them and converge reads them back, so an
/// attribute is one of these, never a string a typo could miss: neither a
/// misspelt attribute nor a string compiles.
///
/// ```compile_fail
/// let _ = datum_apply::report::Attribute::Esnure;
/// ```
///
/// ```compile_fail
/// datum_apply::provider::has(&[], "ensure");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Attribute {
    /// Present or absent (installed, running).
    Ensure,
    /// What stands at a File's path, when it is not a file (a link).
    Type,
    /// A File's hard links: one with several is replaced by a new file.
    Links,
    Content,
    Mode,
    Owner,
    Group,
    /// A Symlink's target.
    Target,
    /// A Package's version.
    Version,
    /// Whether a Service starts at boot.
    Enabled,
    Uid,
    Gid,
    /// A User's supplementary groups.
    Groups,
    Home,
    Shell,
    /// An Exec's command, run.
    Run,
    /// A Service restarted.
    Restart,
    /// A `refresh_only` Exec due to run.
    Refresh,
    /// A Mount's line in /etc/fstab.
    Entry,
    /// Whether a Mount is mounted.
    Mounted,
    /// A Sysctl's value in its file.
    Value,
    /// A Sysctl's value on the running kernel.
    Live,
    /// A Repository's signing key, as a short hash.
    Key,
}

impl Attribute {
    /// The name output shows (`mode 0644 -> 0600`, `"attribute": "mode"`).
    pub fn name(self) -> &'static str {
        match self {
            Attribute::Ensure => "ensure",
            Attribute::Type => "type",
            Attribute::Links => "links",
            Attribute::Content => "content",
            Attribute::Mode => "mode",
            Attribute::Owner => "owner",
            Attribute::Group => "group",
            Attribute::Target => "target",
            Attribute::Version => "version",
            Attribute::Enabled => "enabled",
            Attribute::Uid => "uid",
            Attribute::Gid => "gid",
            Attribute::Groups => "groups",
            Attribute::Home => "home",
            Attribute::Shell => "shell",
            Attribute::Run => "run",
            Attribute::Restart => "restart",
            Attribute::Refresh => "refresh",
            Attribute::Entry => "entry",
            Attribute::Mounted => "mounted",
            Attribute::Value => "value",
            Attribute::Live => "live",
            Attribute::Key => "key",
        }
    }
}

impl std::fmt::Display for Attribute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One attribute that differs: `mode 0644 -> 0600`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub attribute: Attribute,
    /// The value found; `None` when there is nothing to show (a new file's mode).
    pub from: Option<String>,
    /// The value wanted; `None` when there is nothing to show.
    pub to: Option<String>,
    /// A unified diff, for text content that is not sensitive.
    pub diff: Option<String>,
}

impl Change {
    pub fn new(attribute: Attribute, from: impl Into<String>, to: impl Into<String>) -> Change {
        Change {
            attribute,
            from: Some(from.into()),
            to: Some(to.into()),
            diff: None,
        }
    }

    /// An attribute set on something being created: `mode 0644`.
    pub fn set(attribute: Attribute, to: impl Into<String>) -> Change {
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
    pub reason: Option<Reason>,
    /// The command an Exec ran: how it ended, and what it printed.
    pub command: Option<CommandOutput>,
}

/// Why a resource did not converge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// It failed ([`Status::Failed`]): what went wrong.
    Failed(String),
    /// A resource it comes after failed, or was skipped itself
    /// ([`Status::Skipped`]).
    After { id: ResourceId, failed: bool },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Failed(why) => f.write_str(why),
            Reason::After { id, failed: true } => write!(f, "{id} failed"),
            Reason::After { id, failed: false } => write!(f, "{id} was skipped"),
        }
    }
}

/// How a command ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed, with everything it started, when its time ran out.
    TimedOut(Duration),
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }

    /// The exit status, when it exited.
    pub fn code(self) -> Option<i32> {
        match self {
            Exit::Code(c) => Some(c),
            _ => None,
        }
    }
}

/// `exit 3`, `killed by signal 9`, `timed out after 300 s`.
impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
            Exit::TimedOut(t) => write!(f, "timed out after {} s", t.as_secs()),
        }
    }
}

/// How a command ended and what it printed, cut short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOutput {
    pub exit: Exit,
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
    /// Health checks asked after the run that passed, and that failed.
    pub health_passed: usize,
    pub health_failed: usize,
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

    pub fn count_health(&mut self, passed: bool) {
        if passed {
            self.health_passed += 1;
        } else {
            self.health_failed += 1;
        }
    }

    /// Changes made, or pending under `--noop`.
    pub fn changes(&self) -> bool {
        self.changed + self.would_change > 0
    }

    pub fn failures(&self) -> bool {
        self.failed + self.skipped + self.health_failed > 0
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
        let mut line = if parts.is_empty() {
            "no resources".into()
        } else {
            parts.join(", ")
        };
        if self.health_passed + self.health_failed > 0 {
            let checks: Vec<String> = [
                (self.health_failed, "failed"),
                (self.health_passed, "passed"),
            ]
            .into_iter()
            .filter(|&(n, _)| n > 0)
            .map(|(n, s)| format!("{n} {s}"))
            .collect();
            line += &format!("; health checks: {}", checks.join(", "));
        }
        line
    }
}

/// How a run ended, as `datum apply` and the agent both exit (SPEC §7):
/// changes and failures as two bits a monitor can test (2 and 4), or
/// nothing applied at all.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Nothing changed (or would), nothing failed: 0.
    Unchanged,
    /// Changes made, or pending under `--noop`: 2.
    Changed,
    /// Some resources failed, or were skipped after a failure: 4.
    Failed,
    /// Both: 6.
    ChangedAndFailed,
    /// Nothing was applied (the host did not resolve, the input was
    /// refused, a cycle, the lock): 1.
    NotApplied,
}

impl RunStatus {
    /// The number the process exits with, and the run report records.
    pub const fn code(self) -> u8 {
        match self {
            RunStatus::Unchanged => 0,
            RunStatus::NotApplied => 1,
            RunStatus::Changed => 2,
            RunStatus::Failed => 4,
            RunStatus::ChangedAndFailed => 6,
        }
    }
}

impl Summary {
    /// How a run that applied this ended.
    pub fn status(&self) -> RunStatus {
        match (self.changes(), self.failures()) {
            (false, false) => RunStatus::Unchanged,
            (true, false) => RunStatus::Changed,
            (false, true) => RunStatus::Failed,
            (true, true) => RunStatus::ChangedAndFailed,
        }
    }
}

/// One health check's verdict, asked after a run that changed something.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// `Health[NAME]`.
    pub id: String,
    /// The command line or the URL.
    pub what: String,
    pub passed: bool,
    /// How it ended: `exited with status 0`, `answered 200`, `timed out
    /// after 5s`, why it could not run.
    pub detail: String,
    /// What the command printed, or the start of the reply.
    pub output: String,
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
    /// A health check asked after a run that changed something.
    fn health(&mut self, checked: &Checked) -> io::Result<()> {
        let _ = checked;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datum_core::present::Styled;

    fn outcome(status: Status, changes: Vec<Change>, reason: Option<Reason>) -> Outcome {
        Outcome {
            id: "File[motd]".into(),
            summary: "/etc/motd".into(),
            status,
            changes,
            notes: vec![],
            reason,
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
        let mut content = Change::new(Attribute::Content, "12 bytes", "14 bytes");
        content.diff = Some("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n".into());
        r.resource(&outcome(
            Status::Changed,
            vec![Change::new(Attribute::Mode, "0644", "0600"), content],
            None,
        ))
        .unwrap();
        r.resource(&outcome(Status::Unchanged, vec![], None))
            .unwrap();
        r.resource(&outcome(
            Status::Failed,
            vec![],
            Some(Reason::Failed("boom".into())),
        ))
        .unwrap();
        r.resource(&outcome(
            Status::Skipped,
            vec![],
            Some(Reason::After {
                id: ResourceId::parse("File[a]").unwrap(),
                failed: true,
            }),
        ))
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
    fn changes_and_failures_are_two_bits_of_the_status() {
        let mut s = Summary::default();
        assert_eq!(s.status().code(), 0);
        s.count(Status::WouldChange);
        assert_eq!(s.status(), RunStatus::Changed);
        assert_eq!(s.status().code(), 2);
        s.count(Status::Skipped);
        assert_eq!(s.status().code(), 6);
        let mut f = Summary::default();
        f.count(Status::Failed);
        assert_eq!(f.status().code(), 4);
        assert_eq!(RunStatus::NotApplied.code(), 1);
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
