//! A Cron's `schedule`, as crontab(5) reads it: five fields (minute, hour,
//! day of month, month, day of week) or one of the `@` shortcuts, checked
//! before apply writes it into `/etc/cron.d`, so that cron never skips a
//! line Datum wrote.
//!
//! A field is `*` or a comma-separated list of numbers and ranges
//! (`1-5`), where `*` and a range may take a step (`*/15`, `0-30/10`).
//! Months and days of the week may also be named by their first three
//! letters (`jan`, `mon`, in any case), as a single value: crontab(5)
//! allows no name in a range or a list. Day of week 7 is Sunday, as 0 is.

/// The shortcuts cron reads in place of the five fields.
pub const SHORTCUTS: &[&str] = &[
    "@reboot",
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// One of the five fields: its name, range and names.
struct Slot {
    what: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const SLOTS: [Slot; 5] = [
    Slot {
        what: "minute",
        min: 0,
        max: 59,
        names: &[],
    },
    Slot {
        what: "hour",
        min: 0,
        max: 23,
        names: &[],
    },
    Slot {
        what: "day of month",
        min: 1,
        max: 31,
        names: &[],
    },
    Slot {
        what: "month",
        min: 1,
        max: 12,
        names: MONTHS,
    },
    Slot {
        what: "day of week",
        min: 0,
        max: 7,
        names: DAYS,
    },
];

/// Why a schedule is not one cron reads; `None` when it is. The message
/// names the field and what is wrong with it.
pub fn check(schedule: &str) -> Option<String> {
    let s = schedule.trim();
    if s.starts_with('@') {
        return (!SHORTCUTS.contains(&s)).then(|| {
            format!(
                "`{s}` is not a cron shortcut; cron reads {}",
                SHORTCUTS.join(", ")
            )
        });
    }
    let fields: Vec<&str> = s.split_ascii_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "a schedule has five fields (minute, hour, day of month, month, day of week), this one has {}",
            fields.len()
        ));
    }
    fields
        .iter()
        .zip(&SLOTS)
        .find_map(|(field, slot)| field_problem(field, slot))
}

fn field_problem(field: &str, slot: &Slot) -> Option<String> {
    let what = slot.what;
    let range = if slot.names.is_empty() {
        format!("{}-{}", slot.min, slot.max)
    } else {
        format!(
            "{}-{}, or {}-{}",
            slot.min,
            slot.max,
            slot.names[0],
            slot.names[slot.names.len() - 1]
        )
    };
    if !slot.names.is_empty() && name_of(field, slot).is_some() {
        return None;
    }
    for item in field.split(',') {
        if item.is_empty() {
            return Some(format!(
                "the {what} field `{field}` has an empty list entry"
            ));
        }
        let (base, step) = match item.split_once('/') {
            Some((b, s)) => (b, Some(s)),
            None => (item, None),
        };
        if let Some(step) = step {
            match number(step) {
                Some(n) if n >= 1 && n <= slot.max.max(1) => {}
                _ => {
                    return Some(format!(
                        "the {what} field `{field}` has the step `{step}`, which is not a number from 1 to {}",
                        slot.max.max(1)
                    ));
                }
            }
        }
        if base == "*" {
            continue;
        }
        let (low, high) = match base.split_once('-') {
            Some((l, h)) => (l, Some(h)),
            None if step.is_some() => {
                return Some(format!(
                    "the {what} field `{field}` steps from `{base}`: a step follows `*` or a range, such as `*/{s}` or `{base}-{}/{s}`",
                    slot.max,
                    s = step.unwrap_or_default()
                ));
            }
            None => (base, None),
        };
        for end in [Some(low), high].into_iter().flatten() {
            if number(end).is_none_or(|n| n < slot.min || n > slot.max) {
                let named = name_of(end, slot).is_some();
                return Some(if named {
                    format!(
                        "the {what} field `{field}` uses the name `{end}` in a range or list; crontab(5) allows a name only alone: write numbers ({range})"
                    )
                } else {
                    format!("the {what} field `{field}` holds `{end}`, outside {range}")
                });
            }
        }
        if let (Some(l), Some(h)) = (number(low), high.and_then(number))
            && l > h
        {
            return Some(format!(
                "the {what} field `{field}` has the range `{base}`, which runs backwards"
            ));
        }
    }
    None
}

/// A number in decimal digits, bounded so that no text overflows.
fn number(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 4 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The value a month or day name stands for.
fn name_of(s: &str, slot: &Slot) -> Option<u32> {
    let lower = s.to_ascii_lowercase();
    let i = slot.names.iter().position(|n| *n == lower)?;
    Some(slot.min + i as u32)
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn schedules_cron_reads() {
        for ok in [
            "* * * * *",
            "*/5 * * * *",
            "0 3 * * 0",
            "0 3 * * 7",
            "30 2 1,15 * mon",
            "0 0 1 JAN *",
            "0-30/10 8-18 * * 1-5",
            "  15 4 * * *  ",
            "@daily",
            "@reboot",
            "59 23 31 12 6",
        ] {
            assert_eq!(check(ok), None, "{ok}");
        }
    }

    #[test]
    fn schedules_cron_would_skip_say_which_field_and_why() {
        for (bad, why) in [
            ("@fortnightly", "`@fortnightly` is not a cron shortcut"),
            ("* * * *", "this one has 4"),
            ("* * * * * root", "this one has 6"),
            (
                "60 * * * *",
                "the minute field `60` holds `60`, outside 0-59",
            ),
            ("* 24 * * *", "the hour field `24` holds `24`, outside 0-23"),
            (
                "* * 0 * *",
                "the day of month field `0` holds `0`, outside 1-31",
            ),
            ("* * * 13 *", "outside 1-12, or jan-dec"),
            (
                "* * * * 8",
                "the day of week field `8` holds `8`, outside 0-7, or sun-sat",
            ),
            ("* * * * mon-fri", "uses the name `mon` in a range or list"),
            ("*/0 * * * *", "has the step `0`"),
            ("5/10 * * * *", "steps from `5`"),
            ("30-10 * * * *", "runs backwards"),
            ("1,,2 * * * *", "an empty list entry"),
            ("x * * * *", "holds `x`"),
            ("99999999999 * * * *", "holds `99999999999`"),
            ("", "this one has 0"),
        ] {
            let got = check(bad).unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(got.contains(why), "{bad:?}: {got}");
        }
    }
}
