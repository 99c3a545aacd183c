//! When the next cycle runs. Each host has a fixed slot in every interval,
//! its splay, derived from its name, so a fleet spreads evenly over the
//! interval and a host keeps its slot across restarts; a small random
//! jitter (the caller draws it) keeps hosts with nearby slots apart; after
//! failed fetches the agent retries sooner, backing off exponentially, but
//! never later than its next regular slot.
//!
//! Pure: the time and the random value are parameters.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How often a host converges unless told otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30 * 60);
/// The shortest and longest intervals accepted.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);
pub const MAX_INTERVAL: Duration = Duration::from_secs(31 * 24 * 3600);

/// The loop's timing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    interval: Duration,
    jitter: Duration,
    first_retry: Duration,
}

/// A timing that cannot be scheduled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("the interval must be between 1 second and 31 days, not {0:?}")]
    Interval(Duration),
    #[error("the jitter ({jitter:?}) must not be longer than the interval ({interval:?})")]
    Jitter {
        jitter: Duration,
        interval: Duration,
    },
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule::new(DEFAULT_INTERVAL).expect("the default interval is in range")
    }
}

impl Schedule {
    /// Every `interval`, with a jitter of up to 30 seconds (a tenth of the
    /// interval when that is shorter) and a first retry after a minute (or
    /// the interval).
    pub fn new(interval: Duration) -> Result<Schedule, ScheduleError> {
        if !(MIN_INTERVAL..=MAX_INTERVAL).contains(&interval) {
            return Err(ScheduleError::Interval(interval));
        }
        Ok(Schedule {
            interval,
            jitter: (interval / 10).min(Duration::from_secs(30)),
            first_retry: interval.min(Duration::from_secs(60)),
        })
    }

    /// The most jitter added to a run's time.
    pub fn with_jitter(self, jitter: Duration) -> Result<Schedule, ScheduleError> {
        if jitter > self.interval {
            return Err(ScheduleError::Jitter {
                jitter,
                interval: self.interval,
            });
        }
        Ok(Schedule { jitter, ..self })
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn jitter(&self) -> Duration {
        self.jitter
    }

    /// The host's offset in every interval, in whole milliseconds. A
    /// cryptographic hash rather than std's hasher because the slot must
    /// not move between builds or platforms, and must spread any naming
    /// scheme (`web-001`, `web-002`, ...) evenly.
    pub fn splay(&self, host: &str) -> Duration {
        let digest = Sha256::digest(host.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        let hash = u64::from_be_bytes(first) as u128;
        millis(hash % self.interval.as_millis())
    }

    /// The host's first slot strictly after `now`: the slots are the times
    /// whose distance from the Unix epoch is the splay plus a whole number
    /// of intervals. Times before the epoch count as the epoch.
    pub fn next_slot(&self, host: &str, now: SystemTime) -> SystemTime {
        let now_ms = since_epoch(now).as_millis();
        let interval = self.interval.as_millis();
        let splay = self.splay(host).as_millis();
        let phase = (now_ms + interval - splay) % interval;
        UNIX_EPOCH + millis(now_ms + interval - phase)
    }

    /// The jitter for a random value drawn by the caller: uniform in
    /// `0..=jitter` for a uniform `random`, in whole milliseconds.
    pub fn jitter_for(&self, random: u64) -> Duration {
        millis(random as u128 % (self.jitter.as_millis() + 1))
    }

    /// The wait after `failures` fetches in a row have failed: the first
    /// retry doubled for each failure after the first, at most the interval.
    pub fn backoff(&self, failures: u32) -> Duration {
        if failures == 0 {
            return self.interval;
        }
        let factor = 1u32.checked_shl(failures - 1).unwrap_or(u32::MAX);
        self.first_retry
            .checked_mul(factor)
            .map_or(self.interval, |d| d.min(self.interval))
    }

    /// When the next cycle starts: the next slot, or after failed fetches
    /// the backoff if that comes sooner, plus the jitter.
    pub fn next_run(&self, host: &str, now: SystemTime, failures: u32, random: u64) -> SystemTime {
        let slot = self.next_slot(host, now);
        let base = if failures == 0 {
            slot
        } else {
            let retry = UNIX_EPOCH + since_epoch(now) + self.backoff(failures);
            retry.min(slot)
        };
        base + self.jitter_for(random)
    }
}

fn since_epoch(t: SystemTime) -> Duration {
    t.duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Milliseconds as a duration; every value here is below the interval
/// plus a date, far inside `u64`.
fn millis(ms: u128) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_fleet_spreads_evenly_over_the_interval() {
        let s = Schedule::default();
        let buckets = 30;
        let width = s.interval().as_millis() / buckets;
        let mut counts = vec![0u32; buckets as usize];
        for i in 0..10_000 {
            let splay = s.splay(&format!("web-{i:05}.example.net")).as_millis();
            assert!(splay < s.interval().as_millis());
            counts[(splay / width) as usize] += 1;
        }
        // 333 expected per minute-wide bucket; the standard deviation is
        // about 18, so ±90 is five of them.
        for (minute, n) in counts.iter().enumerate() {
            assert!(
                (243..=423).contains(n),
                "minute {minute}: {n} hosts, {counts:?}"
            );
        }
        let chi2: f64 = counts
            .iter()
            .map(|&n| (n as f64 - 10_000.0 / 30.0).powi(2) / (10_000.0 / 30.0))
            .sum();
        // 29 degrees of freedom: above 58 happens by chance once in a thousand.
        assert!(chi2 < 58.0, "chi-square {chi2}: {counts:?}");
    }

    #[test]
    fn a_host_keeps_its_slot() {
        let s = Schedule::default();
        let splay = s.splay("web-001");
        assert_eq!(splay, Schedule::default().splay("web-001"));
        assert_ne!(splay, s.splay("web-002"));
        let interval = s.interval().as_millis();
        let mut now = at(1_700_000_000);
        for step in [0u64, 1, 59, 1799, 1800, 86_400, 12_345] {
            now += Duration::from_secs(step);
            let next = s.next_slot("web-001", now);
            assert!(next > now, "{next:?} is not after {now:?}");
            assert!(next <= now + s.interval());
            let ms = next.duration_since(UNIX_EPOCH).unwrap().as_millis();
            assert_eq!(ms % interval, splay.as_millis());
        }
        // At the slot itself, the next one is a whole interval later.
        let slot = s.next_slot("web-001", at(1_700_000_000));
        assert_eq!(s.next_slot("web-001", slot), slot + s.interval());
    }

    #[test]
    fn the_splay_is_fixed_for_a_name() {
        // Changing the hash moves every host of every fleet: this must fail.
        let s = Schedule::default();
        assert_eq!(s.splay("web-001"), Duration::from_millis(969_972));
        assert_eq!(
            s.splay(""),
            Duration::from_millis(0xe3b0_c442_98fc_1c14 % 1_800_000)
        );
    }

    #[test]
    fn jitter_stays_within_its_bound() {
        let s = Schedule::default();
        assert_eq!(s.jitter(), Duration::from_secs(30));
        assert_eq!(s.jitter_for(0), Duration::ZERO);
        assert_eq!(s.jitter_for(30_000), Duration::from_secs(30));
        assert_eq!(s.jitter_for(30_001), Duration::ZERO);
        for r in [1u64, 12_345, u64::MAX, u64::MAX / 3] {
            assert!(s.jitter_for(r) <= s.jitter());
        }
        let short = Schedule::new(Duration::from_secs(60)).unwrap();
        assert_eq!(short.jitter(), Duration::from_secs(6));
        let none = s.with_jitter(Duration::ZERO).unwrap();
        assert_eq!(none.jitter_for(u64::MAX), Duration::ZERO);
    }

    #[test]
    fn backoff_doubles_up_to_the_interval() {
        let s = Schedule::default();
        let waits: Vec<u64> = (1..=7).map(|f| s.backoff(f).as_secs() / 60).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(s.backoff(0), s.interval());
        assert_eq!(s.backoff(u32::MAX), s.interval());
        assert_eq!(s.backoff(33), s.interval());
    }

    #[test]
    fn a_failure_retries_sooner_but_never_after_the_next_slot() {
        let s = Schedule::default().with_jitter(Duration::ZERO).unwrap();
        let slot = s.next_slot("db-1", at(1_700_000_000));
        // Just after a slot: the retry comes first.
        let now = slot + Duration::from_secs(1);
        assert_eq!(s.next_run("db-1", now, 1, 7), now + MIN);
        assert_eq!(s.next_run("db-1", now, 3, 7), now + 4 * MIN);
        assert_eq!(s.next_run("db-1", now, 0, 7), slot + s.interval());
        // Just before a slot: the slot comes first.
        let now = slot - Duration::from_secs(30);
        assert_eq!(s.next_run("db-1", now, 1, 7), slot);
        let jittered = Schedule::default();
        assert_eq!(
            jittered.next_run("db-1", now, 0, 12_000),
            slot + Duration::from_secs(12)
        );
    }

    #[test]
    fn timings_out_of_range_are_refused() {
        assert_eq!(
            Schedule::new(Duration::ZERO),
            Err(ScheduleError::Interval(Duration::ZERO))
        );
        assert!(Schedule::new(MAX_INTERVAL + Duration::from_secs(1)).is_err());
        let s = Schedule::new(10 * MIN).unwrap();
        assert!(s.with_jitter(11 * MIN).is_err());
        let err = s.with_jitter(11 * MIN).unwrap_err().to_string();
        assert_eq!(
            err,
            "the jitter (660s) must not be longer than the interval (600s)"
        );
    }

    #[test]
    fn times_before_the_epoch_count_as_the_epoch() {
        let s = Schedule::default();
        let before = UNIX_EPOCH - Duration::from_secs(5);
        assert_eq!(s.next_slot("h", before), s.next_slot("h", UNIX_EPOCH));
    }
}
