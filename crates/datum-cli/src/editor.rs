//! Running the user's editor on a scratch file holding a secret's
//! plaintext, so that no signal can end Datum before the file is wiped.

use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::low_level::unregister;
use signal_hook::{SigId, flag};

/// What ended an editing session.
pub enum Edited {
    /// The editor exited with this status.
    Exited(ExitStatus),
    /// Datum was told to stop (`SIGHUP`, `SIGTERM`) while the editor ran:
    /// what it wrote is not used.
    Stopped(&'static str),
}

/// Runs `$VISUAL`, else `$EDITOR`, else `vi`, through `sh` on `file`, and
/// waits for it. Meanwhile Ctrl-C and Ctrl-\ are the editor's alone (as
/// git does), and a hang-up or termination is remembered rather than
/// ending Datum, so the caller always gets to wipe the file.
pub fn edit(file: &Path) -> Result<(String, Edited), (String, std::io::Error)> {
    let editor = ["VISUAL", "EDITOR"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned());
    let caught = Caught::new().map_err(|e| (editor.clone(), e))?;
    // The child starts with default signal handling: handlers do not
    // survive exec.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file)
        .status();
    let stop = caught.stop();
    drop(caught);
    match (status, stop) {
        (_, Some(signal)) => Ok((editor, Edited::Stopped(signal))),
        (Ok(status), None) => Ok((editor, Edited::Exited(status))),
        (Err(e), None) => Err((editor, e)),
    }
}

/// Handlers for the signals that would end Datum, removed when dropped.
struct Caught {
    /// The last of SIGHUP and SIGTERM received, 0 for none.
    stop: Arc<AtomicUsize>,
    ids: Vec<SigId>,
}

impl Caught {
    fn new() -> std::io::Result<Caught> {
        let stop = Arc::new(AtomicUsize::new(0));
        let mut caught = Caught {
            stop: Arc::clone(&stop),
            ids: Vec::new(),
        };
        for signal in [SIGHUP, SIGTERM] {
            caught.ids.push(flag::register_usize(
                signal,
                Arc::clone(&stop),
                signal as usize,
            )?);
        }
        // Received and dropped: the terminal sent them to the editor too.
        let ignored = Arc::new(AtomicUsize::new(0));
        for signal in [SIGINT, SIGQUIT] {
            caught
                .ids
                .push(flag::register_usize(signal, Arc::clone(&ignored), 1)?);
        }
        Ok(caught)
    }

    fn stop(&self) -> Option<&'static str> {
        match self.stop.load(Ordering::SeqCst) {
            0 => None,
            s if s == SIGHUP as usize => Some("SIGHUP"),
            _ => Some("SIGTERM"),
        }
    }
}

impl Drop for Caught {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            unregister(id);
        }
    }
}
