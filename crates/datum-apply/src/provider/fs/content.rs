//! How a change of content is shown: a unified diff of modest text, else
//! sizes and hashes; sizes only for sensitive content.

use sha2::{Digest, Sha256};
use similar::TextDiff;

use crate::report::Change;

/// Text content up to this size is shown as a diff; larger, by size and hash.
const DIFF_LIMIT: usize = 512 * 1024;

/// `12 bytes`.
fn size_text(n: usize) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

/// Content that differs: a unified diff when both sides are modest text,
/// else sizes and hashes; for sensitive content, sizes only.
pub fn content_change(path: &str, old: Option<&[u8]>, new: &[u8], sensitive: bool) -> Change {
    if sensitive {
        return Change {
            attribute: "content",
            from: old.map(|o| size_text(o.len())),
            to: Some(format!("{} (sensitive: not shown)", size_text(new.len()))),
            diff: None,
        };
    }
    let text = |b: &[u8]| {
        if b.len() > DIFF_LIMIT || b.contains(&0) {
            None
        } else {
            std::str::from_utf8(b).ok().map(str::to_owned)
        }
    };
    let digest = |b: &[u8]| {
        let hash = Sha256::digest(b);
        let hex: String = hash.iter().take(8).map(|x| format!("{x:02x}")).collect();
        format!("{}, sha256 {hex}", size_text(b.len()))
    };
    match (old.map_or(Some(String::new()), text), text(new)) {
        (Some(o), Some(n)) => {
            let diff = TextDiff::from_lines(&o, &n)
                .unified_diff()
                .context_radius(3)
                .header(&format!("{path} (on disk)"), &format!("{path} (manifest)"))
                .to_string();
            Change {
                attribute: "content",
                from: None,
                to: None,
                diff: Some(diff),
            }
        }
        _ => Change {
            attribute: "content",
            from: old.map(digest),
            to: Some(digest(new)),
            diff: None,
        },
    }
}
