//! The parse floor: reading and parsing every document file of a fleet with
//! saphyr-parser, doing nothing with the events. No resolver can go faster
//! than this, so `check` time is reported as a multiple of it.

use rayon::prelude::*;
use saphyr_parser::{Event, Parser};

use datum_core::loader::{MAX_FILE_BYTES, read_document};
use datum_core::reader::Reader;

/// Reads and parses every document file; returns the number of events, so
/// the work cannot be optimised away. `parallel` reads files on the rayon
/// pool, as Datum's loader does.
pub fn parse_all(reader: &dyn Reader, parallel: bool) -> usize {
    let paths = reader.discover().unwrap_or_default();
    let one = |p: &String| -> usize {
        let Ok(Some(bytes)) = read_document(reader, p, MAX_FILE_BYTES) else {
            return 0;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return 0;
        };
        let mut n = 0;
        let mut parser = Parser::new_from_str(text);
        while let Some(Ok((event, _))) = parser.next_event() {
            if matches!(event, Event::StreamEnd) {
                break;
            }
            n += 1;
        }
        n
    };
    if parallel {
        paths.par_iter().map(one).sum()
    } else {
        paths.iter().map(one).sum()
    }
}
