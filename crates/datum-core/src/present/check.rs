//! `datum check`'s closing line, its counts tagged by what they say:
//! errors are failures, warnings are warnings, none of either is good.

use std::io;

use super::{Styled, Tag, Text, line};
use crate::check::CheckReport;

/// `checked 6 hosts against 7 layers: 2 errors, no warnings`.
pub fn summary(out: &mut dyn Styled, report: &CheckReport) -> io::Result<()> {
    let (checked, [(errors, e), (warnings, w)]) = report.tally();
    let tag = |n: usize, tag: Tag| if n == 0 { Tag::Good } else { tag };
    let text = Text::from(format!("{checked}: "))
        .and_tagged(tag(errors, Tag::Failure), e)
        .and(", ")
        .and_tagged(tag(warnings, Tag::Warning), w);
    line(out, "", text)
}
