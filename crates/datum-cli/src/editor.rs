//! Running the user's editor on a scratch file holding a secret's
//! plaintext, so that no signal can end Datum before the file is wiped.

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use std::path::Path;
use std::process::Command;

use datum_secrets::EditorEnd;

use crate::held::Held;

/// Runs `editor` (`$VISUAL`, else `$EDITOR`, else `vi`: the settings say)
/// through `sh` on `file`, and waits for it. Meanwhile Ctrl-C and Ctrl-\
/// are the editor's alone (as git does), and a hang-up or termination is
/// remembered rather than ending Datum, so the caller always gets to wipe
/// the file.
pub fn edit(editor: &str, file: &Path) -> std::io::Result<EditorEnd> {
    let stop = Held::catch(&[SIGHUP, SIGTERM])?;
    // Received and dropped: the terminal sent them to the editor too.
    let ignored = Held::catch(&[SIGINT, SIGQUIT])?;
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
            Ok(EditorEnd::Stopped(name))
        }
        (status, None) => status.map(EditorEnd::Exited),
    }
}
