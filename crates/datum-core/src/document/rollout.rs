//! `rollout:` in `datum.yaml`: the waves a change reaches the fleet in, as
//! written. Only the shape is read here; which hosts each wave takes is
//! the `rollout` module's to say, since a wave's `hosts` is a selector.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use crate::yaml::{Plain, Style, classify_plain};

use super::cx::{Cx, Scalar};
use super::{RolloutDecl, WaveDecl};

/// The keys a wave takes.
pub(super) const WAVE_KEYS: &[&str] = &["name", "hosts", "percent", "after"];
/// The most waves a rollout declares: enough for any staging, and a bound
/// on what `rollout plan` computes.
pub const MAX_WAVES: usize = 64;
/// The longest `after` of one wave, in seconds (30 days).
pub const MAX_DELAY_SECONDS: u64 = 30 * 24 * 3600;

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    /// `rollout:`: a list of waves, each a mapping.
    pub(super) fn rollout(&mut self, v: u32) -> Option<RolloutDecl> {
        let hint = "write a list of waves: `- {name: canary, hosts: role=canary}` then `- {name: rest, after: 2h}`";
        if !matches!(self.scalar(v), Scalar::Seq) {
            self.type_error(v, "`rollout`", "a list of waves", hint);
            return None;
        }
        let items: Vec<u32> = self.doc.children(v).collect();
        if items.is_empty() {
            self.err(
                Diagnostic::error(Code::EmptyValue, "`rollout` lists no wave")
                    .at(self.span(v), "no wave")
                    .hint(
                        "list at least one wave, or remove `rollout:` to reach every host at once",
                    ),
            );
            return None;
        }
        if items.len() > MAX_WAVES {
            self.err(
                Diagnostic::error(
                    Code::OutOfRange,
                    format!("`rollout` lists {} waves", items.len()),
                )
                .at(self.span(v), "too many waves")
                .hint(format!("a rollout has at most {MAX_WAVES} waves")),
            );
            return None;
        }
        let mut waves: Vec<WaveDecl> = Vec::with_capacity(items.len());
        for item in items {
            let Some(wave) = self.wave(item) else {
                continue;
            };
            if let Some(first) = waves.iter().find(|w| w.name == wave.name) {
                let d = Diagnostic::error(
                    Code::DuplicateWave,
                    format!("two waves are named `{}`", wave.name),
                )
                .at(wave.name_span, "second wave of this name")
                .also(first.name_span, "first wave of this name")
                .hint("give each wave its own name: reports and `rollout status` name waves by it");
                self.err(d);
                continue;
            }
            waves.push(wave);
        }
        Some(RolloutDecl {
            span: self.span(v),
            waves,
        })
    }

    fn wave(&mut self, v: u32) -> Option<WaveDecl> {
        if !self.is_map(v) {
            self.type_error(
                v,
                "a wave",
                "a mapping",
                "write `{name: canary, hosts: role=canary}`, for example",
            );
            return None;
        }
        let entries = self.entries(v);
        let get = |key: &str| entries.iter().find(|e| e.0 == key).map(|e| e.2);
        for &(key, k, _) in &entries {
            if !WAVE_KEYS.contains(&key) {
                let hint = match crate::schema::suggest(key, WAVE_KEYS.iter().copied()) {
                    Some(n) => format!(
                        "did you mean `{n}`? A wave takes {}",
                        super::list(WAVE_KEYS)
                    ),
                    None => format!("a wave takes {}", super::list(WAVE_KEYS)),
                };
                self.err(
                    Diagnostic::error(Code::UnknownKey, format!("unknown key `{key}` in a wave"))
                        .at(self.span(k), "unknown key")
                        .hint(hint),
                );
            }
        }
        let name = match get("name") {
            None => {
                self.err(
                    Diagnostic::error(Code::MissingKey, "this wave has no `name:`")
                        .at(self.span(v), "wave")
                        .hint("add `name:`, such as `name: canary`"),
                );
                None
            }
            Some(n) => self.wave_name(n),
        };
        let hosts = get("hosts").and_then(|h| {
            let t = self.text(h, "a wave's `hosts`")?;
            if t.trim().is_empty() {
                self.err(
                    Diagnostic::error(Code::EmptyValue, "a wave's `hosts` is empty")
                        .at(self.span(h), "empty")
                        .hint("write a label selector, such as `hosts: role=web site=london`, or remove `hosts` to take every remaining host"),
                );
                return None;
            }
            Some((Box::from(t.trim()), self.span(h)))
        });
        let percent = get("percent").and_then(|p| self.percent(p));
        let after = get("after").and_then(|a| self.delay(a));
        let (name, name_span) = name?;
        Some(WaveDecl {
            name,
            name_span,
            hosts,
            percent,
            after,
            span: self.span(v),
        })
    }

    /// A wave's name: reports, metrics and `rollout status` name it, so it
    /// is a short word.
    fn wave_name(&mut self, v: u32) -> Option<(Box<str>, Span)> {
        let t = self.text(v, "a wave's `name`")?;
        let ok = !t.is_empty()
            && t.len() <= 63
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !ok {
            self.err(
                Diagnostic::error(Code::InvalidValue, format!("`{t}` is not a wave name"))
                    .at(self.span(v), "invalid wave name")
                    .hint(
                        "a wave name is 1 to 63 letters, digits, `-`, `_` or `.`, such as `canary`",
                    ),
            );
            return None;
        }
        Some((t.into(), self.span(v)))
    }

    /// `percent:` as hundredths of a percent: more than 0, at most 100,
    /// with at most two decimals (`10`, `0.5`, `12.25`; `10%` too).
    fn percent(&mut self, v: u32) -> Option<(u32, Span)> {
        let span = self.span(v);
        let text = match self.scalar(v) {
            Scalar::Text(t, Style::Plain) => match classify_plain(t) {
                Plain::Int(_) | Plain::Float | Plain::Str | Plain::BigInt => t,
                _ => "",
            },
            _ => "",
        };
        let parsed = parse_percent(text.strip_suffix('%').unwrap_or(text).trim());
        match parsed {
            Some(hundredths) if (1..=10_000).contains(&hundredths) => Some((hundredths, span)),
            Some(_) => {
                self.err(
                    Diagnostic::error(
                        Code::OutOfRange,
                        format!("percent {text} is out of range"),
                    )
                    .at(span, "out of range")
                    .hint("a wave takes more than 0 and at most 100 percent of the remaining hosts"),
                );
                None
            }
            None => {
                self.type_error(
                    v,
                    "a wave's `percent`",
                    "a number from 0.01 to 100",
                    "write it unquoted, such as `percent: 10` or `percent: 0.5`",
                );
                None
            }
        }
    }

    /// `after:` a duration (`30m`, `2h 30m`, `1 day`, or ISO 8601 `PT2H`),
    /// read by jiff, in whole seconds, from 0 to [`MAX_DELAY_SECONDS`].
    fn delay(&mut self, v: u32) -> Option<(u64, Span)> {
        let span = self.span(v);
        let hint = "write a duration such as `30m`, `2h 30m`, `1 day` or `PT2H`";
        let t = match self.scalar(v) {
            Scalar::Text(t, _) if !self.is_null(v) => t,
            _ => {
                self.type_error(v, "a wave's `after`", "a duration", hint);
                return None;
            }
        };
        let bad = |what: &str, help: &str| {
            Diagnostic::error(Code::InvalidDuration, format!("`{t}` {what}"))
                .at(span, "invalid duration")
                .hint(help.to_owned())
        };
        let d = match t.trim().parse::<jiff::SignedDuration>() {
            Ok(d) => d,
            Err(_) if t.trim() == "0" => jiff::SignedDuration::ZERO,
            Err(_) => {
                self.err(bad(
                    "is not a duration",
                    &format!("{hint}; a bare number needs a unit (`90s`, `15m`)"),
                ));
                return None;
            }
        };
        if d.is_negative() {
            self.err(bad(
                "is negative",
                "a wave starts after the previous one: write a duration of 0 or more",
            ));
            return None;
        }
        if d.subsec_nanos() != 0 {
            self.err(bad("is not a whole number of seconds", hint));
            return None;
        }
        let secs = d.as_secs() as u64;
        if secs > MAX_DELAY_SECONDS {
            self.err(bad(
                "is longer than 30 days",
                "a wave waits at most 30 days after the previous one (a bundle expires long before)",
            ));
            return None;
        }
        Some((secs, span))
    }
}

/// `10`, `0.5`, `12.25` as hundredths; `None` for anything else (a sign,
/// an exponent, three decimals, more than 5 integer digits).
pub fn parse_percent(t: &str) -> Option<u32> {
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 5 || !digits(whole) || frac.len() > 2 || !digits(frac) {
        return None;
    }
    if t.contains('.') && frac.is_empty() {
        return None;
    }
    let whole: u32 = whole.parse().ok()?;
    let frac: u32 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<2}").parse().ok()?
    };
    Some(whole * 100 + frac)
}

#[cfg(test)]
mod tests {
    use super::parse_percent;

    #[test]
    fn percents_read_as_hundredths() {
        assert_eq!(parse_percent("10"), Some(1000));
        assert_eq!(parse_percent("0.5"), Some(50));
        assert_eq!(parse_percent("12.25"), Some(1225));
        assert_eq!(parse_percent("100"), Some(10_000));
        assert_eq!(parse_percent("0"), Some(0));
        for bad in ["", "-1", "1e2", "0.125", "1.", ".5", "ten", "999999"] {
            assert_eq!(parse_percent(bad), None, "{bad}");
        }
    }
}
