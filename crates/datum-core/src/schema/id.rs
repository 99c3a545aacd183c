//! Resource ids as written (`Type[title]`): reading one, and what is
//! wrong with one that does not read.

use std::borrow::Cow;
use std::fmt;

use super::{Kind, suggest};
use crate::hint::Hinted;

/// A resource id as written: `Type[title]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceId {
    pub kind: Kind,
    pub title: Box<str>,
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.kind.name(), self.title)
    }
}

/// Why a string is not a resource id; `text` is the string as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Not of the form `Type[title]`.
    #[error("`{text}` is not a resource id")]
    Shape { text: String },
    /// `Type` is not a resource type; carries the nearest one.
    #[error("unknown resource type `{kind}`")]
    UnknownKind {
        kind: String,
        nearest: Option<&'static str>,
    },
    /// The title is empty, or holds brackets or control characters.
    #[error("`{text}` has an invalid title")]
    Title { text: String },
}

impl ResourceId {
    pub fn parse(s: &str) -> Result<ResourceId, IdError> {
        let shape = || IdError::Shape { text: s.to_owned() };
        let Some(open) = s.find('[') else {
            return Err(shape());
        };
        if !s.ends_with(']') || open == 0 {
            return Err(shape());
        }
        let kind_text = &s[..open];
        let title = &s[open + 1..s.len() - 1];
        let Some(kind) = Kind::parse(kind_text) else {
            if !kind_text.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(shape());
            }
            let near = suggest(kind_text, Kind::ALL.iter().map(|k| k.name()));
            return Err(IdError::UnknownKind {
                kind: kind_text.to_owned(),
                nearest: near,
            });
        };
        if title.is_empty()
            || title.contains(['[', ']'])
            || title.chars().any(char::is_control)
            || title.trim() != title
        {
            return Err(IdError::Title { text: s.to_owned() });
        }
        Ok(ResourceId {
            kind,
            title: title.into(),
        })
    }
}

/// What a valid id looks like, or the nearest type.
impl Hinted for IdError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(match self {
            IdError::Shape { .. } => {
                "a resource id is Type[title], such as Package[nginx] or File[motd]".into()
            }
            IdError::UnknownKind { nearest, .. } => match nearest {
                Some(n) => format!("did you mean `{n}`? The types are {}", kind_list()).into(),
                None => format!("the types are {}", kind_list()).into(),
            },
            IdError::Title { .. } => {
                "a title is non-empty text without brackets, control characters or surrounding spaces".into()
            }
        })
    }
}

impl IdError {
    /// The same error for the id written inside a longer `text` (a
    /// `Type[title].field` target): the message quotes all of it.
    pub fn within(self, text: &str) -> IdError {
        match self {
            IdError::Shape { .. } => IdError::Shape {
                text: text.to_owned(),
            },
            IdError::Title { .. } => IdError::Title {
                text: text.to_owned(),
            },
            e @ IdError::UnknownKind { .. } => e,
        }
    }
}

fn kind_list() -> String {
    Kind::ALL
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}
