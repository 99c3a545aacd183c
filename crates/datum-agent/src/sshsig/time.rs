//! The timestamps of allowed-signers options (`valid-after="20250101Z"`),
//! read as seconds since the Unix epoch and written back as RFC 3339.
//!
//! Only UTC is read: `ssh-keygen` takes a time without the trailing `Z` as
//! local time, and an agent whose verdict moves with the host's time zone
//! would accept a key hours early or late on some hosts.

use crate::calendar::Utc;

/// Why a timestamp is not one `ssh-keygen` and datum both read the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeProblem {
    /// Not 8, 12 or 14 digits followed by `Z`.
    Shape,
    /// Digits in the right places, but no trailing `Z`.
    Local,
    /// A month, day, hour, minute or second out of range.
    Range,
}

/// Reads `YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS`, each followed by `Z`.
pub(crate) fn parse_utc(text: &str) -> Result<i64, TimeProblem> {
    let (digits, utc) = match text.strip_suffix(['Z', 'z']) {
        Some(digits) => (digits, true),
        None => (text, false),
    };
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TimeProblem::Shape);
    }
    if !utc {
        return Err(TimeProblem::Local);
    }
    // Every field is digits: four fit an i16, two an i8.
    let field = |at: usize, len: usize| -> i16 {
        digits
            .get(at..at + len)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    };
    let small = |at: usize| field(at, 2) as i8;
    Utc {
        year: field(0, 4),
        month: small(4),
        day: small(6),
        hour: small(8),
        minute: small(10),
        second: small(12),
    }
    .seconds()
    .ok_or(TimeProblem::Range)
}

/// `2025-01-31T12:00:00Z`, for messages; a time beyond the calendar's
/// years (only a forged commit or bundle has one) is given in seconds.
pub(crate) fn format_utc(seconds: i64) -> String {
    match Utc::from_seconds(seconds) {
        Some(t) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            t.year, t.month, t.day, t.hour, t.minute, t.second
        ),
        None => format!("{seconds} seconds after 1970-01-01T00:00:00Z"),
    }
}

/// `seconds` for people: `3d 4h`, `2h 5m`, `40s`.
pub fn span(seconds: i64) -> String {
    let s = seconds.max(0);
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_lengths_in_utc() {
        assert_eq!(parse_utc("19700101Z"), Ok(0));
        assert_eq!(parse_utc("20000301Z"), Ok(951_868_800));
        assert_eq!(parse_utc("202401311230Z"), Ok(1_706_704_200));
        assert_eq!(parse_utc("20240229235959Z"), Ok(1_709_251_199));
    }

    #[test]
    fn refuses_local_time_bad_shapes_and_impossible_dates() {
        assert_eq!(parse_utc("20240101"), Err(TimeProblem::Local));
        assert_eq!(parse_utc("2024010Z"), Err(TimeProblem::Shape));
        assert_eq!(parse_utc("2024-01-01Z"), Err(TimeProblem::Shape));
        assert_eq!(parse_utc(""), Err(TimeProblem::Shape));
        assert_eq!(parse_utc("20230229Z"), Err(TimeProblem::Range));
        assert_eq!(parse_utc("20241301Z"), Err(TimeProblem::Range));
        assert_eq!(parse_utc("202401012400Z"), Err(TimeProblem::Range));
        assert_eq!(parse_utc("20240101000060Z"), Err(TimeProblem::Range));
    }

    #[test]
    fn formats_what_it_reads() {
        for text in ["19700101000000Z", "20000229120000Z", "20991231235959Z"] {
            let seconds = parse_utc(text).unwrap();
            let formatted = format_utc(seconds);
            let digits: String = formatted.chars().filter(char::is_ascii_digit).collect();
            assert_eq!(format!("{digits}Z"), text);
        }
        assert_eq!(format_utc(-1), "1969-12-31T23:59:59Z");
        assert_eq!(
            format_utc(i64::MAX),
            "9223372036854775807 seconds after 1970-01-01T00:00:00Z"
        );
    }
}
