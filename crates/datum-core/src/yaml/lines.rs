//! Lines as the parser counts them (LF, CRLF, or a CR alone), and where
//! parsing resumes after a syntax error: the next `---` line.

/// The byte offset and line of the first `---` line after `after_line`.
pub(super) fn next_separator(
    text: &str,
    from: usize,
    line_offset: u32,
    after_line: u32,
) -> Option<(usize, u32)> {
    let mut at = from;
    for (line, l) in (line_offset + 1..).zip(lines_inclusive(&text[from..])) {
        let separator =
            l == "---" || l.starts_with("---\n") || l.starts_with("--- ") || l.starts_with("---\r");
        if line > after_line && separator {
            return Some((at, line));
        }
        at += l.len();
    }
    None
}

/// The lines of `text`, each with its line ending: LF, CRLF, or a CR
/// alone, as the parser counts lines.
fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let mut end = start;
        while end < bytes.len() {
            match bytes[end] {
                b'\n' => {
                    end += 1;
                    break;
                }
                b'\r' => {
                    end += if bytes.get(end + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    };
                    break;
                }
                _ => end += 1,
            }
        }
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}
