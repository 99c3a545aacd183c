//! The timestamps of allowed-signers options (`valid-after="20250101Z"`),
//! read as seconds since the Unix epoch and written back as RFC 3339.
//!
//! Only UTC is read: `ssh-keygen` takes a time without the trailing `Z` as
//! local time, and an agent whose verdict moves with the host's time zone
//! would accept a key hours early or late on some hosts.

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
    let field = |at: usize, len: usize| -> i64 {
        digits
            .get(at..at + len)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    };
    let (year, month, day) = (field(0, 4), field(4, 2), field(6, 2));
    let (hour, minute, second) = (field(8, 2), field(10, 2), field(12, 2));
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(TimeProblem::Range);
    }
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// `2025-01-31T12:00:00Z`, for messages.
pub(crate) fn format_utc(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days-from-civil: the proleptic Gregorian calendar with
// March as the first month, so the leap day falls at the end of a year.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
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
    }
}
