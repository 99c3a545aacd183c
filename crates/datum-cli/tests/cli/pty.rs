//! Running `datum` on a pseudo-terminal of its own, as a person at a
//! terminal would: `setsid -c` makes the pty its controlling terminal, the
//! test reads what it writes there, types into it and reads the terminal's
//! modes; stdout and stderr stay pipes, read apart.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use nix::pty::openpty;
use nix::sys::termios::{LocalFlags, tcgetattr};

use crate::common::Run;

/// How long a test waits for text on the terminal before failing.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `datum` running with a pty as its controlling terminal and stdin.
pub struct Session {
    master: File,
    /// The terminal's side, kept open to read its modes.
    slave: OwnedFd,
    output: Receiver<Vec<u8>>,
    /// Everything written to the terminal so far.
    seen: String,
    /// Where the next `expect` starts looking in `seen`.
    looked: usize,
    child: Child,
}

impl Session {
    /// Starts `datum ARGS` in a new session on a new pty, with `env`.
    pub fn start(args: &[&str], env: &[(&str, &std::path::Path)]) -> Session {
        let pty = openpty(None, None).unwrap();
        // Signals start with their default actions, as on a terminal: a
        // test run from a background job inherits SIGINT and SIGQUIT
        // ignored, and Ctrl-C at the prompt would then not end Datum.
        let mut cmd = Command::new("env");
        cmd.args(["--default-signal=INT,QUIT,TSTP", "setsid", "-c"])
            .arg(env!("CARGO_BIN_EXE_datum"))
            .args(args)
            .env_remove("DATUM_FLEET")
            .env_remove("DATUM_IDENTITY")
            .env_remove("VISUAL")
            .env("NO_COLOR", "1")
            .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in env {
            cmd.env(name, value);
        }
        let child = cmd.spawn().unwrap();
        drop(cmd);
        let master = File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let (send, output) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || send.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Session {
            master,
            slave: pty.slave,
            output,
            seen: String::new(),
            looked: 0,
            child,
        }
    }

    /// Waits until the terminal shows `text` after what earlier calls
    /// found.
    pub fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(at) = self.seen[self.looked..].find(text) {
                self.looked += at + text.len();
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "the terminal never showed {text:?}; it shows {:?}",
                        self.seen
                    )
                }
            }
        }
    }

    /// Types `text` into the terminal.
    /// Sends `signal` (`TERM`, `HUP`) to the program, as `kill` does.
    pub fn kill(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
    }

    /// Whether the terminal echoes what is typed now.
    pub fn echoes(&self) -> bool {
        tcgetattr(&self.slave)
            .unwrap()
            .local_flags
            .contains(LocalFlags::ECHO)
    }

    /// Waits for the end.
    pub fn finish(mut self) -> Ended {
        use std::os::unix::process::ExitStatusExt as _;
        let deadline = Instant::now() + PATIENCE;
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("datum did not end; the terminal shows {:?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let echoes = self.echoes();
        let out = self.child.wait_with_output().unwrap();
        // The child is gone: collect what is still in flight, briefly.
        while let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(200)) {
            self.seen.push_str(&String::from_utf8_lossy(&bytes));
        }
        let signal = out.status.signal();
        let run = Run::from(out);
        assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
        Ended {
            echoes,
            run,
            terminal: self.seen,
            signal,
        }
    }
}

/// How a session ended.
pub struct Ended {
    pub run: Run,
    /// All the terminal showed.
    pub terminal: String,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Whether the terminal echoes again, as it did before.
    pub echoes: bool,
}
