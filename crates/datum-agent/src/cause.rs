//! One line from a chain of errors, for messages that name the cause
//! as well as the failure ("... is not a git directory: No such file or
//! directory").

use std::error::Error;

/// Each error of the chain, first lines only, joined by `: `; a message
/// repeated by its source (as wrappers often do) appears once.
pub(crate) fn chain(error: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        let line = text.lines().next().unwrap_or_default().trim().to_owned();
        if !line.is_empty() && !parts.iter().any(|p| p.contains(&line)) {
            parts.push(line);
        }
        next = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{text}")]
    struct E {
        text: &'static str,
        #[source]
        source: Option<Box<E>>,
    }

    fn e(text: &'static str, source: Option<E>) -> E {
        E {
            text,
            source: source.map(Box::new),
        }
    }

    #[test]
    fn joins_first_lines_and_drops_repeats() {
        let inner = e("No such file\nor directory", None);
        let middle = e("cannot open /x", Some(inner));
        let outer = e("cannot open /x", Some(middle));
        assert_eq!(chain(&outer), "cannot open /x: No such file");
        assert_eq!(chain(&e("", Some(e("only", None)))), "only");
    }
}
