//! What the log says while a service the daemon depends on (NATS, PostgreSQL) is down.
//!
//! The clients retry every few seconds (async-nats reconnects with its own backoff, the live
//! indexer asks for its lease every few seconds per repository), and a warning per failed
//! attempt fills the log of a daemon whose database is down for the night: 3,600 lines an hour
//! for four repositories. An [`Outage`] lets the first failure through with its reason, then
//! one line a minute with how long the service has been gone and how many attempts failed,
//! and the recovery with the same figures.

use std::time::{Duration, Instant};

/// How often an outage is reported while it lasts.
pub const REPORT_EVERY: Duration = Duration::from_secs(60);

/// One dependency's outage, if there is one.
#[derive(Debug, Default)]
pub struct Outage {
    /// When the service was found gone, while it is.
    since: Option<Instant>,
    attempts: u64,
    last_said: Option<Instant>,
}

impl Outage {
    /// The service was found gone (an event of its own, such as NATS' disconnection): the next
    /// failure is reported, and attempts are counted from here.
    pub fn begin(&mut self, now: Instant) {
        self.since = Some(now);
        self.attempts = 0;
        self.last_said = None;
    }

    /// Whether the service is known to be gone.
    pub fn is_on(&self) -> bool {
        self.since.is_some()
    }

    /// One failed attempt, which begins the outage if it had not begun. The outage's seconds
    /// and attempts so far when this failure is to be logged as a warning (the first, then one
    /// every [`REPORT_EVERY`]); `None` when a debug line is enough.
    pub fn failed(&mut self, now: Instant) -> Option<(u64, u64)> {
        let since = *self.since.get_or_insert(now);
        self.attempts += 1;
        let due = self
            .last_said
            .is_none_or(|t| now.duration_since(t) >= REPORT_EVERY);
        if !due {
            return None;
        }
        self.last_said = Some(now);
        Some((now.duration_since(since).as_secs(), self.attempts))
    }

    /// The service answers again: the outage's seconds and failed attempts, if there was one.
    pub fn end(&mut self, now: Instant) -> Option<(u64, u64)> {
        let since = self.since.take()?;
        self.last_said = None;
        Some((
            now.duration_since(since).as_secs(),
            std::mem::take(&mut self.attempts),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_reported_once_a_minute_not_per_attempt() {
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        let mut outage = Outage::default();
        assert_eq!(outage.end(t0), None, "a first success is not a recovery");
        outage.begin(t0);
        assert!(outage.is_on());
        assert_eq!(
            outage.failed(at(1)),
            Some((1, 1)),
            "the first failure says why"
        );
        for secs in 2..60 {
            assert_eq!(outage.failed(at(secs)), None);
        }
        assert_eq!(outage.failed(at(61)), Some((61, 60)));
        assert_eq!(outage.failed(at(65)), None);
        assert_eq!(outage.end(at(70)), Some((70, 61)));
        assert!(!outage.is_on());
        // Without a `begin`, the first failure begins it.
        assert_eq!(
            outage.failed(at(80)),
            Some((0, 1)),
            "a new outage counts afresh"
        );
        assert_eq!(outage.failed(at(84)), None);
        assert_eq!(outage.end(at(90)), Some((10, 2)));
    }
}
