//! The one calendar: UTC dates and times to and from seconds since the
//! Unix epoch, by `jiff`'s proleptic Gregorian calendar (years 0 to 9999
//! here). Report times and allowed-signers validity both go through it.

use jiff::SignedDuration;
use jiff::civil::DateTime;

const EPOCH: DateTime = DateTime::constant(1970, 1, 1, 0, 0, 0, 0);

/// A UTC date and time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Utc {
    pub year: i16,
    pub month: i8,
    pub day: i8,
    pub hour: i8,
    pub minute: i8,
    pub second: i8,
}

impl Utc {
    /// The time `seconds` after the epoch (before it, when negative);
    /// `None` outside the years -9999 to 9999.
    pub fn from_seconds(seconds: i64) -> Option<Utc> {
        let dt = EPOCH.checked_add(SignedDuration::from_secs(seconds)).ok()?;
        Some(Utc {
            year: dt.year(),
            month: dt.month(),
            day: dt.day(),
            hour: dt.hour(),
            minute: dt.minute(),
            second: dt.second(),
        })
    }

    /// Seconds since the epoch; `None` when the fields name no time (a
    /// 30 February, an hour 24).
    pub fn seconds(self) -> Option<i64> {
        let dt = DateTime::new(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            0,
        )
        .ok()?;
        Some(dt.duration_since(EPOCH).as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_dates_agree_with_an_independent_calendar() {
        // From Python's datetime.
        let cases = [
            (0, (1970, 1, 1, 0, 0, 0)),
            (-1, (1969, 12, 31, 23, 59, 59)),
            (951_782_400, (2000, 2, 29, 0, 0, 0)),
            (4_107_542_400, (2100, 3, 1, 0, 0, 0)),
            (253_402_300_799, (9999, 12, 31, 23, 59, 59)),
        ];
        for (seconds, (year, month, day, hour, minute, second)) in cases {
            let utc = Utc {
                year,
                month,
                day,
                hour,
                minute,
                second,
            };
            assert_eq!(Utc::from_seconds(seconds), Some(utc), "{seconds}");
            assert_eq!(utc.seconds(), Some(seconds));
        }
        assert_eq!(Utc::from_seconds(i64::MAX), None);
        let feb30 = Utc {
            year: 2024,
            month: 2,
            day: 30,
            hour: 0,
            minute: 0,
            second: 0,
        };
        assert_eq!(feb30.seconds(), None);
    }
}
