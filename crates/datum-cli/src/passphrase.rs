//! Opening an admin's identity file, asking for its passphrase on the
//! controlling terminal when it is protected, as ssh and age do: echo off,
//! the terminal restored on every path, the passphrase in zeroized memory,
//! at most three tries.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use datum_core::hint::Hinted;
use datum_secrets::{Identity, IdentityError, KeyFile, Protection, ReadIdentityError};
use std::os::fd::AsFd as _;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, poll};
use nix::sys::signal::{Signal, raise};
use nix::sys::termios::{LocalFlags, SetArg, SpecialCharacterIndices as Cc, Termios};
use nix::sys::termios::{tcgetattr, tcsetattr};
use signal_hook::consts::{SIGALRM, SIGHUP, SIGTERM};
use zeroize::Zeroizing;

use crate::command_error::{CommandError, Result, from_hinted};
use crate::held::Held;
use datum_apply::provider::exec::shown;

/// Tries before giving up, as ssh allows.
pub const ATTEMPTS: usize = 3;

/// How often a held-off signal is looked for while waiting for a key.
const HELD_CHECK_MS: u16 = 100;

/// No passphrase is longer; the buffer never grows, so never leaves a copy.
const MAX_PASSPHRASE: usize = 1024;

/// The identities in the file at `path`; when it is protected by a
/// passphrase, asks for it on the controlling terminal.
pub fn open_identities(path: &Path) -> Result<Vec<Identity>> {
    let file = KeyFile::read(path).map_err(read_error)?;
    let by = match file.open(None) {
        Err(ReadIdentityError::Invalid {
            source: IdentityError::PassphraseProtected { by },
            ..
        }) => by,
        other => return other.map_err(read_error),
    };
    let mut tty = Terminal::open().map_err(|source| PassphraseError::NoTerminal {
        path: path.to_owned(),
        by,
        source,
    })?;
    let prompt = format!("Enter passphrase for {}: ", path.display());
    let mut attempt = 1;
    loop {
        let passphrase = tty.ask(&prompt).map_err(|e| e.into_error(path))?;
        match file.open(Some(&passphrase)) {
            Err(ReadIdentityError::Invalid {
                source: IdentityError::WrongPassphrase { .. },
                ..
            }) if attempt < ATTEMPTS => {
                attempt += 1;
                tty.say("Wrong passphrase, try again.\n")
                    .map_err(|e| AskError::Io(e).into_error(path))?;
            }
            Err(
                e @ ReadIdentityError::Invalid {
                    source: IdentityError::WrongPassphrase { .. },
                    ..
                },
            ) => {
                return Err(PassphraseError::Wrong {
                    path: path.to_owned(),
                    by,
                    source: e,
                }
                .into());
            }
            other => return other.map_err(read_error),
        }
    }
}

fn read_error(e: ReadIdentityError) -> CommandError {
    CommandError::from(e)
}

/// Why an admin's key protected by a passphrase was not opened.
#[derive(Debug, thiserror::Error)]
pub enum PassphraseError {
    /// The last of the tries was wrong too.
    #[error("{source} ({ATTEMPTS} tries)")]
    Wrong {
        path: PathBuf,
        by: Protection,
        #[source]
        source: ReadIdentityError,
    },
    /// No terminal to ask on.
    #[error(
        "identity {} is protected by a passphrase, and there is no terminal to ask for it ({source})",
        path.display()
    )]
    NoTerminal {
        path: PathBuf,
        by: Protection,
        #[source]
        source: io::Error,
    },
    /// The passphrase could not be read.
    #[error("{}", ask_text(path, why))]
    Ask { path: PathBuf, why: AskError },
}

from_hinted!(PassphraseError);

impl Hinted for PassphraseError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            PassphraseError::Wrong { path, by, .. } => Some(
                by.check_hint()
                    .replace("KEY", &path.display().to_string())
                    .into(),
            ),
            PassphraseError::NoTerminal { path, by, .. } => Some(no_terminal(path, *by).into()),
            PassphraseError::Ask { .. } => None,
        }
    }
}

/// A protected key and no terminal to ask on: what can be used instead.
fn no_terminal(path: &Path, by: Protection) -> String {
    let quoted = shown(&[path.display().to_string()]);
    // mktemp makes the copy 0600 under a name nobody can plant first; the
    // redirection keeps that mode (`age -o` would make it 0644).
    let scratch = r#"umask 077; k=$(mktemp -p "${XDG_RUNTIME_DIR:-/dev/shm}")"#;
    let copy = match by {
        Protection::SshKey => {
            format!(r#"{scratch} && cat {quoted} > "$k" && ssh-keygen -p -N '' -f "$k""#)
        }
        Protection::AgeFile => format!(r#"{scratch} && age -d {quoted} > "$k""#),
    };
    format!(
        "run this from a terminal; without one, give an age identity file or a copy of the key without a passphrase on a memory file system, removed after use (`{copy}`, then `DATUM_IDENTITY=\"$k\"`, and `rm -f \"$k\"` after); an SSH agent is not used"
    )
}

/// Why no passphrase was read.
#[derive(Debug)]
pub enum AskError {
    Io(io::Error),
    /// End of input (Ctrl-D) before any character.
    Cancelled,
    /// Ctrl-C or Ctrl-\ while the signal was not delivered.
    Interrupted,
    TooLong,
    NotUtf8,
}

fn ask_text(path: &Path, why: &AskError) -> String {
    let key = path.display();
    match why {
        AskError::Io(e) => format!("cannot read the passphrase for {key}: {e}"),
        AskError::Cancelled => format!("no passphrase was given for {key}"),
        AskError::Interrupted => "interrupted".to_owned(),
        AskError::TooLong => {
            format!("the passphrase for {key} is longer than {MAX_PASSPHRASE} bytes")
        }
        AskError::NotUtf8 => format!("the passphrase for {key} is not valid UTF-8"),
    }
}

impl AskError {
    fn into_error(self, path: &Path) -> CommandError {
        PassphraseError::Ask {
            path: path.to_owned(),
            why: self,
        }
        .into()
    }
}

/// The controlling terminal, `/dev/tty`: the user, even when stdin and
/// stdout are redirected.
struct Terminal {
    tty: File,
}

/// Puts the terminal back as it was when dropped, on every way out.
struct Restore<'t> {
    tty: &'t File,
    saved: Termios,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        let _ = tcsetattr(self.tty, SetArg::TCSAFLUSH, &self.saved);
    }
}

impl Terminal {
    fn open() -> io::Result<Terminal> {
        let tty = File::options().read(true).write(true).open("/dev/tty")?;
        // Opened but no terminal after all (some containers): no way to
        // turn echo off, so the same as none.
        tcgetattr(&tty).map_err(io::Error::from)?;
        Ok(Terminal { tty })
    }

    fn say(&mut self, text: &str) -> io::Result<()> {
        self.tty.write_all(text.as_bytes())
    }

    /// Asks with echo off. Signals are off too, so Ctrl-C reaches this
    /// loop, which restores the terminal before raising SIGINT; the loop
    /// does the line editing (erase, kill, word erase) the terminal would.
    fn ask(&mut self, prompt: &str) -> std::result::Result<Zeroizing<String>, AskError> {
        let saved = tcgetattr(&self.tty).map_err(|e| AskError::Io(e.into()))?;
        let mut quiet = saved.clone();
        quiet
            .local_flags
            .remove(LocalFlags::ECHO | LocalFlags::ECHONL | LocalFlags::ICANON | LocalFlags::ISIG);
        quiet.control_chars[Cc::VMIN as usize] = 1;
        quiet.control_chars[Cc::VTIME as usize] = 0;
        let keys = Keys::of(&saved);
        let mut line = Zeroizing::new(Vec::with_capacity(MAX_PASSPHRASE));
        // Killed with echo off, Datum would leave the terminal so.
        let held = Held::catch(&[SIGHUP, SIGTERM, SIGALRM]).map_err(AskError::Io)?;
        loop {
            let restore = Restore {
                tty: &self.tty,
                saved: saved.clone(),
            };
            // Flushing drops what was typed before the prompt, echoed.
            tcsetattr(&self.tty, SetArg::TCSAFLUSH, &quiet).map_err(|e| AskError::Io(e.into()))?;
            (&self.tty)
                .write_all(prompt.as_bytes())
                .map_err(AskError::Io)?;
            let end = read_line(&self.tty, &keys, &mut line, &held);
            let _ = (&self.tty).write_all(b"\n");
            drop(restore);
            match end {
                End::Enter => break,
                End::Signal(signal) => {
                    // The terminal is back as it was: now act on the key,
                    // with nothing typed left in memory (Ctrl-\ may dump
                    // core where cores are kept).
                    if signal != Signal::SIGTSTP {
                        zeroize::Zeroize::zeroize(&mut *line);
                    }
                    if held.received().is_some() {
                        // Its default action, now that nothing is left to undo.
                        drop(held);
                        let _ = raise(signal);
                        return Err(AskError::Interrupted);
                    }
                    let _ = raise(signal);
                    if signal != Signal::SIGTSTP {
                        return Err(AskError::Interrupted);
                    }
                    // Continued after a stop: ask again, keeping what was typed.
                }
                End::Failed(e) => return Err(e),
            }
        }
        if line.is_empty() {
            return Err(AskError::Cancelled);
        }
        let bytes = std::mem::take(&mut *line);
        String::from_utf8(bytes).map(Zeroizing::new).map_err(|e| {
            drop(Zeroizing::new(e.into_bytes()));
            AskError::NotUtf8
        })
    }
}

/// The terminal's editing and signal characters (`stty -a`); 0 is none.
struct Keys {
    intr: u8,
    quit: u8,
    susp: u8,
    erase: u8,
    kill: u8,
    werase: u8,
    eof: u8,
}

impl Keys {
    fn of(t: &Termios) -> Keys {
        let cc = |i: Cc| t.control_chars[i as usize];
        Keys {
            intr: cc(Cc::VINTR),
            quit: cc(Cc::VQUIT),
            susp: cc(Cc::VSUSP),
            erase: cc(Cc::VERASE),
            kill: cc(Cc::VKILL),
            werase: cc(Cc::VWERASE),
            eof: cc(Cc::VEOF),
        }
    }
}

/// How a line ended.
enum End {
    Enter,
    Signal(Signal),
    Failed(AskError),
}

/// Reads one byte at a time into `line`, which never grows past its
/// capacity. End of input counts as Enter on an empty line.
/// A hang-up or termination held off meanwhile ends the line, checked
/// every [`HELD_CHECK_MS`] while nothing is typed.
fn read_line(mut tty: &File, keys: &Keys, line: &mut Vec<u8>, held: &Held) -> End {
    let is = |byte: u8, key: u8| key != 0 && byte == key;
    let mut byte = Zeroizing::new([0u8; 1]);
    loop {
        if let Some(signal) = held.received().and_then(|s| Signal::try_from(s).ok()) {
            return End::Signal(signal);
        }
        let mut ready = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut ready, HELD_CHECK_MS) {
            Ok(0) | Err(Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return End::Failed(AskError::Io(e.into())),
        }
        match tty.read(&mut *byte) {
            Ok(0) => {
                line.clear();
                return End::Enter;
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return End::Failed(AskError::Io(e)),
        }
        let b = byte[0];
        match b {
            b'\n' | b'\r' => return End::Enter,
            _ if is(b, keys.intr) => return End::Signal(Signal::SIGINT),
            _ if is(b, keys.quit) => return End::Signal(Signal::SIGQUIT),
            _ if is(b, keys.susp) => return End::Signal(Signal::SIGTSTP),
            _ if is(b, keys.eof) => {
                if line.is_empty() {
                    return End::Enter;
                }
            }
            _ if is(b, keys.erase) || b == 0x7f || b == 0x08 => erase_char(line),
            _ if is(b, keys.kill) => line.clear(),
            _ if is(b, keys.werase) => {
                while line.last() == Some(&b' ') {
                    line.pop();
                }
                while line.last().is_some_and(|c| *c != b' ') {
                    line.pop();
                }
            }
            _ if line.len() == MAX_PASSPHRASE => return End::Failed(AskError::TooLong),
            _ => line.push(b),
        }
    }
}

/// Removes the last character, all its UTF-8 bytes.
fn erase_char(line: &mut Vec<u8>) {
    while let Some(b) = line.pop() {
        if b & 0xc0 != 0x80 {
            break;
        }
    }
}
