//! The Exec provider: an Exec's guards (`creates`, `onlyif`, `unless`),
//! then its command, run through a [`Runner`] so tests put a fake in its
//! place; [`SystemRunner`] is the real one (a timeout, output captured and
//! cut short, chrooted under `--root` by the command's own process).
//!
//! Whether a `refresh_only` Exec is due (one of its `run_on` resources
//! changed) is the engine's to decide; this module is asked only once it is.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::{Context, Examined, Failure};
pub use crate::report::Exit;
use crate::report::{Attribute, Change, CommandOutput};
use crate::root::Root;
use crate::spawn::{Entry, Ids};
use crate::spec::ExecSpec;
use datum_core::schema::ResourceId;
use nix::fcntl::OFlag;

/// The PATH a command runs with: the usual Debian one, never the caller's.
pub const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// How much output the report keeps: the first and the last this many bytes.
pub const OUTPUT_KEPT: usize = 4096;

/// One command to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// The program and its arguments, as run (a shell script is already
    /// `/bin/sh -c SCRIPT`).
    pub argv: Vec<String>,
    pub user: Option<String>,
    /// `None` is `/`.
    pub cwd: Option<String>,
    /// Set over the base environment ([`PATH`], and `HOME`, `USER` and
    /// `LOGNAME` for `user`).
    pub environment: Vec<(String, String)>,
    pub timeout: Duration,
}

/// A command that ran: how it ended and what it printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    pub exit: Exit,
    /// Standard output and error, interleaved, cut to [`OUTPUT_KEPT`] bytes
    /// at each end.
    pub output: String,
    /// Bytes left out of `output`.
    pub omitted: u64,
}

impl Ran {
    pub fn report(&self) -> CommandOutput {
        CommandOutput {
            exit: self.exit,
            output: self.output.clone(),
            omitted: self.omitted,
        }
    }
}

/// Runs commands. `Err` means the command did not start (no such program,
/// no such user); a command that starts and fails is an `Ok` with its exit.
pub trait Runner {
    fn run(&self, invocation: &Invocation) -> Result<Ran, Failure>;
}

/// How a command line is shown: words as written, quoted for a POSIX shell
/// where they need it (`sh -c 'a && b'`).
pub fn shown(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Execs: guards, then the command.
pub struct Execs {
    root: Root,
    runner: Box<dyn Runner>,
}

impl Execs {
    pub fn new(root: Root, runner: Box<dyn Runner>) -> Execs {
        Execs { root, runner }
    }

    /// The real runner, for `root`.
    pub fn system(root: &Root) -> Execs {
        Execs::new(root.clone(), Box::new(SystemRunner::new(root.clone())))
    }

    fn invocation(&self, spec: &ExecSpec, line: &[String]) -> Invocation {
        Invocation {
            argv: spec.argv(line),
            user: spec.user.clone(),
            cwd: spec.cwd.clone(),
            environment: spec.environment.clone(),
            timeout: spec.timeout,
        }
    }

    /// Whether the command needs to run, by its guards in turn: `creates`,
    /// then `onlyif` and `unless`, which are commands run as the command
    /// would be. The change is `run` with the command line, or none when a
    /// guard says it need not run.
    ///
    /// Under `--noop` the guards are asked too (never the command), with a
    /// note of each answer; but not while `first` (the resources this one
    /// comes after that would change in this run, its User and the
    /// Directory of its `cwd` among them) are still to come: a guard asked
    /// now would see the machine as it is, not as a real run would leave
    /// it, so the command is counted as due, with a note saying why the
    /// guards were not asked.
    pub fn examine(
        &self,
        spec: &ExecSpec,
        cx: &Context<'_>,
        first: &[&ResourceId],
    ) -> Result<Examined, Failure> {
        let mut ex = Examined::default();
        if let Some(path) = &spec.creates {
            // Resolved inside the root, as the command chrooted there sees it.
            match self.root.lstat(path) {
                Ok(Some(_)) => return Ok(ex),
                Ok(None) => {}
                Err(e) => return Err(Failure::new(format!("cannot look at {path}: {e}"))),
            }
        }
        let not_yet = (cx.noop && !first.is_empty())
            .then(|| format!("{} would change first", shortened(first)));
        let guards = [
            ("onlyif", spec.onlyif.as_ref(), true),
            ("unless", spec.unless.as_ref(), false),
        ];
        for (name, line, run_if) in guards {
            let Some(line) = line else { continue };
            let what = shown(&spec.argv(line));
            if let Some(why) = &not_yet {
                ex.notes.push(format!(
                    "`{name}` not asked under --noop ({what}): {why}, and a real run asks it after that"
                ));
                continue;
            }
            let ran = self
                .runner
                .run(&self.invocation(spec, line))
                .map_err(|f| Failure::new(format!("`{name}` ({what}) did not start: {f}")))?;
            if let Exit::TimedOut(_) = ran.exit {
                return Err(Failure::new(format!("`{name}` ({what}) {}", ran.exit)));
            }
            let allows = ran.exit.success() == run_if;
            if cx.noop {
                let answer = if allows {
                    "it lets the command run"
                } else {
                    "the command would not run"
                };
                ex.notes.push(format!(
                    "`{name}` asked under --noop ({what}): {}, so {answer}",
                    ran.exit
                ));
            }
            if !allows {
                return Ok(ex);
            }
        }
        ex.changes.push(Change::set(
            Attribute::Run,
            shown(&spec.argv(&spec.command)),
        ));
        Ok(ex)
    }

    /// Runs the command. A command that ran is an `Ok` whatever its exit.
    pub fn run(&self, spec: &ExecSpec) -> Result<Ran, Failure> {
        self.runner.run(&self.invocation(spec, &spec.command))
    }

    /// Runs a command that is no Exec's (a health check's), through the
    /// same runner: confined, timed and captured the same way.
    pub fn run_invocation(&self, invocation: &Invocation) -> Result<Ran, Failure> {
        self.runner.run(invocation)
    }
}

/// Runs commands on this machine: on `/`, or chrooted into the `--root`
/// directory. The command is the first program started: the chroot, the
/// user change and the working directory are steps its own process takes
/// before it runs ([`crate::spawn`]), so nothing of the fleet reaches a
/// program of the host. No input; standard output and error go to one
/// pipe; the command and everything it starts share a process group,
/// which is killed when the time runs out.
pub struct SystemRunner {
    root: Root,
}

impl SystemRunner {
    pub fn new(root: Root) -> SystemRunner {
        SystemRunner { root }
    }

    /// `user` in the root's accounts (under `--root`, its `/etc/passwd`
    /// and `/etc/group`): ids, supplementary groups as `initgroups` sets
    /// them (the primary group, then every group listing the user), and
    /// home.
    fn account(&self, user: &str) -> Result<(Ids, String), Failure> {
        let cannot = |e: std::io::Error| Failure::new(format!("cannot look up user {user}: {e}"));
        let found = if self.root.dir().is_some() {
            let Some(entry) = self
                .root
                .passwd()
                .map_err(cannot)?
                .into_iter()
                .find(|e| e.name == user)
            else {
                return Err(Failure::new(format!("user {user} does not exist")));
            };
            let mut groups = vec![entry.gid];
            for g in self.root.groups().map_err(cannot)? {
                if g.members.iter().any(|m| m == user) && !groups.contains(&g.gid) {
                    groups.push(g.gid);
                }
            }
            let ids = Ids {
                uid: entry.uid,
                gid: entry.gid,
                groups,
            };
            Some((ids, entry.home))
        } else {
            match nix::unistd::User::from_name(user).map_err(|e| cannot(e.into()))? {
                None => None,
                Some(u) => {
                    let name = std::ffi::CString::new(user)
                        .map_err(|_| Failure::new(format!("user {user} does not exist")))?;
                    let groups = nix::unistd::getgrouplist(&name, u.gid)
                        .map_err(|e| cannot(e.into()))?
                        .into_iter()
                        .map(|g| g.as_raw())
                        .collect();
                    let ids = Ids {
                        uid: u.uid.as_raw(),
                        gid: u.gid.as_raw(),
                        groups,
                    };
                    Some((ids, u.dir.display().to_string()))
                }
            }
        };
        found.ok_or_else(|| Failure::new(format!("user {user} does not exist")))
    }

    /// The environment a command starts with, built from nothing: [`PATH`],
    /// `HOME`, `USER` and `LOGNAME` for `user`, then the Exec's
    /// `environment` (a name given there replaces the base one).
    fn environment(inv: &Invocation, home: Option<&str>) -> Vec<(String, String)> {
        let mut env: BTreeMap<&str, &str> = BTreeMap::from([("PATH", PATH)]);
        if let (Some(user), Some(home)) = (&inv.user, home) {
            env.insert("HOME", home);
            env.insert("USER", user);
            env.insert("LOGNAME", user);
        }
        for (name, value) in &inv.environment {
            env.insert(name, value);
        }
        env.into_iter()
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect()
    }

    /// The working directory must be a directory inside the root (links
    /// resolved there, as the command will see them): checked first, so a
    /// command that cannot start is told apart from a missing directory.
    fn check_cwd(&self, cwd: &str) -> Result<(), Failure> {
        let opened = self
            .root
            .open(cwd, OFlag::O_DIRECTORY | OFlag::O_PATH, true);
        opened.map(drop).map_err(|e| {
            let inside = if self.root.dir().is_some() {
                " inside the root"
            } else {
                ""
            };
            Failure::new(format!(
                "the working directory {cwd}{inside} cannot be entered: {e}"
            ))
        })
    }

    /// The command, ready to spawn: its program and arguments, its
    /// environment, and the steps that enter the root as its user.
    fn command(&self, inv: &Invocation) -> Result<Command, Failure> {
        let account = inv.user.as_deref().map(|u| self.account(u)).transpose()?;
        let (ids, home) = account.map_or((None, None), |(ids, home)| (Some(ids), Some(home)));
        let cwd = inv.cwd.as_deref().unwrap_or("/");
        self.check_cwd(cwd)?;
        let (program, rest) = inv
            .argv
            .split_first()
            .ok_or_else(|| Failure::new("the command is empty"))?;
        let entry = Entry::new(self.root.dir(), ids, cwd)
            .ok_or_else(|| Failure::new("a path holds a NUL byte"))?;
        let mut cmd = Command::new(program);
        cmd.args(rest)
            .env_clear()
            .envs(Self::environment(inv, home.as_deref()))
            .stdin(Stdio::null())
            .process_group(0);
        entry.prepare(&mut cmd);
        Ok(cmd)
    }

    /// Why a command did not start, from the error of its entry or exec.
    fn not_started(&self, inv: &Invocation, e: &std::io::Error) -> String {
        let program = inv.argv.first().map_or("", String::as_str);
        let rooted = self.root.dir().is_some();
        match e.raw_os_error() {
            Some(libc::ENOENT) if program.contains('/') => {
                let inside = if rooted { " inside the root" } else { "" };
                format!("{program} does not exist{inside}")
            }
            Some(libc::ENOENT) => {
                let inside = if rooted { " inside the root" } else { "" };
                format!("no program `{program}` in PATH{inside} ({PATH})")
            }
            Some(libc::EPERM) if rooted => format!(
                "not permitted to enter the root{} ({e}): commands under --root need Datum to run as root",
                inv.user
                    .as_deref()
                    .map(|u| format!(" as {u}"))
                    .unwrap_or_default()
            ),
            _ => e.to_string(),
        }
    }
}

impl Runner for SystemRunner {
    fn run(&self, inv: &Invocation) -> Result<Ran, Failure> {
        let what = shown(&inv.argv);
        let cannot = |e: std::io::Error| Failure::new(format!("cannot run `{what}`: {e}"));
        let (reader, writer) = std::io::pipe().map_err(cannot)?;
        let mut child = {
            let mut cmd = self.command(inv)?;
            cmd.stdout(writer.try_clone().map_err(cannot)?)
                .stderr(writer);
            // `cmd` holds the pipe's writing end: dropped with it at the end
            // of this block, so the reader sees the end once the command's
            // processes are done with it.
            cmd.spawn().map_err(|e| {
                Failure::new(format!(
                    "cannot run `{what}`: {}",
                    self.not_started(inv, &e)
                ))
            })?
        };
        let capture = Arc::new(Mutex::new(Capture::default()));
        let (done_tx, done_rx) = mpsc::channel();
        {
            let capture = Arc::clone(&capture);
            std::thread::spawn(move || {
                let mut reader = reader;
                let mut buf = [0u8; 8192];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => capture
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(&buf[..n]),
                    }
                }
                let _ = done_tx.send(());
            });
        }
        let start = Instant::now();
        let exit = loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    break match (status.code(), status.signal()) {
                        (Some(c), _) => Exit::Code(c),
                        (None, Some(s)) => Exit::Signal(s),
                        (None, None) => Exit::Signal(0),
                    };
                }
                Ok(None) => {}
                Err(e) => return Err(Failure::new(format!("cannot wait for `{what}`: {e}"))),
            }
            if start.elapsed() >= inv.timeout {
                kill_group(child.id());
                let _ = child.wait();
                break Exit::TimedOut(inv.timeout);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // Something it started in the background may hold the pipe open
        // long after it ended: what came by then is what is reported.
        let _ = done_rx.recv_timeout(Duration::from_secs(1));
        let capture = capture.lock().unwrap_or_else(|e| e.into_inner());
        let (output, omitted) = capture.text();
        Ok(Ran {
            exit,
            output,
            omitted,
        })
    }
}

/// Kills a command's process group: the command and all it started.
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Output as it comes: the first [`OUTPUT_KEPT`] bytes, the last as many,
/// and a count of everything.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = OUTPUT_KEPT - self.head.len();
        let (first, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(first);
        bytes = rest;
        if bytes.len() >= OUTPUT_KEPT {
            bytes = &bytes[bytes.len() - OUTPUT_KEPT..];
            self.tail.clear();
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(OUTPUT_KEPT);
        self.tail.drain(..over);
    }

    /// The text kept, with a line where bytes are left out; and how many.
    fn text(&self) -> (String, u64) {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let omitted = self.total - kept;
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if omitted > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[... {omitted} bytes left out ...]\n"));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        (text, omitted)
    }
}

/// `A, B, C and 4 more`: what would change first, kept to a line.
fn shortened<T: std::fmt::Display>(ids: &[T]) -> String {
    const SHOWN: usize = 3;
    let joined = |ids: &[T]| {
        ids.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if ids.len() <= SHOWN + 1 {
        return joined(ids);
    }
    format!("{} and {} more", joined(&ids[..SHOWN]), ids.len() - SHOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_would_change_first_is_kept_to_a_line() {
        assert_eq!(shortened(&["A", "B"]), "A, B");
        assert_eq!(shortened(&["A", "B", "C", "D"]), "A, B, C, D");
        assert_eq!(shortened(&["A", "B", "C", "D", "E"]), "A, B, C and 2 more");
    }

    fn inv(argv: &[&str]) -> Invocation {
        Invocation {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            user: None,
            cwd: None,
            environment: vec![],
            timeout: Duration::from_secs(30),
        }
    }

    fn system() -> SystemRunner {
        SystemRunner::new(Root::system())
    }

    #[test]
    fn output_and_exit_status_are_captured() {
        let ran = system()
            .run(&inv(&["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]))
            .unwrap();
        assert_eq!(ran.exit, Exit::Code(3));
        assert_eq!(ran.output, "out\nerr\n");
        assert_eq!(ran.omitted, 0);
        assert_eq!(ran.report().exit.to_string(), "exit 3");
    }

    #[test]
    fn the_environment_is_fixed_then_set_and_the_directory_is_root_by_default() {
        let mut i = inv(&[
            "/bin/sh",
            "-c",
            "echo \"$PATH|$GREETING|$(pwd)|${HOME:-none}\"",
        ]);
        i.environment = vec![("GREETING".into(), "hi there".into())];
        let ran = system().run(&i).unwrap();
        assert_eq!(ran.output, format!("{PATH}|hi there|/|none\n"));
        let dir = tempfile::tempdir().unwrap();
        let mut i = inv(&["pwd"]);
        i.cwd = Some(dir.path().display().to_string());
        assert_eq!(
            system().run(&i).unwrap().output.trim_end(),
            dir.path().canonicalize().unwrap().display().to_string()
        );
    }

    #[test]
    fn a_missing_program_does_not_start() {
        let err = system().run(&inv(&["/nonexistent/tool", "x"])).unwrap_err();
        assert!(
            err.0.starts_with("cannot run `/nonexistent/tool x`: "),
            "{err}"
        );
    }

    #[test]
    fn a_command_past_its_time_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("background");
        // A background child that would hold the output pipe for 1000 s.
        let mut i = inv(&[
            "/bin/sh",
            "-c",
            &format!(
                "sleep 1000 & echo $! > {}; echo started; sleep 1000",
                pid_file.display()
            ),
        ]);
        i.timeout = Duration::from_millis(300);
        // Bounded, not timed: the run must come back, however slow the
        // machine; only a run that waits for the pipe hangs here.
        let (done, ran) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(system().run(&i)));
        let ran = ran
            .recv_timeout(Duration::from_secs(120))
            .expect("the run waited for its background child")
            .unwrap();
        assert_eq!(ran.exit, Exit::TimedOut(Duration::from_millis(300)));
        assert_eq!(ran.output, "started\n");
        // Killed, it is gone (or a zombie) within moments; alive, it would
        // sleep for 1000 s: 60 s tells the two apart on any machine.
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let pid = pid.trim();
        let waited = Instant::now();
        while running(pid) && waited.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(10));
        }
        if running(pid) {
            let _ = std::process::Command::new("kill")
                .args(["-9", pid])
                .status();
            panic!("the background child outlived the timeout");
        }
    }

    /// Whether process `pid` exists and is not a zombie (killed, waiting to
    /// be reaped by whoever inherited it).
    fn running(pid: &str) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `PID (COMM) STATE ...`: the state follows the last `)`.
        let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    }

    #[test]
    fn long_output_keeps_its_head_and_tail() {
        let ran = system()
            .run(&inv(&[
                "/bin/sh",
                "-c",
                "echo first; i=0; while [ $i -lt 5000 ]; do echo line $i; i=$((i+1)); done; echo last",
            ]))
            .unwrap();
        assert!(
            ran.output.starts_with("first\nline 0\n"),
            "{}",
            &ran.output[..40]
        );
        assert!(ran.output.ends_with("line 4999\nlast\n"));
        assert!(ran.omitted > 0);
        assert!(
            ran.output
                .contains(&format!("[... {} bytes left out ...]", ran.omitted))
        );
        assert!(ran.output.len() < 2 * OUTPUT_KEPT + 100);
    }

    #[test]
    fn capture_keeps_both_ends_whatever_the_chunks() {
        let all: Vec<u8> = (0..20_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in [1, 7, 4096, 5000, 20_000] {
            let mut c = Capture::default();
            for part in all.chunks(chunk) {
                c.push(part);
            }
            assert_eq!(c.head, all[..OUTPUT_KEPT]);
            assert_eq!(
                c.tail.iter().copied().collect::<Vec<_>>(),
                all[all.len() - OUTPUT_KEPT..]
            );
            assert_eq!(c.text().1, (all.len() - 2 * OUTPUT_KEPT) as u64);
        }
    }

    #[test]
    fn command_lines_are_shown_as_a_shell_would_read_them() {
        let argv: Vec<String> = ["/bin/sh", "-c", "a && b", "it's", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(shown(&argv), r"/bin/sh -c 'a && b' 'it'\''s' ''");
    }

    /// A machine root with a shell and a few programs, its accounts, and
    /// `/srv/app` owned by nobody in particular.
    fn machine() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        datum_testkit::machine::install_programs(dir.path(), &["/bin/sh", "id", "pwd", "chroot"]);
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::create_dir_all(dir.path().join("srv/app")).unwrap();
        std::fs::write(
            dir.path().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/sh\napp:x:2001:2002::/srv/app:/bin/sh\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("etc/group"),
            "root:x:0:\napp:x:2002:\nlogs:x:2003:other,app\nweb:x:2004:other\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn under_a_root_the_command_runs_inside_it_as_its_user_with_its_groups() {
        let dir = machine();
        let r = SystemRunner::new(Root::at(dir.path()));
        let mut i = inv(&[
            "sh",
            "-c",
            "id -u; id -g; id -G; pwd; echo $HOME $USER $LOGNAME",
        ]);
        i.user = Some("app".into());
        i.cwd = Some("/srv/app".into());
        let ran = r.run(&i).unwrap();
        assert_eq!(ran.exit, Exit::Code(0), "{}", ran.output);
        assert_eq!(
            ran.output,
            "2001\n2002\n2002 2003\n/srv/app\n/srv/app app app\n"
        );
        i.user = Some("nobody-here".into());
        assert_eq!(r.run(&i).unwrap_err().0, "user nobody-here does not exist");
    }

    #[test]
    fn under_a_root_a_command_running_as_root_cannot_chroot_again() {
        let dir = machine();
        let r = SystemRunner::new(Root::at(dir.path()));
        let ran = r
            .run(&inv(&["chroot", "/", "/bin/sh", "-c", "echo out"]))
            .unwrap();
        assert_eq!(ran.exit, Exit::Code(125), "{}", ran.output);
        assert!(
            ran.output.contains("Operation not permitted"),
            "{}",
            ran.output
        );
    }

    #[test]
    fn under_a_root_what_cannot_start_says_why() {
        let dir = machine();
        let r = SystemRunner::new(Root::at(dir.path()));
        let err = r.run(&inv(&["migrate", "--all"])).unwrap_err();
        assert_eq!(
            err.0,
            format!(
                "cannot run `migrate --all`: no program `migrate` in PATH inside the root ({PATH})"
            )
        );
        let err = r.run(&inv(&["/opt/app/migrate"])).unwrap_err();
        assert_eq!(
            err.0,
            "cannot run `/opt/app/migrate`: /opt/app/migrate does not exist inside the root"
        );
        let mut i = inv(&["pwd"]);
        i.cwd = Some("/srv/missing".into());
        let err = r.run(&i).unwrap_err();
        assert!(
            err.0.starts_with(
                "the working directory /srv/missing inside the root cannot be entered: "
            ),
            "{err}"
        );
    }
}
