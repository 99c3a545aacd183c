//! Whether a file holds the manifest's content, and how a change of
//! content is shown: a unified diff of modest text, else sizes and hashes;
//! sizes only for sensitive content. What is on disk is read in bounded
//! memory, whatever its size.

use std::io::{self, Read};

use datum_core::present::unified;
use sha2::{Digest, Sha256};

use crate::report::{Attribute, Change};

/// Text content up to this size is shown as a diff; larger, by size and
/// hash (the limit `datum diff` shows payloads by too).
const DIFF_LIMIT: usize = unified::LIMIT;

/// How much of a large file is read at once while it is compared.
const CHUNK: usize = 64 * 1024;

/// `12 bytes`.
fn size_text(n: u64) -> String {
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
            attribute: Attribute::Content,
            from: old.map(|o| size_text(o.len() as u64)),
            to: Some(format!(
                "{} (sensitive: not shown)",
                size_text(new.len() as u64)
            )),
            diff: None,
        };
    }
    let digest = |b: &[u8]| large_digest(b.len() as u64, Sha256::digest(b).into());
    match (
        old.map_or(Some(""), unified::as_text),
        unified::as_text(new),
    ) {
        (Some(o), Some(n)) => {
            let diff = unified::text(
                o,
                n,
                &format!("{path} (on disk)"),
                &format!("{path} (manifest)"),
            );
            Change {
                attribute: Attribute::Content,
                from: None,
                to: None,
                diff: Some(diff),
            }
        }
        _ => Change {
            attribute: Attribute::Content,
            from: old.map(digest),
            to: Some(digest(new)),
            diff: None,
        },
    }
}

/// Compares what `file` holds (`len` bytes, by its metadata) with `want`:
/// `None` when they are equal, else the change. At most [`DIFF_LIMIT`]
/// bytes of it are held in memory: beyond that it is compared as it is
/// read, keeping only a digest, and not read at all when its size alone
/// says it differs.
pub fn compare(
    path: &str,
    file: &mut dyn Read,
    len: u64,
    want: &[u8],
    sensitive: bool,
) -> io::Result<Option<Change>> {
    let large = |from: String| Change {
        attribute: Attribute::Content,
        from: Some(from),
        to: Some(if sensitive {
            format!("{} (sensitive: not shown)", size_text(want.len() as u64))
        } else {
            large_digest(want.len() as u64, Sha256::digest(want).into())
        }),
        diff: None,
    };
    if len > DIFF_LIMIT as u64 && len != want.len() as u64 {
        return Ok(Some(large(size_text(len))));
    }
    let mut head = Vec::new();
    file.take(DIFF_LIMIT as u64 + 1).read_to_end(&mut head)?;
    if head.len() <= DIFF_LIMIT {
        return Ok((head != want).then(|| content_change(path, Some(&head), want, sensitive)));
    }
    // As large as the manifest's content (which is in memory already):
    // compared chunk by chunk, the digest kept for showing a difference.
    let mut hasher = Sha256::new();
    hasher.update(&head);
    let mut read = head.len();
    let mut same = want.starts_with(&head);
    drop(head);
    let mut buf = vec![0; CHUNK];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        same = same && want.get(read..read + n) == Some(&buf[..n]);
        hasher.update(&buf[..n]);
        read += n;
    }
    if same && read == want.len() {
        return Ok(None);
    }
    Ok(Some(large(if sensitive {
        size_text(read as u64)
    } else {
        large_digest(read as u64, hasher.finalize().into())
    })))
}

/// `N bytes, sha256 <16 hex digits>`, as [`content_change`] shows large
/// content.
fn large_digest(len: u64, hash: [u8; 32]) -> String {
    let hex: String = hash.iter().take(8).map(|x| format!("{x:02x}")).collect();
    format!("{}, sha256 {hex}", size_text(len))
}
