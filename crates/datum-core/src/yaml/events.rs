//! YAML read as a stream of events, for readers that need no tree: whether
//! the start of a file makes it a document file (`document::classify`,
//! which must not read a payload further than it has to), and a bundle's
//! manifest, of which only a few keys matter. The only other place that
//! drives the YAML parser is the tree builder beside this.

use std::borrow::Cow;
use std::io::{self, Read};

use saphyr_parser::{BufferedInput, Event as Raw, Marker, Parser, ScalarStyle, StrInput};

/// How [`Events::skip`] bounds what it passes over, and words refusing it.
pub(crate) struct Skip<'s> {
    /// Collections nested deeper than this are refused.
    pub max_depth: usize,
    pub too_deep: &'s str,
    /// Said of an alias.
    pub alias: &'s str,
}

/// One event, as the readers here need it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event<'a> {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    MappingStart,
    MappingEnd,
    SequenceStart,
    SequenceEnd,
    /// A scalar, and whether it was written plain (unquoted, not a block).
    Scalar(Cow<'a, str>, bool),
    Alias,
    Nothing,
}

impl<'a> Event<'a> {
    fn of(raw: Raw<'a>) -> Event<'a> {
        match raw {
            Raw::StreamStart => Event::StreamStart,
            Raw::StreamEnd => Event::StreamEnd,
            Raw::DocumentStart(_) => Event::DocumentStart,
            Raw::DocumentEnd => Event::DocumentEnd,
            Raw::MappingStart(..) => Event::MappingStart,
            Raw::MappingEnd => Event::MappingEnd,
            Raw::SequenceStart(..) => Event::SequenceStart,
            Raw::SequenceEnd => Event::SequenceEnd,
            Raw::Scalar(text, style, ..) => Event::Scalar(text, style == ScalarStyle::Plain),
            Raw::Alias(_) => Event::Alias,
            Raw::Nothing => Event::Nothing,
        }
    }
}

/// What stopped a reader, and where: a line (1-based) and column (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The events of one text, pulled one at a time.
pub(crate) struct Events<'a, T: saphyr_parser::Input> {
    parser: Parser<'a, T>,
    /// Where the last event started, for errors.
    at: Marker,
}

/// Events of a text in memory.
pub(crate) type StrEvents<'a> = Events<'a, StrInput<'a>>;

impl<'a> Events<'a, StrInput<'a>> {
    pub(crate) fn of_str(text: &'a str) -> StrEvents<'a> {
        Events {
            parser: Parser::new_from_str(text),
            at: Marker::default(),
        }
    }
}

impl<I: Iterator<Item = char>> Events<'static, BufferedInput<I>> {
    /// Events of characters read as they are needed.
    pub(crate) fn of_chars(chars: I) -> Events<'static, BufferedInput<I>> {
        Events {
            parser: Parser::new(BufferedInput::new(chars)),
            at: Marker::default(),
        }
    }
}

impl<'a, T: saphyr_parser::Input> Events<'a, T> {
    /// The next event; `None` after the end. A syntax error is an error.
    pub(crate) fn pull(&mut self) -> Option<Result<Event<'a>, EventError>> {
        Some(match self.parser.next_event()? {
            Err(e) => {
                self.at = *e.marker();
                Err(self.error(e.info()))
            }
            Ok((event, span)) => {
                self.at = span.start;
                Ok(Event::of(event))
            }
        })
    }

    /// An error at the last event's place.
    pub(crate) fn error(&self, message: &str) -> EventError {
        EventError {
            line: self.at.line(),
            column: self.at.col() + 1,
            message: message.to_owned(),
        }
    }

    /// The next event, the end of the text being an error.
    pub(crate) fn next(&mut self) -> Result<Event<'a>, EventError> {
        match self.pull() {
            None => Err(self.error("the text ends early")),
            Some(result) => result,
        }
    }

    /// The next event, which must be the one `want` accepts (`what` it is).
    pub(crate) fn expect(
        &mut self,
        want: impl Fn(&Event<'a>) -> bool,
        what: &str,
    ) -> Result<(), EventError> {
        let event = self.next()?;
        if want(&event) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {what}")))
        }
    }

    /// The next key of a mapping, or `None` at its end.
    pub(crate) fn key(&mut self) -> Result<Option<String>, EventError> {
        match self.next()? {
            Event::MappingEnd => Ok(None),
            Event::Scalar(text, _) => Ok(Some(text.into_owned())),
            _ => Err(self.error("expected a plain key")),
        }
    }

    /// The next value, which must be a scalar.
    pub(crate) fn scalar(&mut self) -> Result<String, EventError> {
        match self.next()? {
            Event::Scalar(text, _) => Ok(text.into_owned()),
            _ => Err(self.error("expected a single value")),
        }
    }

    /// Skips one value, however nested, up to `how.max_depth`.
    pub(crate) fn skip(&mut self, depth: usize, how: &Skip<'_>) -> Result<(), EventError> {
        match self.next()? {
            Event::Scalar(..) => Ok(()),
            Event::SequenceStart | Event::MappingStart => {
                if depth >= how.max_depth {
                    return Err(self.error(how.too_deep));
                }
                loop {
                    match self.peek_end()? {
                        true => return Ok(()),
                        false => self.skip(depth + 1, how)?,
                    }
                }
            }
            Event::Alias => Err(self.error(how.alias)),
            _ => Err(self.error("expected a value")),
        }
    }

    /// Whether the collection being skipped ends here; otherwise the
    /// parser is left before the next value.
    fn peek_end(&mut self) -> Result<bool, EventError> {
        match self.parser.peek() {
            Some(Ok((Raw::SequenceEnd | Raw::MappingEnd, _))) => {
                self.next()?;
                Ok(true)
            }
            None | Some(Ok(_)) => Ok(false),
            Some(Err(_)) => self.next().map(|_| false),
        }
    }
}

/// The characters of a byte stream for the parser, decoded as UTF-8 with
/// invalid bytes read as U+FFFD (the decoder reports them properly, for a
/// document file), keeping every byte read while the total is within the
/// limit.
pub(crate) struct Chars<R> {
    pub input: R,
    /// Every byte read so far; `None` once more than the limit was read.
    pub kept: Option<Vec<u8>>,
    limit: u64,
    pub total: u64,
    chunk: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
    /// What stopped the reading, if anything did.
    pub error: Option<io::Error>,
}

/// How much [`Chars`] reads at once.
pub(crate) const CHUNK: usize = 16 << 10;

impl<R: Read> Chars<R> {
    pub(crate) fn new(input: R, limit: u64) -> Chars<R> {
        Chars {
            input,
            kept: Some(Vec::new()),
            limit,
            total: 0,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
            error: None,
        }
    }

    /// Reads more, keeping the unread tail (a character cut in two).
    fn fill(&mut self) {
        self.chunk.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        loop {
            match self.input.read(&mut self.chunk[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    let read = &self.chunk[self.end..self.end + n];
                    self.total += n as u64;
                    if self.total > self.limit {
                        self.kept = None;
                    } else if let Some(kept) = &mut self.kept {
                        kept.extend_from_slice(read);
                    }
                    self.end += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e);
                    self.eof = true;
                }
            }
            return;
        }
    }
}

impl<R: Read> Iterator for Chars<R> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        if self.end - self.start < 4 && !self.eof {
            self.fill();
        }
        let bytes = &self.chunk[self.start..self.end];
        let first = *bytes.first()?;
        let width = match first {
            0x00..=0x7f => 1,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        let decoded = bytes
            .get(..width)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.chars().next());
        match decoded {
            Some(c) => {
                self.start += width;
                Some(c)
            }
            None => {
                self.start += 1;
                Some('\u{fffd}')
            }
        }
    }
}
