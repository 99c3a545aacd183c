//! What Datum reads of zypper's files and output: the repositories the
//! root's `.repo` files enable (which of them are Datum's, to refresh by
//! name), and the lines of zypper's output that say why a signature was
//! refused.

use super::{CONFIG_LIMIT, REPOS_DIR};
use crate::provider::Failure;
use crate::root::Root;

/// The whole lines of zypper's output (`streams`, stdout and stderr)
/// that say what was wrong with a signature ("Package is not signed!",
/// "Signature verification failed [6-File is unsigned]", rpm's
/// "Signature, key ID …: NOKEY"), at most three, each once: not its
/// questions (`Continue? [yes/no]`), which repeat a warning, nor the
/// paragraphs of its notes, wrapped mid-sentence.
pub fn signature_lines(streams: &[&[u8]]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for stream in streams {
        let mut in_note = false;
        for line in String::from_utf8_lossy(stream).lines() {
            let line = line.trim();
            if line.is_empty() {
                in_note = false;
                continue;
            }
            if line.starts_with("Note:") || line.starts_with("Warning: We can't verify") {
                in_note = true;
            }
            let lower = line.to_ascii_lowercase();
            let said = line.trim_start_matches("- ").to_owned();
            if in_note
                || line.contains("? [")
                || !(lower.contains("signature") || lower.contains("signed"))
                || out.contains(&said)
            {
                continue;
            }
            out.push(said);
        }
    }
    out.truncate(3);
    out
}

/// The enabled repositories of the root's `.repo` files, by alias, each
/// with whether it is one of Datum's (`datum-NAME.repo`, alias `NAME`).
pub fn aliases(root: &Root) -> Result<Vec<(String, bool)>, Failure> {
    let names = root.list(REPOS_DIR).map_err(|e| {
        Failure::new(format!(
            "cannot list {}: {e}",
            root.path(REPOS_DIR).display()
        ))
    })?;
    let mut out = Vec::new();
    for name in names {
        let name = name.to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".repo") else {
            continue;
        };
        let datum = stem.strip_prefix("datum-");
        let bytes = root.read_small(&format!("{REPOS_DIR}/{name}"), CONFIG_LIMIT);
        let text = bytes.ok().flatten().unwrap_or_default();
        for (alias, enabled) in sections(&String::from_utf8_lossy(&text)) {
            if enabled {
                out.push((alias.clone(), datum == Some(alias.as_str())));
            }
        }
    }
    Ok(out)
}

/// The sections of a `.repo` file, each with whether it is enabled
/// (zypper's default: yes).
fn sections(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(alias) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push((alias.trim().to_owned(), true));
        } else if let (Some((k, v)), Some(last)) = (line.split_once('='), out.last_mut())
            && k.trim().eq_ignore_ascii_case("enabled")
        {
            last.1 = v.trim() != "0";
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_about_a_signature_are_whole_and_not_from_notes_or_questions() {
        let stdout = b"Retrieving repository 'local' metadata [.\n\
Warning: File 'repomd.xml' from repository 'local' is signed with an unknown key 'E8'.\n\n\
    Note: Signing data enables the recipient to verify that no modifications occurred after the data\n\
    were signed. Accepting data with no, wrong or unknown signature can lead to a corrupted system\n\n\
File 'repomd.xml' from repository 'local' is signed with an unknown key 'E8'. Continue? [yes/no] (no): no\n\
hello-datum-2.0-1.noarch.rpm:\n    Package is not signed!\n";
        let stderr = b"History:\n - Signature verification failed for repomd.xml\n";
        assert_eq!(
            signature_lines(&[stdout, stderr]),
            [
                "Warning: File 'repomd.xml' from repository 'local' is signed with an unknown key 'E8'.",
                "Package is not signed!",
                "Signature verification failed for repomd.xml",
            ]
        );
    }

    #[test]
    fn a_repo_files_sections_are_read_with_whether_enabled() {
        let text = "# c\n[a]\nbaseurl=x\n[b]\nenabled = 0\n[ c ]\nenabled=1\n";
        assert_eq!(
            sections(text),
            [("a".into(), true), ("b".into(), false), ("c".into(), true)]
        );
    }
}
