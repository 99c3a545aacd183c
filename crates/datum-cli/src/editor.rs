//! Running the user's editor on a scratch file holding a secret's
//! plaintext, so that no signal can end Datum before the file is wiped.

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use std::path::Path;
use std::process::{Command, ExitStatus};

use crate::held::Held;

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
    let hold = |signals: &[i32]| Held::catch(signals).map_err(|e| (editor.clone(), e));
    let stop = hold(&[SIGHUP, SIGTERM])?;
    // Received and dropped: the terminal sent them to the editor too.
    let ignored = hold(&[SIGINT, SIGQUIT])?;
    // The child starts with default signal handling: handlers do not
    // survive exec.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file)
        .status();
    let stopped = stop.received();
    drop((stop, ignored));
    match (status, stopped) {
        (_, Some(signal)) => {
            let name = if signal == SIGHUP {
                "SIGHUP"
            } else {
                "SIGTERM"
            };
            Ok((editor, Edited::Stopped(name)))
        }
        (Ok(status), None) => Ok((editor, Edited::Exited(status))),
        (Err(e), None) => Err((editor, e)),
    }
}
