//! Text saved in a wide encoding (UTF-16 or UTF-32, as some editors on
//! Windows save by default): never read as a document, never passed over
//! as a payload either. A `.yaml` file that, decoded, is a document file by
//! the rule of [`super::classify`] is a document file that is not UTF-8,
//! an error at its file, rather than something Datum silently skips.

use super::classify::{Class, classify};

/// A wide encoding, by its byte order mark or, without one, by where the
/// zero bytes of its first (ASCII) characters fall.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wide {
    Utf16Le,
    Utf16Be,
    Utf32Le,
    Utf32Be,
}

impl Wide {
    /// The encoding's usual name: `UTF-16LE`.
    pub fn name(self) -> &'static str {
        match self {
            Wide::Utf16Le => "UTF-16LE",
            Wide::Utf16Be => "UTF-16BE",
            Wide::Utf32Le => "UTF-32LE",
            Wide::Utf32Be => "UTF-32BE",
        }
    }

    /// `text` in this encoding (without a byte order mark).
    pub fn encode(self, text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Wide::Utf16Le | Wide::Utf16Be => {
                for unit in text.encode_utf16() {
                    out.extend(if self == Wide::Utf16Le {
                        unit.to_le_bytes()
                    } else {
                        unit.to_be_bytes()
                    });
                }
            }
            Wide::Utf32Le | Wide::Utf32Be => {
                for c in text.chars() {
                    out.extend(if self == Wide::Utf32Le {
                        (c as u32).to_le_bytes()
                    } else {
                        (c as u32).to_be_bytes()
                    });
                }
            }
        }
        out
    }

    /// `bytes` decoded, a unit that is no character (or one cut short at
    /// the end) as U+FFFD; a leading byte order mark is dropped.
    fn decode(self, bytes: &[u8]) -> String {
        let text: String = match self {
            Wide::Utf16Le | Wide::Utf16Be => {
                let units = bytes.chunks_exact(2).map(|b| {
                    let pair = [b[0], b[1]];
                    if self == Wide::Utf16Le {
                        u16::from_le_bytes(pair)
                    } else {
                        u16::from_be_bytes(pair)
                    }
                });
                char::decode_utf16(units)
                    .map(|c| c.unwrap_or('\u{fffd}'))
                    .collect()
            }
            Wide::Utf32Le | Wide::Utf32Be => bytes
                .chunks_exact(4)
                .map(|b| {
                    let quad = [b[0], b[1], b[2], b[3]];
                    let n = if self == Wide::Utf32Le {
                        u32::from_le_bytes(quad)
                    } else {
                        u32::from_be_bytes(quad)
                    };
                    char::from_u32(n).unwrap_or('\u{fffd}')
                })
                .collect(),
        };
        match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_owned(),
            None => text,
        }
    }
}

/// The wide encoding `bytes` (the start of a file) are in, if any.
pub fn wide_encoding(bytes: &[u8]) -> Option<Wide> {
    match bytes {
        [0, 0, 0xfe, 0xff, ..] => Some(Wide::Utf32Be),
        [0xff, 0xfe, 0, 0, ..] => Some(Wide::Utf32Le),
        [0xfe, 0xff, ..] => Some(Wide::Utf16Be),
        [0xff, 0xfe, ..] => Some(Wide::Utf16Le),
        [0, 0, 0, a, ..] if *a != 0 => Some(Wide::Utf32Be),
        [a, 0, 0, 0, ..] if *a != 0 => Some(Wide::Utf32Le),
        [0, a, ..] if *a != 0 => Some(Wide::Utf16Be),
        [a, 0, ..] if *a != 0 => Some(Wide::Utf16Le),
        _ => None,
    }
}

/// Whether `head` (the start of a file) is in a wide encoding and, decoded,
/// a document file.
pub fn is_wide_document(head: &[u8]) -> bool {
    wide_encoding(head).is_some_and(|wide| classify(&wide.decode(head)) == Class::Document)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYER: &str = "datum: v1alpha1\ntype: Layer\nname: web\n";

    #[test]
    fn every_wide_encoding_of_a_document_is_one_and_a_payload_is_not() {
        for wide in [Wide::Utf16Le, Wide::Utf16Be, Wide::Utf32Le, Wide::Utf32Be] {
            let bare = wide.encode(LAYER);
            let marked = wide.encode(&format!("\u{feff}{LAYER}"));
            for bytes in [&bare, &marked] {
                assert_eq!(wide_encoding(bytes), Some(wide), "{}", wide.name());
                assert!(is_wide_document(bytes), "{}", wide.name());
            }
            assert!(!is_wide_document(&wide.encode("\u{feff}key: value\n")));
        }
        assert_eq!(wide_encoding(LAYER.as_bytes()), None);
        assert!(!is_wide_document(LAYER.as_bytes()));
    }
}
