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

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(memchr_iter(b'\n', self.text.as_bytes()).map(|i| i + 1));
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

fn memchr_iter(needle: u8, hay: &[u8]) -> impl Iterator<Item = usize> + '_ {
    hay.iter()
        .enumerate()
        .filter(move |&(_, &b)| b == needle)
        .map(|(i, _)| i)
}

/// Every file read during one load.
#[derive(Debug, Default)]
pub struct Files {
    files: Vec<SourceFile>,
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
}
