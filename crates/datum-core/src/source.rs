//! The file table: every document file read during a load, and positions in it.
//!
//! Positions are kept as line and column (both 1-based, columns counted in
//! characters, the way editors show them). Byte offsets are derived only when a
//! diagnostic is drawn, so the hot path never pays for them.

use std::sync::OnceLock;

/// Index of a file in [`Files`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub(crate) u32);

/// A 1-based line and a 1-based column counted in characters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A range of text in one file: `start` inclusive, `end` exclusive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    pub start: Pos,
    pub end: Pos,
}

impl Span {
    pub(crate) fn point(file: FileId, at: Pos) -> Span {
        Span {
            file,
            start: at,
            end: at,
        }
    }
}

/// One file as read: its path relative to the fleet root (with `/`) and its text.
#[derive(Debug)]
pub struct SourceFile {
    path: String,
    text: String,
    line_starts: OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where each line starts. A line ends at LF, CRLF or a CR alone, as
    /// the YAML parser counts lines: the line a diagnostic shows is the one
    /// its `path:line:column` names.
    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let bytes = self.text.as_bytes();
            let mut starts = vec![0];
            starts.extend(
                bytes
                    .iter()
                    .enumerate()
                    .filter(|&(i, &b)| {
                        b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
                    })
                    .map(|(i, _)| i + 1),
            );
            starts
        })
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line(&self, line: u32) -> &str {
        let starts = self.line_starts();
        let Some(&start) = starts.get(line.saturating_sub(1) as usize) else {
            return "";
        };
        let end = starts
            .get(line as usize)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// The position of a byte offset (clamped to the text), lines counted
    /// as [`SourceFile::line`] counts them.
    pub fn pos_at(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s <= offset).max(1);
        let start = starts[line - 1];
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |t| t.chars().count());
        Pos {
            line: line as u32,
            col: col as u32 + 1,
        }
    }

    /// Where a 1-based line starts.
    pub fn line_start(&self, line: u32) -> Pos {
        Pos {
            line: line.max(1),
            col: 1,
        }
    }

    /// The byte offset of a position, clamped to the text.
    pub fn offset(&self, pos: Pos) -> usize {
        let starts = self.line_starts();
        let Some(&start) = starts.get(pos.line.saturating_sub(1) as usize) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        let skip = pos.col.saturating_sub(1) as usize;
        match rest.char_indices().nth(skip) {
            Some((i, _)) => start + i,
            None => self.text.len(),
        }
    }
}

/// Every file read during one load.
#[derive(Debug, Default)]
pub struct Files {
    files: Vec<SourceFile>,
    /// Line ranges (first, last, inclusive) that are never shown: the
    /// declarations of sensitive resources. Sorted once loading is done.
    hidden: Vec<(FileId, u32, u32)>,
}

impl Files {
    pub fn add(&mut self, path: String, text: String) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile {
            path,
            text,
            line_starts: OnceLock::new(),
        });
        id
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn path(&self, id: FileId) -> &str {
        &self.files[id.0 as usize].path
    }

    /// Never shows these line ranges (file, first, last, inclusive) under
    /// a diagnostic; ranges in one file do not overlap.
    pub fn hide_lines(&mut self, ranges: impl IntoIterator<Item = (FileId, u32, u32)>) {
        self.hidden.extend(ranges);
        self.hidden.sort_unstable();
        self.hidden.dedup();
    }

    /// Whether the line a span starts on must not be shown.
    pub fn hides(&self, span: Span) -> bool {
        let line = span.start.line;
        let after = self
            .hidden
            .partition_point(|&(f, first, _)| (f, first) <= (span.file, line));
        after > 0 && {
            let (f, first, last) = self.hidden[after - 1];
            f == span.file && (first..=last).contains(&line)
        }
    }

    /// `path:line:column` of the start of a span.
    pub fn location(&self, span: Span) -> String {
        format!(
            "{}:{}:{}",
            self.path(span.file),
            span.start.line,
            span.start.col
        )
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_characters_not_bytes() {
        let mut files = Files::default();
        let id = files.add("a.yaml".into(), "a: 1\nné: \"x\"\n".into());
        let f = files.get(id);
        assert_eq!(f.line(2), "né: \"x\"");
        // Column 5 on line 2 is the opening quote, after a two-byte `é`.
        assert_eq!(f.offset(Pos { line: 2, col: 5 }), 5 + 5);
        assert_eq!(&f.text()[10..11], "\"");
        assert_eq!(f.line(9), "");
    }

    #[test]
    fn a_cr_alone_ends_a_line_as_lf_and_crlf_do() {
        let mut files = Files::default();
        let id = files.add("a.yaml".into(), "a: 1\rb: 2\r\nc: 3\nd: é\re: 5".into());
        let f = files.get(id);
        let lines: Vec<&str> = (1..=6).map(|n| f.line(n)).collect();
        assert_eq!(lines, ["a: 1", "b: 2", "c: 3", "d: é", "e: 5", ""]);
        assert_eq!(f.offset(Pos { line: 5, col: 4 }), f.text().len() - 1);
    }
}
